"""Hop-distance statistics of a fabric's snapshot, computed here with a progress bar."""
import json

from django.utils import translation
from django.utils.translation import gettext, ngettext, gettext_lazy as _

from twin.common.cli import ProgressBar, TwinCommand
from twin.fabrics.cli import fabric_snapshot
from twin.fabrics.selectors import snapshot_spec_get
from twin.simcore.hops import hop_statistics
from twin.simcore.translation import rendered
from twin.simcore.units import counted_list_phrase


class Command(TwinCommand):
    help = _("Print hop-distance statistics between the cards of a fabric (latest snapshot by default).")

    def add_arguments(self, parser):
        parser.add_argument("--fabric", required=True, help=_("Fabric name"))
        # Not --version: Django's own option prints the Django version.
        parser.add_argument("--snapshot", type=int, help=_("Snapshot version (default: the latest discovered)"))
        parser.add_argument("--json", action="store_true", dest="as_json", help=_("Print the result as JSON"))

    def handle(self, *args, fabric: str, snapshot: int | None, as_json: bool, **options):
        found, snapshot = fabric_snapshot(fabric, snapshot)
        stats = hop_statistics(snapshot_spec_get(snapshot_id=snapshot.pk), on_progress=ProgressBar(self.stderr._out, label=gettext("hop statistics")))
        if as_json:
            self.stdout.write(json.dumps(stats, indent=2))
            return
        counts = counted_list_phrase({"card": stats["cards"], "switch": stats["switches"], "link": stats["links"]})
        self.stdout.write(f"{found.name} v{snapshot.version}: {rendered(counts, translation)}")
        self.stdout.write(gettext("card pairs %(pairs)s, mean hops %(mean)s, diameter %(diameter)s, unreachable pairs %(unreachable)s") % {
            "pairs": f"{stats['pairs']:,}", "mean": f"{stats['mean_hops']:.3f}", "diameter": stats["diameter"], "unreachable": f"{stats['unreachable_pairs']:,}",
        })  # fmt: skip
        for hops, count in sorted(stats["histogram"].items(), key=lambda item: int(item[0])):
            line = ngettext("%(hops)s hops: %(count)s pair (%(share)s%%)", "%(hops)s hops: %(count)s pairs (%(share)s%%)", count)
            self.stdout.write("  " + line % {"hops": f"{hops:>3}", "count": f"{count:>12,}", "share": f"{100 * count / max(1, stats['pairs']):5.1f}"})

