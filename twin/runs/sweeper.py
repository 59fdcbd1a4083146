"""The sweeper: finds work that nobody is doing any more and queues it again, or fails it with the
reason once it has been tried TWIN_RUN_MAX_ATTEMPTS times. Celery beat runs it every
TWIN_SWEEP_INTERVAL_S on the live queue (twin.runs.tasks.sweep_task).

Work is abandoned when
- its worker went silent: a whole run running, or a cell pending, whose heartbeat is older than a
  lease (the worker was killed, ran out of memory, or its machine went away);
- its message is gone: a run pending, or a cell of a running run not taken, queued over a lease
  ago while its queue in the broker is empty (Redis restarted without its append-only file);
- its assembly message is gone: every cell done and the assembly queued a lease ago, and the run
  still running;
- its replay player went silent (twin.simulations.replays.players_resume).

Sending again is always safe: a worker takes a run or a cell only if no live worker holds it
(run_claim, cell_claim), so a message that was not lost after all does nothing.
"""
import logging
from collections import Counter

from django.conf import settings
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from twin.simcore.translation import LATER, Phrase

from .fanout import FANOUT_KINDS
from .leases import stale_before
from .models import CellStatus, Run, RunCell, RunStatus
from .progress import message_fields, progress_update
from .realtime import run_broadcast
from .services import cell_failure, queue_task, run_finish, run_queue, run_send

__all__ = ("sweep", "queued_messages")

log = logging.getLogger(__name__)


def queued_messages(queue: str) -> int:
    """Messages waiting in a broker queue (0 when Redis holds no such queue)."""
    from celery.exceptions import OperationalError
    from kombu.exceptions import ChannelError

    from twin import celery_app

    with celery_app.connection_for_read() as connection:
        try:
            return connection.default_channel.queue_declare(queue=queue, passive=True).message_count
        except (ChannelError, OperationalError):
            return 0


def gave_up(attempts: int) -> Phrase:
    return LATER.ngettext(
        "Its worker went silent %(count)s time (killed, restarted or out of memory), so it is not tried again.",
        "Its worker went silent %(count)s times (killed, restarted or out of memory), so it is not tried again.", attempts,
    ) % {"count": attempts}  # fmt: skip


def sweep() -> Counter:
    """One pass; returns how many of each were queued again, failed or resumed (for the log)."""
    from twin.simulations.replays import players_resume

    stale = stale_before()
    done = Counter()
    silent_runs = Run.objects.filter(status=RunStatus.RUNNING, heartbeat_at__lt=stale).exclude(kind__in=list(FANOUT_KINDS))
    for run in silent_runs:
        done[whole_run_abandoned(run)] += 1
    for cell in RunCell.objects.filter(status=CellStatus.PENDING, heartbeat_at__lt=stale, run__status=RunStatus.RUNNING).select_related("run"):
        done[cell_abandoned(cell)] += 1
    done["runs queued again (message lost)"] += lost_runs_queued(stale)
    done["cells queued again (message lost)"] += lost_cells_queued(stale)
    done["assemblies queued again"] += lost_assemblies_queued(stale)
    done["replay players resumed"] += players_resume()
    done = +done  # drop zeros
    if done:
        log.warning("sweeper: %s", dict(done))
    return done


def whole_run_abandoned(run: Run) -> str:
    """Back to pending and queued, or failed after the last attempt."""
    if run.attempts >= settings.TWIN_RUN_MAX_ATTEMPTS:
        run_finish(run_id=run.pk, status=RunStatus.FAILED, error=gave_up(run.attempts))
        return "runs failed"
    message = LATER.gettext("Its worker went silent; queued again (attempt %(attempt)s of %(attempts)s)") % {
        "attempt": run.attempts + 1, "attempts": settings.TWIN_RUN_MAX_ATTEMPTS,
    }  # fmt: skip
    # Only if nobody renewed the lease or took it meanwhile.
    if not Run.objects.filter(pk=run.pk, status=RunStatus.RUNNING, heartbeat_at=run.heartbeat_at, attempts=run.attempts).update(
        status=RunStatus.PENDING, heartbeat_at=None, queued_at=timezone.now(), seq=F("seq") + 1, **message_fields(message)
    ):
        return "runs taken meanwhile"
    run_broadcast(Run.objects.get(pk=run.pk))
    run_send(run.pk, run.kind)
    return "runs queued again (worker silent)"


def cell_abandoned(cell: RunCell) -> str:
    from .tasks import cell_execute_task

    if cell.attempts >= settings.TWIN_RUN_MAX_ATTEMPTS:
        reason = gave_up(cell.attempts)
        if RunCell.objects.filter(pk=cell.pk, status=CellStatus.PENDING, heartbeat_at=cell.heartbeat_at).update(
            status=CellStatus.FAILED, error=str(reason), heartbeat_at=None, finished_at=timezone.now()
        ):
            run_finish(run_id=cell.run_id, status=RunStatus.FAILED, error=cell_failure(cell, reason))
        return "cells failed"
    if not RunCell.objects.filter(pk=cell.pk, status=CellStatus.PENDING, heartbeat_at=cell.heartbeat_at).update(heartbeat_at=None, queued_at=timezone.now()):
        return "cells taken meanwhile"
    message = LATER.gettext("%(cell)s: its worker went silent; queued again (attempt %(attempt)s of %(attempts)s)")
    progress_update(cell.run_id, message % {"cell": cell.label_words, "attempt": cell.attempts + 1, "attempts": settings.TWIN_RUN_MAX_ATTEMPTS})
    queue_task(cell_execute_task, cell.pk)
    return "cells queued again (worker silent)"


def never_taken(stale) -> Q:
    return Q(heartbeat_at__isnull=True) & (Q(queued_at__isnull=True) | Q(queued_at__lt=stale))


def lost_runs_queued(stale) -> int:
    waiting = list(Run.objects.filter(never_taken(stale), status=RunStatus.PENDING).values_list("pk", "kind"))
    empty = {queue for queue in {run_queue(kind) for _, kind in waiting} if queued_messages(queue) == 0}
    lost = [(pk, kind) for pk, kind in waiting if run_queue(kind) in empty]
    for pk, kind in lost:
        Run.objects.filter(pk=pk, status=RunStatus.PENDING).update(queued_at=timezone.now())
        run_send(pk, kind)
    return len(lost)


def lost_cells_queued(stale) -> int:
    from .tasks import cell_execute_task

    waiting = RunCell.objects.filter(never_taken(stale), status=CellStatus.PENDING, run__status=RunStatus.RUNNING)
    if not waiting.exists() or queued_messages(settings.TWIN_QUEUE_HEAVY):
        return 0
    lost = list(waiting.values_list("pk", flat=True))
    RunCell.objects.filter(pk__in=lost).update(queued_at=timezone.now())
    for cell_id in lost:
        queue_task(cell_execute_task, cell_id)
    return len(lost)


def lost_assemblies_queued(stale) -> int:
    from .tasks import run_assemble_task

    unassembled = (
        Run.objects.filter(status=RunStatus.RUNNING, kind__in=list(FANOUT_KINDS))
        .annotate(open_cells=Count("cells", filter=~Q(cells__status=CellStatus.DONE)), last_done=Max("cells__finished_at"))
        .filter(Q(queued_at__isnull=True) | Q(queued_at__lt=stale), open_cells=0, last_done__lt=stale)
    )
    run_ids = list(unassembled.values_list("pk", flat=True))
    for run_id in run_ids:
        Run.objects.filter(pk=run_id).update(queued_at=timezone.now())
        queue_task(run_assemble_task, run_id)
    return len(run_ids)
