"""Writes to runs: create and queue, execute (whole or as fanned-out cells), finish, cancel."""
import logging
import time

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, F, Q
from django.utils import timezone, translation
from django.utils.translation import gettext

from twin.common.errors import ApplicationError, ServiceUnavailable, core_error_text
from twin.fabrics.models import Snapshot
from twin.simcore.errors import TwinCoreError
from twin.simcore.translation import LATER, Joined, Phrase, plain_words, rendered

from .fanout import FANOUT_KINDS
from .handlers import RUN_HANDLERS, SUBMIT_CHECKS
from .leases import Heartbeat, stale_before
from .models import CellStatus, Run, RunCell, RunKind, RunStatus
from .progress import ProgressReporter, message_fields, progress_update
from .realtime import run_broadcast

__all__ = ("run_create", "cells_create", "run_execute", "run_finish", "run_cancel", "cell_execute", "run_assemble")

log = logging.getLogger(__name__)

# Tries of a write that must outlive a database restart: pauses of 0.2 s doubling, 102 s in all.
OUTAGE_TRIES = 10

BROKER_DOWN = LATER.gettext("Background work is unavailable: the message broker (Redis) cannot be reached.")


def queue_task(task, *args, queue: str | None = None) -> None:
    """Send a task (to `queue`, else its routed one), raising ServiceUnavailable when the broker
    cannot take it."""
    try:
        task.apply_async(args=list(args), queue=queue)
    except Exception as exc:  # noqa: BLE001 - any broker failure means the same to the user
        log.warning("could not queue %s%s: %s", task.name, args, exc)
        try_again = LATER.gettext("%(reason)s Try again when it is back.") % {"reason": BROKER_DOWN}
        raise ServiceUnavailable(str(rendered(try_again, translation))) from exc


def run_queue(kind: str) -> str:
    """A whole run is heavy work; a fanned-out run's own task only queues its cells."""
    return settings.TWIN_QUEUE_LIVE if kind in FANOUT_KINDS else settings.TWIN_QUEUE_HEAVY


def run_send(run_id: int, kind: str) -> None:
    from .tasks import run_execute_task  # tasks import services: import here to avoid a cycle

    queue_task(run_execute_task, run_id, queue=run_queue(kind))


def run_create(*, kind: RunKind, snapshot: Snapshot, user=None, params: dict | None = None) -> Run:
    """Save a pending run and queue it once the row is committed.

    Fanned-out kinds check their parameters here first, so that impossible requests are refused
    before any task starts. Raises ServiceUnavailable (and marks the run failed) when the broker
    cannot take the run.
    """
    with transaction.atomic():
        run = Run(kind=kind, snapshot=snapshot, params=params or {}, created_by=user, queued_at=timezone.now())
        run.full_clean()
        if kind in SUBMIT_CHECKS:
            SUBMIT_CHECKS[kind](snapshot=snapshot, params=run.params)
        run.save()
        if kind in FANOUT_KINDS:
            # Planning checks the parameters: an impossible run is refused before any task starts.
            try:
                plans = FANOUT_KINDS[kind].plan(run)
            except TwinCoreError as error:
                transaction.set_rollback(True)
                raise ApplicationError(core_error_text(error)) from error
            cells_create(run, plans)

    def queue() -> None:
        try:
            run_send(run.pk, kind)
        except ServiceUnavailable:
            run_finish(run_id=run.pk, status=RunStatus.FAILED, error=BROKER_DOWN)
            raise

    transaction.on_commit(queue, robust=False)
    run.refresh_from_db()
    return run


def cells_create(run: Run, plans) -> None:
    """The run's cells, in plan order; each label kept in English and as its Phrase."""
    RunCell.objects.bulk_create(
        RunCell(run=run, key=plan.key, label=str(plan.label)[:200], label_phrase=plan.label.to_plain(), position=index, params=plan.params)
        for index, plan in enumerate(plans)
    )


