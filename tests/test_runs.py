"""Background runs on a real Celery worker and the real Redis broker and channel layer."""
import asyncio
import json
import time

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from celery.contrib.testing.worker import start_worker
from channels.layers import get_channel_layer

from twin import celery_app
from twin.fabrics.selectors import snapshot_spec_get
from twin.runs.models import Run, RunKind, RunStatus
from twin.runs.realtime import run_group
from twin.runs.services import run_create, run_execute
from twin.simcore.hops import hop_statistics


def wait_for(predicate, timeout_s: float = 30.0, interval_s: float = 0.05):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError("condition not met in time")


@pytest.mark.django_db
def test_run_is_queued_only_after_commit(small_snapshot, django_capture_on_commit_callbacks, monkeypatch):
    from twin.runs import tasks

    queued = []
    monkeypatch.setattr(tasks.run_execute_task, "apply_async", lambda args, queue=None: queued.append(args))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        from django.db import transaction

        with transaction.atomic():
            run = run_create(kind=RunKind.HOP_STATS, snapshot=small_snapshot)
    assert queued == [] and len(callbacks) == 1
    callbacks[0]()
    assert queued == [[run.pk]]


@pytest.mark.django_db
def test_run_execute_twice_does_the_work_once(small_snapshot):
    run = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=small_snapshot)
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    finished_at, seq = run.finished_at, run.seq
    assert run.status == RunStatus.SUCCEEDED
    run_execute(run_id=run.pk)  # a redelivered task
    run.refresh_from_db()
    assert (run.finished_at, run.seq) == (finished_at, seq)


@pytest.mark.django_db
def test_failure_is_recorded_on_the_run(small_snapshot, monkeypatch):
    from twin.runs import handlers

    def broken(run, on_progress):
        raise ValueError("no route between leaf-01 and spine-02")

    monkeypatch.setitem(handlers.RUN_HANDLERS, RunKind.HOP_STATS, broken)
    run = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=small_snapshot)
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "no route between" in run.error and run.finished_at


def test_api_run_on_a_real_worker_pushes_progress_over_the_channel_layer(transactional_db, small_snapshot, make_user):
    """Start a run over the API; a real worker does it; every state change reaches a group
    member through channels_redis, encoded once as the JSON text viewers get, in seq order,
    ending with the result."""
    from tests.conftest import logged_in_client
    from twin.accounts.models import Role

    client = logged_in_client(make_user(Role.OPERATOR))
    response = client.post("/api/runs/", {"kind": "hop_stats", "snapshot": small_snapshot.pk}, content_type="application/json")
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] == "pending" and created["ws_url"] == f"/ws/runs/{created['id']}/"

    # The run waits in the real broker until a worker starts: listen first, then start one.
    async def listen_while_a_worker_runs() -> list[dict]:
        layer = get_channel_layer()
        listener = await layer.new_channel()
        await layer.group_add(run_group(created["id"]), listener)
        worker = start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30, loglevel="WARNING")
        await sync_to_async(worker.__enter__)()
        async def frame() -> dict:
            event = await asyncio.wait_for(layer.receive(listener), 30)
            assert event["type"] == "group.message" and event["kind"] == "run.state"
            return json.loads(event["payload"])

        try:
            frames = [await frame()]
            while frames[-1]["run"]["status"] not in ("succeeded", "failed"):
                frames.append(await frame())
            return frames
        finally:
            await sync_to_async(worker.__exit__)(None, None, None)

    frames = async_to_sync(listen_while_a_worker_runs)()
    seqs = [frame["seq"] for frame in frames]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert frames[0]["run"]["status"] == "running"
    progress = [frame["run"]["progress"] for frame in frames if frame["run"]["status"] == "running"]
    assert len(progress) >= 2 and progress == sorted(progress)
    final = frames[-1]["run"]
    assert final["status"] == "succeeded", final
    assert final["result"] == hop_statistics(snapshot_spec_get(snapshot_id=small_snapshot.pk))

    over_http = client.get(created["url"]).json()
    assert over_http["status"] == "succeeded" and over_http["result"] == final["result"]


