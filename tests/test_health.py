"""The UI keeps working and says so when Redis is down."""
import pytest
from django.test import override_settings

from twin.common.embedded import free_port

pytestmark = pytest.mark.django_db


def test_health_reports_services(viewer_client):
    assert viewer_client.get("/api/health/").json() == {"database": "ok", "redis": "ok"}


def test_pages_load_and_health_says_redis_is_down(viewer_client, small_snapshot):
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0"):
        assert viewer_client.get("/api/health/").json() == {"database": "ok", "redis": "unavailable"}
        assert viewer_client.get("/").status_code == 200
        page = viewer_client.get(f"/fabrics/{small_snapshot.fabric_id}/")
        assert page.status_code == 200 and b'id="live-status"' in page.content
