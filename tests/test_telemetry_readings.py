"""One-off perfquery/ibqueryerrors readings uploaded on the fabric page, and the POST endpoint's
column shape: frames pushed to viewers, a state row that does not grow with the posts."""
import json
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from tests.test_consumers import session_headers
from twin.accounts.models import Role
from twin.asgi import application
from twin.fabrics.services import snapshot_create
from twin.ingest.registry import parse_fabric
from twin.simulations.models import TelemetrySource, TelemetryState

DATA = Path(__file__).parent / "data"
DUMP = DATA / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"


@pytest.fixture
def ib_fabric(db):
    spec = parse_fabric(DUMP.read_text(), source_name=DUMP.name)
    return snapshot_create(fabric_name="ib", spec=spec, source_name=DUMP.name, source_format="ibnetdiscover", checksum="1" * 64).fabric


def upload(client, fabric, name, taken_at):
    data = (DATA / "telemetry" / name).read_bytes()
    return client.post(f"/fabrics/{fabric.pk}/telemetry/reading/", {"file": SimpleUploadedFile(name, data), "taken_at": taken_at}, follow=True)


@pytest.mark.django_db(transaction=True)
def test_two_perfquery_readings_show_utilisation_to_viewers_and_errors_reach_the_diagnosis(ib_fabric, operator_client, make_user):
    headers = session_headers(make_user(Role.VIEWER))

    async def scenario():
        from channels.db import database_sync_to_async

        communicator = WebsocketCommunicator(application, f"/ws/fabrics/{ib_fabric.pk}/", headers=headers)
        assert (await communicator.connect())[0]
        first = await database_sync_to_async(upload)(operator_client, ib_fabric, "perfquery_x_leaf01_node01.txt", "2026-12-01 10:00:00")
        assert "perfquery reading: 3 ports read; 3 ports read for the first time" in first.content.decode()
        await communicator.receive_from(timeout=5)
        later = await database_sync_to_async(upload)(operator_client, ib_fabric, "perfquery_x_leaf01_node01_later.txt", "2026-12-01 10:00:10")
        assert "3 links measured, shown to everyone viewing the fabric; 1 port with new errors" in later.content.decode()
        message = json.loads(await communicator.receive_from(timeout=5))
        await communicator.disconnect()
        return message

    message = async_to_sync(scenario)()
    frame = message["frame"]
    assert message["type"] == "fabric.telemetry" and (frame["t_s"], frame["t_end_s"]) == (1796119200.0, 1796119210.0)
    assert frame["top"][0]["from"] == "ib:b8599f0300a01240" and frame["top"][0]["utilization"] == 0.5

    errors = upload(operator_client, ib_fabric, "ibqueryerrors_2leaf_1spine.txt", "2026-12-01 10:00:20").content.decode()
    assert "ibqueryerrors reading: 4 ports read" in errors and "1 port not in the fabric (line 10: &#x27;node42 mlx5_0&#x27;" in errors
    state = TelemetryState.objects.get(fabric=ib_fabric)
    assert state.seq == 2  # the error reading keeps the viewers' frame
    assert {entry["link"] for entry in state.history} >= {1}  # leaf01:34, for the diagnosis rules
    diagnosis = operator_client.get(f"/fabrics/{ib_fabric.pk}/diagnosis/").content.decode()
    assert 'data-rule="link-errors"' in diagnosis or "SymbolErrorCounter" in diagnosis


