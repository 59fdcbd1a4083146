"""Progress of a running run: written to the database and pushed to viewers.

Messages are Phrases (twin.simcore.translation): stored as such and rendered in the language of
each reader, on pages, in the API and in the state pushed to viewers (twin.runs.realtime).
"""
import time

from django.db.models import F

from twin.simcore.translation import Phrase

from .models import Run, RunStatus
from .realtime import run_broadcast

__all__ = ("message_fields", "progress_update", "ProgressReporter")


def message_fields(message: Phrase) -> dict:
    """The columns a run's message is stored in (`Run.message`, `Run.message_phrase`)."""
    return {"message": str(message)[:255], "message_phrase": message.to_plain()}


def progress_update(run_id: int, message: Phrase, fraction: float | None = None) -> None:
    """Record a running run's progress (0..1, when given) and message, and push the new state."""
    changes = {**message_fields(message), "seq": F("seq") + 1}
    if fraction is not None:
        changes["progress"] = max(0.0, min(1.0, fraction))
    if Run.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(**changes):
        run_broadcast(Run.objects.get(pk=run_id))


class ProgressReporter:
    """A plain `(fraction, message)` callable for the core's `on_progress` hooks, sending at most
    10 updates a second (the last one always)."""

    min_interval_s = 0.1

    def __init__(self, run_id: int):
        self.run_id = run_id
        self.last_sent = 0.0

    def __call__(self, fraction: float, message: Phrase) -> None:
        now = time.monotonic()
        if now - self.last_sent < self.min_interval_s and fraction < 1.0:
            return
        self.last_sent = now
        progress_update(self.run_id, message, fraction)
