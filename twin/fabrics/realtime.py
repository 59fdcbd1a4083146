"""Telling everyone who looks at a fabric that a new snapshot landed."""
import logging

from twin.common.websocket import group_publish

__all__ = ("fabric_group", "fabric_snapshot_event", "fabric_broadcast_snapshot")

log = logging.getLogger(__name__)


def fabric_group(fabric_id: int) -> str:
    return f"twin.fabric.{fabric_id}"


def fabric_snapshot_event(snapshot) -> dict:
    return {
        "type": "fabric.snapshot",
        "snapshot": {
            "id": snapshot.pk,
            "fabric": snapshot.fabric_id,
            "version": snapshot.version,
            "role": snapshot.role,
            "source_name": snapshot.source_name,
            "source_format": snapshot.source_format,
            "created_by": snapshot.created_by.username if snapshot.created_by else None,
            "created_at": snapshot.created_at.isoformat(),
            "summary": snapshot.summary,
        },
    }


def fabric_broadcast_snapshot(snapshot) -> None:
    """Best effort, after commit: viewers who miss it still see the snapshot on their next load."""
    try:
        group_publish(fabric_group(snapshot.fabric_id), fabric_snapshot_event(snapshot))
    except Exception:  # noqa: BLE001 - Redis down must not fail an upload that is already stored
        log.warning("could not announce snapshot %s to viewers", snapshot.pk, exc_info=True)
