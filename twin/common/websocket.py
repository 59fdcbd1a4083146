"""The websockets' shared shape: a viewer of one object (a run, a fabric, a replay) joins that
object's group and is sent its current state, then every change pushed to the group."""
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from twin.fabrics.access import route_hidden_from

__all__ = ("CLOSE_UNAUTHENTICATED", "CLOSE_NOT_FOUND", "CLOSE_LAYER_UNAVAILABLE", "GroupConsumer")

log = logging.getLogger(__name__)

# Close codes in the application range (4000-4999), so pages can tell why.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_LAYER_UNAVAILABLE = 4503


class GroupConsumer(AsyncJsonWebsocketConsumer):
    """Refuses anonymous users (4401) and unknown objects or those of a fabric the user may not
    see (4404); when Redis cannot be reached it
    sends the current state and closes (4503), and the page reconnects by itself.

    Subclasses name the object's group (`group_for`) and give the opening messages
    (`opening_messages`: the current state, or None when the object does not exist). Viewers
    only listen unless a subclass overrides `receive_json`.
    """

    group: str | None = None

    def group_for(self, kwargs: dict) -> str:
        raise NotImplementedError

    async def opening_messages(self) -> list[dict] | None:
        raise NotImplementedError

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.refuse(CLOSE_UNAUTHENTICATED)
            return
        route_kwargs = self.scope["url_route"]["kwargs"]
        if await database_sync_to_async(route_hidden_from)(user, None, route_kwargs):
            await self.refuse(CLOSE_NOT_FOUND)
            return
        group = self.group_for(route_kwargs)
        opening = await self.opening_messages()
        if opening is None:
            await self.refuse(CLOSE_NOT_FOUND)
            return
        await self.accept()
        try:
            await self.channel_layer.group_add(group, self.channel_name)
        except Exception:  # noqa: BLE001 - Redis down: say so by closing; the page reconnects
            log.warning("channel layer unavailable; closing %s", group, exc_info=True)
            for message in opening:
                await self.send_json(message)
            await self.close(code=CLOSE_LAYER_UNAVAILABLE)
            return
        self.group = group
        # Read again once in the group, so that no change falls between the state and the stream.
        current = await self.opening_messages()
        for message in current if current is not None else opening:
            await self.send_json(message)

    async def refuse(self, code: int) -> None:
        """Accept, then close with `code`: a handshake refused outright reaches the browser as
        1006 whatever the code, and the page could not tell a final refusal from a dropped line."""
        await self.accept()
        await self.close(code=code)

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            try:
                await self.channel_layer.group_discard(self.group, self.channel_name)
            except Exception:  # noqa: BLE001 - nothing to clean up if Redis is gone
                pass

    async def receive(self, text_data=None, bytes_data=None, **kwargs) -> None:
        """A message that is not JSON (binary, malformed, or nested too deep to read) reaches
        `receive_json` as None, for it to answer, instead of ending the socket with 1011."""
        try:
            content = await self.decode_json(text_data) if text_data else None
        except (ValueError, RecursionError):
            content = None
        await self.receive_json(content, **kwargs)

    async def receive_json(self, content, **kwargs) -> None:
        """Viewers only listen; anything they send is ignored."""
