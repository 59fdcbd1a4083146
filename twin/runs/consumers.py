"""Websocket: viewers of one run get its state on connect and every change after."""
from channels.db import database_sync_to_async

from twin.common.websocket import GroupConsumer

from .models import Run
from .realtime import run_group, run_state_payload

__all__ = ("RunConsumer",)


class RunConsumer(GroupConsumer):
    def group_for(self, kwargs: dict) -> str:
        self.run_id = int(kwargs["run_id"])
        return run_group(self.run_id)

    @database_sync_to_async
    def opening_messages(self) -> list[dict] | None:
        run = Run.objects.filter(pk=self.run_id).first()
        if run is None:
            return None
        return [{"type": "run.state", "seq": run.seq, "run": run_state_payload(run)}]
