"""Soak: the whole product under a mixed load for a while, as a busy ops team would use it.

Run from the repository root (starts `manage.py serve` on embedded SQLite and Redis in a temporary
data directory, or on DATABASE_URL's PostgreSQL when it is set, and stops it at the end):
    .venv/bin/python bench/bench_soak.py [--minutes 10] [--uploads 20] [--viewers 50] [--whatifs 2]

At once, for --minutes:
  - --viewers websocket clients watch one shared replay of the 1,024-card demo, which plays in a loop;
  - --uploads uploads spread over the time, one in four of them a broken file (expected: 400);
  - --whatifs staged what-ifs of the demo (the default stages) run in the workers;
  - a reader loads the fabric list, the fabric page, the runs page, the API's fabric and run lists
    and the health endpoint in turn;
  - every 5 s, the resident memory of each of serve's processes is sampled.
Prints: answers by status (any 5xx is a failure), request latency p50/p95/p99 per page, frames
per viewer, websocket closes with their codes, the uploads' versions and whether each one is
stored (a lost upload is a failure), the what-ifs' outcomes and durations, each process's peak
memory. Asserts nothing; exits 1 on any 5xx, lost upload, unfinished run or dropped viewer.
"""
import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from bench.bench_ws_load import pct, wait_for_run  # noqa: E402
from tests.stack import Session, Stack  # noqa: E402
from twin.replay.encoding import decode_message  # noqa: E402

GOOD_UPLOAD = ROOT / "tests" / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"
BROKEN_UPLOAD = b'Switch 24 "S-0002c90200402a3b" # "leaf-1" base port 0 lid 3 lmc 0\n[1] "H-' + b"\xff" * 64 + b"\n"


