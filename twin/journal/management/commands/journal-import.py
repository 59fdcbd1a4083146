"""Record nccl-tests output in a fabric's experiment journal (and optionally calibrate to it)."""
import json
from pathlib import Path

from django.core.management.base import CommandError
from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy as _, ngettext

from twin.common.cli import TwinCommand
from twin.common.errors import ApplicationError, core_error_text
from twin.fabrics.cli import fabric_snapshot
from twin.fabrics.services import SourceFile, UploadRejected
from twin.journal.services import experiment_import, experiment_import_calibrated
from twin.simcore.calibrate import DEFAULT_FIT, FITTABLE
from twin.simcore.errors import TwinCoreError
from twin.simcore.units import parse_size


def names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


class Command(TwinCommand):
    help = _("Record nccl-tests reports as journal entries, with the twin's prediction beside each size.")

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="FILE")
        parser.add_argument("--fabric", required=True)
        parser.add_argument("--library-version", default="")
        parser.add_argument("--algorithm", default="", help=_("As configured for the run (e.g. NCCL_ALGO)"))
        parser.add_argument("--protocol", default="", help=_("As configured for the run (NCCL_PROTO: LL, LL128 or Simple)"))
        parser.add_argument("--notes", default="")
        parser.add_argument("--calibrate", action="store_true", help=_("Then fit the twin to these runs; if the fit fails, nothing is recorded"))
        parser.add_argument("--fit", type=names, default=list(DEFAULT_FIT), metavar="NAME,...",
                            help=format_lazy(_("Parameters to fit (default {default}); any of {names}"), default=",".join(DEFAULT_FIT), names=", ".join(FITTABLE)))
        parser.add_argument("--hold-out", type=names, default=[], metavar="SIZE,...",
                            help=_("Validate: leave these measured sizes (e.g. 16MiB) out of the fit and report the error there; nothing is stored"))
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, paths, fabric, library_version, algorithm, protocol, notes, calibrate, fit, hold_out, as_json, **options):
        found, snapshot = fabric_snapshot(fabric)
        files = []
        for path in map(Path, paths):
            if not path.is_file():
                raise CommandError(gettext("%(path)s: no such file") % {"path": path})
            files.append(SourceFile(path.name, path.read_bytes()))
        try:
            held_out = [parse_size(size) for size in hold_out]
        except TwinCoreError as error:
            raise CommandError(gettext("%(where)s: %(problem)s") % {"where": "--hold-out", "problem": core_error_text(error)}) from error
        if held_out and not calibrate:
            raise CommandError(gettext("--hold-out validates a calibration; add --calibrate"))
        meta = {"library_version": library_version, "algorithm": algorithm, "protocol": protocol, "notes": notes}
        try:
            if calibrate:
                entries, fitted = experiment_import_calibrated(fabric=found, snapshot=snapshot, files=files, meta=meta, fit=fit, held_out=held_out)
            else:
                entries, fitted = experiment_import(fabric=found, snapshot=snapshot, files=files, meta=meta), None
        except UploadRejected as rejected:
            for file in rejected.extra["files"]:
                for problem in file["problems"]:
                    self.stderr.write(problem["detail"])
            raise CommandError(gettext("nothing was recorded")) from rejected
        except ApplicationError as error:
            raise CommandError(gettext("%(error)s Nothing was recorded.") % {"error": error.message}) from error
        keys = ("parameters", "standard_errors", "max_relative_error", "rms_relative_error", "validation")
        summary = {
            "fabric": found.name,
            "entries": [{"id": e.pk, "title": e.title, "collective": e.collective, "cards": e.card_count,
                         "peak_busbw_GBps": e.peak_busbw_GBps, "max_abs_error": e.max_abs_error} for e in entries],
            "calibration": None if fitted is None else {key: fitted[key] for key in keys if key in fitted},
        }
        if as_json:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        for entry in summary["entries"]:
            self.stdout.write(gettext("#%(id)s %(title)s: peak %(peak)s GB/s, twin off by up to %(error)s%%") % {
                "id": entry["id"], "title": entry["title"], "peak": f"{entry['peak_busbw_GBps']:.1f}", "error": f"{100 * (entry['max_abs_error'] or 0):.0f}",
            })  # fmt: skip
        if fitted:
            for name, value in fitted["parameters"].items():
                error = fitted["standard_errors"][name]
                self.stdout.write(f"  {name} = {value:.4g}" + ("" if error is None else f" +- {error:.2g}"))
            self.stdout.write(self.style.SUCCESS(gettext("calibrated: largest error %(largest)s%%, RMS %(rms)s%%") % {
                "largest": f"{100 * fitted['max_relative_error']:.1f}", "rms": f"{100 * fitted['rms_relative_error']:.1f}",
            }))  # fmt: skip
            if "validation" in fitted:
                check = fitted["validation"]
                line = ngettext(
                    "held out %(count)s size: largest error %(largest)s%%, RMS %(rms)s%% (validation only: the fabric's transport is unchanged)",
                    "held out %(count)s sizes: largest error %(largest)s%%, RMS %(rms)s%% (validation only: the fabric's transport is unchanged)",
                    len(check["held_out_sizes"]),
                )
                self.stdout.write(line % {
                    "count": len(check["held_out_sizes"]), "largest": f"{100 * check['max_relative_error']:.1f}", "rms": f"{100 * check['rms_relative_error']:.1f}",
                })  # fmt: skip
