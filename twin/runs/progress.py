"""Progress reporting from a running run: to the database and to viewers, at most 10 times a second."""
import time

from django.db.models import F

from .models import Run
from .realtime import run_broadcast

__all__ = ("ProgressReporter",)


class ProgressReporter:
    """A plain `(fraction, message)` callable for the core's `on_progress` hooks."""

    min_interval_s = 0.1

    def __init__(self, run_id: int):
        self.run_id = run_id
        self.last_sent = 0.0

    def __call__(self, fraction: float, message: str = "") -> None:
        now = time.monotonic()
        if now - self.last_sent < self.min_interval_s and fraction < 1.0:
            return
        self.last_sent = now
        Run.objects.filter(pk=self.run_id).update(
            progress=max(0.0, min(1.0, fraction)), message=message[:255], seq=F("seq") + 1
        )
        run_broadcast(Run.objects.get(pk=self.run_id))
