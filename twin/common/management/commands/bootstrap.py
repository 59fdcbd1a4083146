"""Prepare an installation: migrate, collect static files, load the demo, ensure an admin."""
import os

from django.core.management import call_command
from django.utils.translation import gettext, gettext_lazy as _

from twin.accounts.services import admin_ensure
from twin.common.cli import TwinCommand


class Command(TwinCommand):
    help = _("Migrate, collect static files, load the demo fabric and make sure an admin exists.")

    def add_arguments(self, parser):
        parser.add_argument("--no-demo", action="store_true", help=_("Do not load the demo fabric."))

    def handle(self, *args, no_demo: bool = False, **options):
        verbosity = options["verbosity"]
        call_command("migrate", interactive=False, verbosity=max(0, verbosity - 1))
        call_command("collectstatic", interactive=False, verbosity=max(0, verbosity - 1))
        if not no_demo:
            call_command("load_demo", verbosity=verbosity)
        username = os.environ.get("TWIN_ADMIN_USER", "admin")
        admin, generated = admin_ensure(username=username, password=os.environ.get("TWIN_ADMIN_PASSWORD"))
        if generated:
            self.stdout.write(self.style.WARNING(gettext(
                "Created the admin user '%(user)s' with password: %(password)s\n"
                "  It is shown only this once; change it with: python manage.py changepassword %(user)s"
            ) % {"user": admin.username, "password": generated}))
