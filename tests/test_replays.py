"""Replays computed by a real worker and played to every viewer over the real channel layer;
live telemetry pushed the same way; traces uploaded with clear errors."""
import base64
import json
import re
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.test_consumers import session_headers
from tests.test_runs import wait_for
from twin.accounts.models import Role
from twin.asgi import application
from twin.replay.encoding import decode_message
from twin.runs.models import Run, RunStatus
from twin.simulations.models import ReplayPlayback, TraceFile

pytestmark = pytest.mark.django_db(transaction=True)
NCCL_LOG = Path(__file__).parent / "data" / "traces" / "nccl_debug_init_coll_8rank.log"


def start_replay(client, snapshot, **params) -> Run:
    response = client.post("/api/runs/", {"kind": "replay", "snapshot": snapshot.pk, "params": params}, content_type="application/json")
    assert response.status_code == 201, response.content
    return Run.objects.get(pk=response.json()["id"])


def test_generated_training_step_replays_and_plays_to_viewers(celery_worker, small_snapshot, make_user):
    from tests.conftest import logged_in_client

    operator = make_user(Role.OPERATOR)
    client = logged_in_client(operator)
    run = start_replay(client, small_snapshot, training={"model_params": 1e9, "tp": 8, "dp": 8, "hidden_size": 2048, "seq_len": 1024}, max_frames=40)
    wait_for(lambda: Run.objects.get(pk=run.pk).is_terminal, timeout_s=120)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.result["events"]["total"] > 0 and run.result["duration_s"] > 0
    playback = ReplayPlayback.objects.get(run=run)
    assert 1 < playback.frames <= 40
    last = client.get(f"/api/runs/{run.pk}/frames/", {"index": "last"}).json()
    assert len(base64.b64decode(last["frame"]["utilization"])) == small_snapshot.link_count
    leaf_matrix = last["frame"]["leaf_matrix"]
    assert len(leaf_matrix["groups"]) == 8 and len(base64.b64decode(leaf_matrix["values"])) == 64

    first_over_http = client.get(f"/api/runs/{run.pk}/frames/", {"index": 0}).json()["frame"]
    headers = session_headers(operator)

    async def watch():
        communicator = WebsocketCommunicator(application, f"/ws/replays/{run.pk}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        # A viewer asking for JSON frames watches alongside: the relay gives it the same frames as text.
        text_viewer = WebsocketCommunicator(application, f"/ws/replays/{run.pk}/?frames=json", headers=headers)
        assert (await text_viewer.connect())[0]
        state = json.loads(await communicator.receive_from(timeout=5))
        assert state["type"] == "replay.state" and state["state"]["playing"] is False
        opening = await communicator.receive_from(timeout=5)
        assert isinstance(opening, bytes)  # frames go as binary messages (docs/replay.md)
        first = decode_message(opening)
        assert first["type"] == "replay.frame" and first["index"] == 0  # a late joiner gets the current frame
        assert {**first["frame"], "seq": 0} == {**first_over_http, "seq": 0}  # the frame the HTTP endpoint serves, byte for byte
        await communicator.send_json_to({"action": "speed", "speed": 0})
        await communicator.send_json_to({"action": "play"})
        frames, states, raw_frames = [], [], []
        while len(frames) < 8:
            payload = await communicator.receive_from(timeout=20)
            message = decode_message(payload)
            (frames if message["type"] == "replay.frame" else states).append(message)
            if message["type"] == "replay.frame":
                raw_frames.append(payload)
        await communicator.send_json_to({"action": "pause"})
        await communicator.send_json_to({"action": "seek", "index": 3})
        seeked = None
        while seeked is None:
            message = decode_message(await communicator.receive_from(timeout=20))
            if message["type"] == "replay.frame" and message["index"] == 3:
                seeked = message
        await communicator.send_json_to({"action": "seek", "index": 10**6})
        while (message := decode_message(await communicator.receive_from(timeout=20)))["type"] != "replay.error":
            pass
        assert "Seek to a frame" in message["detail"]
        as_text = []
        while not as_text or as_text[-1]["seq"] < seeked["seq"]:
            payload = await text_viewer.receive_from(timeout=20)
            assert isinstance(payload, str)
            if (message := json.loads(payload))["type"] == "replay.frame":
                as_text.append(message)
        await communicator.disconnect()
        await text_viewer.disconnect()
        return frames, states, raw_frames, seeked, as_text

    frames, states, raw_frames, seeked, as_text = async_to_sync(watch)()
    assert all(isinstance(payload, bytes) for payload in raw_frames)
    seqs = [frame["seq"] for frame in frames]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert [frame["index"] for frame in frames] == sorted(frame["index"] for frame in frames)
    assert any(state["state"]["playing"] for state in states)
    assert as_text[-1] == seeked  # the text viewer's frame is the binary viewer's, decoded


def test_viewers_cannot_drive_the_player(small_snapshot, make_user):
    run = Run.objects.create(kind="replay", snapshot=small_snapshot, status=RunStatus.SUCCEEDED, params={})
    from twin.simulations.replays import replay_compute

    run.params = {"training": {"model_params": 1e9, "tp": 8, "dp": 2, "hidden_size": 2048, "seq_len": 1024}, "max_frames": 10}
    summary, detail = replay_compute(run)
    Run.objects.filter(pk=run.pk).update(result=summary, detail=detail)
    headers = session_headers(make_user(Role.VIEWER))

    async def scenario():
        communicator = WebsocketCommunicator(application, f"/ws/replays/{run.pk}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        await communicator.receive_from(timeout=5)
        await communicator.receive_from(timeout=5)
        await communicator.send_json_to({"action": "play"})
        reply = json.loads(await communicator.receive_from(timeout=5))
        assert reply["type"] == "replay.error" and "operators" in reply["detail"]
        await communicator.disconnect()

    async_to_sync(scenario)()
    assert ReplayPlayback.objects.get(run=run).playing is False


@pytest.mark.parametrize(
    "language_header", [(b"cookie", b"django_language=zh-hans"), (b"accept-language", b"zh-CN,zh;q=0.9,en;q=0.5")], ids=["cookie", "accept-language"]
)
def test_the_player_answers_in_the_viewers_language(small_snapshot, make_user, language_header):
    """The page's language (its cookie, else the browser's Accept-Language) is the socket's: a
    Chinese page's refusals come back in Chinese, for the viewer as for the operator."""
    run = Run.objects.create(kind="replay", snapshot=small_snapshot, status=RunStatus.SUCCEEDED, params={})
    from twin.simulations.replays import replay_compute

    run.params = {"training": {"model_params": 1e9, "tp": 8, "dp": 2, "hidden_size": 2048, "seq_len": 1024}, "max_frames": 10}
    summary, detail = replay_compute(run)
    Run.objects.filter(pk=run.pk).update(result=summary, detail=detail)

    def in_language(user) -> list[tuple[bytes, bytes]]:
        headers = dict(session_headers(user))
        if language_header[0] == b"cookie":
            headers[b"cookie"] += b"; " + language_header[1]
        else:
            headers.update([language_header])
        return list(headers.items())

    async def refusal(headers, message) -> str:
        communicator = WebsocketCommunicator(application, f"/ws/replays/{run.pk}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        await communicator.receive_from(timeout=5)
        await communicator.receive_from(timeout=5)
        await communicator.send_json_to(message)
        while (reply := json.loads(await communicator.receive_from(timeout=5)))["type"] != "replay.error":
            pass
        await communicator.disconnect()
        return reply["detail"]

    viewer, operator = in_language(make_user(Role.VIEWER)), in_language(make_user(Role.OPERATOR))
    assert async_to_sync(refusal)(viewer, {"action": "play"}) == "只有操作员和管理员可以操控播放器。"
    far = async_to_sync(refusal)(operator, {"action": "seek", "index": 10**6})
    assert re.search(r"[\u4e00-\u9fff]", far) and "frame" not in far, far


@pytest.mark.parametrize("message", [{"text_data": "[" * 100_000}, {"text_data": "{not json"}, {"bytes_data": b"\x00"}], ids=["deep", "malformed", "binary"])
def test_a_message_that_is_no_json_is_answered_and_the_socket_stays(small_snapshot, make_user, message):
    run = Run.objects.create(kind="replay", snapshot=small_snapshot, status=RunStatus.SUCCEEDED, params={})
    from twin.simulations.replays import replay_compute

    run.params = {"training": {"model_params": 1e9, "tp": 8, "dp": 2, "hidden_size": 2048, "seq_len": 1024}, "max_frames": 10}
    summary, detail = replay_compute(run)
    Run.objects.filter(pk=run.pk).update(result=summary, detail=detail)
    headers = session_headers(make_user(Role.OPERATOR))

    async def scenario():
        communicator = WebsocketCommunicator(application, f"/ws/replays/{run.pk}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        await communicator.receive_from(timeout=5)  # the player's state
        await communicator.receive_from(timeout=5)  # and its frame
        await communicator.send_to(**message)
        reply = json.loads(await communicator.receive_from(timeout=5))
        assert reply == {"type": "replay.error", "detail": 'Expected a JSON object like {"action": "play"}.'}
        await communicator.disconnect()

    async_to_sync(scenario)()


def test_trace_upload_checks_the_file(operator_client, small_snapshot):
    fits = "\n".join(
        ['{"format": "twin-trace", "version": 1, "name": "fits"}']
        + [f'{{"type": "rank", "rank": {r}, "card": "card-{r + 1:04d}"}}' for r in range(4)]
        + ['{"type": "collective", "t_s": 0.0, "op": "allreduce", "bytes": 1048576}']
    )
    ok = operator_client.post("/api/traces/", {"fabric": small_snapshot.fabric_id, "file": SimpleUploadedFile("fits.jsonl", fits.encode())})
    assert ok.status_code == 201, ok.content
    assert ok.json()["format"] == "trace-jsonl" and ok.json()["ranks"] == 4
    # A real NCCL log from another cluster reads, but names GPUs this fabric does not have.
    other = operator_client.post("/api/traces/", {"fabric": small_snapshot.fabric_id, "file": SimpleUploadedFile("nccl.log", NCCL_LOG.read_bytes())})
    assert other.status_code == 400 and "node01/gpu:0000:db:00.0" in " ".join(other.json()["problems"])
    bad = operator_client.post("/api/traces/", {"fabric": small_snapshot.fabric_id, "file": SimpleUploadedFile("notes.txt", b"hello\n")})
    assert bad.status_code == 400 and "notes.txt" in bad.json()["detail"]
    assert TraceFile.objects.count() == 1


def test_a_trace_naming_cards_the_fabric_lacks_is_refused_and_not_stored(operator_client, small_snapshot):
    text = "\n".join([
        '{"format": "twin-trace", "version": 1, "name": "stray"}',
        '{"type": "rank", "rank": 0, "card": "card-0001"}',
        '{"type": "rank", "rank": 1, "card": "card-9999"}',
        '{"type": "flow", "t_s": 0.0, "src_rank": 0, "dst_rank": 1, "bytes": 1000}',
    ])
    response = operator_client.post("/api/traces/", {"fabric": small_snapshot.fabric_id, "file": SimpleUploadedFile("stray.jsonl", text.encode())})
    assert response.status_code == 400, response.content
    body = response.json()
    assert "stray.jsonl" in body["detail"] and any("card-9999" in problem for problem in body["problems"]), body
    assert TraceFile.objects.count() == 0


def test_telemetry_is_pushed_to_viewers_of_the_fabric(celery_worker, small_snapshot, make_user):
    """A post is checked by the web process and turned into a frame by the live worker; the
    frame names the batch it was made of."""
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=make_user(Role.OPERATOR, username="collector"))
    headers = session_headers(make_user(Role.VIEWER))
    link = small_snapshot.links.select_related("a").order_by("pk").first()
    port = {"node": link.a.key, "port": link.a_port}

    def post(samples):
        from django.test import Client

        return Client().post(f"/api/fabrics/{small_snapshot.fabric_id}/telemetry/", {"samples": samples}, content_type="application/json", HTTP_AUTHORIZATION=f"Token {token.key}")

    async def scenario():
        from channels.db import database_sync_to_async

        communicator = WebsocketCommunicator(application, f"/ws/fabrics/{small_snapshot.fabric_id}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        first = await database_sync_to_async(post)([{"port": port, "timestamp": 1000.0, "tx_bytes": 0}])
        assert first.status_code == 202, first.content
        message = json.loads(await communicator.receive_from(timeout=10))
        assert message["frame"]["batch"] == first.json()["batch"]
        second = await database_sync_to_async(post)([{"port": port, "timestamp": 1001.0, "tx_bytes": 25 * 10**9}])
        assert second.status_code == 202
        assert second.json() == {"batch": first.json()["batch"] + 1, "superseded": None, "superseded_total": 0}
        message = json.loads(await communicator.receive_from(timeout=10))
        assert message["type"] == "fabric.telemetry" and message["seq"] == 2 and message["frame"]["batch"] == second.json()["batch"]
        utilization = base64.b64decode(message["frame"]["utilization"])
        assert max(utilization) >= 120  # 25 GB in 1 s on a 50 GB/s link: about half
        await communicator.disconnect()

    async_to_sync(scenario)()
    bad = post([{"port": port, "timestamp": "yesterday"}])
    assert bad.status_code == 400 and "timestamp" in bad.json()["detail"]


def test_training_that_cannot_run_is_refused_before_it_starts(operator_client, small_snapshot):
    """The README's 175B with PP=4 makes 97 layers, which do not split into 4 stages: refused at
    once with the reason (API and form), and accepted when `layers` says how many."""
    training = {"model_params": 175e9, "tp": 4, "pp": 4, "dp": 4}
    refused = operator_client.post("/api/runs/", {"kind": "replay", "snapshot": small_snapshot.pk, "params": {"training": training}}, content_type="application/json")
    assert refused.status_code == 400, refused.content
    assert "97 layers" in refused.json()["detail"] and "give layers, e.g. 96" in refused.json()["detail"]
    too_big = operator_client.post("/api/runs/", {"kind": "replay", "snapshot": small_snapshot.pk, "params": {"training": {**training, "pp": 1, "dp": 32}}}, content_type="application/json")
    assert too_big.status_code == 400 and "has 64 cards" in too_big.json()["detail"]
    form = {"model_params": "175B", "tp": 4, "pp": 4, "dp": 4, "ordering": "rank"}
    page = operator_client.post(f"/snapshots/{small_snapshot.pk}/replay/", form, follow=True)
    assert b"97 layers" in page.content and b'id="replay-form"' in page.content
    assert not Run.objects.exists()
    start_replay(operator_client, small_snapshot, training={**training, "layers": 96})
    started = operator_client.post(f"/snapshots/{small_snapshot.pk}/replay/", {**form, "layers": 96})
    assert started.status_code == 302 and Run.objects.latest("pk").params["training"]["layers"] == 96
