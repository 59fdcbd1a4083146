"""Print (creating if needed) the API token of a user, for scripts: `Authorization: Token <key>`."""
from django.core.management.base import BaseCommand, CommandError
from rest_framework.authtoken.models import Token

from twin.accounts.models import User


class Command(BaseCommand):
    help = "Print the API token of a user (created on first use)."

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username: str, **options):
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(token.key)
