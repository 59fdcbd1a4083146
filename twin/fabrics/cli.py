"""What the management commands share: finding the fabric and snapshot they are asked about."""
from django.core.management.base import CommandError
from django.utils.translation import gettext

from .models import Fabric, Snapshot

__all__ = ("fabric_snapshot",)


def fabric_snapshot(name: str, version: int | None = None) -> tuple[Fabric, Snapshot]:
    """The named fabric and its snapshot `version` (default: the latest discovered one), or a
    CommandError saying what is there instead."""
    fabric = Fabric.objects.filter(name=name).first()
    if fabric is None:
        known = gettext(", ").join(Fabric.objects.order_by("name").values_list("name", flat=True)[:20]) or gettext("none")
        raise CommandError(gettext("No fabric named %(name)r; known: %(known)s.") % {"name": name, "known": known})
    snapshot = fabric.snapshots.filter(version=version).first() if version else fabric.latest_snapshot()
    if snapshot is None and version:
        raise CommandError(gettext("Fabric %(name)r has no snapshot v%(version)s.") % {"name": name, "version": version})
    if snapshot is None:
        raise CommandError(gettext("Fabric %(name)r has no discovered snapshot.") % {"name": name})
    return fabric, snapshot
