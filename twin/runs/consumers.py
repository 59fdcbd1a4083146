"""Websocket: viewers of one run get its state on connect and every change after."""
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from twin.common.websocket import CLOSE_LAYER_UNAVAILABLE, CLOSE_NOT_FOUND, CLOSE_UNAUTHENTICATED

from .models import Run
from .realtime import run_group, run_state_payload

__all__ = ("RunConsumer",)

log = logging.getLogger(__name__)


class RunConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.run_id = int(self.scope["url_route"]["kwargs"]["run_id"])
        snapshot = await self.current_frame()
        if snapshot is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.accept()
        try:
            await self.channel_layer.group_add(run_group(self.run_id), self.channel_name)
        except Exception:  # noqa: BLE001 - Redis down: say so by closing; the page reconnects
            log.warning("channel layer unavailable; closing run socket", exc_info=True)
            await self.send_json(snapshot)
            await self.close(code=CLOSE_LAYER_UNAVAILABLE)
            return
        # Sent after joining the group, so no change falls between the snapshot and the stream.
        await self.send_json(await self.current_frame() or snapshot)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "run_id"):
            try:
                await self.channel_layer.group_discard(run_group(self.run_id), self.channel_name)
            except Exception:  # noqa: BLE001 - nothing to clean up if Redis is gone
                pass

    async def run_state(self, event: dict) -> None:
        await self.send_json({"type": "run.state", "seq": event["seq"], "run": event["run"]})

    async def receive_json(self, content, **kwargs) -> None:
        """Viewers only listen; anything they send is ignored."""

    @database_sync_to_async
    def current_frame(self) -> dict | None:
        run = Run.objects.filter(pk=self.run_id).first()
        if run is None:
            return None
        return {"type": "run.state", "seq": run.seq, "run": run_state_payload(run)}
