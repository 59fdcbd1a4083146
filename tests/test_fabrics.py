"""Uploading canonical fabric files (browser form and API), versioning, graph and export."""
import json
from collections import Counter
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from twin.fabrics.models import Fabric, Link, Node, Snapshot
from twin.fabrics.selectors import snapshot_spec_get
from twin.ingest import export_canonical, parse_fabric
from twin.simcore.generate import supernode

pytestmark = pytest.mark.django_db
IB_DUMP = Path(__file__).parent / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"


def canonical_file(cards: int = 32, radix: int = 8, name: str = "lab") -> bytes:
    return export_canonical(supernode(cards=cards, switch_radix=radix, name=name)).encode()


def upload(client, data: bytes, filename: str = "fabric.json", **fields):
    return client.post("/api/snapshots/", {"file": SimpleUploadedFile(filename, data), **fields})


def test_api_upload_creates_a_snapshot(operator_client):
    response = upload(operator_client, canonical_file())
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["fabric_name"] == "lab" and body["version"] == 1
    assert body["card_count"] == 32 and body["source_format"] == "twin-fabric"
    snapshot = Snapshot.objects.get(pk=body["id"])
    assert Node.objects.filter(snapshot=snapshot, kind="card").count() == 32
    assert Link.objects.filter(snapshot=snapshot).count() == body["link_count"] > 32


def test_second_upload_is_the_next_version(operator_client):
    upload(operator_client, canonical_file())
    response = upload(operator_client, canonical_file(), fabric="lab")
    assert response.json()["version"] == 2
    assert Fabric.objects.get(name="lab").snapshots.count() == 2


def test_upload_into_a_named_fabric(operator_client):
    response = upload(operator_client, canonical_file(name="in-file"), fabric="rack-7")
    assert response.json()["fabric_name"] == "rack-7"


def test_invalid_file_writes_nothing_and_says_where(operator_client):
    document = json.loads(canonical_file())
    document["links"][3]["b"] = "card-9999"
    text = json.dumps(document, indent=2)
    response = upload(operator_client, text.encode(), filename="broken.json")
    assert response.status_code == 400
    body = response.json()
    assert "broken.json" in body["detail"] and "card-9999" in body["detail"]
    expected_line = text.splitlines().index(next(l for l in text.splitlines() if "card-9999" in l)) + 1
    assert body["files"][0]["line"] == expected_line
    assert Fabric.objects.count() == 0 and Node.objects.count() == 0


def test_malformed_json_reports_the_line(operator_client):
    response = upload(operator_client, b'{\n  "format": "twin-fabric",\n  "nodes": [,]\n}', filename="bad.json")
    assert response.status_code == 400
    assert response.json()["files"][0]["line"] == 3
    assert Snapshot.objects.count() == 0


def test_unknown_format_override_is_refused(operator_client):
    response = upload(operator_client, canonical_file(), format="no-such-format")
    assert response.status_code == 400
    assert "format" in response.json()
    assert Snapshot.objects.count() == 0


def test_failure_halfway_through_the_write_leaves_nothing(operator_client, monkeypatch):
    """A database error after the nodes are written rolls the whole snapshot back."""
    from twin.fabrics import services

    real_insert_rows = services.insert_rows

    def insert_nodes_then_fail(model, columns, rows):
        if model is services.Link:
            raise RuntimeError("disk full")
        real_insert_rows(model, columns, rows)

    monkeypatch.setattr(services, "insert_rows", insert_nodes_then_fail)
    with pytest.raises(RuntimeError):
        services.snapshot_import(fabric_name="", files=[services.SourceFile("x.json", canonical_file())])
    assert Fabric.objects.count() == 0 and Node.objects.count() == 0


def test_upload_page(operator_client):
    assert operator_client.get("/upload/").status_code == 200
    response = operator_client.post("/upload/", {"file": SimpleUploadedFile("f.json", canonical_file()), "fabric": "", "format": ""})
    assert response.status_code == 302
    fabric = Fabric.objects.get(name="lab")
    assert response.url == f"/fabrics/{fabric.pk}/?snapshot={fabric.latest_snapshot().pk}"
    page = operator_client.get(response.url)
    assert b"Compute hop statistics" in page.content and b"fabric-map" in page.content


def test_upload_page_shows_the_error(operator_client):
    response = operator_client.post("/upload/", {"file": SimpleUploadedFile("bad.json", b"{\n\n oops"), "fabric": "", "format": "twin-fabric"})
    assert response.status_code == 400
    assert b"bad.json line 3" in response.content
    response = operator_client.post("/upload/", {"file": SimpleUploadedFile("notes.txt", b"hello"), "fabric": "", "format": ""})
    assert response.status_code == 400
    assert b"notes.txt: cannot tell the format of this file" in response.content
    assert Fabric.objects.count() == 0


def test_export_round_trip(viewer_client, small_snapshot):
    exported = viewer_client.get(f"/api/snapshots/{small_snapshot.pk}/export/")
    assert exported["Content-Disposition"].endswith('-v1.json"')
    spec = parse_fabric(exported.content.decode(), source_name="export.json")
    assert spec == snapshot_spec_get(snapshot_id=small_snapshot.pk)
    assert spec == supernode(cards=64, switch_radix=16, name="small")


