"""Pages for fabrics, snapshots, uploads and diffs."""
import json

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _, gettext_lazy
from django.views.decorators.http import require_http_methods

from twin.accounts.decorators import role_required
from twin.accounts.models import Role
from twin.accounts.services import preference_get
from twin.common.errors import ApplicationError
from twin.common.pages import paged
from twin.common.params import id_from_text
from twin.ingest import ParseOptions
from twin.ingest.completion import HCA_CARD_SOURCE
from twin.runs.forms import FailureForm, PlacementForm, ReplayForm, WhatIfForm, job_shape_fitting, whatif_choice_fitting
from twin.runs.models import Run
from twin.simcore.translation import rendered, words_from_plain
from twin.simcore.diff import FINDING_CLASSES, SEVERITIES
from twin.replay.prometheus import PRESETS
from twin.simulations.forms import PRESET_LABELS, TelemetryReadingForm, TelemetrySourceForm
from twin.simulations.services import ALGORITHMS, COLLECTIVES, ECMP_MODES, PROTOCOLS
from twin.whatif.rules import reason_text

from .forms import ScaleUpCorrectionForm, SnapshotUploadForm
from .models import Fabric, Snapshot, SnapshotRole
from .selectors import diff_findings, fabric_list, snapshot_diff
from .services import UploadRejected, snapshot_import, snapshot_scale_up_correct, source_files_from_uploads

__all__ = ("fabric_list_page", "fabric_page", "upload_page", "diff_page")

DIFF_FINDINGS_PER_PAGE = 100
DIFF_SORT_LABELS = {  # every DIFF_SORTS key, and reversed with a leading "-"
    "where": gettext_lazy("Place (switch, port)"),
    "-where": gettext_lazy("Place, reversed"),
    "severity": gettext_lazy("Severity (critical first)"),
    "-severity": gettext_lazy("Severity (minor first)"),
    "class": gettext_lazy("Class (MISSING first)"),
    "-class": gettext_lazy("Class, reversed"),
    "peer": gettext_lazy("Peer (A-Z)"),
    "-peer": gettext_lazy("Peer (Z-A)"),
}


FABRICS_PER_PAGE = 25
FABRIC_SORTS = {  # value in the URL -> (label, ordering)
    "name": (gettext_lazy("Name (A-Z)"), "name"),
    "-name": (gettext_lazy("Name (Z-A)"), "-name"),
    "newest": (gettext_lazy("Newest first"), "-created_at"),
    "oldest": (gettext_lazy("Oldest first"), "created_at"),
}


def fabric_list_page(request):
    """Fabrics filtered by name, sorted, a page at a time."""
    fabrics = fabric_list(request.user)
    query_text = request.GET.get("q", "").strip()
    if query_text:
        fabrics = fabrics.filter(name__icontains=query_text)
    sort = request.GET.get("sort", "name")
    fabrics = fabrics.order_by(FABRIC_SORTS.get(sort, FABRIC_SORTS["name"])[1], "pk")
    page, query = paged(request, fabrics, FABRICS_PER_PAGE)
    sorts = [(value, label) for value, (label, _ordering) in FABRIC_SORTS.items()]
    return render(request, "fabrics/fabric_list.html", {"page": page, "q": query_text, "sort": sort, "sorts": sorts, "query": query})


SNAPSHOTS_PER_PAGE = 20


def snapshot_of(fabric: Fabric, wanted: str):
    """The fabric's snapshot with id `wanted`, or None (bad or foreign ids are simply not found)."""
    snapshot_id = id_from_text(wanted)
    return None if snapshot_id is None else fabric.snapshots.select_related("created_by").filter(pk=snapshot_id).first()


# Lazy: the module is imported once, each page is shown in its viewer's language.
CARD_SOURCE_LABELS = {
    HCA_CARD_SOURCE: gettext_lazy("HCAs (one card per compute HCA)"),
    "nccl-topo-xml": gettext_lazy("NCCL topology XML"),
    "nvidia-smi-topo": gettext_lazy("nvidia-smi topo -m"),
    "twin-fabric": gettext_lazy("the twin's own format"),
}


def card_sources(snapshot: Snapshot) -> list[tuple[str, int]]:
    """(where from, count) of the snapshot's cards, as its upload counted them."""
    sources = ((snapshot.summary.get("completion") or {}).get("cards") or {}).get("sources") or {}
    return [(CARD_SOURCE_LABELS.get(source, source), count) for source, count in sources.items()]


def inferred_design(snapshot: Snapshot) -> dict | None:
    """The design rules stored with the snapshot as (rule, value, how it was found) rows, or
    the reasons there are none; None for snapshots stored before designs were kept."""
    design = snapshot.summary.get("design")
    if not design:
        return None
    if "error" in design:
        words = design.get("words")
        if words is None:  # stored before words were kept: English
            return {"error": design["error"], "problems": design.get("problems") or [design["error"]]}
        lines = words_from_plain(words["problems"])
        return {"error": str(rendered(words_from_plain(words["error"]), translation)), "problems": [str(rendered(line, translation)) for line in lines]}
    inferred = design.get("inferred", {})
    return {"rules": [(name, value, reason_text(inferred.get(name, ""), translation)) for name, value in design.items() if name != "inferred"]}


