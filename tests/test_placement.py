"""Job placement from the command line and as a background run, with its exports."""
import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from twin.runs.models import Run, RunKind, RunStatus
from twin.runs.services import run_execute

pytestmark = pytest.mark.django_db


def test_place_command_ranks_aware_first(small_snapshot, capsys):
    call_command("place", "--fabric", "small", "--tp", "8", "--dp", "8", "--json")
    summary = json.loads(capsys.readouterr().out)
    times = {name: s["communication_time_s"] for name, s in summary["strategies"].items()}
    assert set(times) == {"naive", "random", "aware"}
    assert times["aware"] <= times["naive"] and times["aware"] < times["random"]
    with pytest.raises(CommandError, match="65|64|more"):
        call_command("place", "--fabric", "small", "--tp", "8", "--dp", "9")


def test_placement_run_and_exports(operator_client, small_snapshot):
    params = {"job": {"tp": 8, "dp": 4}, "busy_cards": ["card-0001", "card-0002"], "mapping": {str(r): f"card-{r + 33:04d}" for r in range(32)}}
    response = operator_client.post("/api/runs/", {"kind": "placement", "snapshot": small_snapshot.pk, "params": params}, content_type="application/json")
    assert response.status_code == 201, response.content
    run_execute(run_id=response.json()["id"])
    run = Run.objects.get(pk=response.json()["id"])
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert set(run.result["results"]) == {"naive", "random", "aware", "user"}
    assert "ranks" not in run.result["results"]["aware"] and len(run.detail["ranks"]["aware"]) == 32
    used = {record["card"] for record in run.detail["ranks"]["aware"]}
    assert not used & {"card-0001", "card-0002"}  # busy cards stay free of this job
    exported = operator_client.get(f"/api/runs/{run.pk}/placement/", {"strategy": "aware", "format": "csv"})
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert len(rows) == 32 and rows[0]["rank"] == "0"
    hostlist = operator_client.get(f"/api/runs/{run.pk}/placement/", {"strategy": "user", "format": "hostlist"}).content.decode()
    assert hostlist.startswith("host-") and "[" in hostlist
    assert operator_client.get(f"/api/runs/{run.pk}/placement/", {"strategy": "nope"}).status_code == 400


def test_placement_params_are_checked(operator_client, small_snapshot):
    bad = operator_client.post("/api/runs/", {"kind": "placement", "snapshot": small_snapshot.pk, "params": {"job": {"tp": 0, "dp": 4}}}, content_type="application/json")
    assert bad.status_code == 400 and "params" in bad.json()


def test_unknown_busy_card_fails_the_run_clearly(small_snapshot):
    run = Run.objects.create(kind=RunKind.PLACEMENT, snapshot=small_snapshot, params={"job": {"tp": 8, "dp": 2}, "strategies": ["naive"], "busy_cards": ["ghost"]})
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "ghost" in run.error


def test_forms_on_the_fabric_page_start_runs(operator_client, small_snapshot):
    from django.core.files.uploadedfile import SimpleUploadedFile

    page = operator_client.get(f"/fabrics/{small_snapshot.fabric_id}/")
    assert b'id="placement-form"' in page.content and b'id="failure-form"' in page.content
    mapping = "rank,card\n" + "".join(f"{r},card-{r + 1:04d}\n" for r in range(16))
    started = operator_client.post(f"/snapshots/{small_snapshot.pk}/placement/", {"tp": 8, "pp": 1, "dp": 2, "ep": 1, "strategies": ["naive", "aware"], "busy_cards": "", "mapping": SimpleUploadedFile("m.csv", mapping.encode())})
    assert started.status_code == 302 and started.url.startswith("/runs/")
    run = Run.objects.get(kind=RunKind.PLACEMENT)
    assert run.params["mapping"]["15"] == "card-0016"
    bad = operator_client.post(f"/snapshots/{small_snapshot.pk}/placement/", {"tp": 8, "pp": 1, "dp": 2, "ep": 1, "strategies": ["aware"], "mapping": SimpleUploadedFile("m.csv", b"rank,card\nx,y\n")}, follow=True)
    assert b"m.csv line 2" in bad.content
    refused = operator_client.post(f"/snapshots/{small_snapshot.pk}/failures/", {"worst": "switch", "elements": "leaf-01", "collective": "allreduce", "size": "1GiB"}, follow=True)
    assert b"not both" in refused.content
    started = operator_client.post(f"/snapshots/{small_snapshot.pk}/failures/", {"worst": "", "elements": "leaf-01", "collective": "allreduce", "size": "64MiB"})
    assert started.status_code == 302 and Run.objects.filter(kind=RunKind.FAILURES).count() == 1


def test_placement_form_run_finishes_with_every_strategy(operator_client, small_snapshot):
    """What the page's form sends is enough for the run (it once lacked `strategies`)."""
    page = operator_client.get(f"/fabrics/{small_snapshot.fabric_id}/").content.decode()
    assert page.count('name="strategies"') == 3 and 'value="175B"' in page  # the replay form's model size, as people write it
    started = operator_client.post(f"/snapshots/{small_snapshot.pk}/placement/", {"tp": 8, "pp": 1, "dp": 2, "ep": 1, "model_params": "70B", "strategies": ["naive", "random", "aware"]})
    assert started.status_code == 302 and started.url.startswith("/runs/")
    run = Run.objects.get(kind=RunKind.PLACEMENT)
    assert run.params["job"]["model_params"] == 70e9
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert set(run.result["results"]) == {"naive", "random", "aware"}
    refused = operator_client.post(f"/snapshots/{small_snapshot.pk}/placement/", {"tp": 8, "dp": 2, "pp": 1, "ep": 1, "model_params": "many", "strategies": ["aware"]}, follow=True)
    assert b"cannot read count" in refused.content and Run.objects.count() == 1


def test_a_placement_warning_reads_in_the_readers_language(operator_client):
    from twin.fabrics.services import snapshot_create
    from twin.simcore.generate import rail_optimised

    spec = rail_optimised(servers=8, servers_per_unit=8)  # NVLink domains of 8 cards: TP=16 spans two
    snapshot = snapshot_create(fabric_name="rails", spec=spec, source_name="generated", source_format="generated", checksum="0" * 64)
    params = {"job": {"tp": 16, "dp": 4}, "strategies": ["aware"]}
    response = operator_client.post("/api/runs/", {"kind": "placement", "snapshot": snapshot.pk, "params": params}, content_type="application/json")
    run_execute(run_id=response.json()["id"])
    english = operator_client.get(f"/api/runs/{response.json()['id']}/", HTTP_ACCEPT_LANGUAGE="en").json()["result"]["results"]["aware"]
    assert english["warnings"] == [
        "a TP group of 16 cards is larger than any switch domain (the largest has 8 free cards): "
        "4 of 4 TP groups span several domains, at most 2, the fewest the free cards allow"
    ]
    chinese = operator_client.get(f"/api/runs/{response.json()['id']}/", HTTP_ACCEPT_LANGUAGE="zh-Hans").json()["result"]["results"]["aware"]
    assert chinese["warnings"] == ["由 16 张卡组成的 TP 组大于任何交换域（最大的交换域有 8 张空闲卡）：4 个 TP 组中有 4 个跨越多个交换域，最多跨越 2 个，这已是空闲卡所允许的最少数量"]
    assert "warning_words" not in chinese
    # One frame goes to every viewer: it carries the warnings in each language of the site.
    assert chinese["warnings_by_language"] == {"en": english["warnings"], "zh-hans": chinese["warnings"]}
