"""Predict one collective on a stored fabric: time, algbw/busbw, bottleneck, hottest links."""
import json

from django.core.management.base import CommandError
from django.utils.translation import gettext, gettext_noop, ngettext, gettext_lazy as _

from twin.common.cli import TwinCommand
from twin.common.errors import core_error_text
from twin.fabrics.cli import fabric_snapshot
from twin.simcore.errors import TwinCoreError
from twin.simcore.units import parse_size, three_digits
from twin.simulations.services import ALGORITHMS, COLLECTIVES, ECMP_MODES, PROTOCOLS, collective_simulate

SUMMARY_KEYS = ("collective", "algorithm", "protocol", "ranks", "size_bytes", "time_s", "algbw_GBps", "busbw_GBps", "latency_s",
                "bandwidth_s", "bound", "bottleneck", "max_link_utilization", "hottest_links", "choice", "settings")


BOUNDS = {"latency": gettext_noop("latency-bound"), "bandwidth": gettext_noop("bandwidth-bound")}


def why(result: dict) -> str:
    """How auto chose, from the choice's figures (its `reason` is English)."""
    ranked = sorted(result["choice"]["candidates"].items(), key=lambda item: item[1])
    text = ngettext("why: auto compared %(count)s algorithm: %(algorithm)s (%(protocol)s) is the fastest",
                    "why: auto compared %(count)s algorithms: %(algorithm)s (%(protocol)s) is the fastest", len(ranked)) % {
        "count": len(ranked), "algorithm": result["algorithm"], "protocol": result["protocol"],
    }  # fmt: skip
    if len(ranked) > 1:
        text += gettext("; ") + gettext("then %(others)s") % {"others": gettext(", ").join(f"{name} {three_digits(time * 1e3)} ms" for name, time in ranked[1:])}
    if result["choice"]["skipped"]:
        text += gettext("; ") + gettext("not applicable: %(names)s") % {"names": gettext(", ").join(sorted(result["choice"]["skipped"]))}
    return text


class Command(TwinCommand):
    help = _("Simulate a collective on every card of a fabric's snapshot (latest discovered by default).")

    def add_arguments(self, parser):
        parser.add_argument("--fabric", required=True)
        parser.add_argument("--snapshot", type=int, help=_("Snapshot version (default: the latest discovered)"))
        parser.add_argument("--collective", choices=COLLECTIVES, default="allreduce")
        parser.add_argument("--bytes", dest="size", default="342MB", help=_("Bytes per rank, e.g. 342MB, 1GiB, 4096"))
        parser.add_argument("--algorithm", choices=("auto", *ALGORITHMS), default="auto")
        parser.add_argument("--protocol", choices=("auto", *PROTOCOLS), default="auto", help=_("auto: the fastest, as NCCL's tuner picks"))
        parser.add_argument("--ecmp", choices=ECMP_MODES, default="hash",
                            help=_("hash: per-flow ECMP; pinned: d-mod-k; spray: ideal packet spraying, as a reorder-tolerant transport (RDMA with adaptive routing) gets it"))
        parser.add_argument("--channels", type=int, default=1)
        parser.add_argument("--in-switch-reduction", choices=("auto", "on", "off"), default="auto",
                            help=_("auto: as the switches declare; on/off: a what-if"))
        parser.add_argument("--json", action="store_true", dest="as_json", help=_("Print one JSON object"))

    def handle(self, *args, fabric, snapshot, collective, size, algorithm, protocol, ecmp, channels, in_switch_reduction, as_json, **options):
        found, chosen = fabric_snapshot(fabric, snapshot)
        try:
            result = collective_simulate(
                snapshot=chosen, collective=collective, size_bytes=parse_size(size), algorithm=algorithm, protocol=protocol, ecmp=ecmp,
                channels=channels, in_switch_reduction={"auto": None, "on": True, "off": False}[in_switch_reduction],
            )
        except TwinCoreError as error:
            raise CommandError(core_error_text(error)) from error
        summary = {"fabric": found.name, "snapshot": chosen.version, **{key: result[key] for key in SUMMARY_KEYS if key in result}}
        if as_json:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        self.stdout.write(
            gettext("%(collective)s of %(size)s MB on %(ranks)s ranks of %(fabric)s v%(version)s: %(algorithm)s (%(protocol)s), %(time)s ms, "
                    "algbw %(algbw)s GB/s, busbw %(busbw)s GB/s (%(bound)s)") % {
                "collective": collective, "size": three_digits(result["size_bytes"] / 1e6), "ranks": f"{result['ranks']:,}", "fabric": found.name,
                "version": chosen.version, "algorithm": result["algorithm"], "protocol": result["protocol"], "time": f"{result['time_s'] * 1e3:.3f}",
                "algbw": f"{result['algbw_GBps']:.1f}", "busbw": f"{result['busbw_GBps']:.1f}", "bound": gettext(BOUNDS[result["bound"]]),
            }
        )  # fmt: skip
        bottleneck = result["bottleneck"]
        self.stdout.write(gettext("bottleneck: %(link_class)s (%(bound)s, utilisation %(utilisation)s)") % {
            "link_class": bottleneck["link_class"], "bound": gettext(BOUNDS[bottleneck["bound"]]), "utilisation": f"{bottleneck['utilization']:.0%}",
        })  # fmt: skip
        if "choice" in result:
            self.stdout.write(why(result))
        for link in result["hottest_links"][:5]:
            self.stdout.write(f"  {link['from_name']} -> {link['to_name']}: {link['utilization']:.0%} ({link['class']})")
