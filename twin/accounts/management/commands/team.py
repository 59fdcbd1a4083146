"""Teams and the fabrics given to them, from the command line (the admin site offers the same)."""
from django.core.management.base import CommandError
from django.db import transaction
from django.utils.translation import gettext, gettext_noop, ngettext, gettext_lazy as _

from twin.common.cli import TwinCommand

from twin.accounts.models import Team, User
from twin.fabrics.models import Fabric


NO_USER = gettext_noop("No user named %(names)s; nothing was changed.")
NO_TEAM = gettext_noop("No team named %(names)s; nothing was changed.")
NO_FABRIC = gettext_noop("No fabric named %(names)s; nothing was changed.")


class Command(TwinCommand):
    help = _(
        "Manage teams: a fabric given to a team is seen only by its members and admins; "
        "a fabric without a team is seen by everyone."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        actions.add_parser("list", help=_("Teams with their members and fabrics."))
        for name, text in (("add", _("Add users to a team (created if new).")), ("remove", _("Remove users from a team."))):
            action = actions.add_parser(name, help=text)
            action.add_argument("team")
            action.add_argument("users", nargs="+", metavar="USER")
        give = actions.add_parser("give", help=_("Give fabrics to a team: only its members (and admins) see them."))
        give.add_argument("team")
        give.add_argument("fabrics", nargs="+", metavar="FABRIC")
        open_ = actions.add_parser("open", help=_("Take fabrics from their team: everyone sees them again."))
        open_.add_argument("fabrics", nargs="+", metavar="FABRIC")

    @transaction.atomic
    def handle(self, *args, action: str, **options):
        if action == "list":
            for team in Team.objects.prefetch_related("members", "fabrics"):
                members = gettext(", ").join(user.username for user in team.members.all()) or "-"
                fabrics = gettext(", ").join(fabric.name for fabric in team.fabrics.all()) or "-"
                self.stdout.write(gettext("%(team)s: members %(members)s; fabrics %(fabrics)s") % {"team": team.name, "members": members, "fabrics": fabrics})
            return
        if action in ("add", "remove"):
            users = self._named(User, "username", options["users"], NO_USER)
            if action == "add":
                team, _ = Team.objects.get_or_create(name=options["team"])
                team.members.add(*users)
            else:
                team = self._named(Team, "name", [options["team"]], NO_TEAM)[0]
                team.members.remove(*users)
            count = team.members.count()
            self.stdout.write(ngettext("%(team)s: %(count)s member.", "%(team)s: %(count)s members.", count) % {"team": team.name, "count": f"{count:,}"})
            return
        fabrics = self._named(Fabric, "name", options["fabrics"], NO_FABRIC)
        team = self._named(Team, "name", [options["team"]], NO_TEAM)[0] if action == "give" else None
        Fabric.objects.filter(pk__in=[fabric.pk for fabric in fabrics]).update(team=team)
        if team:
            done = ngettext("%(count)s fabric given to %(team)s.", "%(count)s fabrics given to %(team)s.", len(fabrics)) % {"count": f"{len(fabrics):,}", "team": team.name}
        else:
            done = ngettext("%(count)s fabric open to everyone.", "%(count)s fabrics open to everyone.", len(fabrics)) % {"count": f"{len(fabrics):,}"}
        self.stdout.write(done)

    @staticmethod
    def _named(model, field: str, names: list[str], refusal: str) -> list:
        found = {getattr(row, field): row for row in model.objects.filter(**{f"{field}__in": names})}
        missing = [name for name in names if name not in found]
        if missing:
            raise CommandError(gettext(refusal) % {"names": gettext(", ").join(repr(name) for name in missing)})
        return [found[name] for name in names]
