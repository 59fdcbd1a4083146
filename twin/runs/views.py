from django.shortcuts import get_object_or_404, render

from .models import Run

__all__ = ("run_page",)


def run_page(request, run_id: int):
    run = get_object_or_404(Run.objects.select_related("snapshot__fabric", "created_by"), pk=run_id)
    return render(request, "runs/run_detail.html", {"run": run})