def run_claim(run_id: int) -> Run | None:
    """Take a run that is waiting, or running with an expired lease (its worker died and the
    broker handed the task on); None when it is finished, gone or held by a live worker."""
    takeable = Q(status=RunStatus.PENDING) | Q(status=RunStatus.RUNNING) & (Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=stale_before()))
    run = Run.objects.filter(takeable, pk=run_id).first()
    if run is None:
        log.info("run %s is finished, gone or held by a live worker; nothing to do", run_id)
        return None
    now = timezone.now()
    if run.attempts == 0:
        message = LATER.gettext("Started")
    else:
        message = LATER.gettext("Started again (attempt %(attempt)s)") % {"attempt": run.attempts + 1}
    # `attempts` unchanged: no other worker took it meanwhile.
    if not Run.objects.filter(takeable, pk=run_id, attempts=run.attempts).update(
        status=RunStatus.RUNNING, started_at=run.started_at or now, heartbeat_at=now, attempts=F("attempts") + 1, seq=F("seq") + 1, **message_fields(message)
    ):
        return None
    return Run.objects.select_related("snapshot").get(pk=run_id)


def connection_lost() -> bool:
    """After a database error: whether the connection itself is gone (the server restarted or
    killed it, or cannot be reached) rather than the database refusing one statement (SQLite
    locked). A lost connection is closed, so that the next query connects again."""
    if connection.connection is not None and connection.is_usable():
        return False
    connection.close()
    return True


def attempt_handed_back(taken) -> None:
    """The database went away under a run or cell (`taken`: its row, still held): no fault of
    the work or its worker. Once the database answers again the attempt is given back and the
    lease let go, so that the sweeper neither counts it nor waits for the lease; the caller then
    queues the work again. If the database stays away longer, this raises: the lease runs out and
    the sweeper queues it again."""
    log.warning("the database went away under a %s; giving its attempt back and queuing it again", taken.model.__name__)
    with_retries(lambda: taken.update(heartbeat_at=None, attempts=F("attempts") - 1), tries=OUTAGE_TRIES)


def with_retries(write, *, tries: int = 6, first_pause_s: float = 0.2):
    """Do a database write, again after a growing pause while the database refuses it (SQLite
    locked by another writer, a connection the server dropped); the last refusal is raised."""
    for attempt in range(tries):
        try:
            return write()
        except DatabaseError:
            connection_lost()
            if attempt == tries - 1:
                raise
            time.sleep(first_pause_s * 2**attempt)


def run_execute(*, run_id: int) -> None:
    """Do the run's work, or for fanned-out kinds create its cells and queue them.
    Safe to call twice: a finished run is left alone, and the work itself is repeatable."""
    try:
        run = run_claim(run_id)
    except DatabaseError as exc:
        if connection_lost():
            raise  # an outage, not the run's doing: it stays pending and the sweeper queues it again
        # Refused (SQLite locked): recorded on the run, not left pending; if even that fails,
        # the task fails and the sweeper queues the run again.
        log.exception("could not start run %s", run_id)
        refused = LATER.gettext("The run could not be started: the database refused it (%(error)s).") % {"error": str(exc)}
        with_retries(lambda: run_finish(run_id=run_id, status=RunStatus.FAILED, error=refused))
        return
    if run is None:
        return
    run_broadcast(run)
    if run.kind in FANOUT_KINDS:
        run_fan_out(run)
        return
    try:
        with Heartbeat(Run, run_id):
            output = RUN_HANDLERS[run.kind](run, ProgressReporter(run_id))
    except (TwinCoreError, ApplicationError) as exc:  # the core or a service says why it cannot do what was asked
        run_finish(run_id=run_id, status=RunStatus.FAILED, error=exc.words if isinstance(exc, TwinCoreError) else exc.message)
        return
    except Exception as exc:  # noqa: BLE001 - the failure is recorded on the run for the user
        if isinstance(exc, DatabaseError) and connection_lost():
            attempt_handed_back(Run.objects.filter(pk=run_id, status=RunStatus.RUNNING))
            run_send(run_id, run.kind)
            return
        log.exception("run %s failed", run_id)
        internal = LATER.gettext("internal error (%(kind)s: %(detail)s); the worker's log has its traceback")
        run_finish(run_id=run_id, status=RunStatus.FAILED, error=internal % {"kind": type(exc).__name__, "detail": str(exc)})
        return
    with_retries(lambda: run_finish(run_id=run_id, status=RunStatus.SUCCEEDED, result=output.result, detail=output.detail), tries=OUTAGE_TRIES)


