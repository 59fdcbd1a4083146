from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "twin.accounts"
    label = "accounts"
