"""Celery entry point of the map layout of a newly stored snapshot."""
from celery import shared_task

__all__ = ("snapshot_layout_task",)


@shared_task(name="twin.fabrics.layout", acks_late=True, reject_on_worker_lost=True)
def snapshot_layout_task(snapshot_id: int) -> None:
    from .services import snapshot_layout_get_or_create

    snapshot_layout_get_or_create(snapshot_id=snapshot_id)