@pytest.mark.django_db
def test_a_reading_that_cannot_be_read_changes_nothing(ib_fabric, operator_client):
    bad = operator_client.post(f"/fabrics/{ib_fabric.pk}/telemetry/reading/", {"file": SimpleUploadedFile("x.txt", b"# Port extended counters: Lid 2 port 33\nPortXmitData is twelve\n")}, follow=True)
    assert "x.txt line 2: unexpected line" in bad.content.decode()
    elsewhere = (DATA / "telemetry" / "perfquery_x_leaf01_node01.txt").read_text().replace("Lid 2 ", "Lid 92 ").replace("Lid 11 ", "Lid 93 ")
    stray = operator_client.post(f"/fabrics/{ib_fabric.pk}/telemetry/reading/", {"file": SimpleUploadedFile("pq.txt", elsewhere.encode())}, follow=True)
    assert "None of the 3 ports in pq.txt is a port of ib: line 1: lid 92: no node of the fabric has this LID" in stray.content.decode()
    assert not TelemetryState.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_columns_are_ingested_and_the_state_row_does_not_grow_with_the_posts(ib_fabric, make_user, celery_worker):
    from rest_framework.authtoken.models import Token

    from tests.test_runs import wait_for

    token = Token.objects.create(user=make_user(Role.OPERATOR, username="collector"))
    index_ports = [(link.a.key, link.a_port) for link in ib_fabric.latest_snapshot().links.select_related("a").order_by("pk")]
    nodes, ports = [node for node, _ in index_ports], [port for _, port in index_ports]

    def frame_of_batch(batch: int) -> dict | None:
        frame = TelemetryState.objects.filter(fabric=ib_fabric).values_list("frame", flat=True).first() or {}
        return frame if frame.get("batch") == batch else None

    def post(t, k, errors=0) -> dict:
        """The frame the worker made of the posted columns (waited for, as a collector posting every second would)."""
        columns = {"node": nodes + ["ib:nowhere"], "port": ports + ["1"], "timestamp": t, "tx_bytes": [k * 10**9 + i for i in range(len(nodes) + 1)], "errors": {"SymbolErrorCounter": [errors] * (len(nodes) + 1)}}
        response = Client().post(f"/api/fabrics/{ib_fabric.pk}/telemetry/", {"columns": columns}, content_type="application/json", HTTP_AUTHORIZATION=f"Token {token.key}")
        assert response.status_code == 202, response.content
        wait_for(lambda: frame_of_batch(response.json()["batch"]) is not None, timeout_s=30, interval_s=0.05)
        return frame_of_batch(response.json()["batch"])

    post(1000.0, 0)
    report = post(1001.0, 25)["telemetry"]
    assert report["links_measured"] == len(nodes) and report["unknown"] == ["ib:nowhere:1"]
    sizes = []
    for step in range(2, 40):
        post(1000.0 + step, 25 * step, errors=3 if step >= 20 else 0)
        row = TelemetryState.objects.get(fabric=ib_fabric)
        sizes.append(len(json.dumps(row.state)) + len(json.dumps(row.history)))
    row = TelemetryState.objects.get(fabric=ib_fabric)
    assert len(row.history) == 2 * len(nodes)  # the first counters and the one change, not one entry per post
    assert max(sizes[20:]) <= sizes[18] * 1.2 + 2000  # bounded by the ports, not by the posts
    refused = Client().post(f"/api/fabrics/{ib_fabric.pk}/telemetry/", {"columns": {"node": nodes, "port": ports, "timestamp": 5, "tx_bytes": [-1] * len(nodes)}}, content_type="application/json", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert refused.status_code == 400 and "columns.tx_bytes: expected a list of 15 non-negative integer counters" in refused.json()["detail"]


@pytest.mark.django_db
def test_viewers_cannot_configure_telemetry(ib_fabric, viewer_client):
    response = viewer_client.post(f"/fabrics/{ib_fabric.pk}/telemetry/source/", {"url": "http://127.0.0.1:9090", "preset": "node_exporter_infiniband", "interval_s": 1, "rate_window_s": 60})
    assert response.status_code == 403 and not TelemetrySource.objects.exists()
    assert viewer_client.post(f"/fabrics/{ib_fabric.pk}/telemetry/reading/", {}).status_code == 403
    assert b'id="telemetry-source-form"' not in viewer_client.get(f"/fabrics/{ib_fabric.pk}/").content
