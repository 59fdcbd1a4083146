"""Celery entry points: thin, by id, safe to run twice (acks_late: a task whose worker dies is
delivered again)."""
from celery import shared_task

__all__ = ("run_execute_task", "cell_execute_task", "run_assemble_task", "sweep_task")


@shared_task(name="twin.runs.execute", acks_late=True, reject_on_worker_lost=True)
def run_execute_task(run_id: int) -> None:
    from .services import run_execute

    run_execute(run_id=run_id)


@shared_task(name="twin.runs.cell", acks_late=True, reject_on_worker_lost=True)
def cell_execute_task(cell_id: int) -> None:
    from .services import cell_execute

    cell_execute(cell_id=cell_id)


@shared_task(name="twin.runs.assemble", acks_late=True, reject_on_worker_lost=True)
def run_assemble_task(run_id: int) -> None:
    from .services import run_assemble

    run_assemble(run_id=run_id)


@shared_task(name="twin.runs.sweep", ignore_result=True)
def sweep_task() -> None:
    from .sweeper import sweep

    sweep()