def upload(session: Session, fabric: str, name: str, data: bytes) -> tuple[int, bytes]:
    """A multipart POST /api/snapshots/, as a script or the page would send it."""
    boundary = uuid.uuid4().hex
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="fabric"\r\n\r\n{fabric}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\nContent-Type: text/plain\r\n\r\n'
    ).encode() + data + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(
        session.base_url + "/api/snapshots/", data=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "X-CSRFToken": session.cookie("csrftoken"), "Referer": session.base_url + "/"},
    )
    try:
        with session.opener.open(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def get_status(session: Session, path: str) -> int:
    try:
        with session.opener.open(session.base_url + path, timeout=60) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


class Soak:
    def __init__(self, session: Session, seconds: float):
        self.session, self.seconds = session, seconds
        self.statuses: Counter = Counter()
        self.server_errors: list[str] = []
        self.page_latency: dict[str, list[float]] = {}
        self.uploads: list[tuple[str, int, float]] = []
        self.stored_versions: list[int] = []
        self.peak_rss: dict[str, int] = {}

    def record(self, what: str, status: int) -> None:
        self.statuses[status] += 1
        if status >= 500:
            self.server_errors.append(f"{what} -> {status}")

    async def reader(self, fabric_id: int) -> None:
        pages = ["/", f"/fabrics/{fabric_id}/", "/runs/", "/api/fabrics/", "/api/runs/", "/api/health/"]
        deadline, turn = time.monotonic() + self.seconds, 0
        while time.monotonic() < deadline:
            path = pages[turn % len(pages)]
            started = time.perf_counter()
            status = await asyncio.to_thread(get_status, self.session, path)
            self.page_latency.setdefault(path, []).append(time.perf_counter() - started)
            self.record(f"GET {path}", status)
            turn += 1
            await asyncio.sleep(0.25)

    async def uploader(self, count: int) -> None:
        good = GOOD_UPLOAD.read_bytes()
        for number in range(count):
            await asyncio.sleep(self.seconds / (count + 1))
            broken = number % 4 == 3
            started = time.perf_counter()
            status, body = await asyncio.to_thread(upload, self.session, "soak", f"upload-{number}.txt", BROKEN_UPLOAD if broken else good)
            self.record("upload", status)
            expected = 400 if broken else 201
            if status == 201:
                self.stored_versions.append(json.loads(body)["version"])
            outcome = f"v{json.loads(body)['version']}" if status == 201 else f"{status}"
            self.uploads.append((outcome + ("" if status == expected else f" (expected {expected})"), status, time.perf_counter() - started))


    async def memory(self, serve_pid: int) -> None:
        """Peak resident memory of each process serve started (by its command line)."""
        deadline = time.monotonic() + self.seconds
        while time.monotonic() < deadline:
            for process in psutil.Process(serve_pid).children(recursive=True):
                try:
                    line = " ".join(process.cmdline())
                    name = "web" if "daphne" in line else "live worker" if "live@" in line else "heavy worker" if "heavy@" in line else "redis" if "redis" in line else process.name()
                    name = f"{name} {process.pid}"
                    self.peak_rss[name] = max(self.peak_rss.get(name, 0), process.memory_info().rss)
                except psutil.Error:
                    pass
            await asyncio.sleep(5)


class LoopingViewer:
    """A websocket client of the shared replay; counts frames and records how it was closed."""

    def __init__(self):
        self.frames = 0
        self.closed: str | None = None
        self.socket = None

    async def watch(self, url: str, headers: dict, until: float, driver: bool) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        try:
            async with connect(url, additional_headers=headers, open_timeout=60, max_size=None) as socket:
                if driver:
                    await socket.send(json.dumps({"action": "loop", "loop": True}))
                    await socket.send(json.dumps({"action": "speed", "speed": 0}))
                    await socket.send(json.dumps({"action": "play"}))
                while time.monotonic() < until:
                    try:
                        raw = await asyncio.wait_for(socket.recv(), timeout=max(0.1, until - time.monotonic()))
                    except asyncio.TimeoutError:
                        break
                    if decode_message(raw).get("type") == "replay.frame":
                        self.frames += 1
        except ConnectionClosed as closed:
            self.closed = f"closed {closed.rcvd.code if closed.rcvd else 'without a code'}"
        except Exception as error:  # noqa: BLE001 - reported with the figures
            self.closed = f"{type(error).__name__}: {error}"


async def soak(session: Session, base_url: str, minutes: float, uploads: int, viewers: int, replay_id: int, fabric_id: int, serve_pid: int) -> tuple[Soak, list[LoopingViewer]]:
    run = Soak(session, minutes * 60)
    until = time.monotonic() + minutes * 60
    url = base_url.replace("http://", "ws://") + f"/ws/replays/{replay_id}/"
    headers = {"Cookie": f"sessionid={session.cookie('sessionid')}", "Origin": base_url}
    clients = [LoopingViewer() for _ in range(viewers)]
    await asyncio.gather(
        run.reader(fabric_id), run.uploader(uploads), run.memory(serve_pid),
        *(client.watch(url, headers, until, driver=number == 0) for number, client in enumerate(clients)),
    )
    return run, clients


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--uploads", type=int, default=20)
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--whatifs", type=int, default=2)
    chosen = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="twin-bench-soak-"))
    stack = Stack(data_dir=data_dir, env_overrides={}, drop_env=("REDIS_URL",))
    failed = True
    try:
        stack.start()
        database = "PostgreSQL" if stack.env.get("DATABASE_URL", "").startswith("postgres") else "SQLite"
        print(f"stack up at {stack.base_url} ({database}, embedded Redis, data {data_dir})")
        session = Session(stack.base_url)
        fabrics = json.loads(session.get("/api/fabrics/?page_size=100"))["results"]
        demo = next(f for f in fabrics if f["latest_snapshot"] and f["latest_snapshot"]["card_count"] == 1024)
        snapshot = demo["latest_snapshot"]
        params = {"training": {"model_params": 7e9, "tp": 8, "dp": 128, "hidden_size": 4096, "seq_len": 2048}, "max_frames": 200, "ordering": "rank"}
        status, body = session.post_json("/api/runs/", json.dumps({"kind": "replay", "snapshot": snapshot["id"], "params": params}).encode())
        if status != 201:
            raise RuntimeError(f"replay: POST /api/runs/ -> {status}: {body[:300]!r}")
        replay_id = json.loads(body)["id"]
        replay = wait_for_run(session, replay_id, timeout_s=600)
        print(f"replay run {replay_id}: {replay['status']} ({snapshot['card_count']} cards)")

        whatif_started = time.monotonic()
        whatif_ids = []
        for _ in range(chosen.whatifs):
            status, body = session.post_json("/api/runs/", json.dumps({"kind": "whatif", "snapshot": snapshot["id"], "params": {}}).encode())
            if status != 201:
                raise RuntimeError(f"what-if: POST /api/runs/ -> {status}: {body[:300]!r}")
            whatif_ids.append(json.loads(body)["id"])

        outcome, clients = asyncio.run(soak(session, stack.base_url, chosen.minutes, chosen.uploads, chosen.viewers, replay_id, demo["id"], stack.process.pid))

        print(f"\n-- {chosen.minutes:g} min: {chosen.viewers} replay viewers, {chosen.uploads} uploads, {chosen.whatifs} what-ifs, one page reader")
        print(f"answers by status: {dict(sorted(outcome.statuses.items()))}; server errors (5xx): {len(outcome.server_errors)} {outcome.server_errors[:5]}")
        for path, seconds in outcome.page_latency.items():
            print(f"  {path:<16} {len(seconds):>4} loads, ms p50 {pct(seconds, 50) * 1e3:.0f} / p95 {pct(seconds, 95) * 1e3:.0f}"
                  f" / p99 {pct(seconds, 99) * 1e3:.0f} / max {max(seconds) * 1e3:.0f}")
        frames = sorted(client.frames for client in clients)
        dropped = [client.closed for client in clients if client.closed]
        print(f"replay viewers: frames each min/median/max {frames[0]} / {statistics.median(frames):.0f} / {frames[-1]}; dropped {len(dropped)} {Counter(dropped).most_common(3)}")
        print(f"uploads: {', '.join(u[0] for u in outcome.uploads)}; s p50 {statistics.median([u[2] for u in outcome.uploads] or [0]):.2f}")
        soak_fabric = next((f for f in json.loads(session.get("/api/fabrics/?page_size=100"))["results"] if f["name"] == "soak"), None)
        kept = {snapshot["version"] for snapshot in json.loads(session.get(f"/api/fabrics/{soak_fabric['id']}/snapshots/?page_size=1000"))["results"]} if soak_fabric else set()
        lost = sorted(set(outcome.stored_versions) - kept)
        print(f"uploads stored: {len(outcome.stored_versions)} answered 201, {len(lost)} of them lost {lost}")
        print("peak memory: " + ", ".join(f"{name} {rss / 2**20:.0f} MiB" for name, rss in sorted(outcome.peak_rss.items())))
        unfinished = []
        for run_id in whatif_ids:
            run = wait_for_run(session, run_id, timeout_s=3600)
            print(f"what-if {run_id}: {run['status']} after {time.monotonic() - whatif_started:.0f} s{'' if run['status'] == 'succeeded' else ': ' + str(run.get('error'))}")
            unfinished += [] if run["status"] == "succeeded" else [run_id]
        failed = bool(outcome.server_errors or dropped or lost or unfinished)
    except Exception:  # noqa: BLE001 - report what happened, then clean up
        traceback.print_exc()
        print("--- serve log (tail) ---\n" + stack.output()[-3000:])
    finally:
        code = stack.stop()
        print(f"\nstack stopped (exit {code})")
        shutil.rmtree(data_dir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
