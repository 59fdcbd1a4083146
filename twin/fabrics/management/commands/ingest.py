"""Ingest topology files from the command line (for automation): one snapshot from all PATHs
(archives of per-node files among them are unpacked, as uploads are)."""
import json
from pathlib import Path

from django.core.management.base import CommandError
from django.utils import translation
from django.utils.translation import gettext, gettext_noop, ngettext, gettext_lazy as _

from twin.common.cli import TwinCommand

from twin.common.errors import ApplicationError
from twin.ingest import ParseOptions
from twin.ingest.options import SCALE_UP_RULES, pattern_problem
from twin.fabrics.models import SnapshotRole
from twin.fabrics.services import SourceFile, UploadRejected, snapshot_import
from twin.simcore.translation import rendered
from twin.simcore.units import counted_list_phrase, counted_phrase


# Where the cards came from, as the summary keys them (formats, and "hca" for compute HCAs).
CARD_SOURCE_NAMES = {"hca": gettext_noop("compute HCAs (one card each)"), "nccl-topo-xml": gettext_noop("NCCL topology XML"), "nvidia-smi-topo": "nvidia-smi topo -m"}


class Command(TwinCommand):
    help = _("Read topology files (merged when several) into the next snapshot of a fabric.")

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="PATH", help=_("Topology files; .tar, .tar.gz and .zip archives of per-node files are unpacked"))
        parser.add_argument("--fabric", required=True, help=_("Fabric name (created if new)"))
        parser.add_argument("--format", dest="fmt", help=_("Parser for every file (default: detected per file)"))
        parser.add_argument("--plan", action="store_true", help=_("The files are a cabling plan, not a discovery"))
        parser.add_argument("--default-bandwidth-gbps", type=float, help=_("For formats that carry no bandwidth"))
        parser.add_argument("--default-latency-ns", type=float, help=_("For formats that carry no latency"))
        parser.add_argument("--non-compute-hca-pattern", help=_("HCAs whose host or description matches this regular expression stand for no card (default: storage and management names; '' for none)"))
        parser.add_argument("--compute-hcas-per-host", type=int, help=_("Only the first N HCAs of each host stand for cards"))
        parser.add_argument("--scale-up", choices=SCALE_UP_RULES, help=_("auto (default): add the NVSwitch a hint file leaves out; none: leave it out"))
        parser.add_argument("--nvlink-gbps", type=float, help=_("NVLink per GPU for the completed scale-up (default: by GPU generation)"))
        parser.add_argument("--json", action="store_true", dest="as_json", help=_("Print one JSON object"))

    def handle(self, *args, paths, fabric, fmt, plan, as_json, **options):
        if options["non_compute_hca_pattern"] is not None and (problem := pattern_problem(options["non_compute_hca_pattern"])):
            raise CommandError(gettext("%(where)s: %(problem)s") % {"where": "--non-compute-hca-pattern", "problem": problem.render(translation)})
        files = []
        for path in map(Path, paths):
            if not path.is_file():
                raise CommandError(gettext("%(path)s: no such file") % {"path": path})
            files.append(SourceFile(name=path.name, data=path.read_bytes()))
        try:
            snapshot = snapshot_import(
                fabric_name=fabric,
                files=files,
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
            unread = len(rejected.extra["files"])
            raise CommandError(ngettext("nothing was stored: %(count)s file could not be read", "nothing was stored: %(count)s files could not be read", unread) % {"count": unread})
        except ApplicationError as error:
            raise CommandError(error.message) from error
        summary = snapshot.summary_text()
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
        words = {
            "fabric": snapshot.fabric.name, "version": snapshot.version, "role": snapshot.get_role_display().lower(), "format": snapshot.source_format,
            "kinds": rendered(counted_list_phrase(summary["nodes_by_kind"]), translation), "links": rendered(counted_phrase(summary["links"], "link"), translation),
        }  # fmt: skip
        self.stdout.write(self.style.SUCCESS(gettext("%(fabric)s v%(version)s (%(role)s, %(format)s): %(kinds)s; %(links)s") % words))
        completion = summary.get("completion") or {}
        sources = (completion.get("cards") or {}).get("sources") or {}
        if sources:
            listed = gettext(", ").join(f"{count:,} {gettext(CARD_SOURCE_NAMES.get(source, source))}" for source, count in sources.items())
            self.stdout.write("  " + gettext("cards from: %(sources)s") % {"sources": listed})
        if (completion.get("scale_up") or {}).get("hosts"):
            self.stdout.write("  " + gettext("scale-up completed on %(hosts)s: %(generations)s") % {
                "hosts": rendered(counted_phrase(completion["scale_up"]["hosts"], "host"), translation), "generations": gettext("; ").join(completion["scale_up"]["generations"]),
            })  # fmt: skip
        if (completion.get("in_switch_reduction") or {}).get("switches"):
            switches = rendered(counted_phrase(completion["in_switch_reduction"]["switches"], "switch"), translation)
            self.stdout.write("  " + gettext("in-switch reduction (SHARP) on %(switches)s") % {"switches": switches})
        for warning in summary["warnings"]:
            self.stdout.write(self.style.WARNING("  " + gettext("warning: %(warning)s") % {"warning": warning}))