def topology(spec) -> tuple:
    """Nodes by id with kind, name and host, and links as unordered end pairs with bandwidth and state."""
    nodes = {(node.id, node.kind, node.name, node.host) for node in spec.nodes}
    links = Counter((frozenset({(link.a, link.a_port), (link.b, link.b_port)}), link.bandwidth_gbps, link.state) for link in spec.links)
    return nodes, links


def test_ibnetdiscover_export_reingests_as_the_same_cards_and_links(operator_client, tmp_path):
    """A discovery exported as ibnetdiscover (API and CLI alike) and ingested again is the same fabric."""
    call_command("ingest", str(IB_DUMP), "--fabric", "lab")
    first = Snapshot.objects.get(fabric__name="lab", version=1)
    exported = operator_client.get(f"/api/snapshots/{first.pk}/export/", {"format": "ibnetdiscover"})
    assert exported.status_code == 200 and exported["Content-Disposition"].endswith('lab-v1.topo"')
    dump = tmp_path / "lab.topo"
    call_command("export", "--fabric", "lab", "--format", "ibnetdiscover", "-o", str(dump))
    assert dump.read_bytes() == exported.content
    call_command("ingest", str(dump), "--fabric", "lab")
    second = Snapshot.objects.get(fabric__name="lab", version=2)
    assert second.source_format == "ibnetdiscover" and (second.node_count, second.link_count) == (first.node_count, first.link_count)
    assert topology(snapshot_spec_get(snapshot_id=second.pk)) == topology(snapshot_spec_get(snapshot_id=first.pk))


def test_generated_fabric_exports_as_ibnetdiscover_with_every_card_and_link(viewer_client, small_snapshot):
    """Generated cards read back as one HCA each (ibnetdiscover has no other endpoint), on the same host, with every link."""
    exported = viewer_client.get(f"/api/snapshots/{small_snapshot.pk}/export/", {"format": "ibnetdiscover"})
    back = parse_fabric(exported.content.decode(), source_name="small.topo")
    hcas = sorted(node.host for node in back.nodes if node.kind == "nic")
    assert hcas == sorted(card.host for card in snapshot_spec_get(snapshot_id=small_snapshot.pk).cards()) and len(hcas) == 64
    assert len(back.links) == small_snapshot.link_count


def test_fabric_pages(viewer_client, small_snapshot):
    listing = viewer_client.get("/")
    assert listing.status_code == 200 and b"small" in listing.content
    assert viewer_client.get("/fabrics/", follow=True).redirect_chain == [("/", 302)]
    page = viewer_client.get(f"/fabrics/{small_snapshot.fabric_id}/")
    assert page.status_code == 200
    assert b"start-hop-stats" not in page.content  # viewers cannot start runs
    api = viewer_client.get("/api/fabrics/").json()
    assert api["results"][0]["latest_snapshot"]["card_count"] == 64


def test_fabric_list_filters_sorts_and_pages(viewer_client):
    from twin.fabrics.models import Fabric

    for index in range(30):
        Fabric.objects.create(name=f"pod-{index:02d}")
    first = viewer_client.get("/").content.decode()
    assert "pod-00" in first and "pod-29" not in first and "Page 1 of 2" in first
    assert "pod-29" in viewer_client.get("/", {"sort": "-name"}).content.decode()
    filtered = viewer_client.get("/", {"q": "pod-1"}).content.decode()
    assert "pod-15" in filtered and "pod-25" not in filtered
    assert b"No fabric matches" in viewer_client.get("/", {"q": "nothing"}).content


def test_fabric_page_pages_its_snapshots(viewer_client):
    from twin.fabrics.models import Snapshot

    fabric = Fabric.objects.create(name="many")
    for version in range(1, 26):
        Snapshot.objects.create(fabric=fabric, version=version, source_name=f"s{version}", source_format="x", checksum="0")
    first = viewer_client.get(f"/fabrics/{fabric.pk}/").content.decode()
    assert "Page 1 of 2" in first and ">v25<" in first and ">v5<" not in first
    second = viewer_client.get(f"/fabrics/{fabric.pk}/", {"page": 2}).content.decode()
    assert ">v5<" in second
    assert viewer_client.get(f"/fabrics/{fabric.pk}/", {"snapshot": "abc", "compare": "999999"}).status_code == 200


def test_counts_are_shown_with_thousands_separated_in_every_language(viewer_client):
    from twin.fabrics.services import snapshot_create

    snapshot = snapshot_create(fabric_name="big", spec=supernode(cards=1024, name="big"), source_name="generated", source_format="generated", checksum="1" * 64)
    for language, links_up in (("en", "2,048 up"), ("zh-hans", "2,048 正常")):
        page = viewer_client.get(f"/fabrics/{snapshot.fabric_id}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert '<dd id="card-count">1,024' in page and links_up in page, language
        listing = viewer_client.get("/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert '<td class="num">1,024</td>' in listing, language
