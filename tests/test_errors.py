"""Bad input gets a clear 4xx with a message, never a 500."""
import pytest

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
