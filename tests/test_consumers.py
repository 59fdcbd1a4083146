"""The run websocket through the real ASGI stack (origin check, session auth) and channels_redis."""
import asyncio
import json

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.db.models import F
from django.test import Client

from twin.accounts.models import Role
from twin.asgi import application
from twin.runs.models import Run, RunKind, RunStatus
from twin.runs.services import run_finish

pytestmark = pytest.mark.django_db(transaction=True)


def session_headers(user) -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    return [(b"origin", b"http://localhost"), (b"cookie", cookie.encode())]


async def receive_json(communicator) -> dict:
    return json.loads(await communicator.receive_from(timeout=5))


def test_viewer_gets_the_snapshot_then_every_change(make_user, small_snapshot):
    viewer = make_user(Role.VIEWER)
    run = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=small_snapshot, seq=4, message="queued")

    headers = session_headers(viewer)

    async def scenario():
        communicator = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        first = await receive_json(communicator)
        assert first["type"] == "run.state" and first["seq"] == 4 and first["run"]["status"] == "pending"
        # A change made by synchronous code (as in the worker) reaches the socket.
        from channels.db import database_sync_to_async

        await database_sync_to_async(run_finish)(run_id=run.pk, status=RunStatus.SUCCEEDED, result={"cards": 64})
        frame = await receive_json(communicator)
        assert frame["seq"] == 5 and frame["run"]["status"] == "succeeded" and frame["run"]["result"] == {"cards": 64}
        await communicator.disconnect()

    async_to_sync(scenario)()


def test_an_idle_socket_stays_open_and_still_hears_the_next_change(make_user, small_snapshot):
    """Nothing happens for 30 s: the consumer's blocking reads on the real Redis (5 s each) must not
    meet the Redis client's socket timeout, which used to close idle sockets every ~6 s with 1011."""
    run = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=small_snapshot, seq=1)
    headers = session_headers(make_user(Role.VIEWER))

    async def scenario():
        from channels.db import database_sync_to_async

        communicator = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        assert (await receive_json(communicator))["seq"] == 1
        assert await communicator.receive_nothing(timeout=31, interval=1)  # idle, and not closed
        await database_sync_to_async(run_finish)(run_id=run.pk, status=RunStatus.SUCCEEDED, result={})
        assert (await receive_json(communicator))["run"]["status"] == "succeeded"
        await communicator.disconnect()

    async_to_sync(scenario)()


def test_anonymous_socket_is_closed(small_snapshot):
    run = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=small_snapshot)

    async def scenario():
        communicator = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=[(b"origin", b"http://localhost")])
        connected, _ = await communicator.connect()
        # Accepted, then closed with the code: a refused handshake would reach a browser as 1006.
        assert connected and await communicator.receive_output() == {"type": "websocket.close", "code": 4401}
        await communicator.disconnect()

    async_to_sync(scenario)()


def test_unknown_run_and_foreign_origin_are_refused(make_user):
    headers = session_headers(make_user(Role.VIEWER))

    async def scenario():
        communicator = WebsocketCommunicator(application, "/ws/runs/999999/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected and await communicator.receive_output() == {"type": "websocket.close", "code": 4404}
        await communicator.disconnect()
        foreign = [(b"origin", b"http://evil.example")] + headers[1:]
        communicator = WebsocketCommunicator(application, "/ws/runs/1/", headers=foreign)
        connected, _ = await communicator.connect()
        assert not connected
        await communicator.disconnect()

    async_to_sync(scenario)()


def test_the_outbox_keeps_the_newest_of_each_kind_in_the_order_they_last_changed():
    from twin.common.websocket import LatestOutbox

    async def scenario():
        outbox = LatestOutbox()
        for text in ("frame 1", "frame 2"):
            outbox.put("replay.frame", text)
        outbox.put("replay.state", "paused")
        outbox.put("replay.frame", "frame 3")
        assert await outbox.take() == ["paused", "frame 3"]  # a viewer behind skips frame 1 and 2
        waiting = asyncio.create_task(outbox.take())
        await asyncio.sleep(0.05)
        assert not waiting.done()  # nothing new: the sender waits
        outbox.put("replay.frame", "frame 4")
        assert await asyncio.wait_for(waiting, timeout=1) == ["frame 4"]

    async_to_sync(scenario)()


def test_viewers_in_one_process_share_one_group_membership_and_get_the_same_text(make_user, small_snapshot):
    """The channel layer carries a change once per web process, not once per viewer, and the
    text each viewer gets is the one the publisher encoded."""
    import redis
    from channels.db import database_sync_to_async
    from channels.layers import get_channel_layer
    from django.conf import settings

    from twin.runs.realtime import run_group

    run = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=small_snapshot, seq=1)
    headers = session_headers(make_user(Role.VIEWER))
    members_key = get_channel_layer()._group_key(run_group(run.pk))
    members = redis.Redis.from_url(settings.REDIS_URL)

    async def scenario():
        viewers = [WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers) for _ in range(3)]
        for viewer in viewers:
            assert (await viewer.connect())[0]
            assert (await receive_json(viewer))["seq"] == 1
        assert members.zcard(members_key) == 1
        await database_sync_to_async(run_finish)(run_id=run.pk, status=RunStatus.SUCCEEDED, result={"cards": 64})
        texts = [await viewer.receive_from(timeout=5) for viewer in viewers]
        assert len(set(texts)) == 1 and json.loads(texts[0])["run"]["status"] == "succeeded"
        assert ": " not in texts[0]  # compact: encoded by the publisher, not by each consumer
        await viewers[0].disconnect()
        assert members.zcard(members_key) == 1  # two viewers still watch
        for viewer in viewers[1:]:
            await viewer.disconnect()
        assert members.zcard(members_key) == 0

    async_to_sync(scenario)()


def test_a_viewer_stays_connected_while_redis_restarts_empty_and_then_hears_the_current_state_and_changes(make_user, small_snapshot, settings, tmp_path):
    """Redis killed and started again without its data (no append-only file): the socket stays
    open (no 1011), the viewer is sent what changed while Redis was away, and the process's group
    membership, which the empty Redis forgot, is renewed so later changes arrive too."""
    from channels.db import database_sync_to_async

    from twin.common.embedded import EmbeddedRedis
    from twin.runs.realtime import run_broadcast

    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()  # keeps nothing across a restart
    layer = settings.CHANNEL_LAYERS["default"]
    settings.CHANNEL_LAYERS = {"default": {**layer, "CONFIG": {**layer["CONFIG"], "hosts": [{**layer["CONFIG"]["hosts"][0], "address": redis.url}]}}}
    run = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=small_snapshot, seq=1)
    headers = session_headers(make_user(Role.VIEWER))

    def message_changed(text: str) -> None:
        Run.objects.filter(pk=run.pk).update(seq=F("seq") + 1, message=text)
        run_broadcast(Run.objects.get(pk=run.pk))

    async def scenario():
        communicator = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
        assert (await communicator.connect())[0]
        assert (await receive_json(communicator))["seq"] == 1
        redis.process.kill()
        redis.process.wait()
        await database_sync_to_async(message_changed)("said while Redis was away")  # published to nobody
        assert await communicator.receive_nothing(timeout=2)  # and the socket is still open
        redis.start()
        state = await receive_json(communicator)
        assert state["seq"] == 2 and state["run"]["message"] == "said while Redis was away"
        await database_sync_to_async(message_changed)("said once it was back")
        state = await receive_json(communicator)
        assert state["seq"] == 3 and state["run"]["message"] == "said once it was back"
        await communicator.disconnect()

    try:
        async_to_sync(scenario)()
    finally:
        redis.stop()
