"""Per-team fabric access: a fabric given to a team is seen only by its members and admins, on
every door (pages, API with a token, request bodies, uploads, websockets, lists); others get a
404 as if it did not exist. A fabric without a team is seen by everyone."""
import io
import json
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.conftest import logged_in_client
from twin.accounts.models import Role, Team
from twin.asgi import application
from twin.fabrics.models import Fabric, Snapshot
from twin.fabrics.services import snapshot_create
from twin.runs.models import Run, RunKind
from twin.simcore.generate import supernode

DATA = Path(__file__).parent / "data"


def store(name: str) -> Snapshot:
    spec = supernode(cards=16, switch_radix=8, name=name)
    return snapshot_create(fabric_name=name, spec=spec, source_name="gen", source_format="generated", checksum="0" * 64)


@pytest.fixture
def guarded(db, make_user):
    """Fabric "secret" (two snapshots and a run) given to team "red"; fabric "open" given to nobody."""
    first, second = store("secret"), store("secret")
    run = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=second, status="succeeded", result={})
    team = Team.objects.create(name="red")
    member, outsider = make_user(Role.OPERATOR, "member"), make_user(Role.OPERATOR, "outsider")
    team.members.add(member)
    Fabric.objects.filter(name="secret").update(team=team)
    return {"fabric": first.fabric, "snapshots": (first, second), "run": run, "member": member, "outsider": outsider, "open": store("open")}


def pages_of(guarded) -> list[str]:
    fabric, (first, second), run = guarded["fabric"], guarded["snapshots"], guarded["run"]
    return [
        f"/fabrics/{fabric.pk}/", f"/fabrics/{fabric.pk}/diff/", f"/fabrics/{fabric.pk}/journal/",
        f"/fabrics/{fabric.pk}/diagnosis/", f"/runs/{run.pk}/",
        f"/api/fabrics/{fabric.pk}/", f"/api/fabrics/{fabric.pk}/snapshots/", f"/api/snapshots/{first.pk}/",
        f"/api/snapshots/{first.pk}/layout/", f"/api/snapshots/{first.pk}/export/",
        f"/api/snapshots/{first.pk}/diff/{second.pk}/", f"/api/snapshots/{guarded['open'].pk}/diff/{second.pk}/",
        f"/api/runs/{run.pk}/", f"/api/runs/{run.pk}/detail/",
    ]


def test_members_and_admins_see_the_fabric_and_outsiders_get_404_everywhere(guarded, make_user):
    member, outsider, admin = logged_in_client(guarded["member"]), logged_in_client(guarded["outsider"]), logged_in_client(make_user(Role.ADMIN, "boss"))
    for url in pages_of(guarded):
        if "/open" not in url and f"/api/snapshots/{guarded['open'].pk}/" not in url:
            assert member.get(url).status_code == 200, url
            assert admin.get(url).status_code == 200, url
        assert outsider.get(url).status_code == 404, url
    assert b"Seen only by team red and admins." in member.get(f"/fabrics/{guarded['fabric'].pk}/").content
    assert b"Seen by every user." in outsider.get(f"/fabrics/{guarded['open'].fabric_id}/").content


def test_lists_leave_out_what_the_user_may_not_see(guarded):
    member, outsider = logged_in_client(guarded["member"]), logged_in_client(guarded["outsider"])
    names = lambda client: sorted(fabric["name"] for fabric in client.get("/api/fabrics/").json()["results"])  # noqa: E731
    assert names(member) == ["open", "secret"] and names(outsider) == ["open"]
    assert b"secret" in member.get("/").content and b"secret" not in outsider.get("/").content
    assert outsider.get("/api/runs/").json()["count"] == 0 and member.get("/api/runs/").json()["count"] == 1
    assert b"secret" not in outsider.get("/runs/").content


def test_a_token_is_held_to_the_same_rule(guarded):
    client = Client(headers={"authorization": f"Token {Token.objects.create(user=guarded['outsider']).key}"})
    assert client.get(f"/api/snapshots/{guarded['snapshots'][0].pk}/").status_code == 404
    assert client.get(f"/api/snapshots/{guarded['open'].pk}/").status_code == 200


