"""Pages for fabrics and snapshots."""
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from twin.accounts.decorators import role_required
from twin.accounts.models import Role
from twin.ingest import IngestError

from .forms import SnapshotUploadForm
from .models import Fabric
from .selectors import fabric_list
from .services import snapshot_import

__all__ = ("fabric_list_page", "fabric_page", "upload_page")


def fabric_list_page(request):
    return render(request, "fabrics/fabric_list.html", {"fabrics": fabric_list()})


def fabric_page(request, fabric_id: int):
    fabric = get_object_or_404(Fabric, pk=fabric_id)
    snapshots = list(fabric.snapshots.order_by("-version"))
    wanted = request.GET.get("snapshot", "")
    snapshot = next((s for s in snapshots if str(s.pk) == wanted), snapshots[0] if snapshots else None)
    runs = snapshot.runs.order_by("-created_at")[:10] if snapshot else []
    return render(
        request,
        "fabrics/fabric_detail.html",
        {"fabric": fabric, "snapshot": snapshot, "snapshots": snapshots, "runs": runs},
    )


@role_required(Role.OPERATOR)
@require_http_methods(["GET", "POST"])
def upload_page(request):
    form = SnapshotUploadForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            file = form.cleaned_data["file"]
            try:
                snapshot = snapshot_import(
                    fabric_name=form.cleaned_data["fabric"],
                    data=file.read(),
                    source_name=file.name,
                    fmt=form.cleaned_data["format"] or None,
                    user=request.user,
                )
            except IngestError as error:
                form.add_error("file", str(error))
            else:
                messages.success(request, _("Snapshot v%(version)s of %(fabric)s stored.") % {"version": snapshot.version, "fabric": snapshot.fabric.name})
                return redirect("fabric-detail", fabric_id=snapshot.fabric_id)
        status = 400
    return render(request, "fabrics/upload.html", {"form": form}, status=status)
