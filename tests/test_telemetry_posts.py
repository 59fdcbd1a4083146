"""Posted telemetry: checked in the web process, left in the fabric's newest-wins slot in the
real Redis as it was sent (gzip-compressed or not), turned into frames by a real Celery worker. A
batch the worker has not taken yet is replaced by a newer one (and the answer says so); a
malformed, unreadable or oversized post is refused with the reason and leaves nothing behind."""
import gzip
import json

import pytest
from celery.contrib.testing.worker import start_worker
from django.test import override_settings

from tests.test_runs import wait_for
from twin import celery_app
from twin.simulations.models import TelemetryState
from twin.simulations.telemetry import slots

pytestmark = pytest.mark.django_db(transaction=True)


def telemetry_url(snapshot) -> str:
    return f"/api/fabrics/{snapshot.fabric_id}/telemetry/"


def columns(snapshot, timestamp: float, tx_bytes: int) -> dict:
    links = list(snapshot.links.select_related("a").order_by("pk")[:4])
    return {"columns": {"node": [link.a.key for link in links], "port": [link.a_port for link in links], "timestamp": timestamp, "tx_bytes": [tx_bytes] * len(links)}}


def test_an_untaken_batch_is_superseded_by_the_newer_one(operator_client, small_snapshot):
    """Three posts while no worker runs: the second replaces the first, the third the second;
    the worker, once started, makes one frame, of the third."""
    from twin.simulations.telemetry import _index_cached

    _index_cached.cache_clear()
    answers = []
    for second in range(3):
        body = json.dumps(columns(small_snapshot, 1000.0 + second, second * 10**9)).encode()
        packed = second == 2  # the newest is gzip-compressed: the slot keeps it so, the worker unpacks it
        response = operator_client.post(telemetry_url(small_snapshot), gzip.compress(body) if packed else body, content_type="application/json", **({"HTTP_CONTENT_ENCODING": "gzip"} if packed else {}))
        assert response.status_code == 202, response.content
        answers.append(response.json())
    first, second, third = answers
    assert first["superseded"] is None and first["superseded_total"] == 0
    assert second == {"batch": first["batch"] + 1, "superseded": first["batch"], "superseded_total": 1}
    assert third == {"batch": first["batch"] + 2, "superseded": second["batch"], "superseded_total": 2}
    assert not TelemetryState.objects.exists()  # nothing was computed in the request
    assert _index_cached.cache_info().currsize == 0  # nor the snapshot's port index built: that is the worker's

    with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30, loglevel="WARNING"):
        wait_for(lambda: TelemetryState.objects.filter(fabric_id=small_snapshot.fabric_id, seq__gte=1).exists(), timeout_s=30)
        state = TelemetryState.objects.get(fabric_id=small_snapshot.fabric_id)
        assert state.seq == 1 and state.frame["batch"] == third["batch"]
        assert state.frame["telemetry"]["samples"] == 4 and state.frame["telemetry"]["first_samples"] == 4
        # The slot is empty: the next post is taken by the drain waiting for it, or queues a new one.
        fourth = operator_client.post(telemetry_url(small_snapshot), columns(small_snapshot, 1010.0, 10 * 10**9), content_type="application/json").json()
        assert fourth["superseded"] is None
        wait_for(lambda: TelemetryState.objects.get(fabric_id=small_snapshot.fabric_id).seq == 2, timeout_s=30)
        # No more posts: the drain stops waiting after its slice and gives up its claim.
        claim = slots.keys(small_snapshot.fabric)[1]
        wait_for(lambda: not slots.client.exists(claim), timeout_s=30)
    frame = TelemetryState.objects.get(fabric_id=small_snapshot.fabric_id).frame
    assert frame["batch"] == fourth["batch"] and frame["telemetry"]["links_measured"] == 4


def redis_keys_of(snapshot) -> list[str]:
    slots.scripts()
    return [key for key in slots.keys(snapshot.fabric) if slots.client.exists(key)]


def test_a_malformed_batch_is_refused_in_the_request_and_leaves_nothing(operator_client, small_snapshot):
    body = columns(small_snapshot, 1000.0, 0)
    body["columns"]["tx_bytes"][2] = "lots"
    response = operator_client.post(telemetry_url(small_snapshot), body, content_type="application/json")
    assert response.status_code == 400
    assert any("columns.tx_bytes: expected a list of 4 non-negative integer counters" in problem for problem in response.json()["problems"]), response.json()
    samples = operator_client.post(telemetry_url(small_snapshot), {"samples": [{"port": {"node": "x", "port": "1"}, "timestamp": "yesterday", "tx_bytes": 1}]}, content_type="application/json")
    assert samples.status_code == 400 and "samples[0].timestamp" in samples.json()["detail"]
    assert redis_keys_of(small_snapshot) == [] and not TelemetryState.objects.exists()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda c: c.update(port=c["port"][:3]), "columns.node, columns.port: expected two lists of the same length"),
        (lambda c: c.update(node=[1, 2, 3, 4]), "node ids (strings)"),
        (lambda c: c.update(rx_bytes=[1, 2, -3, 4]), "columns.rx_bytes: expected a list of 4 non-negative integer counters"),
        (lambda c: c.update(tx_bytes=[1.5, 2, 3, 4]), "columns.tx_bytes: expected a list of 4 non-negative integer counters"),
        (lambda c: c.update(tx_bytes=[1, 2, 3]), "columns.tx_bytes: expected a list of 4 non-negative integer counters"),
        (lambda c: c.update(timestamp="yesterday"), "columns.timestamp: expected seconds since the epoch, or a list of 4 non-negative numbers"),
        (lambda c: c.update(errors=[1, 2]), "columns.errors: expected an object of counter name -> list of counts"),
        (lambda c: c.update(errors={"symbol_errors": [0, None, 0, 0]}), "columns.errors.symbol_errors: expected a list of 4 non-negative integer counters"),
        (lambda c: c.pop("tx_bytes"), "columns: no measurement; expected tx_bytes/rx_bytes columns"),
    ],
)
def test_a_bad_columns_body_is_refused_with_what_was_expected_and_nothing_is_kept(operator_client, small_snapshot, change, expected):
    """Plain and gzip-compressed alike: the worker never sees it."""
    body = columns(small_snapshot, 1000.0, 0)
    change(body["columns"])
    for packed in (False, True):
        raw = json.dumps(body).encode()
        response = operator_client.post(telemetry_url(small_snapshot), gzip.compress(raw) if packed else raw, content_type="application/json", **({"HTTP_CONTENT_ENCODING": "gzip"} if packed else {}))
        assert response.status_code == 400, response.content
        assert any(expected in problem for problem in response.json()["problems"]), response.json()
    assert redis_keys_of(small_snapshot) == [] and not TelemetryState.objects.exists()


