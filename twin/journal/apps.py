from django.apps import AppConfig


class JournalConfig(AppConfig):
    name = "twin.journal"
    label = "journal"
