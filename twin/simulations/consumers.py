"""Websocket of a replay: every viewer sees the same player; operators drive it."""
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from twin.common.errors import ApplicationError
from twin.common.websocket import CLOSE_LAYER_UNAVAILABLE, CLOSE_NOT_FOUND, CLOSE_UNAUTHENTICATED

from .models import ReplayPlayback
from .replays import playback_command, playback_state, replay_frame, replay_group

__all__ = ("ReplayConsumer",)

log = logging.getLogger(__name__)


class ReplayConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.run_id = int(self.scope["url_route"]["kwargs"]["run_id"])
        opening = await self.opening_messages()
        if opening is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.accept()
        try:
            await self.channel_layer.group_add(replay_group(self.run_id), self.channel_name)
        except Exception:  # noqa: BLE001 - Redis down: say so by closing; the page reconnects
            log.warning("channel layer unavailable; closing replay socket", exc_info=True)
            await self.close(code=CLOSE_LAYER_UNAVAILABLE)
            return
        for message in opening:  # a late joiner gets the current state and frame at once
            await self.send_json(message)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "run_id"):
            try:
                await self.channel_layer.group_discard(replay_group(self.run_id), self.channel_name)
            except Exception:  # noqa: BLE001
                pass

    async def receive_json(self, content, **kwargs) -> None:
        if not self.scope["user"].has_role("operator"):
            await self.send_json({"type": "replay.error", "detail": "Only operators and admins drive the player."})
            return
        if not isinstance(content, dict):
            await self.send_json({"type": "replay.error", "detail": "Expected a JSON object like {\"action\": \"play\"}."})
            return
        try:
            await self.command(content)
        except ApplicationError as error:
            await self.send_json({"type": "replay.error", "detail": error.message})

    async def replay_state(self, event: dict) -> None:
        await self.send_json(event)

    async def replay_frame(self, event: dict) -> None:
        await self.send_json(event)

    @database_sync_to_async
    def command(self, content: dict) -> None:
        def number(key, kind):
            value = content.get(key)
            try:
                return None if value is None else kind(value)
            except (TypeError, ValueError):
                raise ApplicationError(f"{key} must be a number.") from None

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
