"""Leases on work in progress: the worker doing a run or a cell keeps writing a heartbeat, and
work whose heartbeat is older than a lease is taken as abandoned (its worker was killed, ran out
of memory or lost its machine) by the sweeper (twin.runs.sweeper)."""
import logging
import threading
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, connections
from django.utils import timezone

__all__ = ("Heartbeat", "lease_s", "stale_before")

log = logging.getLogger(__name__)


def lease_s() -> float:
    return settings.TWIN_RUN_LEASE_S


def stale_before(now: datetime | None = None) -> datetime:
    """Heartbeats older than this belong to workers taken as dead."""
    return (now or timezone.now()) - timedelta(seconds=lease_s())


class Heartbeat:
    """`with Heartbeat(Model, pk):` writes now to the row's `heartbeat_at` every quarter lease
    while the block runs. A thread of its own does it, so that a long computation in the block
    (numpy, or pure Python, which the interpreter still interrupts) keeps its lease."""

    def __init__(self, model, pk: int):
        self.model, self.pk = model, pk
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.beat, name=f"heartbeat-{model.__name__}-{pk}", daemon=True)

    def beat(self) -> None:
        try:
            while not self.stopped.wait(lease_s() / 4):
                try:
                    self.model.objects.filter(pk=self.pk).update(heartbeat_at=timezone.now())
                except DatabaseError:  # a missed beat is made up by the next; a lease is four beats
                    log.warning("could not renew the lease of %s %s", self.model.__name__, self.pk, exc_info=True)
                    connections.close_all()  # a connection the server dropped: the next beat connects again
        finally:
            connections.close_all()  # this thread's own connection

    def __enter__(self) -> "Heartbeat":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.thread.join()