def run_fan_out(run: Run) -> None:
    """Queue every cell of the run not yet done (a second delivery queues what is left)."""
    from .tasks import cell_execute_task

    pending = list(run.cells.filter(status=CellStatus.PENDING).values_list("pk", flat=True))
    total = run.cells.count()
    progress_update(run.pk, LATER.ngettext("%(done)s of %(count)s cell done", "%(done)s of %(count)s cells done", total) % {"done": total - len(pending), "count": total})
    RunCell.objects.filter(pk__in=pending).update(queued_at=timezone.now())
    for cell_id in pending:
        queue_task(cell_execute_task, cell_id)


def cell_claim(cell_id: int) -> bool:
    """Take a cell no live worker holds; False when another one has it."""
    now = timezone.now()
    return bool(
        RunCell.objects.filter(pk=cell_id, status=CellStatus.PENDING)
        .filter(Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=stale_before(now)))
        .update(heartbeat_at=now, attempts=F("attempts") + 1)
    )


def cell_execute(*, cell_id: int) -> None:
    """Do one cell of a fanned-out run, then count it in; the last one queues the assembly."""
    cell = RunCell.objects.select_related("run__snapshot").filter(pk=cell_id).first()
    if cell is None or cell.status != CellStatus.PENDING:
        return
    run = cell.run
    if run.is_terminal:  # cancelled or failed meanwhile
        RunCell.objects.filter(pk=cell_id, status=CellStatus.PENDING).update(status=CellStatus.SKIPPED)
        return
    if not cell_claim(cell_id):
        return
    try:
        with Heartbeat(RunCell, cell_id):
            result = FANOUT_KINDS[run.kind].execute(run, cell.params)
    except Exception as exc:  # noqa: BLE001 - recorded on the cell and the run, shown to the user
        if isinstance(exc, DatabaseError) and connection_lost():
            from .tasks import cell_execute_task

            attempt_handed_back(RunCell.objects.filter(pk=cell_id, status=CellStatus.PENDING))
            queue_task(cell_execute_task, cell_id)
            return
        reason = failure_words(exc)
        if not isinstance(exc, TwinCoreError):
            log.exception("cell %s of run %s failed", cell.key, run.pk)
        RunCell.objects.filter(pk=cell_id, status=CellStatus.PENDING).update(status=CellStatus.FAILED, error=str(reason), heartbeat_at=None, finished_at=timezone.now())
        run_finish(run_id=run.pk, status=RunStatus.FAILED, error=cell_failure(cell, reason))
        return
    updated = with_retries(
        lambda: RunCell.objects.filter(pk=cell_id, status=CellStatus.PENDING).update(status=CellStatus.DONE, result=result, heartbeat_at=None, finished_at=timezone.now()),
        tries=OUTAGE_TRIES,
    )
    if updated:
        cell_counted(run, cell)


def failure_words(exc: Exception) -> str | Phrase | Joined:
    """Why a cell or an assembly failed: what the core says, else the exception as Python has it."""
    return exc.words if isinstance(exc, TwinCoreError) else f"{type(exc).__name__}: {exc}"


