"""The diagnosis page: the article's troubleshooting table run bottom-up on a fabric."""
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import translation
from django.utils.translation import gettext

from twin.common.params import id_from_text
from twin.fabrics.models import Fabric
from twin.operations.diagnosis import TelemetrySample
from twin.runs.models import Run, RunKind, RunStatus
from twin.whatif.render import render_comparison_html, render_csv, render_pdf, report_json
from twin.whatif.report import compare_reports

from .models import TelemetryState
from .whatifs import whatif_report_html, whatif_report_translated
from .services import fabric_diagnose

__all__ = ("diagnosis_page", "whatif_report_page", "whatif_report_download", "whatif_compare_page")

RECENT_MEASUREMENTS = 20


def diagnosis_page(request, fabric_id: int):
    fabric = get_object_or_404(Fabric, pk=fabric_id)
    snapshot = fabric.latest_snapshot()
    result = None
    if snapshot is not None:
        entries = fabric.experiments.filter(snapshot=snapshot).order_by("-created_at")[:RECENT_MEASUREMENTS]
        history = TelemetryState.objects.filter(fabric=fabric).values_list("history", flat=True).first() or []
        telemetry = [TelemetrySample(t_s=sample["t_s"], link=sample["link"], counters=sample["counters"]) for sample in history]
        result = fabric_diagnose(snapshot=snapshot, measurement_entries=list(entries), telemetry=telemetry)
    return render(request, "simulations/diagnosis.html", {"fabric": fabric, "snapshot": snapshot, "result": result})


REPORT_DOWNLOADS = {
    "pdf": ("application/pdf", lambda report: render_pdf(report, translations=translation)),
    "csv": ("text/csv", render_csv),
    "json": ("application/json", report_json),
}
"""Format -> (content type, render); the PDF in the reader's language, CSV and JSON as stored."""


def finished_whatif(run_id: int) -> Run:
    run = get_object_or_404(Run.objects.select_related("snapshot__fabric"), pk=run_id, kind=RunKind.WHATIF)
    if run.status != RunStatus.SUCCEEDED:
        raise Http404(gettext("What-if run %(id)s has no report (%(status)s).") % {"id": run.pk, "status": run.get_status_display().lower()})
    return run


def whatif_report_page(request, run_id: int):
    """The report, served from the stored run (nothing is recomputed)."""
    run = finished_whatif(run_id)
    others = Run.objects.filter(kind=RunKind.WHATIF, status=RunStatus.SUCCEEDED, snapshot__fabric=run.snapshot.fabric).exclude(pk=run.pk).order_by("-created_at")[:20]
    return render(request, "simulations/whatif_report.html", {"run": run, "report_html": whatif_report_html(run), "others": others})


def whatif_report_download(request, run_id: int, fmt: str):
    run = finished_whatif(run_id)
    if fmt not in REPORT_DOWNLOADS:
        raise Http404(gettext("No %(format)s download; there are %(formats)s.") % {"format": fmt, "formats": ", ".join(REPORT_DOWNLOADS)})
    content_type, render_report = REPORT_DOWNLOADS[fmt]
    response = HttpResponse(render_report(whatif_report_translated(run, run.detail["report"])), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="whatif-{run.pk}.{fmt}"'
    return response


def whatif_compare_page(request):
    a_id, b_id = id_from_text(request.GET.get("a")), id_from_text(request.GET.get("b"))
    if a_id is None or b_id is None:
        raise Http404(gettext("Compare two finished what-if runs: ?a=<run id>&b=<run id>."))
    a, b = finished_whatif(a_id), finished_whatif(b_id)
    comparison = compare_reports(whatif_report_translated(a, a.detail["report"]), whatif_report_translated(b, b.detail["report"]))
    comparison_html = render_comparison_html(comparison, translations=translation)
    return render(request, "simulations/whatif_compare.html", {"a": a, "b": b, "comparison_html": comparison_html})
