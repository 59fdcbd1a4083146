"""Pushing run state to viewers over the channel layer.

Each frame is the complete state of the run with its `seq`, so a viewer that misses frames
(a full channel drops them silently) is still right after the next one. Payloads are plain
JSON types because channels_redis serialises with msgpack.
"""
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from .models import Run

__all__ = ("run_group", "run_state_payload", "run_broadcast")

log = logging.getLogger(__name__)


def run_group(run_id: int) -> str:
    return f"twin.run.{run_id}"


def iso(value) -> str | None:
    return value.isoformat() if value else None


def run_state_payload(run: Run) -> dict:
    """The run as the frontend's RUN object."""
    return {
        "id": run.pk,
        "kind": run.kind,
        "snapshot": run.snapshot_id,
        "status": run.status,
        "progress": round(run.progress, 4),
        "message": run.message,
        "result": run.result,
        "error": run.error or None,
        "created_at": iso(run.created_at),
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
    }


def run_broadcast(run: Run) -> None:
    """Best effort: the database already holds the state, so a lost frame only delays a viewer."""
    event = {"type": "run.state", "seq": run.seq, "run": run_state_payload(run)}
    try:
        async_to_sync(get_channel_layer().group_send)(run_group(run.pk), event)
    except Exception:  # noqa: BLE001 - Redis down must not fail the run itself
        log.warning("could not push state of run %s to viewers", run.pk, exc_info=True)