def cell_failure(cell: RunCell, reason: str | Phrase | Joined) -> Phrase:
    """A run's failure reason when one of its cells failed (a what-if stage, the sweeper giving up)."""
    return LATER.gettext("%(cell)s: %(reason)s") % {"cell": cell.label_words, "reason": reason}


def cell_counted(run: Run, cell: RunCell) -> None:
    from .tasks import run_assemble_task

    counts = dict(run.cells.values("status").annotate(n=Count("pk")).values_list("status", "n"))
    total = sum(counts.values())
    done = counts.get(CellStatus.DONE, 0)
    # 1.0 only once the run has its result.
    message = LATER.ngettext("%(done)s of %(count)s cell done (last: %(cell)s)", "%(done)s of %(count)s cells done (last: %(cell)s)", total)
    progress_update(run.pk, message % {"done": done, "count": total, "cell": cell.label_words}, fraction=min(done / total, 0.99))
    if done == total:
        Run.objects.filter(pk=run.pk).update(queued_at=timezone.now())  # for the sweeper, should the message be lost
        queue_task(run_assemble_task, run.pk)


def run_assemble(*, run_id: int) -> None:
    """Build a fanned-out run's result from its cells, once."""
    with transaction.atomic():
        run = Run.objects.select_for_update().select_related("snapshot").filter(pk=run_id, status=RunStatus.RUNNING).first()
        if run is None:
            return
        cells = list(run.cells.filter(status=CellStatus.DONE).values_list("key", "result"))
        if len(cells) != run.cells.count():
            return  # not all done (a stray redelivery); the last cell queues the assembly
        try:
            output = FANOUT_KINDS[run.kind].assemble(run, dict(cells))
        except Exception as exc:  # noqa: BLE001 - recorded on the run
            log.exception("assembling run %s failed", run_id)
            reason = failure_words(exc)
            transaction.on_commit(lambda: run_finish(run_id=run_id, status=RunStatus.FAILED, error=reason))
            return
        transaction.on_commit(lambda: run_finish(run_id=run_id, status=RunStatus.SUCCEEDED, result=output.result, detail=output.detail))


def run_finish(*, run_id: int, status: RunStatus, result: dict | None = None, detail: dict | None = None, error: str | Phrase | Joined = "") -> Run:
    """Record the end of a run once: a run that already ended keeps its first ending. `error` is
    English text, or words kept in English and as words (`Run.error_text`)."""
    Run.objects.filter(pk=run_id).exclude(status__in=RunStatus.terminal()).update(
        status=status,
        progress=1.0 if status == RunStatus.SUCCEEDED else F("progress"),
        **message_fields({RunStatus.SUCCEEDED: LATER.gettext("Finished"), RunStatus.CANCELLED: LATER.gettext("Cancelled")}.get(status, LATER.gettext("Failed"))),
        result=result,
        detail=detail,
        error=str(error),
        error_phrase=plain_words(error) if isinstance(error, (Phrase, Joined)) else None,
        heartbeat_at=None,
        finished_at=timezone.now(),
        seq=F("seq") + 1,
    )
    run = Run.objects.get(pk=run_id)
    run_broadcast(run)
    return run


def run_cancel(*, run: Run, user) -> Run:
    """Stop a run: cells not yet started are skipped; a cell in progress finishes unused.
    Raises PermissionDenied unless `user` may cancel it (Run.may_be_cancelled_by)."""
    if not run.may_be_cancelled_by(user):
        starter = run.created_by or gettext("nobody signed in")
        raise PermissionDenied(gettext("Run %(run)s was started by %(user)s; operators may cancel only their own runs, admins any.") % {"run": run.pk, "user": starter})
    if run.is_terminal:
        raise ApplicationError(gettext("Run %(run)s has already ended (%(status)s).") % {"run": run.pk, "status": run.get_status_display().lower()})
    return run_finish(run_id=run.pk, status=RunStatus.CANCELLED, error=LATER.gettext("Cancelled by %(user)s.") % {"user": str(user)})
