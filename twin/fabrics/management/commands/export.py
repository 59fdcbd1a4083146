"""Write a snapshot out as canonical twin-fabric JSON or GraphML."""
from django.core.management.base import BaseCommand

from twin.fabrics.cli import fabric_snapshot
from twin.fabrics.exports import EXPORT_FORMATS
from twin.fabrics.selectors import snapshot_spec_get


class Command(BaseCommand):
    help = "Print a fabric's snapshot (the latest discovered one by default) as json or graphml."

    def add_arguments(self, parser):
        parser.add_argument("--fabric", required=True)
        parser.add_argument("--snapshot", type=int, help="Snapshot version (default: the latest discovered)")
        parser.add_argument("--format", dest="fmt", choices=sorted(EXPORT_FORMATS), default="json")
        parser.add_argument("--output", "-o", help="File to write (default: standard output)")

    def handle(self, *args, fabric, snapshot, fmt, output, **options):
        _, chosen = fabric_snapshot(fabric, snapshot)
        _, _, export = EXPORT_FORMATS[fmt]
        text = export(snapshot_spec_get(snapshot_id=chosen.pk))
        if output:
            with open(output, "w", encoding="utf-8") as stream:
                stream.write(text)
            self.stderr.write(f"wrote {fabric} v{chosen.version} ({fmt}) to {output}")
        else:
            self.stdout.write(text, ending="")
