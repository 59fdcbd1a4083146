"""The websockets' shared shape: a viewer of one object (a run, a fabric, a replay) joins that
object's group and is sent its current state, then every change pushed to the group.

A change is encoded once, by whoever publishes it (`group_publish`), and the same text (or, for
a replay frame, the same bytes: a binary message, docs/replay.md) goes to every viewer. A web
process receives each group message once (`GroupRelay`: one channel of the channel layer per
process, in every group one of its viewers watches) and hands the payload to its viewers there;
it never re-encodes a frame per viewer, nor has the channel layer deliver one copy per viewer.
A viewer that connects with `?frames=json` is sent frames as JSON text instead (tools, and the
benchmark's comparison); the relay makes that text once per frame, only if such a viewer watches.
Each viewer keeps only the newest message of each kind it has not been sent yet (`LatestOutbox`),
sent by one task of its own, so a viewer that falls behind jumps to the newest frame instead of
working through a queue of stale ones (every message is a complete state with its seq).
"""
import asyncio
import json
import logging
import os
import threading
import weakref
from types import SimpleNamespace
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from channels.utils import await_many_dispatch
from django.utils import translation

from twin.fabrics.access import route_hidden_from
from twin.replay.encoding import decode_message, encode_frame_message

__all__ = (
    "CLOSE_UNAUTHENTICATED", "CLOSE_NOT_FOUND", "CLOSE_LAYER_UNAVAILABLE", "BINARY_MESSAGE_TYPES", "encode_message", "group_publish", "LatestOutbox", "GroupRelay",
    "GroupConsumer",
)

log = logging.getLogger(__name__)

# Close codes in the application range (4000-4999), so pages can tell why.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_LAYER_UNAVAILABLE = 4503

RELAY_RETRY_S = 1.0  # after the channel layer failed a receive (Redis restarting)
PUBLISH_TIMEOUT_S = 10.0


BINARY_MESSAGE_TYPES = frozenset({"replay.frame"})
"""Messages sent as a binary frame message (twin.replay.encoding.encode_frame_message)."""


def encode_message(message: dict, *, binary: bool = True) -> str | bytes:
    """What a viewer is sent for `message`: a binary frame message for the types that carry a
    frame (unless `binary` is False), else compact JSON text."""
    if binary and message["type"] in BINARY_MESSAGE_TYPES:
        return encode_frame_message(message)
    return json.dumps(message, separators=(",", ":"))


class Publisher:
    """An event loop on a thread of its own for the life of the process, on which synchronous
    code sends to the channel layer: async_to_sync would start a thread, a loop and a Redis
    connection for every frame (three times the CPU of a send, and more under load). Started on
    first use in each process (a forked Celery child starts its own)."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pid: int | None = None
        self.starting = threading.Lock()

    def running_loop(self) -> asyncio.AbstractEventLoop:
        with self.starting:
            if self.loop is None or self.pid != os.getpid():
                self.loop, self.pid = asyncio.new_event_loop(), os.getpid()
                threading.Thread(target=self.loop.run_forever, name="twin-publisher", daemon=True).start()
            return self.loop

    def send(self, group: str, event: dict) -> None:
        async def group_send():
            await get_channel_layer().group_send(group, event)

        asyncio.run_coroutine_threadsafe(group_send(), self.running_loop()).result(timeout=PUBLISH_TIMEOUT_S)


publisher = Publisher()


def group_publish(group: str, message: dict) -> None:
    """Encode `message` once and send it to every viewer of `group`, from synchronous code (a
    service, a Celery task). Raises when the channel layer cannot be reached: callers decide
    whether that matters."""
    publisher.send(group, {"type": "group.message", "group": group, "kind": message["type"], "payload": encode_message(message)})


class LatestOutbox:
    """The newest unsent payload (text or bytes) of each kind, in the order the kinds last changed."""

    def __init__(self) -> None:
        self.pending: dict[str, str | bytes] = {}
        self.ready = asyncio.Event()

    def put(self, kind: str, payload: str | bytes) -> None:
        self.pending.pop(kind, None)  # re-inserted last: a newer message goes after older kinds
        self.pending[kind] = payload
        self.ready.set()

    async def take(self) -> list[str | bytes]:
        """Wait for at least one payload, then hand over (and forget) everything pending."""
        await self.ready.wait()
        self.ready.clear()
        payloads = list(self.pending.values())
        self.pending.clear()
        return payloads


class GroupRelay:
    """The web process's one receiver of group messages (one per event loop and channel layer):
    it is in every group one of its viewers watches, and puts each message it receives in the
    outbox of each of that group's viewers here."""

    def __init__(self, layer) -> None:
        self.layer = layer
        self.channel: str | None = None
        self.viewers: dict[str, set["GroupConsumer"]] = {}
        self.receiver: asyncio.Task | None = None
        # Joins and leaves one at a time: a last viewer's discard must not overtake a new join.
        self.membership = asyncio.Lock()

    async def join(self, group: str, viewer: "GroupConsumer") -> None:
        """Raises when the channel layer cannot be reached (the viewer is then not joined)."""
        async with self.membership:
            if self.channel is None:
                # The default prefix: channels_redis receives all of a process's channels through one key.
                self.channel = await self.layer.new_channel()
                self.receiver = asyncio.create_task(self.receive_forever())
            # Every join adds again: that renews the membership before the layer's group expiry.
            await self.layer.group_add(group, self.channel)
            self.viewers.setdefault(group, set()).add(viewer)

    async def leave(self, group: str, viewer: "GroupConsumer") -> None:
        async with self.membership:
            members = self.viewers.get(group, set())
            members.discard(viewer)
            if members:
                return
            self.viewers.pop(group, None)
            try:
                await self.layer.group_discard(group, self.channel)
            except Exception:  # noqa: BLE001 - nothing to clean up if Redis is gone
                pass

    async def receive_forever(self) -> None:
        while True:
            try:
                event = await self.layer.receive(self.channel)
            except Exception:  # noqa: BLE001 - Redis down: the viewers' sockets stay open meanwhile
                log.warning("channel layer receive failed; joining the groups again once it answers", exc_info=True)
                await self.rejoin()
                continue
            payload, as_text = event["payload"], None
            for viewer in tuple(self.viewers.get(event["group"], ())):
                if viewer.text_frames and isinstance(payload, bytes):
                    as_text = as_text or encode_message(decode_message(payload), binary=False)
                    viewer.outbox.put(event["kind"], as_text)
                else:
                    viewer.outbox.put(event["kind"], payload)

    async def rejoin(self) -> None:
        """Once Redis answers again, join every group anew (a Redis restarted without its data has
        forgotten them), then give each group's viewers the current state: what was published
        while Redis was away never reaches them, and a paused replay would not publish again."""
        while True:
            await asyncio.sleep(RELAY_RETRY_S)
            try:
                async with self.membership:
                    watched = {group: next(iter(viewers)) for group, viewers in self.viewers.items() if viewers}
                    for group in watched:
                        await self.layer.group_add(group, self.channel)
                break
            except Exception:  # noqa: BLE001 - still down
                continue
        for group, viewer in watched.items():
            try:
                current = await viewer.opening_messages()
            except Exception:  # noqa: BLE001 - the database may be away too: the next change will tell
                log.warning("could not read the current state of %s after the channel layer came back", group, exc_info=True)
                continue
            for message in current or ():
                for member in tuple(self.viewers.get(group, ())):
                    member.outbox.put(message["type"], member.encoded(message))


