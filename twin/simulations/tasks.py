"""Celery entry points of the shared replay player, of telemetry polling (one short slice per task)
and of turning posted telemetry into frames."""
from celery import shared_task

__all__ = ("replay_player_task", "telemetry_poll_task", "telemetry_drain_task", "telemetry_index_task")


@shared_task(name="twin.replays.play", acks_late=True, reject_on_worker_lost=True)
def replay_player_task(run_id: int, generation: int) -> None:
    from .replays import player_tick

    player_tick(run_id=run_id, generation=generation)


@shared_task(name="twin.telemetry.poll", acks_late=True, reject_on_worker_lost=True)
def telemetry_poll_task(fabric_id: int, generation: int) -> None:
    """Poll a fabric's Prometheus source for a slice, then queue the next slice (telemetry.py says why)."""
    from .telemetry import telemetry_poller

    wait_s = telemetry_poller(fabric_id=fabric_id, generation=generation)
    if wait_s is not None:
        telemetry_poll_task.apply_async(args=[fabric_id, generation], countdown=wait_s)


@shared_task(name="twin.telemetry.drain", acks_late=True, reject_on_worker_lost=True)
def telemetry_drain_task(fabric_id: int) -> None:
    """Turn the fabric's posted telemetry into frames until its slot is empty (telemetry.py says how)."""
    from .telemetry import telemetry_drain

    telemetry_drain(fabric_id)


@shared_task(name="twin.telemetry.index", acks_late=True, reject_on_worker_lost=True)
def telemetry_index_task(snapshot_id: int) -> None:
    """Build a new snapshot's port index in the live worker before its first telemetry batch."""
    from .telemetry import telemetry_index_warm

    telemetry_index_warm(snapshot_id)
