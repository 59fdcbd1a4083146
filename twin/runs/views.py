"""Run pages, and the forms on a fabric page that start placement and failure runs."""
from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_POST

from twin.accounts.decorators import role_required
from twin.accounts.models import Role
from twin.common.errors import ApplicationError, core_error_text
from twin.common.pages import paged
from twin.fabrics.access import fabrics_visible_to
from twin.fabrics.models import Snapshot
from twin.operations.exports import read_rank_mapping
from twin.fabrics.services import source_files_from_uploads
from twin.simcore.errors import TwinCoreError
from twin.simulations.models import ReplayPlayback
from twin.simulations.replays import trace_file_create

from .api import RunSerializer
from .forms import FailureForm, PlacementForm, ReplayForm, WhatIfForm
from .models import Run, RunKind, RunStatus
from .services import run_create

__all__ = ("run_list_page", "run_page", "placement_start", "failures_start", "replay_start", "whatif_start")

RUNS_PER_PAGE = 30
RUN_SORTS = {  # value in the URL -> (label, ordering)
    "newest": (gettext_lazy("Newest first"), "-created_at"),
    "oldest": (gettext_lazy("Oldest first"), "created_at"),
    "kind": (gettext_lazy("Kind"), "kind"),
    "status": (gettext_lazy("Status"), "status"),
    "fabric": (gettext_lazy("Fabric (A-Z)"), "snapshot__fabric__name"),
}


def run_list_page(request):
    """Every run, filtered by kind, status and fabric, sorted, a page at a time."""
    runs = Run.objects.filter(snapshot__fabric__in=fabrics_visible_to(request.user)).select_related("snapshot__fabric", "created_by")
    kind, status, fabric = request.GET.get("kind", ""), request.GET.get("status", ""), request.GET.get("fabric", "")
    if kind in RunKind.values:
        runs = runs.filter(kind=kind)
    if status in RunStatus.values:
        runs = runs.filter(status=status)
    if fabric:
        runs = runs.filter(snapshot__fabric__name__icontains=fabric)
    sort = request.GET.get("sort", "newest")
    runs = runs.order_by(RUN_SORTS.get(sort, RUN_SORTS["newest"])[1], "-id")
    page, query = paged(request, runs, RUNS_PER_PAGE)
    return render(request, "runs/run_list.html", {
        "page": page, "query": query, "kinds": RunKind.choices, "statuses": RunStatus.choices,
        "kind": kind, "status": status, "fabric": fabric, "sort": sort,
        "sorts": [(value, label) for value, (label, _ordering) in RUN_SORTS.items()],
    })


def run_page(request, run_id: int):
    run = get_object_or_404(Run.objects.select_related("snapshot__fabric", "created_by"), pk=run_id)
    playback = ReplayPlayback.objects.filter(run=run).first()
    return render(request, "runs/run_detail.html", {
        "run": run, "playback": playback, "can_control": request.user.has_role(Role.OPERATOR), "can_cancel": run.may_be_cancelled_by(request.user),
    })


def start_or_report(request, snapshot: Snapshot, kind: RunKind, form, params_of):
    """Start the run and show its page, or go back to the fabric page saying what was wrong.
    The fabric page's panels post these forms with fetch and `Accept: application/json`: they get
    the run as POST /api/runs/ answers it (201), or {"detail", "errors": {field: [...]}} (400)."""
    wants_json = "application/json" in request.headers.get("Accept", "")
    if form.is_valid():
        try:
            run = run_create(kind=kind, snapshot=snapshot, params=params_of(form), user=request.user)
        except (ApplicationError, TwinCoreError) as error:
            problem = error.message if isinstance(error, ApplicationError) else core_error_text(error)
            if wants_json:
                return JsonResponse({"detail": problem, "errors": {}}, status=getattr(error, "status_code", 400))
            messages.error(request, problem)
        else:
            if wants_json:
                return JsonResponse(RunSerializer(run).data, status=201)
            return redirect("run-detail", run_id=run.pk)
    else:
        if wants_json:
            return JsonResponse({"detail": form_problems(form), "errors": form.errors}, status=400)
        for field, errors in form.errors.items():
            messages.error(request, f"{'' if field == '__all__' else field + ': '}{' '.join(errors)}")
    return redirect(f"/fabrics/{snapshot.fabric_id}/?snapshot={snapshot.pk}")


def form_problems(form) -> str:
    return gettext("; ").join(f"{'' if field == '__all__' else field + ': '}{' '.join(errors)}" for field, errors in form.errors.items())


@role_required(Role.OPERATOR)
@require_POST
def placement_start(request, snapshot_id: int):
    snapshot = get_object_or_404(Snapshot, pk=snapshot_id)
    form = PlacementForm(request.POST, request.FILES)

    def params_of(form):
        upload = form.cleaned_data.get("mapping")
        mapping = {}
        if upload:
            mapping = {str(rank): card for rank, card in read_rank_mapping(upload.read().decode("utf-8", errors="replace"), source_name=upload.name).items()}
        return form.params(mapping)

    return start_or_report(request, snapshot, RunKind.PLACEMENT, form, params_of)


@role_required(Role.OPERATOR)
@require_POST
def failures_start(request, snapshot_id: int):
    snapshot = get_object_or_404(Snapshot, pk=snapshot_id)
    return start_or_report(request, snapshot, RunKind.FAILURES, FailureForm(request.POST), lambda form: form.params())


@role_required(Role.OPERATOR)
@require_POST
def replay_start(request, snapshot_id: int):
    snapshot = get_object_or_404(Snapshot.objects.select_related("fabric"), pk=snapshot_id)

    def params_of(form):
        upload = form.cleaned_data.get("trace")
        trace = trace_file_create(fabric=snapshot.fabric, source=source_files_from_uploads([upload])[0], user=request.user) if upload else None
        return form.params(trace.pk if trace else None)

    return start_or_report(request, snapshot, RunKind.REPLAY, ReplayForm(request.POST, request.FILES), params_of)


@role_required(Role.OPERATOR)
@require_POST
def whatif_start(request, snapshot_id: int):
    snapshot = get_object_or_404(Snapshot, pk=snapshot_id)
    return start_or_report(request, snapshot, RunKind.WHATIF, WhatIfForm(request.POST), lambda form: form.params())