relays: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, GroupRelay]" = weakref.WeakKeyDictionary()


def relay_for(layer) -> GroupRelay:
    """The relay of the running event loop (a server process has one loop for its life; tests
    run each scenario in a loop of their own, with a fresh layer)."""
    loop = asyncio.get_running_loop()
    relay = relays.get(loop)
    if relay is None or relay.layer is not layer:
        relay = relays[loop] = GroupRelay(layer)
    return relay


def scope_language(scope: dict) -> str:
    """The language a socket's page reads in, chosen as ``LocaleMiddleware`` chooses a page's: the
    language cookie, else the handshake's Accept-Language, else the site's. Django's chooser reads
    only a request's ``COOKIES`` and ``META``, so a stand-in carries the handshake's."""
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers", ())}
    handshake = SimpleNamespace(COOKIES=scope.get("cookies", {}), META={"HTTP_ACCEPT_LANGUAGE": headers.get("accept-language", "")})
    return translation.get_language_from_request(handshake)


class GroupConsumer(AsyncJsonWebsocketConsumer):
    """Refuses anonymous users (4401) and unknown objects or those of a fabric the user may not
    see (4404); when Redis cannot be reached at connect it sends the current state and closes
    (4503), and the page reconnects by itself. A viewer already watching when Redis goes away
    stays connected and is sent the current state once it is back (`GroupRelay.rejoin`).

    Subclasses name the object's group (`group_for`) and give the opening messages
    (`opening_messages`: the current state, or None when the object does not exist). Viewers
    only listen unless a subclass overrides `receive_json`.
    """

    group: str | None = None
    sender: asyncio.Task | None = None
    text_frames = False  # `?frames=json`: frames as JSON text, not binary

    async def __call__(self, scope, receive, send) -> None:
        """As channels' AsyncConsumer, but without a channel layer channel of the viewer's own:
        everything a viewer is sent comes through its process's relay. A channel of its own
        would be one more read waiting on Redis per viewer, and would end every socket with
        1011 the moment Redis goes away."""
        self.scope = scope
        self.language = scope_language(scope)  # what the viewer is told in reply (replay.error)
        self.text_frames = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("frames") == ["json"]
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self.base_send = send
        try:
            await await_many_dispatch([receive], self.dispatch)
        except StopConsumer:
            pass

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
        self.outbox = LatestOutbox()  # filled from the moment we join; sent once the opening is
        try:
            await relay_for(self.channel_layer).join(group, self)
        except Exception:  # noqa: BLE001 - Redis down: say so by closing; the page reconnects
            log.warning("channel layer unavailable; closing %s", group, exc_info=True)
            for message in opening:
                await self.send_payload(self.encoded(message))
            await self.close(code=CLOSE_LAYER_UNAVAILABLE)
            return
        self.group = group
        # Read again once in the group, so that no change falls between the state and the stream.
        current = await self.opening_messages()
        for message in current if current is not None else opening:
            await self.send_payload(self.encoded(message))
        self.sender = asyncio.create_task(self.send_newest())

    def encoded(self, message: dict) -> str | bytes:
        return encode_message(message, binary=not self.text_frames)

    async def send_payload(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            await self.send(bytes_data=payload)
        else:
            await self.send(text_data=payload)

    async def send_newest(self) -> None:
        while True:
            for payload in await self.outbox.take():
                await self.send_payload(payload)

    async def refuse(self, code: int) -> None:
        """Accept, then close with `code`: a handshake refused outright reaches the browser as
        1006 whatever the code, and the page could not tell a final refusal from a dropped line."""
        await self.accept()
        await self.close(code=code)

    async def disconnect(self, code: int) -> None:
        if self.sender is not None:
            self.sender.cancel()
        if self.group is not None:
            await relay_for(self.channel_layer).leave(self.group, self)

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
