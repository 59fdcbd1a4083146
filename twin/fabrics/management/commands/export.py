"""Write a snapshot out as canonical twin-fabric JSON or GraphML."""
from django.core.management.base import BaseCommand, CommandError

from twin.fabrics.exports import EXPORT_FORMATS
from twin.fabrics.models import Fabric
from twin.fabrics.selectors import snapshot_spec_get


class Command(BaseCommand):
    help = "Print a fabric's snapshot (the latest discovered one by default) as json or graphml."

    def add_arguments(self, parser):
        parser.add_argument("--fabric", required=True)
        parser.add_argument("--snapshot", type=int, help="Snapshot version (default: the latest discovered)")
        parser.add_argument("--format", dest="fmt", choices=sorted(EXPORT_FORMATS), default="json")
        parser.add_argument("--output", "-o", help="File to write (default: standard output)")

    def handle(self, *args, fabric, snapshot, fmt, output, **options):
        found = Fabric.objects.filter(name=fabric).first()
        if found is None:
            raise CommandError(f"No fabric named {fabric!r}.")
        chosen = found.snapshots.filter(version=snapshot).first() if snapshot else found.latest_snapshot()
        if chosen is None:
            raise CommandError(f"Fabric {fabric!r} has no snapshot{f' v{snapshot}' if snapshot else ''}.")
        _, _, export = EXPORT_FORMATS[fmt]
        text = export(snapshot_spec_get(snapshot_id=chosen.pk))
        if output:
            with open(output, "w", encoding="utf-8") as stream:
                stream.write(text)
            self.stderr.write(f"wrote {fabric} v{chosen.version} ({fmt}) to {output}")
        else:
            self.stdout.write(text, ending="")
