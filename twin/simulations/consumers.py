"""Websocket of a replay: every viewer sees the same player; operators drive it."""
from channels.db import database_sync_to_async
from django.utils import translation
from django.utils.translation import gettext

from twin.common.errors import ApplicationError
from twin.common.websocket import GroupConsumer

from .models import ReplayPlayback
from .replays import playback_command, playback_state, replay_frame, replay_group

__all__ = ("ReplayConsumer",)


class ReplayConsumer(GroupConsumer):
    """A late joiner gets the current state and frame at once."""

    def group_for(self, kwargs: dict) -> str:
        self.run_id = int(kwargs["run_id"])
        return replay_group(self.run_id)

    async def receive_json(self, content, **kwargs) -> None:
        with translation.override(self.language):
            if not self.scope["user"].has_role("operator"):
                await self.send_json({"type": "replay.error", "detail": gettext("Only operators and admins drive the player.")})
                return
            if not isinstance(content, dict):
                await self.send_json({"type": "replay.error", "detail": gettext("Expected a JSON object like {\"action\": \"play\"}.")})
                return
            try:
                await self.command(content)
            except ApplicationError as error:
                await self.send_json({"type": "replay.error", "detail": error.message})

    @database_sync_to_async
    def command(self, content: dict) -> None:  # in receive_json's language: Django's is context-local
        def number(key, kind):
            value = content.get(key)
            try:
                return None if value is None else kind(value)
            except (TypeError, ValueError):
                raise ApplicationError(gettext("%(name)s must be a number.") % {"name": key}) from None

        playback_command(run_id=self.run_id, action=str(content.get("action", "")), index=number("index", int), speed=number("speed", float), loop=content.get("loop"))

    @database_sync_to_async
    def opening_messages(self) -> list[dict] | None:
        playback = ReplayPlayback.objects.filter(run_id=self.run_id).first()
        if playback is None:
            return None
        return [
            {"type": "replay.state", "state": playback_state(playback)},
            {"type": "replay.frame", "seq": playback.seq, "index": playback.index, "frame": replay_frame(self.run_id, playback.index, playback.seq)},
        ]
