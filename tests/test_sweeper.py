"""Leases and the sweeper, on the real database and the real Redis broker: work whose worker went
silent is queued again and failed after the last attempt with the reason; work whose message the
broker lost (a Redis restart without its append-only file: here, its queues emptied) is queued
again and finished by a real worker; a replay player that went silent is resumed; a database
error when a run starts fails the run instead of leaving it pending. The same with real worker
processes killed with SIGKILL is in tests/test_recovery.py."""
import sqlite3
import threading
import time
from datetime import timedelta

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone, translation

from tests.test_runs import wait_for
from twin import celery_app
from twin.runs.models import CellStatus, Run, RunCell, RunKind, RunStatus
from twin.runs.services import cell_execute, run_claim, run_create, run_execute
from twin.runs.sweeper import queued_messages, sweep
from twin.simulations.models import ReplayPlayback

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def empty_broker():
    """Both queues empty before and after: the counts below are this test's messages only."""
    celery_app.control.purge()
    yield
    celery_app.control.purge()


@pytest.fixture
def short_lease(settings):
    settings.TWIN_RUN_LEASE_S = 0.3
    return settings.TWIN_RUN_LEASE_S


def failure_search(snapshot) -> Run:
    return run_create(kind=RunKind.FAILURES, snapshot=snapshot, params={"worst": "switch", "workload": {"collective": "allreduce", "size_bytes": 2**20, "algorithm": "ring"}})


def test_whole_runs_go_to_the_heavy_queue_and_fanned_out_ones_to_the_live_one(small_snapshot, empty_broker):
    run_create(kind=RunKind.HOP_STATS, snapshot=small_snapshot)
    assert (queued_messages(django_settings.TWIN_QUEUE_HEAVY), queued_messages(django_settings.TWIN_QUEUE_LIVE)) == (1, 0)
    run = failure_search(small_snapshot)
    assert (queued_messages(django_settings.TWIN_QUEUE_HEAVY), queued_messages(django_settings.TWIN_QUEUE_LIVE)) == (1, 1)
    run_execute(run_id=run.pk)  # the bookkeeping task: queues the cells, heavy work
    assert queued_messages(django_settings.TWIN_QUEUE_HEAVY) == 1 + run.cells.count()


def test_a_run_whose_worker_went_silent_is_queued_again_then_failed_with_the_reason(small_snapshot, empty_broker, short_lease, settings):
    settings.TWIN_RUN_MAX_ATTEMPTS = 2
    run = run_create(kind=RunKind.HOP_STATS, snapshot=small_snapshot)
    celery_app.control.purge()  # the worker below is this test: it takes the run and dies
    assert run_claim(run.pk) is not None
    assert run_claim(run.pk) is None  # a redelivered message leaves a run with a live lease alone
    time.sleep(short_lease * 2)
    assert sweep() == {"runs queued again (worker silent)": 1}
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING and run.message == "Its worker went silent; queued again (attempt 2 of 2)"
    assert queued_messages(django_settings.TWIN_QUEUE_HEAVY) == 1
    assert sweep() == {}  # queued, not silent: nothing more to do

    taken = run_claim(run.pk)
    assert taken.message == "Started again (attempt 2)" and taken.attempts == 2
    time.sleep(short_lease * 2)
    assert sweep() == {"runs failed": 1}
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "went silent 2 times" in run.error and run.finished_at
    with translation.override("zh-hans"):
        assert run.error_text() == "执行它的 worker 已失联 2 次（被终止、重启或内存不足），不再重试。"


def test_a_heartbeat_keeps_a_long_run_from_being_swept(small_snapshot, empty_broker, settings, monkeypatch):
    """A run longer than its lease: the heartbeat renews the lease, so sweeps leave it alone."""
    from twin.runs.handlers import RUN_HANDLERS, RunOutput

    settings.TWIN_RUN_LEASE_S = 0.4
    sweeps = []

    def slow(run, on_progress):
        for _ in range(6):
            time.sleep(0.2)
            sweeps.append(sweep())
        return RunOutput({"slept": True})

    monkeypatch.setitem(RUN_HANDLERS, RunKind.HOP_STATS, slow)
    run = run_create(kind=RunKind.HOP_STATS, snapshot=small_snapshot)
    celery_app.control.purge()
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.attempts == 1
    assert sweeps == [{}] * 6


