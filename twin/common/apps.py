from django.apps import AppConfig


class CommonConfig(AppConfig):
    name = "twin.common"
    label = "common"
