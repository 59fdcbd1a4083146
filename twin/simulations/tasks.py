"""Celery entry point of the shared replay player (one short slice per task)."""
from celery import shared_task

__all__ = ("replay_player_task",)


@shared_task(name="twin.replays.play", acks_late=True, reject_on_worker_lost=True)
def replay_player_task(run_id: int, generation: int) -> None:
    from .replays import player_tick

    player_tick(run_id=run_id, generation=generation)
