"""Hop-distance statistics of a fabric's snapshot, computed here with a progress bar."""
import json

from django.core.management.base import BaseCommand

from twin.common.cli import ProgressBar
from twin.fabrics.cli import fabric_snapshot
from twin.fabrics.selectors import snapshot_spec_get
from twin.simcore.hops import hop_statistics
from twin.simcore.units import counted


class Command(BaseCommand):
    help = "Print hop-distance statistics between the cards of a fabric (latest snapshot by default)."

    def add_arguments(self, parser):
        parser.add_argument("--fabric", required=True, help="Fabric name")
        # Not --version: Django's own option prints the Django version.
        parser.add_argument("--snapshot", type=int, help="Snapshot version (default: the latest discovered)")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print the result as JSON")

    def handle(self, *args, fabric: str, snapshot: int | None, as_json: bool, **options):
        found, snapshot = fabric_snapshot(fabric, snapshot)
        stats = hop_statistics(snapshot_spec_get(snapshot_id=snapshot.pk), on_progress=ProgressBar(self.stderr._out, label="hop statistics"))
        if as_json:
            self.stdout.write(json.dumps(stats, indent=2))
            return
        self.stdout.write(f"{found.name} v{snapshot.version}: {counted(stats['cards'], 'card')}, {counted(stats['switches'], 'switch')}, {counted(stats['links'], 'link')}")
        self.stdout.write(f"card pairs {stats['pairs']:,}, mean hops {stats['mean_hops']:.3f}, diameter {stats['diameter']}, unreachable pairs {stats['unreachable_pairs']:,}")
        for hops, count in sorted(stats["histogram"].items(), key=lambda item: int(item[0])):
            self.stdout.write(f"  {hops:>3} hops: {count:>12,} pairs ({100 * count / max(1, stats['pairs']):5.1f}%)")

