"""Record nccl-tests output in a fabric's experiment journal (and optionally calibrate to it)."""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from twin.common.errors import ApplicationError
from twin.fabrics.cli import fabric_snapshot
from twin.fabrics.services import SourceFile, UploadRejected
from twin.journal.services import experiment_import, experiments_calibrate


class Command(BaseCommand):
    help = "Record nccl-tests reports as journal entries, with the twin's prediction beside each size."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="FILE")
        parser.add_argument("--fabric", required=True)
        parser.add_argument("--library-version", default="")
        parser.add_argument("--algorithm", default="", help="As configured for the run (e.g. NCCL_ALGO)")
        parser.add_argument("--protocol", default="", help="As configured for the run (NCCL_PROTO: LL, LL128 or Simple)")
        parser.add_argument("--notes", default="")
        parser.add_argument("--calibrate", action="store_true", help="Then fit the twin to these runs")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, paths, fabric, library_version, algorithm, protocol, notes, calibrate, as_json, **options):
        found, snapshot = fabric_snapshot(fabric)
        files = []
        for path in map(Path, paths):
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
            files.append(SourceFile(path.name, path.read_bytes()))
        meta = {"library_version": library_version, "algorithm": algorithm, "protocol": protocol, "notes": notes}
        try:
            entries = experiment_import(fabric=found, snapshot=snapshot, files=files, meta=meta)
            fitted = experiments_calibrate(experiments=entries) if calibrate else None
        except UploadRejected as rejected:
            for file in rejected.extra["files"]:
                for problem in file["problems"]:
                    self.stderr.write(problem["detail"])
            raise CommandError("nothing was recorded") from rejected
        except ApplicationError as error:
            raise CommandError(error.message) from error
        summary = {
            "fabric": found.name,
            "entries": [{"id": e.pk, "title": e.title, "collective": e.collective, "cards": e.card_count,
                         "peak_busbw_GBps": e.peak_busbw_GBps, "max_abs_error": e.max_abs_error} for e in entries],
            "calibration": None if fitted is None else {k: fitted[k] for k in ("parameters", "max_relative_error", "rms_relative_error")},
        }
        if as_json:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        for entry in summary["entries"]:
            self.stdout.write(f"#{entry['id']} {entry['title']}: peak {entry['peak_busbw_GBps']:.1f} GB/s, twin off by up to {100 * (entry['max_abs_error'] or 0):.0f}%")
        if fitted:
            self.stdout.write(self.style.SUCCESS(f"calibrated: largest error {100 * fitted['max_relative_error']:.1f}%, RMS {100 * fitted['rms_relative_error']:.1f}%"))
