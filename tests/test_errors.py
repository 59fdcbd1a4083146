"""Bad input gets a clear 4xx with a message, never a 500."""
import pytest

from twin.runs.models import Run, RunKind, RunStatus
from twin.simulations.models import ReplayPlayback

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/no/such/page/", "/fabrics/999999/", "/runs/999999/", "/users/999999/"])
def test_unknown_pages_are_404_pages(admin_client_twin, path):
    response = admin_client_twin.get(path)
    assert response.status_code == 404
    assert b"Not found" in response.content


@pytest.mark.parametrize(
    "path",
    ["/api/nothing/", "/api/fabrics/999999/", "/api/snapshots/999999/", "/api/snapshots/999999/export/", "/api/runs/999999/"],
)
def test_unknown_api_objects_are_json_404(viewer_client, path):
    response = viewer_client.get(path)
    assert response.status_code == 404
    assert response.json()["detail"]


def test_malformed_json_body(operator_client):
    response = operator_client.post("/api/runs/", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert "JSON" in response.json()["detail"]


def test_missing_and_wrong_fields(operator_client, small_snapshot):
    response = operator_client.post("/api/runs/", {}, content_type="application/json")
    assert response.status_code == 400
    assert set(response.json()) >= {"kind", "snapshot"}
    response = operator_client.post("/api/runs/", {"kind": "nope", "snapshot": small_snapshot.pk}, content_type="application/json")
    assert response.status_code == 400 and "kind" in response.json()
    response = operator_client.post("/api/runs/", {"kind": "hop_stats", "snapshot": 999999}, content_type="application/json")
    assert response.status_code == 400 and "snapshot" in response.json()


def test_bad_query_parameter(viewer_client):
    response = viewer_client.get("/api/runs/?snapshot=abc")
    assert response.status_code == 400


def test_openapi_schema_is_served(viewer_client):
    response = viewer_client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    for path in ("/api/fabrics/", "/api/snapshots/", "/api/runs/", "/api/runs/{id}/", "/api/health/"):
        assert path in schema["paths"], path
    assert viewer_client.get("/api/docs/").status_code == 200


@pytest.mark.parametrize("wanted", ["²", "-1", "1.0", "99999999999999999999999"])
def test_run_list_refuses_a_snapshot_that_is_no_id(viewer_client, wanted):
    response = viewer_client.get("/api/runs/", {"snapshot": wanted})
    assert response.status_code == 400
    assert response.json()["detail"] == "snapshot: Expected a snapshot id (a whole number)."


@pytest.mark.parametrize("wanted", ["²", "5", "99999999999999999999999"])
def test_replay_frame_index_out_of_range_or_no_number_is_400(viewer_client, small_snapshot, wanted):
    run = Run.objects.create(kind=RunKind.REPLAY, snapshot=small_snapshot, status=RunStatus.SUCCEEDED)
    ReplayPlayback.objects.create(run=run, frames=5)
    response = viewer_client.get(f"/api/runs/{run.pk}/frames/", {"index": wanted})
    assert response.status_code == 400
    assert response.json()["index"] == "Expected 0 to 4, or last."


def test_pages_ignore_or_refuse_ids_that_are_no_numbers(viewer_client, small_snapshot):
    page = viewer_client.get(f"/fabrics/{small_snapshot.fabric_id}/", {"snapshot": "²", "compare": "99999999999999999999999"})
    assert page.status_code == 200  # the latest snapshot, as with any id it does not know
    assert viewer_client.get("/whatif/compare/", {"a": "²", "b": "1"}).status_code == 404


@pytest.mark.parametrize(
    ("path", "parameters"),
    [("/api/snapshots/{id}/search/", {"q": "leaf\x00"}), ("/api/snapshots/{id}/nodes/", {"id": "\x00"}), ("/api/runs/", {"x\x00": "1"})],
)
def test_nul_in_an_api_query_parameter_is_400_before_any_database(viewer_client, small_snapshot, path, parameters):
    response = viewer_client.get(path.format(id=small_snapshot.pk), parameters)
    assert response.status_code == 400
    assert response.json()["detail"] == "A query parameter contains a NUL character (%00), which no field accepts."


def test_nul_in_a_page_query_parameter_is_a_400_page(viewer_client):
    response = viewer_client.get("/", {"q": "a\x00b"})
    assert response.status_code == 400
    assert b"A query parameter contains a NUL character (%00)" in response.content


def deep_json(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("levels", [33, 10_000])
def test_deeply_nested_json_bodies_are_400_on_every_endpoint(operator_client, small_snapshot, levels):
    run_body = '{"kind": "whatif", "snapshot": %d, "params": {"overrides": {"x": %s}}}' % (small_snapshot.pk, deep_json(levels - 3))
    for path, body in [("/api/runs/", run_body), (f"/api/fabrics/{small_snapshot.fabric_id}/telemetry/", deep_json(levels))]:
        response = operator_client.post(path, body, content_type="application/json")
        assert response.status_code == 400, path
        assert response.json()["detail"] == "JSON parse error - nested deeper than 32 levels."
    assert Run.objects.count() == 0


def test_json_strings_with_nul_are_refused(operator_client, small_snapshot):
    params = {"collective": "allreduce", "size_bytes": 1e6, "transport": {"note": "a\x00b"}}
    response = operator_client.post("/api/runs/", {"kind": "collective", "snapshot": small_snapshot.pk, "params": params}, content_type="application/json")
    assert response.status_code == 400
    assert "NUL character" in response.json()["detail"]
    assert Run.objects.count() == 0


def test_whatif_factor_too_large_for_any_number_of_cards_is_refused(operator_client, small_snapshot):
    response = operator_client.post("/api/runs/", {"kind": "whatif", "snapshot": small_snapshot.pk, "params": {"factors": [1, 1e308]}}, content_type="application/json")
    assert response.status_code == 400
    assert "factor 1e+308: inf cards; expected at most 131,072" in response.json()["detail"]
    assert Run.objects.count() == 0


def test_placement_the_snapshot_cannot_hold_is_refused_at_submit(operator_client, small_snapshot):
    params = {"job": {"tp": 8, "dp": 16}}
    response = operator_client.post("/api/runs/", {"kind": "placement", "snapshot": small_snapshot.pk, "params": params}, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"] == "TP x PP x DP = 128 ranks; small v1 has 64 cards."
    assert Run.objects.count() == 0


@pytest.mark.parametrize(
    ("training", "message"),
    [
        ({"tp": 10**9, "dp": 10**9}, "TP x PP x DP = 1,000,000,000,000,000,000 ranks; small v1 has 64 cards."),
        ({"tp": 1, "dp": 1, "micro_batches": 10**9}, "less than or equal to 1024"),
    ],
)
def test_replay_the_snapshot_cannot_hold_is_refused_at_submit(operator_client, small_snapshot, training, message):
    response = operator_client.post("/api/runs/", {"kind": "replay", "snapshot": small_snapshot.pk, "params": {"training": training}}, content_type="application/json")
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert Run.objects.count() == 0
