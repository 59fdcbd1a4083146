"""The endpoints behind the map: layout (stored by the worker when the snapshot is, served gzipped
with an ETag), search, node details, path."""
import gzip
import json
import time

import pytest
from django.db import transaction

from twin.fabrics.models import SnapshotLayout
from twin.fabrics.services import snapshot_create
from twin.simcore.generate import supernode

pytestmark = pytest.mark.django_db


def test_layout_is_computed_once_and_stored(viewer_client, small_snapshot, django_assert_max_num_queries):
    """A snapshot whose layout the worker has not made (or made before layouts were) gets it on
    its first view, once."""
    url = f"/api/snapshots/{small_snapshot.pk}/layout/"
    assert not SnapshotLayout.objects.filter(snapshot=small_snapshot).exists()
    first = viewer_client.get(url).json()
    assert first["snapshot"] == small_snapshot.pk
    assert len(first["nodes"]["id"]) == small_snapshot.node_count
    assert len(first["links"]["a"]) == small_snapshot.link_count
    assert SnapshotLayout.objects.filter(snapshot=small_snapshot).exists()
    with django_assert_max_num_queries(5):  # session, user, its fabric's team, the stored ETag, the stored layout: no recompute
        assert viewer_client.get(url).json() == first


def test_layout_is_served_gzipped_with_an_etag_and_304_when_unchanged(viewer_client, small_snapshot):
    url = f"/api/snapshots/{small_snapshot.pk}/layout/"
    plain = viewer_client.get(url)
    assert "Content-Encoding" not in plain and "Accept-Encoding" in plain["Vary"]
    zipped = viewer_client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert zipped["Content-Encoding"] == "gzip" and zipped["Content-Type"] == "application/json"
    assert json.loads(gzip.decompress(zipped.content)) == plain.json()
    assert len(zipped.content) < len(plain.content) / 4
    tag = zipped["ETag"]
    assert tag == plain["ETag"] and tag.startswith('"') and len(tag) == 66
    again = viewer_client.get(url, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=tag)
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == tag
    assert viewer_client.get(url, HTTP_IF_NONE_MATCH='"another"').status_code == 200
    assert viewer_client.get(f"/api/snapshots/{small_snapshot.pk + 1000}/layout/", HTTP_IF_NONE_MATCH=tag).status_code == 404


def test_anonymous_gets_no_layout_even_with_its_etag(client, viewer_client, small_snapshot):
    url = f"/api/snapshots/{small_snapshot.pk}/layout/"
    tag = viewer_client.get(url)["ETag"]
    assert client.get(url, HTTP_IF_NONE_MATCH=tag).status_code in (401, 403)


@pytest.mark.django_db(transaction=True)
def test_the_worker_stores_the_layout_when_the_snapshot_is_stored(celery_worker):
    with transaction.atomic():
        snapshot = snapshot_create(fabric_name="laid-out", spec=supernode(cards=64, switch_radix=16, name="laid-out"),
                                   source_name="generated", source_format="generated", checksum="0" * 64)
    deadline = time.monotonic() + 30
    while not SnapshotLayout.objects.filter(snapshot=snapshot).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    stored = SnapshotLayout.objects.get(snapshot=snapshot)
    layout = json.loads(gzip.decompress(bytes(stored.gzip_json)))
    assert layout["snapshot"] == snapshot.pk and len(layout["nodes"]["id"]) == snapshot.node_count


def test_search_by_name_host_and_id(viewer_client, small_snapshot):
    url = f"/api/snapshots/{small_snapshot.pk}/search/"
    results = viewer_client.get(url, {"q": "card-0005"}).json()["results"]
    assert results[0]["id"] == "card-0005" and results[0]["match"] == "name"
    by_host = viewer_client.get(url, {"q": "host-002"}).json()["results"]
    assert {r["host"] for r in by_host} == {"host-002"} and len(by_host) == 8
    assert viewer_client.get(url, {"q": "leaf"}).json()["results"][0]["kind"] == "switch"
    assert len(viewer_client.get(url, {"q": "card"}).json()["results"]) == 20
    assert viewer_client.get(url, {"q": "  "}).json()["results"] == []


def test_node_details_list_its_ports(viewer_client, small_snapshot):
    url = f"/api/snapshots/{small_snapshot.pk}/nodes/"
    leaf = viewer_client.get(url, {"id": "leaf-01"}).json()
    assert leaf["kind"] == "switch" and leaf["tier"] == "leaf" and len(leaf["ports"]) == 16
    down = [p for p in leaf["ports"] if p["peer"].startswith("card-")]
    assert len(down) == 8 and {p["bandwidth_gbps"] for p in down} == {400.0}
    assert viewer_client.get(url, {"id": "nope"}).status_code == 404


def test_path_between_cards(viewer_client, small_snapshot):
    url = f"/api/snapshots/{small_snapshot.pk}/path/"
    across = viewer_client.get(url, {"a": "card-0001", "b": "card-0064"}).json()
    assert across["hops"] == 3 and across["nodes"][0] == "card-0001" and across["nodes"][-1] == "card-0064"
    assert viewer_client.get(url, {"a": "card-0001", "b": "ghost"}).status_code == 404
    assert viewer_client.get(url, {"a": "card-0001"}).status_code == 400


@pytest.mark.django_db(transaction=True)
def test_layouts_stored_before_are_converted_to_gzip_with_their_etag(small_snapshot):
    """Migration 0005: a layout stored as JSON before is kept, gzipped, with the ETag of its JSON."""
    import hashlib

    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("fabrics", "0005_fabric_team")], [("fabrics", "0006_layout_served_gzipped")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_layout = executor.loader.project_state(before).apps.get_model("fabrics", "SnapshotLayout")
    old_layout.objects.create(snapshot_id=small_snapshot.pk, data={"snapshot": small_snapshot.pk, "nodes": {"id": ["a"]}})
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(after)
    stored = SnapshotLayout.objects.get(snapshot=small_snapshot)
    text = gzip.decompress(bytes(stored.gzip_json))
    assert json.loads(text) == {"snapshot": small_snapshot.pk, "nodes": {"id": ["a"]}}
    assert stored.etag == hashlib.sha256(text).hexdigest()
