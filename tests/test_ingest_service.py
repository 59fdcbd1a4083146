"""Uploads through the service, API, page and CLI: many files, clear errors, nothing half-written,
concurrent uploads, plans, exports, and the news pushed to viewers."""
import io
import json
import re
import threading
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client, override_settings

from twin.accounts.models import Role
from twin.fabrics.models import Fabric, Link, Node, Snapshot, SnapshotRole
from twin.fabrics.services import SourceFile, UploadRejected, snapshot_import
from twin.ingest import export_canonical
from twin.runs.models import Run
from twin.simcore.generate import supernode

pytestmark = pytest.mark.django_db


def canonical(cards: int = 32, radix: int = 8, name: str = "lab") -> bytes:
    return export_canonical(supernode(cards=cards, switch_radix=radix, name=name)).encode()


def upload(client, *files: tuple[str, bytes], **fields):
    return client.post("/api/snapshots/", {"file": [SimpleUploadedFile(name, data) for name, data in files], **fields})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file is empty"),
        (b"   \n\n", "the file is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        ("format: twin-fabric\nname: é\n".encode("latin-1"), "is not UTF-8"),
        (canonical()[:700], "malformed JSON"),
        (b'{"format": "twin-fabric", "attrs": ' + b"[" * 10_000 + b"]" * 10_000 + b"}", "JSON nested too deeply"),
    ],
    ids=["empty", "blank", "binary", "latin-1", "truncated", "deep"],
)
def test_unreadable_files_are_refused_with_a_reason(operator_client, data, message):
    response = upload(operator_client, ("bad.json", data))
    assert response.status_code == 400
    body = response.json()
    assert message in body["detail"] and body["files"][0]["source"] == "bad.json"
    assert Snapshot.objects.count() == 0


def test_yaml_alias_bomb_is_refused_and_nothing_is_stored(operator_client):
    bomb = (Path(__file__).parent / "data/canonical/billion-laughs.yaml").read_bytes()
    response = upload(operator_client, ("lol.yaml", bomb))
    assert response.status_code == 400
    assert response.json()["files"][0]["detail"].startswith("lol.yaml line 5: YAML anchor 'a' is not allowed")
    assert Fabric.objects.count() == 0 and Snapshot.objects.count() == 0


def test_every_bad_file_is_reported_and_nothing_is_stored(operator_client):
    broken = json.loads(canonical())
    broken["links"][0]["b"] = "ghost"
    response = upload(operator_client, ("good.json", canonical()), ("one.json", b""), ("two.json", json.dumps(broken, indent=1).encode()))
    assert response.status_code == 400
    files = response.json()["files"]
    assert [file["source"] for file in files] == ["one.json", "two.json"]
    assert files[1]["problems"][0]["line"] is not None
    assert Fabric.objects.count() == 0 and Node.objects.count() == 0


def test_size_limit_is_checked_before_parsing(operator_client):
    with override_settings(TWIN_MAX_UPLOAD_BYTES=100):
        response = upload(operator_client, ("big.json", canonical()))
    assert response.status_code == 400
    assert "100-byte limit" in response.json()["detail"] and response.json()["limit_bytes"] == 100
    assert Snapshot.objects.count() == 0


HUGE_BODY = 250 * 1024 * 1024


@pytest.mark.parametrize("signed_in", [True, False], ids=["operator", "anonymous"])
def test_a_body_declared_over_the_limit_is_refused_before_it_is_read(make_user, signed_in):
    client = Client()
    if signed_in:
        client.force_login(make_user(Role.OPERATOR))
    # The test client's body is a few bytes, but it says 250 MB: reading it would fail the test
    # ("Cannot read more than the available bytes"), so the answer must come from the header alone.
    response = client.post("/api/snapshots/", b"--x--", content_type="multipart/form-data; boundary=x", CONTENT_LENGTH=str(HUGE_BODY))
    assert response.status_code == 413
    assert response.json()["detail"] == (
        "The request is 262,144,000 bytes, larger than the 209,715,200-byte upload limit (TWIN_MAX_UPLOAD_BYTES); nothing was read."
    )
    page = client.post("/upload/", b"--x--", content_type="multipart/form-data; boundary=x", CONTENT_LENGTH=str(HUGE_BODY))
    assert page.status_code == 413 and b"larger than the 209,715,200-byte upload limit" in page.content
    assert Snapshot.objects.count() == 0


def test_a_file_of_the_largest_size_still_fits_with_its_form(operator_client):
    with override_settings(TWIN_MAX_UPLOAD_BYTES=len(canonical())):
        response = upload(operator_client, ("exact.json", canonical()))
    assert response.status_code == 201


