"""Journal pages: list (filter, search, sort, pages, CSV), entry with its chart, new entry,
calibration from chosen entries."""
import csv
import io

from django.contrib import messages
from django.db.models import Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _, ngettext
from django.views.decorators.http import require_http_methods, require_POST

from twin.accounts.decorators import role_required
from twin.accounts.models import Role
from twin.common.errors import ApplicationError
from twin.common.pages import paged
from twin.common.params import id_from_text
from twin.fabrics.models import Fabric
from twin.fabrics.services import UploadRejected, source_files_from_uploads

from .charts import measured_vs_predicted_svg
from .forms import CalibrationForm, ExperimentForm, JournalFilterForm
from .models import Experiment
from .services import JOURNAL_FIELDS, experiment_create, experiment_import, experiments_calibrate

__all__ = ("journal_page", "experiment_page", "experiment_new_page", "journal_calibrate")

PAGE_SIZE = 25
CSV_COLUMNS = ("id", "fabric", "snapshot", "title", "collective", "card_count", "comm_library", "library_version", "algorithm",
               "chunk_size_bytes", "model_name", "tp", "pp", "dp", "ep", "size_bytes", "measured_busbw_GBps",
               "predicted_busbw_GBps", "relative_error", "created_at", "notes")


def filtered_experiments(fabric: Fabric, form: JournalFilterForm):
    entries = fabric.experiments.select_related("snapshot", "created_by")
    if form.is_valid():
        query = form.cleaned_data
        if query["q"]:
            entries = entries.filter(Q(title__icontains=query["q"]) | Q(notes__icontains=query["q"]) | Q(model_name__icontains=query["q"]) | Q(source_name__icontains=query["q"]))
        if query["collective"]:
            entries = entries.filter(collective=query["collective"])
        if query["library"]:
            entries = entries.filter(comm_library__icontains=query["library"])
        if query["sort"]:
            entries = entries.order_by(query["sort"], "-id")
    return entries


def journal_csv(fabric: Fabric, entries) -> HttpResponse:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for entry in entries:
        predicted = {p["size_bytes"]: p for p in entry.predicted}
        for point in entry.points:
            twin = predicted.get(point["size_bytes"], {})
            writer.writerow([
                entry.pk, fabric.name, entry.snapshot.version if entry.snapshot else "", entry.title, entry.collective, entry.card_count,
                entry.comm_library, entry.library_version, entry.algorithm, entry.chunk_size_bytes or "", entry.model_name,
                entry.tp or "", entry.pp or "", entry.dp or "", entry.ep or "", point["size_bytes"], point["busbw_GBps"],
                twin.get("busbw_GBps", ""), twin.get("error", ""), entry.created_at.isoformat(), entry.notes,
            ])
    response = HttpResponse(buffer.getvalue(), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{fabric.name}-journal.csv"'
    return response


def journal_page(request, fabric_id: int):
    fabric = get_object_or_404(Fabric, pk=fabric_id)
    form = JournalFilterForm(request.GET or None)
    entries = filtered_experiments(fabric, form)
    if request.GET.get("format") == "csv":
        return journal_csv(fabric, entries)
    page, query = paged(request, entries, PAGE_SIZE)
    calibration_form = CalibrationForm(fabric=fabric)
    return render(request, "journal/journal.html", {"fabric": fabric, "form": form, "page": page, "query": query, "calibration_form": calibration_form})


def experiment_page(request, fabric_id: int, experiment_id: int):
    entry = get_object_or_404(Experiment.objects.select_related("fabric", "snapshot", "created_by"), pk=experiment_id, fabric_id=fabric_id)
    rows = [{**point, "twin": twin} for point, twin in zip(entry.points, entry.predicted, strict=False)]
    chart = measured_vs_predicted_svg(entry.points, entry.predicted, title=entry.title)
    return render(request, "journal/experiment.html", {"entry": entry, "fabric": entry.fabric, "rows": rows, "chart": chart, "fields": JOURNAL_FIELDS})


@role_required(Role.OPERATOR)
@require_http_methods(["GET", "POST"])
def experiment_new_page(request, fabric_id: int):
    fabric = get_object_or_404(Fabric, pk=fabric_id)
    snapshot = fabric.latest_snapshot()
    form = ExperimentForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        if snapshot is None:
            form.add_error(None, _("This fabric has no snapshot to predict with; upload one first."))
        else:
            meta = {name: form.cleaned_data.get(name) for name in JOURNAL_FIELDS}
            try:
                if form.cleaned_data["files"]:
                    created = experiment_import(fabric=fabric, snapshot=snapshot, files=source_files_from_uploads(form.cleaned_data["files"]),
                                                meta={**meta, "card_count": form.cleaned_data["card_count"]}, user=request.user)
                else:
                    created = [experiment_create(fabric=fabric, snapshot=snapshot, collective=form.cleaned_data["collective"],
                                                 card_count=form.cleaned_data["card_count"], points=form.cleaned_data["manual_points"], meta=meta, user=request.user)]
            except UploadRejected as rejected:
                for file in rejected.extra["files"]:
                    for problem in file["problems"]:
                        form.add_error("files", problem["detail"])
            except ApplicationError as error:
                form.add_error(None, error.message)
            else:
                messages.success(request, ngettext("%(n)s journal entry recorded.", "%(n)s journal entries recorded.", len(created)) % {"n": len(created)})
                return redirect("experiment-detail", fabric_id=fabric.pk, experiment_id=created[0].pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "journal/new.html", {"fabric": fabric, "snapshot": snapshot, "form": form}, status=status)


@role_required(Role.OPERATOR)
@require_POST
def journal_calibrate(request, fabric_id: int):
    """Fit the chosen parameters to the chosen entries and show the fit (stored, or with held-out
    sizes only validated); a refusal goes back to the journal with its reason."""
    fabric = get_object_or_404(Fabric, pk=fabric_id)
    form = CalibrationForm(request.POST, fabric=fabric)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return redirect("journal", fabric_id=fabric.pk)
    choice = form.cleaned_data
    try:
        fitted = experiments_calibrate(experiments=list(choice["experiment"]), fit=choice["fit"], held_out=choice["held_out"])
    except ApplicationError as error:
        messages.error(request, error.message)
        return redirect("journal", fabric_id=fabric.pk)
    parameters = [{"name": name, "value": value, "standard_error": fitted["standard_errors"][name]} for name, value in fitted["parameters"].items()]
    return render(request, "journal/calibration.html", {"fabric": fabric, "fitted": fitted, "parameters": parameters, "entries": choice["experiment"]})
