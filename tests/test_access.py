"""Every page, API endpoint and websocket needs a logged-in user; roles decide what they may do."""
import time
import uuid

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from twin.accounts.models import Role
from twin.accounts.throttle import login_lockout_remaining_s

pytestmark = pytest.mark.django_db

PUBLIC = {"login", "liveness", "set_language"}


def named_routes(resolver=None, prefix=""):
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            if getattr(pattern, "app_name", None) == "admin":
                continue  # Django's admin has its own login
            yield from named_routes(pattern, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield pattern.name, prefix + str(pattern.pattern)


def concrete(route: str) -> str:
    """Fill path converters with an id that exists or not; the check must fail before lookup."""
    import re

    return "/" + re.sub(r"<(?:\w+:)?\w+>", "1", route).lstrip("^").rstrip("$")


ROUTES = sorted(named_routes())


def test_routes_are_collected():
    assert len(ROUTES) > 10 and any(name == "api-run-list" for name, _ in ROUTES)


@pytest.mark.parametrize(("name", "route"), ROUTES, ids=[name for name, _ in ROUTES])
def test_anonymous_is_refused_everywhere(name, route):
    if name in PUBLIC:
        return
    response = Client().get(concrete(route))
    if route.startswith("api/"):
        assert response.status_code in (401, 403), f"{route} answered {response.status_code}"
        if response["Content-Type"].startswith("application/json"):
            assert "detail" in response.json()
    else:
        assert response.status_code == 302 and response.url.startswith("/login/"), f"{route} answered {response.status_code}"


def test_login_page_and_liveness_are_public():
    login = Client().get("/login/")
    assert login.status_code == 200
    assert b"data-health-url" not in login.content  # its scripts check no health: /api/health/ would refuse them
    assert Client().get("/healthz").content == b"ok"


def test_login_with_password(make_user):
    from tests.conftest import PASSWORD

    make_user(Role.VIEWER, username="ops")
    client = Client(enforce_csrf_checks=True)
    page = client.get("/login/")
    token = page.cookies["csrftoken"].value
    response = client.post("/login/", {"username": "ops", "password": PASSWORD, "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def fresh_name(prefix: str) -> str:
    """A user name of its own: throttling counts live in the real Redis, which outlives a test."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def log_in(client: Client, path: str, username: str, password: str):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR="10.0.0.7")


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_ten_failed_logins_lock_the_name_out_even_for_an_admin(make_user, path):
    from tests.conftest import PASSWORD

    admin = make_user(Role.ADMIN, username=fresh_name("boss"))
    admin.is_staff = True  # Django's admin site lets in staff only
    admin.save()
    client = Client()
    for _ in range(10):
        assert b"Please enter" in log_in(client, path, admin.username, "wrong").content
    refused = log_in(client, path, admin.username, PASSWORD)
    assert refused.status_code == 200 and "_auth_user_id" not in client.session
    assert b"Too many failed logins for this user name from your address. Try again in 15 minutes." in refused.content
    # Another address, or another name from this one, is not locked.
    assert client.post(path, {"username": admin.username, "password": PASSWORD}, REMOTE_ADDR="10.0.0.8").status_code == 302


def test_a_good_login_clears_the_failures_and_the_lockout_ends(make_user, settings):
    from tests.conftest import PASSWORD

    # The window must outlast three password checks on a loaded machine (each is a slow hash).
    settings.TWIN_LOGIN_FAILURES_ALLOWED, settings.TWIN_LOGIN_LOCKOUT_S = 3, 8
    user = make_user(Role.VIEWER, username=fresh_name("ops"))
    for _ in range(2):
        log_in(Client(), "/login/", user.username, "wrong")
    assert log_in(Client(), "/login/", user.username, PASSWORD).status_code == 302
    for _ in range(2):
        log_in(Client(), "/login/", user.username, "wrong")
    assert log_in(Client(), "/login/", user.username, PASSWORD).status_code == 302  # counted afresh
    for _ in range(3):
        log_in(Client(), "/login/", user.username, "wrong")
    assert b"Try again in 1 minute." in log_in(Client(), "/login/", user.username, PASSWORD).content
    time.sleep(login_lockout_remaining_s(user.username, "10.0.0.7") + 0.1)
    assert log_in(Client(), "/login/", user.username, PASSWORD).status_code == 302


def test_csrf_is_enforced_on_the_session_api(make_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user(Role.OPERATOR))
    response = client.post("/api/runs/", {"kind": "hop_stats", "snapshot": 1}, content_type="application/json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_viewer_cannot_write(viewer_client, small_snapshot):
    assert viewer_client.get("/upload/").status_code == 403
    response = viewer_client.post("/api/runs/", {"kind": "hop_stats", "snapshot": small_snapshot.pk}, content_type="application/json")
    assert response.status_code == 403
    assert viewer_client.get(f"/fabrics/{small_snapshot.fabric_id}/").status_code == 200


def test_only_admins_manage_users(operator_client, admin_client_twin):
    assert operator_client.get("/users/").status_code == 403
    assert admin_client_twin.get("/users/").status_code == 200
    response = admin_client_twin.post(
        "/users/", {"username": "newop", "email": "", "role": "operator", "password1": "Xk2-long-pass-99", "password2": "Xk2-long-pass-99"}
    )
    assert response.status_code == 302
    from twin.accounts.models import User

    assert User.objects.get(username="newop").role == Role.OPERATOR


def test_user_list_filters_sorts_and_pages(make_user, admin_client_twin):
    import re

    for number in range(60):
        make_user(Role.OPERATOR if number % 3 == 0 else Role.VIEWER, username=f"ops-{number:02d}")

    def names(**query) -> list[str]:
        response = admin_client_twin.get("/users/", query)
        assert response.status_code == 200
        return re.findall(r'<tr><td><a href="/users/\d+/">([^<]+)</a>', response.content.decode())

    operators = names(q="ops-", role="operator")
    assert operators == [f"ops-{number:02d}" for number in range(0, 60, 3)]
    assert names(q="OPS-", sort="-name")[:2] == ["ops-59", "ops-58"]
    assert len(names(q="ops-")) == 50 and names(q="ops-", page=2) == [f"ops-{number}" for number in range(50, 60)]
    assert names(q="nobody") == [] and names(role="<script>", sort="junk")  # junk filters are ignored
    assert '<option value="-name">Name (Z-A)</option>' in admin_client_twin.get("/users/").content.decode()


def test_token_authentication_for_scripts(make_user):
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=make_user(Role.VIEWER))
    response = Client().get("/api/fabrics/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
