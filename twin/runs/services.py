"""Writes to runs: create and queue, execute once, finish."""
import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from twin.common.errors import ServiceUnavailable
from twin.fabrics.models import Snapshot
from twin.simcore.errors import TwinCoreError

from .handlers import RUN_HANDLERS
from .models import Run, RunKind, RunStatus
from .progress import ProgressReporter
from .realtime import run_broadcast

__all__ = ("run_create", "run_execute", "run_finish")

log = logging.getLogger(__name__)


def run_create(*, kind: RunKind, snapshot: Snapshot, user=None, params: dict | None = None) -> Run:
    """Save a pending run and queue it once the row is committed.

    Raises ServiceUnavailable (and marks the run failed) when the broker cannot take it.
    """
    from .tasks import run_execute_task  # tasks import services: import here to avoid a cycle

    with transaction.atomic():
        run = Run(kind=kind, snapshot=snapshot, params=params or {}, created_by=user)
        run.full_clean()
        run.save()

    def queue() -> None:
        try:
            run_execute_task.apply_async(args=[run.pk])
        except Exception as exc:  # noqa: BLE001 - any broker failure means the same to the user
            log.warning("could not queue run %s: %s", run.pk, exc)
            run_finish(run_id=run.pk, status=RunStatus.FAILED, error="Background work is unavailable: the message broker (Redis) cannot be reached.")
            raise ServiceUnavailable(
                "Background work is unavailable: the message broker (Redis) cannot be reached. Try again when it is back."
            ) from exc

    transaction.on_commit(queue, robust=False)
    run.refresh_from_db()
    return run


def run_execute(*, run_id: int) -> None:
    """Do the run's work. Safe to call twice: only the call that claims a pending run works."""
    claimed = Run.objects.filter(pk=run_id, status=RunStatus.PENDING).update(
        status=RunStatus.RUNNING, started_at=timezone.now(), message="Started", seq=F("seq") + 1
    )
    if not claimed:
        log.info("run %s is not pending (already taken or gone); nothing to do", run_id)
        return
    run = Run.objects.select_related("snapshot").get(pk=run_id)
    run_broadcast(run)
    try:
        output = RUN_HANDLERS[run.kind](run, ProgressReporter(run_id))
    except TwinCoreError as exc:  # the core says why it cannot do what was asked
        run_finish(run_id=run_id, status=RunStatus.FAILED, error=str(exc))
        return
    except Exception as exc:  # noqa: BLE001 - the failure is recorded on the run for the user
        log.exception("run %s failed", run_id)
        run_finish(run_id=run_id, status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
        return
    run_finish(run_id=run_id, status=RunStatus.SUCCEEDED, result=output.result, detail=output.detail)


def run_finish(*, run_id: int, status: RunStatus, result: dict | None = None, detail: dict | None = None, error: str = "") -> Run:
    Run.objects.filter(pk=run_id).update(
        status=status,
        progress=1.0 if status == RunStatus.SUCCEEDED else F("progress"),
        message="Finished" if status == RunStatus.SUCCEEDED else "Failed",
        result=result,
        detail=detail,
        error=error,
        finished_at=timezone.now(),
        seq=F("seq") + 1,
    )
    run = Run.objects.get(pk=run_id)
    run_broadcast(run)
    return run
