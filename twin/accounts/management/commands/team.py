"""Teams and the fabrics given to them, from the command line (the admin site offers the same)."""
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from twin.accounts.models import Team, User
from twin.fabrics.models import Fabric


class Command(BaseCommand):
    help = (
        "Manage teams: a fabric given to a team is seen only by its members and admins; "
        "a fabric without a team is seen by everyone."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        actions.add_parser("list", help="Teams with their members and fabrics.")
        for name, text in (("add", "Add users to a team (created if new)."), ("remove", "Remove users from a team.")):
            action = actions.add_parser(name, help=text)
            action.add_argument("team")
            action.add_argument("users", nargs="+", metavar="USER")
        give = actions.add_parser("give", help="Give fabrics to a team: only its members (and admins) see them.")
        give.add_argument("team")
        give.add_argument("fabrics", nargs="+", metavar="FABRIC")
        open_ = actions.add_parser("open", help="Take fabrics from their team: everyone sees them again.")
        open_.add_argument("fabrics", nargs="+", metavar="FABRIC")

    @transaction.atomic
    def handle(self, *args, action: str, **options):
        if action == "list":
            for team in Team.objects.prefetch_related("members", "fabrics"):
                members = ", ".join(user.username for user in team.members.all()) or "-"
                fabrics = ", ".join(fabric.name for fabric in team.fabrics.all()) or "-"
                self.stdout.write(f"{team.name}: members {members}; fabrics {fabrics}")
            return
        if action in ("add", "remove"):
            users = self._named(User, "username", options["users"], "user")
            if action == "add":
                team, _ = Team.objects.get_or_create(name=options["team"])
                team.members.add(*users)
            else:
                team = self._named(Team, "name", [options["team"]], "team")[0]
                team.members.remove(*users)
            self.stdout.write(f"{team.name}: {team.members.count()} member(s).")
            return
        fabrics = self._named(Fabric, "name", options["fabrics"], "fabric")
        team = self._named(Team, "name", [options["team"]], "team")[0] if action == "give" else None
        Fabric.objects.filter(pk__in=[fabric.pk for fabric in fabrics]).update(team=team)
        self.stdout.write(f"{len(fabrics)} fabric(s) " + (f"given to {team.name}." if team else "open to everyone."))

    @staticmethod
    def _named(model, field: str, names: list[str], what: str) -> list:
        found = {getattr(row, field): row for row in model.objects.filter(**{f"{field}__in": names})}
        missing = [name for name in names if name not in found]
        if missing:
            raise CommandError(f"No {what} named {', '.join(repr(name) for name in missing)}; nothing was changed.")
        return [found[name] for name in names]
