"""Ingest topology files from the command line (for automation): one snapshot from all PATHs
(archives of per-node files among them are unpacked, as uploads are)."""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from twin.common.errors import ApplicationError
from twin.ingest import ParseOptions
from twin.ingest.options import SCALE_UP_RULES, pattern_problem
from twin.fabrics.models import SnapshotRole
from twin.fabrics.services import SourceFile, UploadRejected, snapshot_import, source_files_expanded
from twin.simcore.units import counted, counted_list


# Where the cards came from, as the summary keys them (formats, and "hca" for compute HCAs).
CARD_SOURCE_NAMES = {"hca": "compute HCAs (one card each)", "nccl-topo-xml": "NCCL topology XML", "nvidia-smi-topo": "nvidia-smi topo -m"}


class Command(BaseCommand):
    help = "Read topology files (merged when several) into the next snapshot of a fabric."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="PATH", help="Topology files; .tar, .tar.gz and .zip archives of per-node files are unpacked")
        parser.add_argument("--fabric", required=True, help="Fabric name (created if new)")
        parser.add_argument("--format", dest="fmt", help="Parser for every file (default: detected per file)")
        parser.add_argument("--plan", action="store_true", help="The files are a cabling plan, not a discovery")
        parser.add_argument("--default-bandwidth-gbps", type=float, help="For formats that carry no bandwidth")
        parser.add_argument("--default-latency-ns", type=float, help="For formats that carry no latency")
        parser.add_argument("--non-compute-hca-pattern", help="HCAs whose host or description matches this regular expression stand for no card (default: storage and management names; '' for none)")
        parser.add_argument("--compute-hcas-per-host", type=int, help="Only the first N HCAs of each host stand for cards")
        parser.add_argument("--scale-up", choices=SCALE_UP_RULES, help="auto (default): add the NVSwitch a hint file leaves out; none: leave it out")
        parser.add_argument("--nvlink-gbps", type=float, help="NVLink per GPU for the completed scale-up (default: by GPU generation)")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print one JSON object")

    def handle(self, *args, paths, fabric, fmt, plan, as_json, **options):
        if options["non_compute_hca_pattern"] is not None and (problem := pattern_problem(options["non_compute_hca_pattern"])):
            raise CommandError(f"--non-compute-hca-pattern: {problem}")
        files = []
        for path in map(Path, paths):
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
            files.append(SourceFile(name=path.name, data=path.read_bytes()))
        try:
            snapshot = snapshot_import(
                fabric_name=fabric,
                files=source_files_expanded(files),
                fmt=fmt,
                options=ParseOptions.from_values(options),
                role=SnapshotRole.PLAN if plan else SnapshotRole.DISCOVERED,
            )
        except UploadRejected as rejected:
            if as_json:
                self.stdout.write(json.dumps({"error": rejected.message, "files": rejected.extra["files"]}, indent=2))
            else:
                for file in rejected.extra["files"]:
                    for problem in file["problems"]:
                        self.stderr.write(problem["detail"])
            raise CommandError(f"nothing was stored: {len(rejected.extra['files'])} file(s) could not be read")
        except ApplicationError as error:
            raise CommandError(error.message) from error
        summary = snapshot.summary
        if as_json:
            self.stdout.write(json.dumps({
                "fabric": snapshot.fabric.name,
                "snapshot": snapshot.version,
                "snapshot_id": snapshot.pk,
                "role": snapshot.role,
                "format": snapshot.source_format,
                "nodes": summary["nodes_by_kind"],
                "links": summary["links"],
                "links_by_state": summary["links_by_state"],
                "links_by_speed": summary["links_by_speed"],
                "warnings": summary["warnings"],
                "completion": summary.get("completion"),
            }, indent=2))
            return
        kinds = counted_list(summary["nodes_by_kind"])
        self.stdout.write(self.style.SUCCESS(f"{snapshot.fabric.name} v{snapshot.version} ({snapshot.get_role_display().lower()}, {snapshot.source_format}): {kinds}; {counted(summary['links'], 'link')}"))
        completion = summary.get("completion") or {}
        sources = (completion.get("cards") or {}).get("sources") or {}
        if sources:
            self.stdout.write("  cards from: " + ", ".join(f"{count:,} {CARD_SOURCE_NAMES.get(source, source)}" for source, count in sources.items()))
        if (completion.get("scale_up") or {}).get("hosts"):
            self.stdout.write(f"  scale-up completed on {counted(completion['scale_up']['hosts'], 'host')}: " + "; ".join(completion["scale_up"]["generations"]))
        if (completion.get("in_switch_reduction") or {}).get("switches"):
            self.stdout.write(f"  in-switch reduction (SHARP) on {counted(completion['in_switch_reduction']['switches'], 'switch')}")
        for warning in summary["warnings"]:
            self.stdout.write(self.style.WARNING(f"  warning: {warning}"))
