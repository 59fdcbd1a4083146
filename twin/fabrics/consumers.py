"""Websocket: everyone viewing a fabric hears when a new snapshot lands."""
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from twin.common.websocket import CLOSE_LAYER_UNAVAILABLE, CLOSE_NOT_FOUND, CLOSE_UNAUTHENTICATED

from .models import Fabric
from .realtime import fabric_group

__all__ = ("FabricConsumer",)

log = logging.getLogger(__name__)


class FabricConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.fabric_id = int(self.scope["url_route"]["kwargs"]["fabric_id"])
        if not await self.fabric_exists():
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.accept()
        try:
            await self.channel_layer.group_add(fabric_group(self.fabric_id), self.channel_name)
        except Exception:  # noqa: BLE001 - Redis down: say so by closing; the page reconnects
            log.warning("channel layer unavailable; closing fabric socket", exc_info=True)
            await self.close(code=CLOSE_LAYER_UNAVAILABLE)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "fabric_id"):
            try:
                await self.channel_layer.group_discard(fabric_group(self.fabric_id), self.channel_name)
            except Exception:  # noqa: BLE001 - nothing to clean up if Redis is gone
                pass

    async def fabric_snapshot(self, event: dict) -> None:
        await self.send_json({"type": "fabric.snapshot", "snapshot": event["snapshot"]})

    async def fabric_telemetry(self, event: dict) -> None:
        await self.send_json({"type": "fabric.telemetry", "seq": event["seq"], "frame": event["frame"]})

    async def receive_json(self, content, **kwargs) -> None:
        """Viewers only listen; anything they send is ignored."""

    @database_sync_to_async
    def fabric_exists(self) -> bool:
        return Fabric.objects.filter(pk=self.fabric_id).exists()
