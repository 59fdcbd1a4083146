"""The run websocket through the real ASGI stack (origin check, session auth) and channels_redis."""
import json

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
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