def test_cells_the_broker_lost_are_queued_again_and_a_worker_finishes_the_run(small_snapshot, empty_broker, short_lease):
    run = failure_search(small_snapshot)
    run_execute(run_id=run.pk)  # its cells are queued...
    celery_app.control.purge()  # ...and lost, as by a Redis restart without its append-only file
    time.sleep(short_lease * 2)
    assert sweep() == {"cells queued again (message lost)": 2}
    assert queued_messages(django_settings.TWIN_QUEUE_HEAVY) == 2
    with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30, loglevel="WARNING"):
        wait_for(lambda: Run.objects.get(pk=run.pk).is_terminal, timeout_s=120)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.cells.filter(status=CellStatus.DONE, attempts=1).count() == run.cells.count() == 2
    assert run.result["evaluated"] == 12


def test_a_pending_run_and_an_assembly_the_broker_lost_are_queued_again(small_snapshot, empty_broker, short_lease):
    run = failure_search(small_snapshot)
    celery_app.control.purge()
    time.sleep(short_lease * 2)
    assert sweep() == {"runs queued again (message lost)": 1}
    assert queued_messages(django_settings.TWIN_QUEUE_LIVE) == 1
    assert sweep() == {}  # its queue holds it now
    celery_app.control.purge()
    run_execute(run_id=run.pk)
    for cell in RunCell.objects.filter(run=run):
        cell_execute(cell_id=cell.pk)  # the last one queues the assembly...
    celery_app.control.purge()  # ...which the broker loses
    time.sleep(short_lease * 2)
    assert sweep() == {"assemblies queued again": 1}
    assert sweep() == {}  # once a lease
    assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING


def test_a_silent_replay_player_is_resumed_at_its_frame(small_snapshot, empty_broker):
    run = Run.objects.create(kind=RunKind.REPLAY, snapshot=small_snapshot, status=RunStatus.SUCCEEDED)
    silent = ReplayPlayback.objects.create(run=run, frames=50, index=17, playing=True, generation=4, lease_expires_at=timezone.now() - timedelta(seconds=1))
    other = Run.objects.create(kind=RunKind.REPLAY, snapshot=small_snapshot, status=RunStatus.SUCCEEDED)
    live = ReplayPlayback.objects.create(run=other, frames=50, index=3, playing=True, generation=2, lease_expires_at=timezone.now() + timedelta(seconds=30))
    assert sweep() == {"replay players resumed": 1}
    silent.refresh_from_db()
    live.refresh_from_db()
    assert (silent.generation, silent.index, silent.playing) == (5, 17, True)  # an old player, should it wake, stops
    assert silent.lease_expires_at > timezone.now()
    assert (live.generation, live.index) == (2, 3)
    assert queued_messages(django_settings.TWIN_QUEUE_LIVE) == 1
    assert sweep() == {}


def test_a_database_error_when_a_run_starts_fails_it_with_the_reason(small_snapshot, empty_broker):
    """SQLite locked by another writer: the claim fails at once (no busy wait on this connection),
    and the failure is recorded once the lock is gone, instead of the run staying pending."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's write lock is what refuses the claim")
    run = run_create(kind=RunKind.HOP_STATS, snapshot=small_snapshot)
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout = 0")
    other_writer = sqlite3.connect(connection.settings_dict["NAME"], check_same_thread=False)
    other_writer.execute("BEGIN EXCLUSIVE")
    threading.Timer(0.5, other_writer.rollback).start()
    try:
        run_execute(run_id=run.pk)
    finally:
        other_writer.close()
        connection.close()  # its busy timeout back to the configured one
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "could not be started: the database refused it (database is locked)" in run.error
