from django.apps import AppConfig
from django.urls import register_converter


class CommonConfig(AppConfig):
    name = "twin.common"
    label = "common"

    def ready(self):
        from .params import DatabaseIdConverter

        # Before any URL or websocket route is built: every route's ids use it.
        register_converter(DatabaseIdConverter, "id")
