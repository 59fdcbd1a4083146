"""Runs that survive their workers and the broker, on the whole product (`manage.py serve`: its
embedded Redis with an append-only file, the live and the heavy worker, short leases) with real
processes killed with SIGKILL: a fanned-out run whose heavy worker and then Redis are killed
mid-run finishes with the result of an undisturbed run and no duplicated cells; a replay whose
live worker is killed mid-play goes on from its frame; a replay whose Redis is killed with viewers
watching goes on, and the viewers see it again from its current frame without reloading; `serve`
killed takes all its children with it and an upload's temporary files do not outlive a restart."""
import json
import os
import re
import signal
import sqlite3
import threading
import time
import urllib.error
import urllib.parse
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import connect

from tests.stack import Session, Stack, port_is_open, scratch_database
from twin.replay.encoding import decode_message

pytestmark = pytest.mark.stack

FAST_LEASES = {"TWIN_RUN_LEASE_S": "3", "TWIN_SWEEP_INTERVAL_S": "1"}
# An all-to-all per candidate (~1 s each, 8 a cell): cells last long enough on a quiet machine for
# the worker to be killed in the middle of the run, not after its last cell.
FAILURE_SEARCH = {"worst": "switch", "workload": {"collective": "alltoall", "size_bytes": 2**26, "algorithm": "direct"}}


