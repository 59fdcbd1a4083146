"""Print (creating if needed) the API token of a user, for scripts: `Authorization: Token <key>`."""
from django.core.management.base import CommandError
from django.utils.translation import gettext, gettext_lazy as _
from rest_framework.authtoken.models import Token

from twin.accounts.models import User
from twin.common.cli import TwinCommand


class Command(TwinCommand):
    help = _("Print the API token of a user (created on first use).")

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username: str, **options):
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(gettext("No user named %(name)r.") % {"name": username})
        token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(token.key)
