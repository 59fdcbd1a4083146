"""The diagnosis page (the article's troubleshooting table run bottom-up on a fabric), what-if
reports, and the forms of a fabric's live telemetry."""
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_POST

from twin.accounts.decorators import role_required
from twin.accounts.models import Role
from twin.common.errors import ApplicationError
from twin.common.params import id_from_text
from twin.fabrics.models import Fabric
from twin.fabrics.services import source_files_from_uploads
from twin.operations.diagnosis import TelemetrySample
from twin.runs.models import Run, RunKind, RunStatus
from twin.whatif.render import render_comparison_html, render_csv, render_pdf, report_json
from twin.whatif.report import compare_reports

from .forms import TelemetryReadingForm, TelemetrySourceForm
from .models import TelemetryState
from .whatifs import whatif_report_html, whatif_report_translated
from .services import fabric_diagnose
from .telemetry import telemetry_reading_import, telemetry_source_save

__all__ = ("diagnosis_page", "whatif_report_page", "whatif_report_download", "whatif_compare_page", "telemetry_source_form", "telemetry_reading_form")

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


def telemetry_page_url(fabric: Fabric) -> str:
    return reverse("fabric-detail", args=[fabric.pk]) + "#live-telemetry"


@role_required(Role.OPERATOR)
@require_POST
def telemetry_source_form(request, fabric_id: int):
    """Save the fabric's Prometheus source once the server answered; the fabric page again, with
    the form and its errors, when it did not."""
    from twin.fabrics.views import fabric_page

    fabric = get_object_or_404(Fabric, pk=fabric_id)
    form = TelemetrySourceForm(request.POST)
    if form.is_valid():
        given = form.cleaned_data
        try:
            source = telemetry_source_save(
                fabric=fabric, url=given["url"], preset=given["preset"], mapping=given["mapping"], interval_s=given["interval_s"],
                rate_window_s=given["rate_window_s"], enabled=given["enabled"], user=request.user,
            )  # fmt: skip
        except ApplicationError as error:
            form.add_error(None, error.message)
        else:
            check = source.last_report.get("check")
            if check:
                messages.success(request, gettext("Prometheus %(version)s answered: %(mapped)s of %(series)s series name ports of %(fabric)s; polling every %(interval)s s.") % {
                    "version": check["version"], "mapped": check["mapped"], "series": check["series"], "fabric": fabric.name, "interval": f"{source.interval_s:g}",
                })
            else:
                messages.success(request, gettext("Polling of %(fabric)s's Prometheus is off.") % {"fabric": fabric.name})
            return redirect(telemetry_page_url(fabric))
    return fabric_page(request, fabric.pk, telemetry_source_form=form, status=400)


@role_required(Role.OPERATOR)
@require_POST
def telemetry_reading_form(request, fabric_id: int):
    """One perfquery -x or ibqueryerrors reading, as telemetry of the fabric."""
    fabric = get_object_or_404(Fabric, pk=fabric_id)
    form = TelemetryReadingForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, " ".join(error for errors in form.errors.values() for error in errors))
        return redirect(telemetry_page_url(fabric))
    taken_at = form.cleaned_data["taken_at"]
    try:
        result = telemetry_reading_import(fabric=fabric, source=source_files_from_uploads([form.cleaned_data["file"]])[0], taken_at=taken_at.timestamp() if taken_at else None)
    except ApplicationError as error:
        messages.error(request, error.message)
        return redirect(telemetry_page_url(fabric))
    report = result["telemetry"]
    text = ngettext("%(kind)s reading: %(count)s port read", "%(kind)s reading: %(count)s ports read", result["ports"]) % {"kind": result["kind"], "count": result["ports"]}
    if result["published"] and report.get("first_samples"):
        text += "; " + ngettext(
            "%(count)s port read for the first time: its utilisation shows from the next reading",
            "%(count)s ports read for the first time: their utilisation shows from the next reading",
            report["first_samples"],
        ) % {"count": report["first_samples"]}
    elif result["published"]:
        text += "; " + gettext("%(links)s links measured, shown to everyone viewing the fabric") % {"links": report.get("links_measured", 0)}
    if report.get("ports_with_errors"):
        text += "; " + ngettext("%(count)s port with new errors", "%(count)s ports with new errors", report["ports_with_errors"]) % {"count": report["ports_with_errors"]}
    if result["unknown"]:
        text += "; " + ngettext("%(count)s port not in the fabric", "%(count)s ports not in the fabric", len(result["unknown"])) % {"count": len(result["unknown"])} + f" ({'; '.join(result['unknown'][:3])})"
    messages.success(request, text + ".")
    return redirect(telemetry_page_url(fabric))
