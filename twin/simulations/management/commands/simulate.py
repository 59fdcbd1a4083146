"""Predict one collective on a stored fabric: time, algbw/busbw, bottleneck, hottest links."""
import json

from django.core.management.base import BaseCommand, CommandError

from twin.fabrics.cli import fabric_snapshot
from twin.simcore.errors import TwinCoreError
from twin.simcore.units import parse_size
from twin.simulations.services import ALGORITHMS, COLLECTIVES, ECMP_MODES, PROTOCOLS, collective_simulate

SUMMARY_KEYS = ("collective", "algorithm", "protocol", "ranks", "size_bytes", "time_s", "algbw_GBps", "busbw_GBps", "latency_s",
                "bandwidth_s", "bound", "bottleneck", "max_link_utilization", "hottest_links", "choice", "settings")


class Command(BaseCommand):
    help = "Simulate a collective on every card of a fabric's snapshot (latest discovered by default)."

    def add_arguments(self, parser):
        parser.add_argument("--fabric", required=True)
        parser.add_argument("--snapshot", type=int, help="Snapshot version (default: the latest discovered)")
        parser.add_argument("--collective", choices=COLLECTIVES, default="allreduce")
        parser.add_argument("--bytes", dest="size", default="342MB", help="Bytes per rank, e.g. 342MB, 1GiB, 4096")
        parser.add_argument("--algorithm", choices=("auto", *ALGORITHMS), default="auto")
        parser.add_argument("--protocol", choices=("auto", *PROTOCOLS), default="auto", help="auto: the fastest, as NCCL's tuner picks")
        parser.add_argument("--ecmp", choices=ECMP_MODES, default="hash")
        parser.add_argument("--channels", type=int, default=1)
        parser.add_argument("--in-switch-reduction", choices=("auto", "on", "off"), default="auto",
                            help="auto: as the switches declare; on/off: a what-if")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print one JSON object")

    def handle(self, *args, fabric, snapshot, collective, size, algorithm, protocol, ecmp, channels, in_switch_reduction, as_json, **options):
        found, chosen = fabric_snapshot(fabric, snapshot)
        try:
            result = collective_simulate(
                snapshot=chosen, collective=collective, size_bytes=parse_size(size), algorithm=algorithm, protocol=protocol, ecmp=ecmp,
                channels=channels, in_switch_reduction={"auto": None, "on": True, "off": False}[in_switch_reduction],
            )
        except TwinCoreError as error:
            raise CommandError(str(error)) from error
        summary = {"fabric": found.name, "snapshot": chosen.version, **{key: result[key] for key in SUMMARY_KEYS if key in result}}
        if as_json:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        self.stdout.write(
            f"{collective} of {result['size_bytes'] / 1e6:,.1f} MB on {result['ranks']:,} ranks of {found.name} v{chosen.version}: "
            f"{result['algorithm']} ({result['protocol']}), {result['time_s'] * 1e3:.3f} ms, algbw {result['algbw_GBps']:.1f} GB/s, "
            f"busbw {result['busbw_GBps']:.1f} GB/s ({result['bound']}-bound)"
        )
        bottleneck = result["bottleneck"]
        self.stdout.write(f"bottleneck: {bottleneck['link_class']} ({bottleneck['bound']}-bound, utilisation {bottleneck['utilization']:.0%})")
        if "choice" in result:
            self.stdout.write(f"why: {result['choice']['reason']}")
        for link in result["hottest_links"][:5]:
            self.stdout.write(f"  {link['from']} -> {link['to']}: {link['utilization']:.0%} ({link['class']})")
