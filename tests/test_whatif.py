"""The staged scale-out what-if: refused up front when impossible, fanned out over a real worker,
reported in the browser (HTML, PDF, CSV, JSON), compared, and from the command line."""
import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.test_runs import wait_for
from twin.common.errors import ApplicationError
from twin.fabrics.services import snapshot_create
from twin.runs.models import Run, RunKind, RunStatus
from twin.runs.services import run_create
from twin.simcore.generate import fat_tree

SMALL = {"factors": [1, 2], "alternatives": ["one-supernode"], "collectives": ["allreduce"], "sizes": [2**16, 2**22]}


@pytest.fixture
def fat_tree_snapshot(db):
    return snapshot_create(fabric_name="ft", spec=fat_tree(endpoints=64, radix=16, name="ft"), source_name="g", source_format="generated", checksum="0")


@pytest.mark.django_db
def test_impossible_parameters_are_refused_before_any_task(fat_tree_snapshot):
    with pytest.raises(ApplicationError, match="factor"):
        run_create(kind=RunKind.WHATIF, snapshot=fat_tree_snapshot, params={**SMALL, "factors": [0.5, 2]})
    with pytest.raises(ApplicationError):
        run_create(kind=RunKind.WHATIF, snapshot=fat_tree_snapshot, params={**SMALL, "sizes": [0]})
    assert not Run.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_whatif_on_a_worker_and_its_report(celery_worker, fat_tree_snapshot, operator_client):
    run = run_create(kind=RunKind.WHATIF, snapshot=fat_tree_snapshot, params=SMALL)
    wait_for(lambda: Run.objects.get(pk=run.pk).is_terminal, timeout_s=240)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.cells.count() == 3 * 3  # 2 stages and the snapshot x (structure, allreduce, training)
    stages = run.result["stages"]
    assert [(stage["alternative"], stage["cards"]) for stage in stages] == [("one-supernode", 64), ("one-supernode", 128), ("as-uploaded", 64)]
    page = operator_client.get(f"/runs/{run.pk}/report/")
    assert page.status_code == 200 and b"<svg" in page.content
    pdf = operator_client.get(f"/runs/{run.pk}/report.pdf")
    assert pdf.content.startswith(b"%PDF")
    rows = list(csv.DictReader(io.StringIO(operator_client.get(f"/runs/{run.pk}/report.csv").content.decode())))
    assert rows and "cards" in rows[0]
    assert json.loads(operator_client.get(f"/runs/{run.pk}/report.json").content)["stages"]
    assert operator_client.get(f"/runs/{run.pk}/report.exe").status_code == 404

    second = run_create(kind=RunKind.WHATIF, snapshot=fat_tree_snapshot, params={**SMALL, "threshold_points": 5})
    wait_for(lambda: Run.objects.get(pk=second.pk).is_terminal, timeout_s=240)
    compared = operator_client.get("/whatif/compare/", {"a": run.pk, "b": second.pk})
    assert compared.status_code == 200 and b"whatif-compare" in compared.content


@pytest.mark.django_db
def test_whatif_command_writes_the_report(fat_tree_snapshot, tmp_path, capsys):
    call_command("whatif", "--fabric", "ft", "--stages", "2", "--alternatives", "one-supernode", "--collectives", "allreduce", "--sizes", "65536,4194304", "--out", str(tmp_path), "--json")
    summary = json.loads(capsys.readouterr().out)
    # The designs rebuilt from the rules, then the snapshot itself as cabled, at 1x.
    assert [(stage["alternative"], stage["factor"]) for stage in summary["stages"]] == [("one-supernode", 1), ("one-supernode", 2), ("as-uploaded", 1)]
    assert {"cards", "switches", "tiers", "diameter_hops", "bisection_GBps", "power_kw", "busbw_GBps"} <= set(summary["stages"][0])
    assert "knee" in summary
    assert {p.name for p in tmp_path.iterdir()} == {"report.html", "report.pdf", "stages.csv", "report.json"}
    with pytest.raises(CommandError):
        call_command("whatif", "--fabric", "ft", "--stages", "0.5", "--out", str(tmp_path))


@pytest.mark.django_db
def test_form_on_the_fabric_page_with_overrides(operator_client, fat_tree_snapshot):
    url = f"/snapshots/{fat_tree_snapshot.pk}/whatif/"
    fields = {"factors": "1,2", "alternatives": ["one-supernode"], "k": 2, "threshold_points": 10}
    started = operator_client.post(url, {**fields, "overrides": '{"oversubscription": 2}', "items": '{"card_w": 1000}'})
    assert started.status_code == 302 and started.url.startswith("/runs/")
    run = Run.objects.get(kind=RunKind.WHATIF)
    assert run.params["overrides"] == {"oversubscription": 2} and run.params["items"] == {"card_w": 1000}
    refused = operator_client.post(url, {**fields, "overrides": '{"switch_radix": -4}'}, follow=True)
    assert b"radix" in refused.content and Run.objects.count() == 1
    not_json = operator_client.post(url, {**fields, "overrides": "{radix"}, follow=True)
    assert b"Not JSON" in not_json.content
