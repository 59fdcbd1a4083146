"""The diagnosis page runs the troubleshooting table on the latest snapshot, its plan and journal."""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from twin.ingest import export_canonical
from twin.simcore.generate import supernode

pytestmark = pytest.mark.django_db


def test_down_link_and_miswiring_against_the_plan_are_found(operator_client):
    plan = supernode(cards=32, switch_radix=8, name="diag")
    operator_client.post("/api/snapshots/", {"file": [SimpleUploadedFile("plan.json", export_canonical(plan).encode())], "role": "plan"})
    found = json.loads(export_canonical(plan))
    found["links"][0]["state"] = "down"
    found["links"][1]["b_port"], found["links"][2]["b_port"] = found["links"][2]["b_port"], found["links"][1]["b_port"]
    response = operator_client.post("/api/snapshots/", {"file": [SimpleUploadedFile("found.json", json.dumps(found).encode())], "fabric": "diag"})
    assert response.status_code == 201, response.content
    page = operator_client.get(f"/fabrics/{response.json()['fabric']}/diagnosis/")
    assert page.status_code == 200
    content = page.content.decode()
    assert 'data-rule="link-down"' in content and 'data-rule="plan-mismatch"' in content
    assert content.index('data-rule="link-down"') < content.index('data-rule="plan-mismatch"')  # bottom-up: physical first


def test_healthy_fabric_without_plan(viewer_client, small_snapshot):
    page = viewer_client.get(f"/fabrics/{small_snapshot.fabric_id}/diagnosis/")
    assert page.status_code == 200 and b"No cabling plan uploaded" in page.content


@pytest.mark.django_db(transaction=True)
def test_a_flapping_link_seen_in_telemetry_is_diagnosed(operator_client, small_snapshot, celery_worker):
    from tests.test_runs import wait_for
    from twin.simulations.models import TelemetryState

    link = small_snapshot.links.select_related("a").order_by("pk").first()
    port = {"node": link.a.key, "port": link.a_port}
    url = f"/api/fabrics/{small_snapshot.fabric_id}/telemetry/"
    for second, downed in enumerate([0, 2, 5, 9]):
        sample = {"port": port, "timestamp": 1000.0 + second, "tx_bytes": second * 10**9, "errors": {"link_downed": downed}}
        response = operator_client.post(url, {"samples": [sample]}, content_type="application/json")
        assert response.status_code == 202
        # A collector posting once a second: the worker has taken each batch before the next.
        wait_for(lambda: (TelemetryState.objects.filter(fabric_id=small_snapshot.fabric_id).values_list("frame", flat=True).first() or {}).get("batch") == response.json()["batch"], timeout_s=30)
    page = operator_client.get(f"/fabrics/{small_snapshot.fabric_id}/diagnosis/").content.decode()
    assert 'data-rule="link-flapping"' in page


def test_an_uploaded_dump_is_diagnosed_against_its_plan_and_its_inferred_cards_are_no_finding(operator_client):
    """The real shape: an ibnetdiscover dump (cards stand for its HCAs) checked against the plan
    the same fabric was built from: only the degraded uplink is reported, nothing about the
    cards the twin added at upload."""
    from pathlib import Path

    dump = Path(__file__).resolve().parents[1] / "tests" / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"
    plan = SimpleUploadedFile("plan.txt", dump.read_bytes())
    assert operator_client.post("/api/snapshots/", {"file": [plan], "role": "plan", "fabric": "ib"}).status_code == 201
    found = operator_client.post("/api/snapshots/", {"file": [SimpleUploadedFile("found.txt", dump.read_bytes())], "fabric": "ib"})
    assert found.status_code == 201 and found.json()["card_count"] == 8
    content = operator_client.get(f"/fabrics/{found.json()['fabric']}/diagnosis/").content.decode()
    assert 'data-rule="plan-mismatch"' not in content and "card:" not in content
    assert 'data-rule="link-degraded"' in content