def test_a_body_that_cannot_be_unpacked_or_read_is_refused_and_nothing_is_kept(operator_client, small_snapshot):
    url, body = telemetry_url(small_snapshot), json.dumps(columns(small_snapshot, 1000.0, 0)).encode()
    not_gzip = operator_client.post(url, body, content_type="application/json", HTTP_CONTENT_ENCODING="gzip")
    assert not_gzip.status_code == 400 and "Content-Encoding: gzip, but it is not gzip data" in not_gzip.json()["detail"]
    cut = operator_client.post(url, gzip.compress(body)[:-20], content_type="application/json", HTTP_CONTENT_ENCODING="gzip")
    assert cut.status_code == 400 and "the gzip data ends early" in cut.json()["detail"]
    brotli = operator_client.post(url, body, content_type="application/json", HTTP_CONTENT_ENCODING="br")
    assert brotli.status_code == 415 and "not br" in brotli.json()["detail"]
    not_json = operator_client.post(url, gzip.compress(b'{"columns": {"node": ['), content_type="application/json", HTTP_CONTENT_ENCODING="gzip")
    assert not_json.status_code == 400 and not_json.json()["detail"].startswith("JSON parse error")
    neither = operator_client.post(url, {"rows": []}, content_type="application/json")
    assert neither.status_code == 400 and neither.json()["detail"] == "samples: Expected a list of samples, or columns: an object of lists."
    # Small on the wire, too large once unpacked (a gzip bomb): refused without unpacking it all.
    with override_settings(TWIN_TELEMETRY_MAX_BYTES=len(body) - 1):
        bomb = operator_client.post(url, gzip.compress(body), content_type="application/json", HTTP_CONTENT_ENCODING="gzip")
    assert bomb.status_code == 413 and "once unpacked" in bomb.json()["detail"]
    assert redis_keys_of(small_snapshot) == [] and not TelemetryState.objects.exists()


def test_a_post_over_the_limit_is_refused_before_it_is_read(operator_client, small_snapshot):
    body = json.dumps(columns(small_snapshot, 1000.0, 0))
    with override_settings(TWIN_TELEMETRY_MAX_BYTES=len(body) - 1):
        response = operator_client.post(telemetry_url(small_snapshot), body, content_type="application/json")
    assert response.status_code == 413 and "TWIN_TELEMETRY_MAX_BYTES" in response.json()["detail"]
    assert redis_keys_of(small_snapshot) == []


def test_a_new_snapshot_of_a_fabric_with_telemetry_has_its_port_index_built_by_the_worker(operator_client, small_snapshot, celery_worker):
    """Rediscovering a fabric whose counters come in: the live worker builds the new snapshot's
    port index when the snapshot is stored, so the next post does not wait for it. A fabric
    without telemetry gets none (an index is as large as its fabric)."""
    from tests.test_runs import wait_for
    from twin.fabrics.services import snapshot_create
    from twin.simcore.generate import supernode
    from twin.simulations.telemetry import _index_cached, telemetry_index

    answer = operator_client.post(telemetry_url(small_snapshot), columns(small_snapshot, 1000.0, 0), content_type="application/json").json()
    wait_for(lambda: (TelemetryState.objects.filter(fabric_id=small_snapshot.fabric_id).values_list("frame", flat=True).first() or {}).get("batch") == answer["batch"], timeout_s=30)
    _index_cached.cache_clear()
    snapshot_create(fabric_name="quiet", spec=supernode(cards=64, switch_radix=16, name="quiet"), source_name="generated", source_format="generated", checksum="3" * 64)
    newer = snapshot_create(fabric_name="small", spec=supernode(cards=64, switch_radix=16, name="small"), source_name="again", source_format="generated", checksum="2" * 64)
    assert newer.fabric_id == small_snapshot.fabric_id
    wait_for(lambda: _index_cached.cache_info().currsize == 1, timeout_s=30)  # built (and kept) by the worker; nobody posted
    assert _index_cached.cache_info().misses == 1  # the worker takes tasks in order: "quiet" would have come first
    hits = _index_cached.cache_info().hits
    telemetry_index(newer)
    assert _index_cached.cache_info().hits == hits + 1

