"""The endpoints behind the map: layout (stored after the first request), search, node details, path."""
import pytest

from twin.fabrics.models import SnapshotLayout

pytestmark = pytest.mark.django_db


def test_layout_is_computed_once_and_stored(viewer_client, small_snapshot, django_assert_max_num_queries):
    url = f"/api/snapshots/{small_snapshot.pk}/layout/"
    first = viewer_client.get(url).json()
    assert first["snapshot"] == small_snapshot.pk
    assert len(first["nodes"]["id"]) == small_snapshot.node_count
    assert len(first["links"]["a"]) == small_snapshot.link_count
    assert SnapshotLayout.objects.filter(snapshot=small_snapshot).exists()
    with django_assert_max_num_queries(4):  # session, user, snapshot, stored layout: no recompute
        assert viewer_client.get(url).json() == first


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