def test_many_runs_all_finish(celery_worker, small_snapshot, make_user):
    from tests.conftest import logged_in_client
    from twin.accounts.models import Role

    client = logged_in_client(make_user(Role.OPERATOR))
    ids = [
        client.post("/api/runs/", {"kind": "hop_stats", "snapshot": small_snapshot.pk}, content_type="application/json").json()["id"]
        for _ in range(5)
    ]
    wait_for(lambda: Run.objects.filter(id__in=ids, status=RunStatus.SUCCEEDED).count() == 5)
    listing = client.get(f"/api/runs/?snapshot={small_snapshot.pk}").json()
    assert {run["id"] for run in listing["results"]} == set(ids)


@pytest.mark.django_db
def test_run_list_filters_sorts_and_pages(viewer_client, small_snapshot):
    for index in range(35):
        Run.objects.create(kind=RunKind.HOP_STATS if index % 2 else RunKind.COLLECTIVE, snapshot=small_snapshot, status=RunStatus.SUCCEEDED if index % 3 else RunStatus.FAILED)
    first = viewer_client.get("/runs/")
    assert first.status_code == 200 and b"Page 1 of 2" in first.content
    only = viewer_client.get("/runs/", {"kind": "collective", "status": "failed"}).content.decode()
    assert "Hop-distance statistics" not in only.split('id="run-table"')[1] and "Collective simulation" in only
    assert viewer_client.get("/runs/", {"sort": "nonsense", "page": "999"}).status_code == 200


@pytest.mark.django_db
def test_operators_cancel_only_their_own_runs_and_admins_any(make_user, small_snapshot):
    from tests.conftest import logged_in_client
    from twin.accounts.models import Role

    alice, bob, admin = make_user(Role.OPERATOR, "alice"), make_user(Role.OPERATOR, "bob"), make_user(Role.ADMIN, "root")
    alices = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=small_snapshot, created_by=alice)
    bobs = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=small_snapshot, created_by=bob)
    refused = logged_in_client(bob).post(f"/api/runs/{alices.pk}/cancel/")
    assert refused.status_code == 403
    assert refused.json()["detail"] == f"Run {alices.pk} was started by alice; operators may cancel only their own runs, admins any."
    assert Run.objects.get(pk=alices.pk).status == RunStatus.PENDING
    # The run page offers the button only where it would work.
    assert b'data-can-cancel="false"' in logged_in_client(bob).get(f"/runs/{alices.pk}/").content
    assert b'data-can-cancel="true"' in logged_in_client(alice).get(f"/runs/{alices.pk}/").content
    assert logged_in_client(alice).post(f"/api/runs/{alices.pk}/cancel/").json()["error"] == "Cancelled by alice."
    assert logged_in_client(admin).post(f"/api/runs/{bobs.pk}/cancel/").json()["status"] == "cancelled"


@pytest.mark.django_db
def test_a_replay_page_holds_its_player_until_the_replay_is_computed(viewer_client, small_snapshot):
    """The player's place is on the page from the start; the page mounts it when the run succeeds
    (frontend/src/app.ts), so nobody has to reload. A finished replay's player mounts at once."""
    from twin.simulations.models import ReplayPlayback

    run = Run.objects.create(kind=RunKind.REPLAY, snapshot=small_snapshot, params={"training": {"tp": 2, "dp": 2}})
    pending = viewer_client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="replay-player"' in pending and 'data-await-run="true"' in pending and 'data-frames=""' in pending
    assert "reload" not in pending
    ReplayPlayback.objects.create(run=run, frames=42)
    done = viewer_client.get(f"/runs/{run.pk}/").content.decode()
    assert 'data-frames="42"' in done and "data-await-run" not in done


@pytest.mark.django_db
def test_a_whatif_page_leaves_its_report_links_to_the_result_view(viewer_client, small_snapshot):
    """The links to the report come with the result view once the run has succeeded (live), so the
    server no longer renders a "reload the page" note or a second set of links."""
    run = Run.objects.create(kind=RunKind.WHATIF, snapshot=small_snapshot)
    page = viewer_client.get(f"/runs/{run.pk}/").content.decode()
    assert 'class="run-widget"' in page and "whatif-links" not in page and "reload" not in page