def snapshot_runs_unavailable(snapshot: Snapshot) -> str | None:
    """Why no run can work on `snapshot` (every run kind needs two cards to talk), or None."""
    if snapshot.card_count >= 2:
        return None
    if snapshot.card_count == 1:
        return _("This snapshot has one card: runs need at least two cards that talk to each other.")
    return _("This snapshot has no cards: no file names an accelerator and no HCA stands for one, so runs cannot start. Upload the hosts' NCCL topology XML or nvidia-smi topo -m with the fabric dump, or change the HCA rule at upload.")


def telemetry_source_context(fabric: Fabric, form: TelemetrySourceForm | None) -> dict:
    """The fabric's Prometheus source as the page shows it (the mapping in effect: the preset's
    defaults with the operator's changes), and its form, filled with what is stored."""
    source = getattr(fabric, "telemetry_source", None)
    if form is None:
        initial = {"url": source.url, "preset": source.preset, "mapping": json.dumps(source.mapping) if source.mapping else "",
                   "interval_s": source.interval_s, "rate_window_s": source.rate_window_s, "enabled": source.enabled} if source else None  # fmt: skip
        form = TelemetrySourceForm(initial=initial)
    shown = None
    if source is not None:
        effective = {**PRESETS.get(source.preset, {}), **source.mapping}
        error = source.last_error
        if error and "error" in source.last_report:  # in the reader's language (stored before its words were: as it is)
            error = str(rendered(words_from_plain(source.last_report["error"]), translation))
        shown = {"source": source, "preset": PRESET_LABELS.get(source.preset, source.preset), "mapping": json.dumps(effective, indent=2),
                 "check": source.last_report.get("check"), "poll": source.last_report.get("poll"), "error": error}  # fmt: skip
    return {"telemetry_source": shown, "telemetry_source_form": form, "telemetry_reading_form": TelemetryReadingForm()}


def fabric_page(request, fabric_id: int, *, telemetry_source_form: TelemetrySourceForm | None = None, status: int = 200):
    """The fabric page; the telemetry source's view hands back its form with errors."""
    fabric = get_object_or_404(Fabric, pk=fabric_id)
    # A deep link (?run=) opens that run's panel; without ?snapshot= it shows the run's snapshot.
    shown_run = linked_run(fabric, request.GET.get("run", ""))
    snapshot = snapshot_of(fabric, request.GET.get("snapshot", "")) or (shown_run.snapshot if shown_run else None) or fabric.latest_snapshot()
    if shown_run is not None and shown_run.snapshot_id != snapshot.pk:
        shown_run = None  # its results would be drawn on another snapshot's map
    compare = snapshot_of(fabric, request.GET.get("compare", ""))
    if compare == snapshot:
        compare = None
    snapshots, snapshot_query = paged(request, fabric.snapshots.select_related("created_by").order_by("-version"), SNAPSHOTS_PER_PAGE)
    runs = snapshot.runs.select_related("created_by").order_by("-created_at")[:10] if snapshot else []
    design = inferred_design(snapshot) if snapshot else None
    job_shape = job_shape_fitting(snapshot.card_count if snapshot else 0)
    runs_unavailable = snapshot_runs_unavailable(snapshot) if snapshot else None
    return render(
        request,
        "fabrics/fabric_detail.html",
        {
            "fabric": fabric, "snapshot": snapshot, "snapshots": snapshots, "snapshot_query": snapshot_query, "runs": runs, "compare": compare,
            "collectives": COLLECTIVES, "algorithms": ALGORITHMS, "protocols": PROTOCOLS, "ecmp_modes": ECMP_MODES,
            "runs_unavailable": runs_unavailable,
            "card_sources": card_sources(snapshot) if snapshot else [],
            "design_rules": design,
            "whatif_unavailable": runs_unavailable or (design or {}).get("error"),
            "placement_form": PlacementForm(initial=job_shape), "failure_form": FailureForm(),
            "replay_form": ReplayForm(initial=job_shape), "whatif_form": WhatIfForm(initial=whatif_choice_fitting(snapshot)),
            **telemetry_source_context(fabric, telemetry_source_form),
            "shown_run": shown_run,
            "shown_run_can_cancel": shown_run is not None and shown_run.may_be_cancelled_by(request.user),
            "playback": getattr(shown_run, "playback", None) if shown_run is not None and shown_run.kind == "replay" else None,
            "can_control": request.user.has_role(Role.OPERATOR),
            "workspace_layout": json.dumps(preference_get(user=request.user, key="workspace")),
        },
        status=status,
    )


