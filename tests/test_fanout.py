"""Runs fanned out into cells over real Celery workers on the real Redis broker: results are
assembled once, failures of a cell fail the run with its reason, a cancelled run stops, and a
worker killed mid-run does not lose the run."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from tests.test_runs import wait_for
from twin.fabrics.services import snapshot_create
from twin.runs.models import CellStatus, Run, RunCell, RunKind, RunStatus
from twin.accounts.models import Role
from twin.runs.services import run_cancel, run_create
from twin.simcore.generate import supernode

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.django_db(transaction=True)


def worst_switch_run(snapshot, user=None, **workload) -> Run:
    return run_create(kind=RunKind.FAILURES, snapshot=snapshot, user=user, params={"worst": "switch", "workload": {"collective": "allreduce", "size_bytes": 2**26, "algorithm": "ring", **workload}})


def test_failure_search_fans_out_and_assembles_once(celery_worker, small_snapshot):
    run = worst_switch_run(small_snapshot)
    wait_for(lambda: Run.objects.get(pk=run.pk).is_terminal, timeout_s=120)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.cells.count() == 2 and run.cells.filter(status=CellStatus.DONE).count() == 2  # 12 switches, 8 per cell
    assert run.result["evaluated"] == 12
    worst = run.result["worst"]
    assert worst["elements"][0].startswith("leaf-") and worst["cards_cut_off_count"] == 8  # losing a leaf cuts its 8 cards off
    assert len(run.detail["link_impact"]) == small_snapshot.link_count or len(run.detail["link_impact"]) <= 50


def test_chosen_elements_and_bad_ones(celery_worker, small_snapshot):
    from twin.common.errors import ApplicationError

    with pytest.raises(ApplicationError, match="ghost"):
        run_create(kind=RunKind.FAILURES, snapshot=small_snapshot, params={"elements": ["ghost"], "workload": {}})
    assert not Run.objects.exists()  # refused before any task started, and nothing saved
    run = run_create(kind=RunKind.FAILURES, snapshot=small_snapshot, params={"elements": ["spine-01", "spine-02"], "workload": {}})
    wait_for(lambda: Run.objects.get(pk=run.pk).is_terminal, timeout_s=120)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.result["worst"]["elements"] == ["spine-01", "spine-02"] and run.result["worst"]["cards_cut_off_count"] == 0


def test_cancelled_run_skips_its_remaining_cells(make_user, small_snapshot):
    run = worst_switch_run(small_snapshot, user=make_user(Role.OPERATOR))  # no worker yet: everything waits in the broker
    from twin.runs.services import run_execute

    run_execute(run_id=run.pk)  # creates the cells and queues them
    run_cancel(run=Run.objects.get(pk=run.pk), user=run.created_by)
    from twin.runs.services import cell_execute

    for cell in RunCell.objects.filter(run=run):
        cell_execute(cell_id=cell.pk)
    assert set(RunCell.objects.filter(run=run).values_list("status", flat=True)) == {CellStatus.SKIPPED}
    assert Run.objects.get(pk=run.pk).status == RunStatus.CANCELLED


def test_a_large_search_is_split_into_a_bounded_number_of_cells(small_snapshot, monkeypatch):
    """Every link once, in at most MAX_FAILURE_CELLS cells (each cell loads the fabric and its baseline)."""
    from twin.simulations import fanouts

    monkeypatch.setattr(fanouts, "MAX_FAILURE_CELLS", 5)
    run = run_create(kind=RunKind.FAILURES, snapshot=small_snapshot, params={"worst": "link", "workload": {"size_bytes": 2**20}})
    candidates = [candidate for cell in RunCell.objects.filter(run=run).order_by("pk") for candidate in cell.params["candidates"]]
    assert RunCell.objects.filter(run=run).count() == 5
    assert candidates == [f"link:{position}" for position in range(small_snapshot.link_count)]


def start_worker_process(env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "twin", "worker", "--pool=solo", "--loglevel=WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )


def worker_database_url() -> str:
    """The test database, for worker processes (SQLite's is a file too)."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    return f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/{settings['NAME']}"


@pytest.mark.stack
def test_a_worker_killed_mid_run_does_not_lose_the_run():
    """The broker's own redelivery, without the sweeper: a short visibility timeout and lease."""
    snapshot = snapshot_create(fabric_name="kill", spec=supernode(cards=1024), source_name="g", source_format="generated", checksum="0")
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "TWIN_TASK_REDELIVERY_S": "3",  # hand an unacknowledged cell on quickly once its worker is gone
        "TWIN_RUN_LEASE_S": "2",  # and let the next worker take it: its first worker's lease has expired
    }
    uninterrupted = worst_switch_run(snapshot)
    first = start_worker_process(env)
    try:
        wait_for(lambda: Run.objects.get(pk=uninterrupted.pk).is_terminal, timeout_s=300)
        expected = Run.objects.get(pk=uninterrupted.pk)
        assert expected.status == RunStatus.SUCCEEDED, expected.error

        interrupted = worst_switch_run(snapshot)
        wait_for(lambda: RunCell.objects.filter(run=interrupted, status=CellStatus.DONE).exists(), timeout_s=120)
        os.killpg(first.pid, signal.SIGKILL)  # the worker and its task die mid-run
        first.wait()
        killed_at = Run.objects.get(pk=interrupted.pk)
        assert killed_at.status == RunStatus.RUNNING
        second = start_worker_process(env)
        try:
            wait_for(lambda: Run.objects.get(pk=interrupted.pk).is_terminal, timeout_s=300)
        finally:
            os.killpg(second.pid, signal.SIGTERM)
            second.wait(timeout=30)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    finished = Run.objects.get(pk=interrupted.pk)
    assert finished.status == RunStatus.SUCCEEDED, finished.error
    assert finished.result["ranking"] == expected.result["ranking"]
    assert finished.cells.filter(status=CellStatus.DONE).count() == finished.cells.count()


def test_a_failing_cell_fails_the_run_with_its_reason(small_snapshot, monkeypatch):
    from twin.runs.fanout import FANOUT_KINDS, FanOutKind
    from twin.runs.services import cell_execute, run_execute
    from twin.simcore.errors import TwinCoreError

    real = FANOUT_KINDS[RunKind.FAILURES]

    def execute(run, params):
        if "leaf-08" in params.get("candidates", []):
            raise TwinCoreError("routing table overflow on leaf-08")
        return real.execute(run, params)

    monkeypatch.setitem(FANOUT_KINDS, RunKind.FAILURES, FanOutKind(plan=real.plan, execute=execute, assemble=real.assemble))
    run = worst_switch_run(small_snapshot)
    run_execute(run_id=run.pk)
    for cell in RunCell.objects.filter(run=run).order_by("position"):
        cell_execute(cell_id=cell.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "routing table overflow on leaf-08" in run.error and "switch failures 1-8" in run.error
    assert set(run.cells.values_list("status", flat=True)) <= {CellStatus.FAILED, CellStatus.SKIPPED}
