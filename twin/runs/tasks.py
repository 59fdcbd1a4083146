"""Celery entry points: thin, by id, safe to run twice."""
from celery import shared_task

__all__ = ("run_execute_task",)


@shared_task(name="twin.runs.execute", acks_late=True, reject_on_worker_lost=True)
def run_execute_task(run_id: int) -> None:
    from .services import run_execute

    run_execute(run_id=run_id)
