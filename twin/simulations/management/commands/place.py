"""Place a parallel job on a fabric with each strategy and print its communication time."""
import json

from django.core.management.base import CommandError
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy as _

from twin.common.cli import TwinCommand, parameter_count
from twin.common.errors import core_error_text
from twin.fabrics.cli import fabric_snapshot
from twin.simcore.errors import TwinCoreError
from twin.simcore.translation import rendered, words_from_plain
from twin.simulations.services import job_from_params, placement_compare


class Command(TwinCommand):
    help = _("Compare naive, random and topology-aware placements of a TP x PP x DP job (per-step communication time).")

    def add_arguments(self, parser):
        parser.add_argument("--fabric", required=True)
        parser.add_argument("--tp", type=int, required=True)
        parser.add_argument("--pp", type=int, default=1)
        parser.add_argument("--dp", type=int, required=True)
        parser.add_argument("--ep", type=int, default=1)
        parser.add_argument("--model-params", type=parameter_count, help=_("Model size in parameters, e.g. 175B or 175e9 (default: the article's 175B)"))
        parser.add_argument("--busy", default="", help=_("Comma-separated cards in use by other jobs"))
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, fabric, tp, pp, dp, ep, model_params, busy, seed, as_json, **options):
        found, snapshot = fabric_snapshot(fabric)
        try:
            job = job_from_params({"tp": tp, "pp": pp, "dp": dp, "ep": ep, "model_params": model_params})
            compared = placement_compare(snapshot=snapshot, job=job, busy_cards=[card for card in busy.split(",") if card], seed=seed)
        except TwinCoreError as error:
            raise CommandError(core_error_text(error)) from error
        if as_json:
            summary = {
                "fabric": found.name, "snapshot": snapshot.version, "job": compared["job"], "best": compared["best"], "ranking": compared["ranking"],
                "strategies": {
                    name: {"communication_time_s": result["communication_time_s"], "warnings": result["warnings"],
                           "dimensions": {dim: {key: value for key, value in d.items() if key not in ("hottest_links",)} for dim, d in result["dimensions"].items()}}
                    for name, result in compared["results"].items()
                },
            }
            self.stdout.write(json.dumps(summary, indent=2))
            return
        self.stdout.write(gettext("TP=%(tp)s x PP=%(pp)s x DP=%(dp)s on %(fabric)s v%(version)s: per-step communication time") % {
            "tp": tp, "pp": pp, "dp": dp, "fabric": found.name, "version": snapshot.version,
        })  # fmt: skip
        for name in compared["ranking"]:
            result = compared["results"][name]
            parts = gettext(", ").join(f"{dim} {d['time_s'] * 1e3:.1f} ms" for dim, d in result["dimensions"].items())
            marker = "  " + gettext("<- best") if name == compared["best"] else ""
            self.stdout.write(f"  {name:<7} {result['communication_time_s'] * 1e3:10.1f} ms  ({parts}){marker}")
            for warning in result["warning_words"]:
                self.stdout.write(self.style.WARNING(f"          {rendered(words_from_plain(warning), translation)}"))
