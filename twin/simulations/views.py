"""The diagnosis page: the article's troubleshooting table run bottom-up on a fabric."""
from django.shortcuts import get_object_or_404, render

from twin.fabrics.models import Fabric

from .services import fabric_diagnose

__all__ = ("diagnosis_page",)

RECENT_MEASUREMENTS = 20


def diagnosis_page(request, fabric_id: int):
    fabric = get_object_or_404(Fabric, pk=fabric_id)
    snapshot = fabric.latest_snapshot()
    result = None
    if snapshot is not None:
        entries = fabric.experiments.filter(snapshot=snapshot).order_by("-created_at")[:RECENT_MEASUREMENTS]
        result = fabric_diagnose(snapshot=snapshot, measurement_entries=list(entries))
    return render(request, "simulations/diagnosis.html", {"fabric": fabric, "snapshot": snapshot, "result": result})
