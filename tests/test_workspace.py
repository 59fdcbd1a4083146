"""The fabric workspace's server side: the layout each user keeps (GET/PUT /api/preferences/workspace/),
deep links (?run=) that open a run in its panel, and the panels' forms answered in JSON."""
import json
import re

import pytest
from django.test import Client

from twin.accounts.models import Preference, Role
from twin.runs.models import Run, RunKind
from twin.runs.services import run_create

pytestmark = pytest.mark.django_db

URL = "/api/preferences/workspace/"
LAYOUT = {"version": 1, "right": 480, "bottom": 260, "collapsed": ["snapshots", "telemetry"]}


def test_a_viewer_keeps_a_layout_that_follows_them_to_another_browser(make_user):
    viewer = make_user(Role.VIEWER)
    first, second = Client(), Client()
    first.force_login(viewer)
    second.force_login(viewer)
    assert first.get(URL).json() == {"value": {}}
    saved = first.put(URL, {"value": LAYOUT}, content_type="application/json")
    assert saved.status_code == 200 and saved.json() == {"value": LAYOUT}
    assert second.get(URL).json() == {"value": LAYOUT}
    first.put(URL, {"value": {**LAYOUT, "right": 500}}, content_type="application/json")
    assert Preference.objects.get(user=viewer, key="workspace").value["right"] == 500  # replaced, not added


def test_each_user_has_their_own_layout(make_user, viewer_client):
    other = Client()
    other.force_login(make_user(Role.OPERATOR, username="other"))
    viewer_client.put(URL, {"value": LAYOUT}, content_type="application/json")
    assert other.get(URL).json() == {"value": {}}


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"value": [1, 2]}, "value"),
        ({"value": "wide"}, "value"),
        ({}, "value"),
        ({"value": {"collapsed": ["x" * 50] * 100}}, "at most 4096"),
    ],
)
def test_a_bad_layout_is_refused_and_changes_nothing(viewer_client, body, problem):
    viewer_client.put(URL, {"value": LAYOUT}, content_type="application/json")
    refused = viewer_client.put(URL, body, content_type="application/json")
    assert refused.status_code == 400 and problem in json.dumps(refused.json())
    assert viewer_client.get(URL).json() == {"value": LAYOUT}


def test_unknown_preferences_and_anonymous_users_are_refused(viewer_client):
    assert viewer_client.get("/api/preferences/theme/").status_code == 404
    assert viewer_client.put("/api/preferences/theme/", {"value": {}}, content_type="application/json").status_code == 404
    assert Client().get(URL).status_code in (401, 403)
    assert not Preference.objects.exists()


def test_the_fabric_page_carries_the_users_layout(make_user, small_snapshot):
    viewer = make_user(Role.VIEWER)
    client = Client()
    client.force_login(viewer)
    client.put(URL, {"value": LAYOUT}, content_type="application/json")
    page = client.get(f"/fabrics/{small_snapshot.fabric_id}/").content.decode()
    carried = re.search(r'id="workspace" [^>]*data-layout="([^"]*)"', page).group(1)
    assert json.loads(carried.replace("&quot;", '"')) == LAYOUT
    # Every panel names its dock, so that without scripts the page still reads top to bottom.
    assert {"fabric", "details", "legend", "collective", "hops", "snapshots", "player"} <= set(re.findall(r'data-panel="([a-z]+)"', page))


def test_a_deep_link_opens_the_run_in_its_kinds_panel(operator_client, small_snapshot):
    run = run_create(kind=RunKind.HOP_STATS, snapshot=small_snapshot, params={}, user=None)
    page = operator_client.get(f"/fabrics/{small_snapshot.fabric_id}/?run={run.pk}").content.decode()
    slot = page[page.index('<div id="run-slot">'):]
    assert f'data-run-url="/api/runs/{run.pk}/"' in slot[: slot.index("</section>")]
    assert page.count('class="run-widget"') == 1
    assert 'id="replay-player"' not in page


def test_a_deep_link_to_a_replay_puts_its_player_in_the_bottom_dock(operator_client, small_snapshot):
    run = Run.objects.create(kind=RunKind.REPLAY, snapshot=small_snapshot, params={})
    page = operator_client.get(f"/fabrics/{small_snapshot.fabric_id}/?snapshot={small_snapshot.pk}&run={run.pk}").content.decode()
    player = page[page.index('id="player-panel"'):]
    assert f'data-ws="/ws/replays/{run.pk}/"' in player and 'data-await-run="true"' in player
    assert f'data-run-url="/api/runs/{run.pk}/"' in page[page.index('<div id="replay-slot">'):]


def test_a_deep_link_to_another_fabrics_run_or_junk_shows_no_run(operator_client, small_snapshot):
    from twin.fabrics.services import snapshot_create
    from twin.simcore.generate import supernode

    elsewhere = snapshot_create(fabric_name="other", spec=supernode(cards=64, switch_radix=16, name="other"), source_name="generated", source_format="generated", checksum="1" * 64)
    foreign = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=elsewhere, params={})
    for wanted in (str(foreign.pk), "junk", "99999"):
        response = operator_client.get(f"/fabrics/{small_snapshot.fabric_id}/?run={wanted}")
        assert response.status_code == 200 and 'class="run-widget"' not in response.content.decode()


def test_the_panels_forms_are_answered_in_json(operator_client, small_snapshot):
    url = f"/snapshots/{small_snapshot.pk}/failures/"
    started = operator_client.post(url, {"elements": "leaf-01", "collective": "allreduce", "size": "64MiB"}, HTTP_ACCEPT="application/json")
    body = started.json()
    assert started.status_code == 201, body
    assert body["kind"] == "failures" and body["url"] == f"/api/runs/{body['id']}/" and body["ws_url"] == f"/ws/runs/{body['id']}/"
    refused = operator_client.post(url, {"elements": "", "collective": "allreduce", "size": "lots"}, HTTP_ACCEPT="application/json")
    assert refused.status_code == 400 and refused.json()["errors"] and refused.json()["detail"]
    assert Run.objects.filter(kind=RunKind.FAILURES).count() == 1
    # Without the header (no scripts) the form still goes to the run's page.
    plain = operator_client.post(url, {"elements": "leaf-01", "collective": "allreduce", "size": "64MiB"})
    assert plain.status_code == 302 and plain.url.startswith("/runs/")


def test_a_run_page_links_to_its_run_beside_the_fabrics_map(operator_client, small_snapshot):
    run = Run.objects.create(kind=RunKind.PLACEMENT, snapshot=small_snapshot, params={})
    page = operator_client.get(f"/runs/{run.pk}/").content.decode()
    link = re.search(r'id="run-in-workspace" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert link == f"/fabrics/{small_snapshot.fabric_id}/?snapshot={small_snapshot.pk}&run={run.pk}"
    assert f'data-run-url="/api/runs/{run.pk}/"' in operator_client.get(link).content.decode()


def test_a_viewer_opening_a_deep_link_sees_the_run_in_a_panel_of_its_own(viewer_client, small_snapshot):
    """Viewers have no placement form: the run is shown in a Run panel instead."""
    run = Run.objects.create(kind=RunKind.PLACEMENT, snapshot=small_snapshot, params={})
    page = viewer_client.get(f"/fabrics/{small_snapshot.fabric_id}/?run={run.pk}").content.decode()
    assert 'id="placement-form"' not in page
    panel = page[page.index('data-panel="run"'):]
    assert f'data-run-url="/api/runs/{run.pk}/"' in panel[: panel.index("</section>")]
