"""Write a snapshot out as canonical twin-fabric JSON, GraphML or ibnetdiscover output."""
from django.core.management.base import CommandError
from django.utils.translation import gettext, gettext_lazy as _

from twin.common.cli import TwinCommand

from twin.common.errors import ApplicationError
from twin.fabrics.cli import fabric_snapshot
from twin.fabrics.exports import EXPORT_FORMATS, snapshot_export


class Command(TwinCommand):
    help = _("Print a fabric's snapshot (the latest discovered one by default) as json, graphml or ibnetdiscover.")

    def add_arguments(self, parser):
        parser.add_argument("--fabric", required=True)
        parser.add_argument("--snapshot", type=int, help=_("Snapshot version (default: the latest discovered)"))
        parser.add_argument("--format", dest="fmt", choices=sorted(EXPORT_FORMATS), default="json")
        parser.add_argument("--output", "-o", help=_("File to write (default: standard output)"))

    def handle(self, *args, fabric, snapshot, fmt, output, **options):
        _, chosen = fabric_snapshot(fabric, snapshot)
        try:
            text = snapshot_export(snapshot_id=chosen.pk, fmt=fmt)
        except ApplicationError as error:
            raise CommandError(error.message) from error
        if output:
            with open(output, "w", encoding="utf-8") as stream:
                stream.write(text)
            self.stderr.write(gettext("wrote %(fabric)s v%(version)s (%(format)s) to %(output)s") % {"fabric": fabric, "version": chosen.version, "format": fmt, "output": output})
        else:
            self.stdout.write(text, ending="")
