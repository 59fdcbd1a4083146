from django.apps import AppConfig


class FabricsConfig(AppConfig):
    name = "twin.fabrics"
    label = "fabrics"