def test_upload_options_and_plan_role(operator_client):
    response = upload(operator_client, ("plan.json", canonical()), role="plan", fabric="lab")
    assert response.status_code == 201 and response.json()["role"] == "plan"
    snapshot = Snapshot.objects.get()
    assert snapshot.role == SnapshotRole.PLAN and snapshot.summary["nodes_by_kind"]["card"] == 32
    assert snapshot.fabric.latest_snapshot() is None  # a plan is not what the fabric looks like
    response = upload(operator_client, ("x.json", canonical()), default_bandwidth_gbps="-5")
    assert response.status_code == 400 and "default_bandwidth_gbps" in response.json()


def test_snapshot_list_and_graphml_export(operator_client):
    upload(operator_client, ("a.json", canonical()))
    upload(operator_client, ("b.json", canonical()), fabric="lab")
    fabric = Fabric.objects.get(name="lab")
    listing = operator_client.get(f"/api/fabrics/{fabric.pk}/snapshots/").json()
    assert [s["version"] for s in listing["results"]] == [2, 1]
    snapshot = fabric.latest_snapshot()
    graphml = operator_client.get(f"/api/snapshots/{snapshot.pk}/export/?format=graphml")
    assert graphml.status_code == 200 and graphml["Content-Type"].startswith("application/graphml+xml")
    import networkx as nx

    graph = nx.read_graphml(io.BytesIO(graphml.content))
    assert graph.number_of_nodes() == snapshot.node_count
    assert operator_client.get(f"/api/snapshots/{snapshot.pk}/export/?format=pdf").status_code == 400


@pytest.mark.django_db(transaction=True)
def test_concurrent_uploads_to_one_fabric_get_distinct_versions(make_user):
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL; SQLite serialises writers itself")
    errors = []

    def one_upload():
        try:
            snapshot_import(fabric_name="raced", files=[SourceFile("f.json", canonical())])
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=one_upload) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(Snapshot.objects.filter(fabric__name="raced").values_list("version", flat=True)) == [1, 2, 3, 4]
    assert Fabric.objects.filter(name="raced").count() == 1


def test_cli_ingest_prints_json_and_fails_cleanly(tmp_path, capsys):
    good = tmp_path / "fabric.json"
    good.write_bytes(canonical())
    call_command("ingest", str(good), "--fabric", "cli-lab", "--json")
    printed = json.loads(capsys.readouterr().out)
    assert printed["fabric"] == "cli-lab" and printed["snapshot"] == 1 and printed["format"] == "twin-fabric"
    assert printed["nodes"]["card"] == 32 and printed["links"] == Link.objects.count()
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"format": "twin-fabric",\n "version": 9}')
    with pytest.raises(CommandError, match="nothing was stored"):
        call_command("ingest", str(bad), "--fabric", "cli-lab")
    assert "bad.json line 2" in capsys.readouterr().err
    assert Snapshot.objects.count() == 1


def test_cli_export_round_trips(tmp_path, capsys):
    source = tmp_path / "fabric.json"
    source.write_bytes(canonical())
    call_command("ingest", str(source), "--fabric", "round")
    capsys.readouterr()
    call_command("export", "--fabric", "round", "--format", "json")
    assert capsys.readouterr().out == canonical().decode().replace('"name": "lab"', '"name": "round"')


