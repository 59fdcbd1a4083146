"""Run a staged scale-out what-if here (with a progress bar) and write its report files."""
import json
from pathlib import Path

from django.core.management.base import CommandError
from django.utils import translation
from django.utils.translation import gettext, ngettext, gettext_lazy as _

from twin.common.cli import ProgressBar, TwinCommand
from twin.common.errors import core_error_text
from twin.fabrics.cli import fabric_snapshot
from twin.fabrics.selectors import snapshot_spec_get
from twin.simcore.errors import TwinCoreError
from twin.simcore.translation import LATER
from twin.simulations.whatifs import whatif_cell, whatif_cells, whatif_report
from twin.whatif.render import render_csv, render_html, render_pdf, report_json
from twin.whatif.report import knee_explanation, report_summary


class Command(TwinCommand):
    help = _("Grow a fabric in stages (1x is added as the reference) and write report.html, report.pdf, stages.csv and report.json.")

    def add_arguments(self, parser):
        parser.add_argument("--fabric", required=True)
        parser.add_argument("--stages", default="2,4,8", help=_("Growth factors, e.g. 2,4,8"))
        parser.add_argument("--alternatives", default="one-supernode,k-supernodes,rail")
        parser.add_argument("--collectives", default="allreduce,allgather,reducescatter,alltoall")
        parser.add_argument("--sizes", help=_("Message sizes in bytes, comma-separated (default 1 KiB to 1 GiB)"))
        parser.add_argument("--threshold", type=float, default=10.0, help=_("Efficiency drop (points) that marks the knee"))
        parser.add_argument("--out", required=True, help=_("Directory for the report files"))
        parser.add_argument("--json", action="store_true", dest="as_json", help=_("Print a summary as JSON"))

    def handle(self, *args, fabric, stages, alternatives, collectives, sizes, threshold, out, as_json, **options):
        found, snapshot = fabric_snapshot(fabric)
        try:
            factors = sorted({1.0, *(float(value) for value in stages.split(",") if value)})
            params = {"factors": factors, "alternatives": alternatives.split(","), "collectives": collectives.split(","), "threshold_points": threshold}
            if sizes:
                params["sizes"] = [int(float(value)) for value in sizes.split(",")]
        except ValueError as error:
            raise CommandError(gettext("Cannot read the numbers: %(error)s") % {"error": error}) from error
        try:
            plans, full = whatif_cells(snapshot_spec_get(snapshot_id=snapshot.pk), params, snapshot_id=snapshot.pk)
            progress = ProgressBar(self.stderr._out, label=gettext("what-if"))
            results = {}
            for done, plan in enumerate(plans):
                progress(done / len(plans), plan.label)
                results[plan.key] = whatif_cell(full, plan.params)
            progress(1.0, LATER.gettext("assembling the report"))
            title = gettext("Staged scale-out of %(fabric)s v%(version)s") % {"fabric": found.name, "version": snapshot.version}
            report = whatif_report(full, results, {plan.key: plan.params for plan in plans}, title=title)
        except TwinCoreError as error:
            raise CommandError(core_error_text(error)) from error
        directory = Path(out)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "report.html").write_text(render_html(report, translations=translation), encoding="utf-8")
        (directory / "report.pdf").write_bytes(render_pdf(report, translations=translation))
        (directory / "stages.csv").write_text(render_csv(report), encoding="utf-8")
        (directory / "report.json").write_text(report_json(report), encoding="utf-8")
        summary = report_summary(report)
        if as_json:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        for stage in summary["stages"]:
            line = ngettext(
                "%(alternative)s %(factor)sx %(cards)s card, %(tiers)s tiers, diameter %(diameter)s hops, %(power)s kW",
                "%(alternative)s %(factor)sx %(cards)s cards, %(tiers)s tiers, diameter %(diameter)s hops, %(power)s kW",
                stage["cards"],
            )
            self.stdout.write(line % {
                "alternative": f"{stage['alternative']:<14}", "factor": f"{stage['factor']:>5g}", "cards": f"{stage['cards']:>7,}",
                "tiers": stage["tiers"], "diameter": stage["diameter_hops"], "power": f"{stage['power_kw']:,.0f}",
            })  # fmt: skip
        knee = summary["knee"]
        self.stdout.write(gettext("knee: %(knee)s") % {"knee": knee_explanation(knee, translation)} if knee else gettext("knee: none, scaling holds at every stage"))
        self.stdout.write(self.style.SUCCESS(gettext("wrote report.html, report.pdf, stages.csv, report.json to %(directory)s") % {"directory": directory}))
