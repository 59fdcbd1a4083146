from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "twin.runs"
    label = "runs"
