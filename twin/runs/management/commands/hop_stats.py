"""Hop-distance statistics of a fabric's snapshot, computed here with a progress bar."""
import json

from django.core.management.base import BaseCommand, CommandError

from twin.common.cli import ProgressBar
from twin.fabrics.models import Fabric
from twin.fabrics.selectors import snapshot_spec_get
from twin.simcore.hops import hop_statistics


class Command(BaseCommand):
    help = "Print hop-distance statistics between the cards of a fabric (latest snapshot by default)."

    def add_arguments(self, parser):
        parser.add_argument("--fabric", required=True, help="Fabric name")
        parser.add_argument("--version", type=int, help="Snapshot version (default: the latest)")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print the result as JSON")

    def handle(self, *args, fabric: str, version: int | None, as_json: bool, **options):
        found = Fabric.objects.filter(name=fabric).first()
        if found is None:
            raise CommandError(f"No fabric named {fabric!r}; known: {', '.join(Fabric.objects.values_list('name', flat=True)) or 'none'}.")
        snapshots = found.snapshots.order_by("-version")
        snapshot = snapshots.filter(version=version).first() if version else snapshots.first()
        if snapshot is None:
            raise CommandError(f"Fabric {fabric!r} has no snapshot{f' v{version}' if version else ''}.")
        stats = hop_statistics(snapshot_spec_get(snapshot_id=snapshot.pk), on_progress=ProgressBar(self.stderr._out, label="hop statistics"))
        if as_json:
            self.stdout.write(json.dumps(stats, indent=2))
            return
        self.stdout.write(f"{found.name} v{snapshot.version}: {stats['cards']} cards, {stats['switches']} switches, {stats['links']} links")
        self.stdout.write(f"card pairs {stats['pairs']}, mean hops {stats['mean_hops']:.3f}, diameter {stats['diameter']}, unreachable pairs {stats['unreachable_pairs']}")
        for hops, count in sorted(stats["histogram"].items(), key=lambda item: int(item[0])):
            self.stdout.write(f"  {hops:>3} hops: {count:>10} pairs ({100 * count / max(1, stats['pairs']):5.1f}%)")