@pytest.mark.django_db(transaction=True)
def test_viewers_of_a_fabric_hear_about_new_snapshots(make_user):
    from tests.test_consumers import session_headers
    from twin.asgi import application

    first = snapshot_import(fabric_name="watched", files=[SourceFile("v1.json", canonical())])
    headers = session_headers(make_user(Role.VIEWER))

    async def scenario():
        from channels.db import database_sync_to_async

        communicator = WebsocketCommunicator(application, f"/ws/fabrics/{first.fabric_id}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        await database_sync_to_async(snapshot_import)(fabric_name="watched", files=[SourceFile("v2.json", canonical())])
        message = json.loads(await communicator.receive_from(timeout=5))
        assert message["type"] == "fabric.snapshot"
        assert message["snapshot"]["version"] == 2 and message["snapshot"]["source_name"] == "v2.json"
        assert message["snapshot"]["summary"]["nodes_by_kind"]["card"] == 32
        await communicator.disconnect()

    async_to_sync(scenario)()


def test_upload_page_lists_each_files_problems(operator_client):
    response = operator_client.post(
        "/upload/",
        {"file": [SimpleUploadedFile("a.json", b""), SimpleUploadedFile("b.json", b"\x00\x01")], "fabric": "", "format": "", "role": "discovered"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "a.json: the file is empty" in page and "b.json: this is a binary file" in page


def test_upload_page_answers_json_for_scripts(operator_client):
    response = operator_client.post(
        "/upload/", {"file": [SimpleUploadedFile("f.json", canonical())], "fabric": "", "format": "", "role": "discovered"}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 201
    body = response.json()
    assert body["format"] == "twin-fabric" and body["url"].startswith("/fabrics/") and body["summary"]["nodes_by_kind"]["card"] == 32


DATA = Path(__file__).resolve().parent / "data"  # the real files of ../shared/samples, kept with the tests


def sample_bytes(name: str) -> bytes:
    return (DATA / name).read_bytes()


def test_a_real_dump_uploads_with_a_card_per_hca_and_the_page_says_so(operator_client):
    response = upload(operator_client, ("X5.topofile", sample_bytes("ib/X5.topofile")), fabric="x5")
    assert response.status_code == 201
    snapshot = Snapshot.objects.get()
    assert snapshot.card_count == 89 and snapshot.summary["completion"]["cards"]["sources"] == {"hca": 89}
    page = operator_client.get(f"/fabrics/{snapshot.fabric_id}/").content.decode()
    assert 'id="card-sources"' in page and "89 from HCAs (one card per compute HCA)" in page
    assert 'id="runs-unavailable"' not in page and 'id="card-rule"' in page


def test_the_what_if_form_offers_what_plans_on_a_real_dump_of_nameless_hcas(operator_client):
    """X5's 89 HCAs name no host: each card is a host of its own (eight a host planned no stage),
    and 89 cards split into no k super-nodes, so the form leaves that design out and runs as shown."""
    assert upload(operator_client, ("X5.topofile", sample_bytes("ib/X5.topofile")), fabric="x5").status_code == 201
    snapshot = Snapshot.objects.get()
    assert snapshot.summary["design"]["cards_per_host"] == 1
    assert "no card names its host" in snapshot.summary["design"]["inferred"]["cards_per_host"]
    page = operator_client.get(f"/fabrics/{snapshot.fabric_id}/").content.decode()
    offered = re.findall(r'name="alternatives" value="([^"]+)" id="[^"]+" checked', page)
    assert offered == ["one-supernode", "rail"]
    started = operator_client.post(f"/snapshots/{snapshot.pk}/whatif/", {"factors": "1,2,4,8", "alternatives": offered, "k": "2", "threshold_points": "10"})
    assert started.status_code == 302 and Run.objects.get().kind == "whatif"


def test_the_hca_rule_and_scale_up_are_chosen_at_upload(operator_client):
    from twin.ingest.writers.superpod import superpod_files

    files = superpod_files(units=1, missing={32}, storage_hosts=1)
    dump = ("superpod.ibnetdiscover", files["superpod.ibnetdiscover"].encode())
    assert upload(operator_client, dump, fabric="pod").status_code == 201
    assert upload(operator_client, dump, fabric="pod", non_compute_hca_pattern="").status_code == 201
    assert upload(operator_client, dump, fabric="pod", compute_hcas_per_host="4").status_code == 201
    counts = list(Snapshot.objects.order_by("version").values_list("card_count", flat=True))
    assert counts == [31 * 8, 31 * 8 + 3, 31 * 4]  # stor01 (2 HCAs) and ufm01 (1) join in; then 4 a host
    bad = upload(operator_client, dump, fabric="pod", non_compute_hca_pattern="(unclosed")
    assert bad.status_code == 400 and "not a regular expression" in str(bad.json()["non_compute_hca_pattern"])
    hint = ("ndv4.xml", sample_bytes("nccl_xml/azure-ndv4-topo.xml"))
    assert upload(operator_client, hint, fabric="vm", nvlink_gbps="1200").status_code == 201
    vm = Snapshot.objects.filter(fabric__name="vm").get()
    assert list(vm.summary["completion"]["scale_up"]["generations"]) == ["A100 (NVLink 3), 1,200 Gb/s per GPU (set at upload)"]
    page = operator_client.get(f"/fabrics/{vm.fabric_id}/").content.decode()
    assert 'id="scale-up-completed"' in page


def test_an_upload_nothing_can_use_is_refused_and_one_without_cards_disables_the_runs(operator_client):
    lone = b'vendid=0x2c9\ndevid=0x1021\ncaguid=0x0c42a10300860100\nCa\t1 "H-0c42a10300860100"\t\t# "node01 mlx5_0"\n'
    response = upload(operator_client, ("lone.ibnetdiscover", lone))
    assert response.status_code == 400 and "no link between any two" in response.json()["detail"]
    assert Snapshot.objects.count() == 0
    response = upload(operator_client, ("topology.conf", sample_bytes("slurm/topograph-tree.conf")), fabric="slurm")
    assert response.status_code == 201
    snapshot = Snapshot.objects.get()
    assert any(warning.startswith("no cards") for warning in snapshot.summary_text()["warnings"])
    page = operator_client.get(f"/fabrics/{snapshot.fabric_id}/").content.decode()
    assert 'id="runs-unavailable"' in page and 'disabled title="This snapshot has no cards' in page


def test_the_inferred_design_is_shown_before_a_what_if(operator_client):
    from twin.ingest.writers.superpod import superpod_files

    dump = superpod_files(units=1, missing={32})["superpod.ibnetdiscover"].encode()
    assert upload(operator_client, ("superpod.ibnetdiscover", dump), fabric="pod").status_code == 201
    snapshot = Snapshot.objects.get()
    design = snapshot.summary["design"]
    assert (design["design"], design["switch_radix"], design["cards_per_host"], design["link_gbps"]) == ("rail", 64, 8, 400.0)
    assert "rails" in design["inferred"]["design"] and "SHARP" in design["inferred"]["switch_radix"]
    page = operator_client.get(f"/fabrics/{snapshot.fabric_id}/").content.decode()
    assert 'id="inferred-design"' in page and "servers_per_unit" in page


def test_the_completed_scale_up_is_corrected_from_the_fabric_page(operator_client, viewer_client):
    hint = ("ndv4.xml", sample_bytes("nccl_xml/azure-ndv4-topo.xml"))
    assert upload(operator_client, hint, fabric="vm").status_code == 201
    first = Snapshot.objects.get()
    page = operator_client.get(f"/fabrics/{first.fabric_id}/").content.decode()
    assert 'id="scale-up-form"' in page
    corrected = operator_client.post(f"/snapshots/{first.pk}/scale-up/", {"nvlink_gbps": "1200"})
    second = Snapshot.objects.get(version=2)
    assert corrected.status_code == 302 and corrected.url.endswith(f"?snapshot={second.pk}")
    assert {link.bandwidth_gbps for link in second.links.filter(domain="scale-up", b__kind="switch")} == {1200.0}
    assert "1,200 Gb/s per GPU" in operator_client.get(corrected.url).content.decode()
    operator_client.post(f"/snapshots/{second.pk}/scale-up/", {"nvlink_gbps": ""})
    third = Snapshot.objects.get(version=3)
    assert third.switch_count == 0 and third.summary["completion"]["scale_up"]["hosts"] == 0
    refused = operator_client.post(f"/snapshots/{third.pk}/scale-up/", {"nvlink_gbps": "1200"}, follow=True)
    assert b"no scale-up the twin completed" in refused.content and Snapshot.objects.count() == 3
    assert viewer_client.post(f"/snapshots/{first.pk}/scale-up/", {"nvlink_gbps": "1"}).status_code == 403


def test_the_cli_says_where_the_cards_came_from(tmp_path, capsys):
    dump = tmp_path / "X5.topofile"
    dump.write_bytes(sample_bytes("ib/X5.topofile"))
    call_command("ingest", str(dump), "--fabric", "x5")
    out = capsys.readouterr().out
    assert "cards from: 89 compute HCAs (one card each)" in out
    call_command("ingest", str(dump), "--fabric", "x5", "--non-compute-hca-pattern", "(?i)voltaire|h-003048c749cd", "--json")
    assert json.loads(capsys.readouterr().out)["completion"]["cards"]["sources"] == {"hca": 89}
    with pytest.raises(CommandError, match="not a regular expression"):
        call_command("ingest", str(dump), "--fabric", "x5", "--non-compute-hca-pattern", "(")


def test_a_what_if_that_cannot_read_the_design_is_disabled_and_says_why(operator_client):
    from twin.ingest.writers.superpod import superpod_host_xml

    assert upload(operator_client, ("dgx001.xml", superpod_host_xml(1).encode())).status_code == 201
    snapshot = Snapshot.objects.get()
    page = operator_client.get(f"/fabrics/{snapshot.fabric_id}/").content.decode()
    # One host: its GPUs run collectives over NVLink, but there is no switch network to grow.
    assert 'id="runs-unavailable"' not in page
    assert "disabled title=\"cannot read the design rules" in page