def linked_run(fabric: Fabric, text: str) -> Run | None:
    """The run a fabric page's ?run= names, when it is one of this fabric's."""
    run_id = id_from_text(text)
    if run_id is None:
        return None
    return Run.objects.select_related("snapshot", "created_by").filter(pk=run_id, snapshot__fabric=fabric).first()


@role_required(Role.OPERATOR)
@require_http_methods(["GET", "POST"])
def upload_page(request):
    """The upload form. Scripts in the page post it with fetch (for the progress bar) and
    get JSON back; without scripts it is a plain form that redirects or re-renders."""
    form = SnapshotUploadForm(request.POST or None, request.FILES or None)
    wants_json = "application/json" in request.headers.get("Accept", "")
    if request.method == "POST":
        problems = None
        if form.is_valid():
            given = form.cleaned_data
            try:
                snapshot = snapshot_import(
                    fabric_name=given["fabric"],
                    files=source_files_from_uploads(given["file"]),
                    fmt=given["format"] or None,
                    options=ParseOptions.from_values(given),
                    role=SnapshotRole(given["role"] or SnapshotRole.DISCOVERED),
                    user=request.user,
                )
            except UploadRejected as rejected:
                problems = rejected.extra["files"]
                form.add_error("file", rejected.message)
            except ApplicationError as error:
                form.add_error("file", error.message)
            else:
                url = reverse("fabric-detail", args=[snapshot.fabric_id]) + f"?snapshot={snapshot.pk}"
                if wants_json:
                    return JsonResponse({"url": url, "snapshot": snapshot.pk, "version": snapshot.version, "format": snapshot.source_format, "summary": snapshot.summary_text()}, status=201)
                messages.success(request, _("Snapshot v%(version)s of %(fabric)s stored.") % {"version": snapshot.version, "fabric": snapshot.fabric.name})
                return redirect(url)
        if wants_json:
            return JsonResponse({"detail": " ".join(e for errors in form.errors.values() for e in errors), "errors": form.errors, "files": problems or []}, status=400)
        return render(request, "fabrics/upload.html", {"form": form, "problems": problems}, status=400)
    return render(request, "fabrics/upload.html", {"form": form})


@role_required(Role.OPERATOR)
@require_http_methods(["POST"])
def scale_up_correct(request, snapshot_id: int):
    """Correct the scale-up the twin completed at upload: a new snapshot of the fabric with the
    NVLink per GPU the operator gives (or none: "leave it out")."""
    snapshot = get_object_or_404(Snapshot.objects.select_related("fabric"), pk=snapshot_id)
    form = ScaleUpCorrectionForm(request.POST)
    if form.is_valid():
        try:
            corrected = snapshot_scale_up_correct(snapshot=snapshot, nvlink_gbps=form.cleaned_data["nvlink_gbps"], user=request.user)
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, _("Snapshot v%(version)s of %(fabric)s stored with the corrected scale-up.") % {"version": corrected.version, "fabric": corrected.fabric.name})
            return redirect(reverse("fabric-detail", args=[corrected.fabric_id]) + f"?snapshot={corrected.pk}")
    else:
        messages.error(request, " ".join(error for errors in form.errors.values() for error in errors))
    return redirect(reverse("fabric-detail", args=[snapshot.fabric_id]) + f"?snapshot={snapshot.pk}")


def diff_page(request, fabric_id: int):
    """Compare two snapshots of a fabric (or a discovery against a plan): the findings filtered by
    class, severity and text, sorted, a page at a time."""
    fabric = get_object_or_404(Fabric, pk=fabric_id)
    snapshots = list(fabric.snapshots.order_by("-version"))
    by_id = {str(s.pk): s for s in snapshots}
    expected, found = by_id.get(request.GET.get("expected", "")), by_id.get(request.GET.get("found", ""))
    report = snapshot_diff(expected=expected, found=found) if expected and found else None
    # Until two are chosen, offer the usual question: the previous version against the latest.
    offered_expected = expected or (snapshots[1] if len(snapshots) > 1 else None)
    offered_found = found or (snapshots[0] if snapshots else None)
    chosen = {name: request.GET.get(name, "") for name in ("class", "severity", "q")}
    sort = request.GET.get("sort", "where")
    findings = diff_findings(report, finding_class=chosen["class"], severity=chosen["severity"], text=chosen["q"], sort=sort) if report else []
    page, query = paged(request, findings, DIFF_FINDINGS_PER_PAGE)
    return render(
        request,
        "fabrics/diff.html",
        {
            "fabric": fabric, "snapshots": snapshots, "expected": expected, "found": found, "report": report,
            "offered_expected": offered_expected, "offered_found": offered_found,
            "findings": [finding.as_plain(translation) for finding in page.object_list], "page": page, "query": query,
            "chosen": chosen, "sort": sort, "sorts": list(DIFF_SORT_LABELS.items()),
            "finding_classes": FINDING_CLASSES, "severities": SEVERITIES,
        },
    )
