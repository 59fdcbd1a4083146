"""PostgreSQL dropping every connection under load (as a restart or failover does), on the whole
product (`manage.py serve` with kept connections, as in docker-compose): while the connections of
the stack's database are killed again and again, uploads, page and API reads and a fanned-out run
go on. Requests that meet a dead connection get a 503 that says to try again (never a 500), the
service recovers by itself, no upload is stored in part, and the run finishes (its cells queued
again by the sweeper where their worker lost the database).

Only on PostgreSQL (what CI uses): the stack gets a database of its own on the server DATABASE_URL
names, and only that database's connections are killed, so nothing else on a shared server is."""
import json
import os
import re
import threading
import time
import urllib.error
import uuid

import pytest

from tests.stack import Session, Stack, scratch_database
from tests.test_recovery import FAILURE_SEARCH, FAST_LEASES, demo_snapshot, finished, query, run_state, start_run, wait_until
from twin.ingest.parsers.canonical import export_canonical
from twin.simcore.generate import supernode

pytestmark = [
    pytest.mark.stack,
    pytest.mark.skipif(
        not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")),
        reason="kills the server's connections to the stack's database: needs DATABASE_URL naming PostgreSQL (CI); SQLite has no server",
    ),
]

OUTAGE_S = 10
KILL_EVERY_S = 0.3


def answer(session: Session, path: str, *, body: bytes | None = None, content_type: str = "") -> tuple[int, str]:
    headers = {"X-CSRFToken": session.cookie("csrftoken") or "", "Referer": session.base_url + "/"} if body is not None else {}
    if content_type:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(session.base_url + path, data=body, headers=headers)
    try:
        with session.opener.open(request, timeout=60) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def multipart(fields: dict[str, str], file_name: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode() for name, value in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\nContent-Type: application/json\r\n\r\n'.encode() + data + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


class Load(threading.Thread):
    """Requests one after another until stopped, each recorded as (when, what, status, body)."""

    def __init__(self, session: Session, requests) -> None:
        super().__init__(daemon=True)
        self.session, self.requests = session, requests
        self.answers: list[tuple[float, str, int, str]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        number = 0
        while not self.stopping.is_set():
            what, call = self.requests(number)
            try:
                status, body = call()
            except OSError as error:  # no answer at all: as bad as a 500 for a user
                status, body = 0, repr(error)
            self.answers.append((time.monotonic(), what, status, body[:20000]))
            number += 1


def kill_connections(database_url: str, stop: threading.Event) -> int:
    """Terminate every other connection to this database, every KILL_EVERY_S, until `stop`."""
    import psycopg

    killed = 0
    while not stop.wait(KILL_EVERY_S):
        with psycopg.connect(database_url, autocommit=True) as admin:
            killed += len(admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchall())
    return killed


def test_requests_fail_cleanly_and_work_recovers_while_postgresql_drops_every_connection(tmp_path):
    with scratch_database(tmp_path, "twin_pg_outage") as database_url:
        overrides = {"DATABASE_URL": database_url, "DATABASE_CONN_MAX_AGE": "60", **FAST_LEASES}
        with Stack(data_dir=tmp_path, env_overrides=overrides, drop_env=("REDIS_URL",)) as stack:
            session = Session(stack.base_url)
            snapshot = demo_snapshot(session)
            run_id = start_run(session, "failures", snapshot, FAILURE_SEARCH)

            fabric_id = json.loads(session.get("/api/fabrics/"))["results"][0]["id"]
            pages = ("/", "/api/fabrics/", f"/fabrics/{fabric_id}/", f"/runs/{run_id}/", f"/api/runs/{run_id}/", "/runs/")

            def reads(number: int):
                path = pages[number % len(pages)]
                return path, lambda: answer(session, path)

            def uploads(number: int):
                fabric = f"outage-{number}"
                body, content_type = multipart({"fabric": fabric}, f"{fabric}.json", export_canonical(supernode(cards=16, switch_radix=8, name=fabric)).encode())
                return fabric, lambda: answer(session, "/api/snapshots/", body=body, content_type=content_type)

            load = [Load(Session(stack.base_url), reads), Load(Session(stack.base_url), uploads)]
            for thread in load:
                thread.start()
            # The outage starts with the run under way: a cell done, others to do.
            wait_until(lambda: re.match(r"[1-9]\d* of \d+ cells done", run_state(session, run_id)["message"]), 180, "a first cell done")
            assert run_state(session, run_id)["status"] == "running"
            stop = threading.Event()
            killer_result = []
            killer = threading.Thread(target=lambda: killer_result.append(kill_connections(database_url, stop)), daemon=True)
            outage_from = time.monotonic()
            killer.start()
            time.sleep(OUTAGE_S)
            stop.set()
            killer.join()
            outage_to = time.monotonic()

            # It recovers by itself: pages, the API and uploads answer again.
            wait_until(lambda: all(any(at > outage_to + 1 and 200 <= status < 300 for at, _, status, _ in thread.answers) for thread in load), 60, "requests answered again after the outage")
            for thread in load:
                thread.stopping.set()
            for thread in load:
                thread.join(timeout=90)
            state = finished(session, run_id, 600)
            assert answer(session, "/healthz") == (200, "ok") and answer(session, "/api/health/")[0] == 200

            answers = [entry for thread in load for entry in thread.answers]
            during = [(what, status, body) for at, what, status, body in answers if outage_from <= at <= outage_to + 1]
            statuses = {status for _, status, _ in during}
            print(f"killed {killer_result[0]} connections; {len(during)} requests during the outage, statuses {sorted(statuses)}")
            bad = [(what, status, body) for _, what, status, body in answers if status not in (200, 201, 503)]
            assert not bad, [(what, status, body[:500]) for what, status, body in bad[:5]]  # no 500, no request left without an answer
            unavailable = [body for _, status, body in during if status == 503]
            assert all("database cannot be reached" in body for body in unavailable), [body[-2000:] for body in unavailable[:3]]
            assert killer_result[0] > 0

            # No upload stored in part: each answered 201 is a whole snapshot, each 503 stored nothing.
            stored = {name: (nodes, links, node_count, link_count) for name, nodes, links, node_count, link_count in query(
                database_url,
                "SELECT f.name, (SELECT count(*) FROM fabrics_node n WHERE n.snapshot_id = s.id), (SELECT count(*) FROM fabrics_link l WHERE l.snapshot_id = s.id), "
                "s.node_count, s.link_count FROM fabrics_snapshot s JOIN fabrics_fabric f ON f.id = s.fabric_id WHERE f.name LIKE ?", "outage-%",
            )}
            answered = {what: status for _, what, status, _ in load[1].answers}
            assert {name for name, status in answered.items() if status == 201} <= set(stored)
            assert not {name for name, status in answered.items() if status == 503} & set(stored)
            assert all(nodes == node_count > 0 and links == link_count > 0 for nodes, links, node_count, link_count in stored.values()), stored

            # The run finished, each cell once, however many times a cell was queued again.
            assert state["status"] == "succeeded", state["error"]
            cells = query(database_url, "SELECT count(*), count(DISTINCT key), count(*) FILTER (WHERE status = 'done'), max(attempts) FROM runs_runcell WHERE run_id = ?", run_id)[0]
            assert cells[0] == cells[1] == cells[2] > 0
            print(f"run {run_id}: {cells[0]} cells, a cell taken at most {cells[3]} times")