def test_request_bodies_cannot_name_a_hidden_snapshot_or_fabric(guarded):
    outsider = logged_in_client(guarded["outsider"])
    runs_before = Run.objects.count()
    response = outsider.post("/api/runs/", {"kind": "hop_stats", "snapshot": guarded["snapshots"][1].pk}, content_type="application/json")
    assert response.status_code == 400 and "snapshot" in response.json() and Run.objects.count() == runs_before
    trace = io.BytesIO(b'{"step": 0, "src": 0, "dst": 1, "bytes": 1024}\n')
    trace.name = "t.jsonl"
    response = outsider.post("/api/traces/", {"fabric": guarded["fabric"].pk, "file": trace})
    assert response.status_code == 400 and "fabric" in response.json()
    assert outsider.post(f"/api/fabrics/{guarded['fabric'].pk}/telemetry/", {"samples": []}, content_type="application/json").status_code == 404


def test_an_upload_cannot_add_to_another_teams_fabric(guarded):
    outsider = logged_in_client(guarded["outsider"])
    discovery = io.BytesIO((DATA / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt").read_bytes())
    discovery.name = "ibnetdiscover.txt"
    before = Snapshot.objects.filter(fabric=guarded["fabric"]).count()
    response = outsider.post("/api/snapshots/", {"fabric": "secret", "file": [discovery]})
    assert response.status_code == 400, response.content
    assert "taken by a fabric of another team" in json.dumps(response.json())
    assert Snapshot.objects.filter(fabric=guarded["fabric"]).count() == before


@pytest.mark.django_db(transaction=True)
def test_websockets_of_a_hidden_fabric_close_with_not_found(make_user):
    snapshot = store("secret")
    team = Team.objects.create(name="red")
    Fabric.objects.filter(pk=snapshot.fabric_id).update(team=team)
    run = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=snapshot)
    member, outsider = make_user(Role.VIEWER, "member"), make_user(Role.VIEWER, "outsider")
    team.members.add(member)

    def headers(user):
        client = Client()
        client.force_login(user)
        return [(b"origin", b"http://localhost"), (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]

    async def first_message(session_headers, path):
        communicator = WebsocketCommunicator(application, path, headers=session_headers)
        connected, _ = await communicator.connect()
        assert connected
        message = await communicator.receive_output(timeout=5)
        await communicator.disconnect()
        return message

    for path in (f"/ws/runs/{run.pk}/", f"/ws/fabrics/{snapshot.fabric_id}/"):
        assert async_to_sync(first_message)(headers(outsider), path) == {"type": "websocket.close", "code": 4404}, path
    assert async_to_sync(first_message)(headers(member), f"/ws/runs/{run.pk}/")["type"] == "websocket.send"


def test_team_command_gives_and_opens_fabrics_and_refuses_unknown_names(guarded):
    out = io.StringIO()
    call_command("team", "add", "blue", "outsider", stdout=out)
    call_command("team", "give", "blue", "open", stdout=out)
    assert Fabric.objects.get(name="open").team.name == "blue"
    call_command("team", "list", stdout=out)
    assert "blue: members outsider; fabrics open" in out.getvalue()
    with pytest.raises(CommandError, match="No fabric named 'nowhere'; nothing was changed"):
        call_command("team", "give", "blue", "secret", "nowhere")
    assert Fabric.objects.get(name="secret").team.name == "red"
    call_command("team", "open", "secret", stdout=out)
    assert Fabric.objects.get(name="secret").team is None
    call_command("team", "remove", "blue", "outsider", stdout=out)
    assert not Team.objects.get(name="blue").members.exists()


def test_an_admin_gives_a_fabric_to_a_team_on_the_admin_site(guarded, make_user):
    admin = make_user(Role.ADMIN, "boss")
    admin.is_staff = True
    admin.save()
    client = logged_in_client(admin)
    open_fabric = guarded["open"].fabric
    page = client.get(f"/admin/fabrics/fabric/{open_fabric.pk}/change/")
    assert page.status_code == 200 and b'name="team"' in page.content
    red = Team.objects.get(name="red")
    assert client.post(f"/admin/fabrics/fabric/{open_fabric.pk}/change/", {"team": red.pk}).status_code == 302
    open_fabric.refresh_from_db()
    assert open_fabric.team == red
    assert logged_in_client(guarded["outsider"]).get(f"/fabrics/{open_fabric.pk}/").status_code == 404