def descendants(pid: int) -> list[int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def child_running(stack: Stack, marker: str) -> int:
    """The pid of serve's child whose command line holds `marker` (e.g. "heavy@")."""
    for pid in descendants(stack.process.pid):
        if marker in command_line(pid) and os.getpgid(pid) == pid:  # the child itself, not its pool
            return pid
    raise AssertionError(f"no child {marker!r} of serve")


def kill_group(pid: int) -> None:
    os.killpg(pid, signal.SIGKILL)


def started_at(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot), None when there is none. With the
    pid it names one process: pids are reused (here pid_max is 32,768 and a full test run wraps
    it), so a pid alone may name a newer process than the one looked at."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def alive(pid: int, started: int | None = None) -> bool:
    """Whether process `pid` runs (not a zombie); with `started`, the one that started then."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z" and (started is None or int(fields[19]) == started)


def wait_until(predicate, timeout_s: float, what: str, interval_s: float = 0.3):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"{what}: not within {timeout_s} s")


def query(database_url: str, sql: str, *params):
    """Read the stack's own database (SQLite file or PostgreSQL)."""
    if database_url.startswith("sqlite:///"):
        with sqlite3.connect(urllib.parse.urlparse(database_url).path) as db:
            return db.execute(sql, params).fetchall()
    import psycopg

    with psycopg.connect(database_url) as db:
        return db.execute(sql.replace("?", "%s"), params).fetchall()


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("recovery")
    with scratch_database(data_dir, "twin_recovery") as database_url:
        stack = Stack(data_dir=data_dir, env_overrides={"DATABASE_URL": database_url, **FAST_LEASES}, drop_env=("REDIS_URL",))
        stack.database_url = database_url
        with stack:
            yield stack


def demo_snapshot(session: Session) -> int:
    fabric = next(fabric for fabric in json.loads(session.get("/api/fabrics/"))["results"] if fabric["name"] == "demo-supernode")
    return fabric["latest_snapshot"]["id"]


def start_run(session: Session, kind: str, snapshot: int, params: dict) -> int:
    status, body = session.post_json("/api/runs/", json.dumps({"kind": kind, "snapshot": snapshot, "params": params}).encode())
    assert status == 201, body
    return json.loads(body)["id"]


def run_state(session: Session, run_id: int) -> dict:
    return json.loads(session.get(f"/api/runs/{run_id}/"))


def finished(session: Session, run_id: int, timeout_s: float = 300) -> dict:
    return wait_until(lambda: (state := run_state(session, run_id))["status"] in ("succeeded", "failed", "cancelled") and state, timeout_s, f"run {run_id} finished")


def test_a_run_survives_its_heavy_worker_and_redis_killed_mid_run(stack):
    session = Session(stack.base_url)
    snapshot = demo_snapshot(session)
    expected = finished(session, start_run(session, "failures", snapshot, FAILURE_SEARCH))
    assert expected["status"] == "succeeded", expected["error"]

    run_id = start_run(session, "failures", snapshot, FAILURE_SEARCH)
    wait_until(lambda: re.match(r"[1-9]\d* of \d+ cells done", run_state(session, run_id)["message"]), 120, "a first cell done")
    kill_group(child_running(stack, "heavy@"))  # the worker and the cells it was doing die
    wait_until(lambda: "The heavy worker exited with code -9; starting it again" in stack.output(), 10, "serve restarting the worker")
    redis = child_running(stack, "redis-server")
    # Queued again by the sweeper: released (taken once, no lease now) or already taken again. The
    # new worker may take it only after the cells queued before it, so its second claim can be late.
    wait_until(lambda: run_state(session, run_id)["status"] == "running" and query(
        stack.database_url,
        "SELECT count(*) FROM runs_runcell WHERE run_id = ? AND (attempts > 1 OR (attempts >= 1 AND heartbeat_at IS NULL AND status = 'pending'))",
        run_id)[0][0], 60, "a cell of the dead worker queued again")
    kill_group(redis)  # and the broker, with cells queued and taken
    wait_until(lambda: "The embedded Redis exited with code -9; starting it again" in stack.output(), 10, "serve restarting Redis")

    state = finished(session, run_id)
    assert state["status"] == "succeeded", state["error"]
    assert state["result"]["ranking"] == expected["result"]["ranking"]
    cells = query(stack.database_url, "SELECT count(*), count(DISTINCT key), count(*) FILTER (WHERE status = 'done') FROM runs_runcell WHERE run_id = ?", run_id)[0]
    assert cells[0] == cells[1] == cells[2] == query(stack.database_url, "SELECT count(*) FROM runs_runcell WHERE run_id = ?", expected["id"])[0][0]
    # Healthy again: a new run after all that goes through at once.
    assert finished(session, start_run(session, "hop_stats", snapshot, {}), 120)["status"] == "succeeded"


def test_a_replay_goes_on_from_its_frame_after_its_live_worker_is_killed(stack):
    session = Session(stack.base_url)
    run_id = start_run(session, "replay", demo_snapshot(session), {"training": {"model_params": 1e9, "tp": 8, "dp": 8, "hidden_size": 2048, "seq_len": 1024}, "max_frames": 600})
    assert finished(session, run_id, 180)["status"] == "succeeded"
    headers = {"Cookie": f"sessionid={session.cookie('sessionid')}", "Origin": stack.base_url}
    with connect(stack.base_url.replace("http://", "ws://") + f"/ws/replays/{run_id}/", additional_headers=headers, open_timeout=10) as socket:

        def next_frame(timeout_s: float) -> dict:
            while (message := decode_message(socket.recv(timeout=timeout_s)))["type"] != "replay.frame":
                pass
            return message

        socket.send(json.dumps({"action": "speed", "speed": 0}))
        socket.send(json.dumps({"action": "play"}))
        while (last := next_frame(10)["index"]) < 10:  # playing, at 10 frames a second
            pass
        kill_group(child_running(stack, "live@"))
        killed_at = time.monotonic()
        before = [last]
        try:  # frames already on their way
            while True:
                before.append(next_frame(1.5)["index"])
        except TimeoutError:
            pass  # the player is dead
        resumed = next_frame(60)
        gap_s = time.monotonic() - killed_at
        after = [resumed["index"]] + [next_frame(5)["index"] for _ in range(5)]
    assert before[-1] < 590, "the replay ended before the worker was killed"
    assert before[-1] <= after[0] <= before[-1] + 2, (before, after)  # from where it stood, not from 0
    assert after == sorted(after) and after[-1] > after[0]
    print(f"replay resumed {gap_s:.1f} s after its worker was killed")


class ReplayViewer(threading.Thread):
    """A replay page's websocket, as the frontend's ReconnectingSocket keeps it: on a drop it
    connects again after a second (the page's first backoff step) and gives up only on 4401 or
    4404. Records every frame (when, index, seq) and every close code."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.url, self.headers = url, headers
        self.frames: list[tuple[float, int, int]] = []
        self.close_codes: list[int | None] = []
        self.connections = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                with connect(self.url, additional_headers=self.headers, open_timeout=10) as socket:
                    self.connections += 1
                    while not self.stopping.is_set():
                        try:
                            message = decode_message(socket.recv(timeout=0.5))
                        except TimeoutError:
                            continue
                        if message["type"] == "replay.frame":
                            self.frames.append((time.monotonic(), message["index"], message["seq"]))
            except ConnectionClosed as closed:
                self.close_codes.append(closed.rcvd.code if closed.rcvd else None)
                if closed.rcvd and closed.rcvd.code in (4401, 4404):
                    return
            except (OSError, InvalidHandshake):
                self.close_codes.append(None)  # the web server did not let us in: retried
            self.stopping.wait(1.0)

    def shown_after(self, moment: float) -> list[int]:
        """The indexes of the frames a page shows after `moment`: as the page's SeqGate
        (frontend/src/replay/frames.ts), a frame older than one shown (a late one) is ignored."""
        shown, newest = [], -1
        for at, index, seq in list(self.frames):
            if seq > newest:
                newest = seq
                if at > moment:
                    shown.append(index)
        return shown


def status_of(session: Session, path: str) -> int:
    try:
        with session.opener.open(session.base_url + path, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_replay_goes_on_and_its_viewers_see_its_current_frame_after_redis_is_killed(stack):
    session = Session(stack.base_url)
    run_id = start_run(session, "replay", demo_snapshot(session), {"training": {"model_params": 1e9, "tp": 8, "dp": 8, "hidden_size": 2048, "seq_len": 1024}, "max_frames": 2000})
    assert finished(session, run_id, 180)["status"] == "succeeded"
    headers = {"Cookie": f"sessionid={session.cookie('sessionid')}", "Origin": stack.base_url}
    url = stack.base_url.replace("http://", "ws://") + f"/ws/replays/{run_id}/"
    viewers = [ReplayViewer(url, headers) for _ in range(3)]
    for viewer in viewers:
        viewer.start()

    def playback() -> tuple[bool, int]:
        return tuple(query(stack.database_url, 'SELECT playing, "index" FROM simulations_replayplayback WHERE run_id = ?', run_id)[0])

    try:
        wait_until(lambda: all(viewer.frames for viewer in viewers), 30, "every viewer sent the opening frame")
        with connect(url, additional_headers=headers, open_timeout=10) as driver:  # an operator presses play
            driver.send(json.dumps({"action": "speed", "speed": 0}))
            driver.send(json.dumps({"action": "play"}))
        wait_until(lambda: all(viewer.frames[-1][1] >= 10 for viewer in viewers), 60, "every viewer watching it play")
        kill_group(child_running(stack, "redis-server"))
        killed_at = time.monotonic()
        index_at_kill = playback()[1]
        # While Redis is down: pages and the API answer (the run page, its data), never a 500.
        outage_statuses = {status_of(session, f"/runs/{run_id}/"), status_of(session, f"/api/runs/{run_id}/")}
        wait_until(lambda: "The embedded Redis exited with code -9; starting it again" in stack.output(), 10, "serve restarting Redis")
        # Every viewer sees the replay move again, past where it stood, on the same page (socket).
        wait_until(lambda: all(any(index > index_at_kill + 10 for index in viewer.shown_after(killed_at)) for viewer in viewers), 120, "every viewer seeing frames again")
        resumed_at = time.monotonic()
        time.sleep(3)
        playing, index_now = playback()
    finally:
        for viewer in viewers:
            viewer.stopping.set()
        for viewer in viewers:
            viewer.join(timeout=15)

    assert 500 not in outage_statuses, outage_statuses
    assert playing, "the player stopped"
    for viewer in viewers:
        shown = viewer.shown_after(killed_at)
        before = [index for at, index, _ in viewer.frames if at <= killed_at]
        # From where the replay stood, not from 0, and forward only.
        assert shown[0] >= before[-1] and shown == sorted(shown), (before[-5:], shown)
        # At the player's current frame: the newest a viewer shows is at most a second of frames behind.
        assert shown[-1] >= index_now - 10, (shown[-1], index_now)
        assert len(viewer.shown_after(resumed_at)) >= 10  # and it goes on playing
        # The same socket all along: not dropped with 1011 when Redis went, so the page had nothing to do.
        assert viewer.connections == 1 and viewer.close_codes == [], viewer.close_codes
    assert status_of(session, f"/runs/{run_id}/") == 200 and status_of(session, "/healthz") == 200


def test_serve_killed_takes_its_children_with_it_and_upload_leftovers_are_removed(tmp_path):
    leftover = tmp_path / "uploads-tmp" / "tmpq1w2e3.upload.xml"  # a cut-off upload's spooled file
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes(b"<x>" * 1000)
    with scratch_database(tmp_path, "twin_serve_kill") as database_url:
        stack = Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": database_url}, drop_env=("REDIS_URL",))
        stack.start()
        children: dict[int, int | None] = {}
        try:
            assert not leftover.exists() and leftover.parent.is_dir()
            redis_port = int(re.search(r"Started embedded Redis at redis://127\.0\.0\.1:(\d+)", stack.output()).group(1))
            children = {pid: started_at(pid) for pid in descendants(stack.process.pid)}
            names = {pid: command_line(pid) for pid in children}
            assert all(marker in " ".join(names.values()) for marker in ("daphne", "live@", "heavy@", "redis-server"))
            stack.process.kill()
            stack.process.wait()
            # The death signal is SIGTERM: a worker finishes the task it holds (warm shutdown) first.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and any(alive(pid, started) for pid, started in children.items()):
                time.sleep(0.3)
            survivors = [names[pid] for pid, started in children.items() if alive(pid, started)]
            assert not survivors, f"children of serve still running 60 s after it was killed: {survivors}"
        finally:
            for pid, started in children.items():
                if alive(pid, started):
                    os.kill(pid, signal.SIGKILL)
            stack.stop()
    assert not port_is_open(stack.port) and not port_is_open(redis_port)


def test_the_embedded_redis_of_serve_keeps_queued_messages_across_a_kill(tmp_path):
    """`serve`'s Redis keeps an append-only file: a list written a second before a SIGKILL is
    there after a restart on the same file (the tests' Redis keeps nothing)."""
    import redis as redis_client

    from twin.common.embedded import EmbeddedRedis

    for persistent, expected in ((True, [b"cell-2", b"cell-1"]), (False, [])):
        server = EmbeddedRedis(workdir=tmp_path / f"redis-{persistent}", persistent=persistent).start()
        try:
            client = redis_client.Redis.from_url(server.url)
            client.lpush("twin.heavy", "cell-1", "cell-2")
            time.sleep(1.5)  # fsynced every second
            server.process.kill()
            server.process.wait()
            server.start()
            assert redis_client.Redis.from_url(server.url).lrange("twin.heavy", 0, -1) == expected
        finally:
            server.stop()
