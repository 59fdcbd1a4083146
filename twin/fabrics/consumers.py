"""Websocket: everyone viewing a fabric hears when a new snapshot lands, and live telemetry."""
from channels.db import database_sync_to_async

from twin.common.websocket import GroupConsumer

from .models import Fabric
from .realtime import fabric_group

__all__ = ("FabricConsumer",)


class FabricConsumer(GroupConsumer):
    def group_for(self, kwargs: dict) -> str:
        self.fabric_id = int(kwargs["fabric_id"])
        return fabric_group(self.fabric_id)

    @database_sync_to_async
    def opening_messages(self) -> list[dict] | None:
        """Nothing to send at first: news comes as it happens."""
        return [] if Fabric.objects.filter(pk=self.fabric_id).exists() else None
