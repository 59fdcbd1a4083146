"""Benchmark: live telemetry of 16,384 ports refreshed at 10 Hz, post to viewer, on the whole product.

Run from the repository root (starts `manage.py serve` with embedded SQLite and Redis in a temporary
data directory on a free port; stops it at the end):
    .venv/bin/python bench/bench_telemetry.py [--cards 16384] [--ports 16384] [--hz 10] [--seconds 20]
        [--in-flight 2] [--bodies columns,columns-gzip,samples]

Steps: generate a fat-tree of --cards cards (radix 64) inside the stack; read its links from the
export; open one websocket viewer of the fabric; post one batch and wait for its frame (the live
worker builds the snapshot's port index then); then, for each body format in turn, run a collector
as ops run one (a Prometheus poll loop, a Telegraf output): on a fixed schedule, a new batch of the
counters of --ports link ends every 1/--hz s, byte counters growing at 40 % of line rate, with at
most --in-flight posts waiting for their answer (a tick that finds them all busy is skipped and
counted). It authenticates with an API token and keeps its connections open. The web process only
checks a post and leaves it in the fabric's newest-wins slot; the live worker makes the frames (a
batch it has not taken yet is superseded by the next, and the answer says so).

Body formats: `columns` (JSON `{"columns": {...}}`, the body posted before gzip was accepted: the
baseline), `columns-gzip` (the same, `Content-Encoding: gzip`), `samples` (a list of 16,384
sample objects: what a naive collector sends).

Per format it prints: posts sent, skipped ticks, batches superseded; the refresh rate the viewer
achieves (frames of this phase reaching the websocket per second); post-to-viewer p50/p95 (the
moment a post is sent -> the moment the viewer receives the first frame made of that batch or a
newer one: a superseded batch's counters reach the viewer in the newer batch's frame); the POST
answer time; CPU per post of the web processes (daphne) and of the live worker (`live@`); the load
average at the start and end of the phase. Prints figures; asserts nothing.
"""
import argparse
import asyncio
import gzip
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import keep_figure  # noqa: E402
from tests.stack import Session, Stack  # noqa: E402

TARGET_HZ = 10.0
TARGET_P95_S = 0.5
LOAD = 0.4  # share of line rate the counters grow at
BODIES = ("columns", "columns-gzip", "samples")


def children_cpu_s(serve_pid: int, marker: bytes) -> float:
    """CPU seconds (user + system) the children of `serve` whose command line holds `marker`
    (b"daphne": the web processes; b"live@": the live worker) have used so far, whatever else the
    machine runs."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for process in Path("/proc").glob("[0-9]*"):
        try:
            fields = (process / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == serve_pid and marker in (process / "cmdline").read_bytes():
                total += (int(fields[11]) + int(fields[12])) / ticks
        except (OSError, IndexError, ValueError):
            continue
    return total


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))] if ordered else float("nan")


class Collector:
    """The ports' counters as a collector would post them, in one of BODIES."""

    def __init__(self, links: list[dict], ports: int, started_epoch: float) -> None:
        ends = [(link["a"], link["a_port"], link["bandwidth_gbps"]) for link in links] + [(link["b"], link["b_port"], link["bandwidth_gbps"]) for link in links]
        ends = ends[:ports]
        self.nodes, self.names = [node for node, _, _ in ends], [port for _, port, _ in ends]
        self.rates = [LOAD * gbps * 1e9 / 8 for _, _, gbps in ends]
        self.started_epoch = started_epoch

    def body(self, kind: str, elapsed_s: float) -> tuple[bytes, dict[str, str]]:
        timestamp = self.started_epoch + elapsed_s
        tx = [int(rate * elapsed_s) for rate in self.rates]
        rx = [int(rate * elapsed_s / 2) for rate in self.rates]
        if kind == "samples":
            samples = [{"port": {"node": node, "port": name}, "timestamp": timestamp, "tx_bytes": t, "rx_bytes": r} for node, name, t, r in zip(self.nodes, self.names, tx, rx)]
            return json.dumps({"samples": samples}).encode(), {}
        body = json.dumps({"columns": {"node": self.nodes, "port": self.names, "timestamp": timestamp, "tx_bytes": tx, "rx_bytes": rx}}).encode()
        if kind == "columns-gzip":
            return gzip.compress(body, compresslevel=1), {"Content-Encoding": "gzip"}
        return body, {}


class Connections:
    """Keep-alive HTTP connections, one per post in flight, with the API token."""

    def __init__(self, base_url: str, token: str) -> None:
        self.address = urlsplit(base_url)
        self.token = token
        self.idle: list[http.client.HTTPConnection] = []
        self.lock = threading.Lock()

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        with self.lock:
            connection = self.idle.pop() if self.idle else http.client.HTTPConnection(self.address.hostname, self.address.port, timeout=30)
        try:
            connection.request("POST", path, body=body, headers={"Content-Type": "application/json", "Authorization": f"Token {self.token}", **headers})
            response = connection.getresponse()
            answer = response.read()
        except (OSError, http.client.HTTPException):
            connection.close()
            raise
        with self.lock:
            self.idle.append(connection)
        return response.status, answer


class Viewer:
    """One websocket viewer of the fabric: when each batch's frame arrived."""

    def __init__(self) -> None:
        self.arrivals: dict[int, float] = {}
        self.sizes: list[int] = []

    async def listen(self, socket) -> None:
        async for raw in socket:
            message = json.loads(raw)
            if message.get("type") == "fabric.telemetry" and "batch" in message["frame"]:
                self.arrivals[message["frame"]["batch"]] = time.perf_counter()
                self.sizes.append(len(raw))

    async def wait_for(self, batch: int, timeout_s: float) -> bool:
        ends = time.perf_counter() + timeout_s
        while time.perf_counter() < ends:
            if any(seen >= batch for seen in self.arrivals):
                return True
            await asyncio.sleep(0.05)
        return False


async def scheduled_posts(connections: Connections, path: str, collector: Collector, kind: str, *, hz: float, seconds: float, in_flight: int, clock_start: float) -> dict:
    """Post a new batch every 1/hz s for `seconds`, at most `in_flight` at a time."""
    sent: dict[int, float] = {}
    answered: list[float] = []
    refused: list[tuple[int, bytes]] = []
    superseded = []
    skipped = 0
    busy = asyncio.Semaphore(in_flight)
    pending = set()

    async def post(body: bytes, headers: dict[str, str]) -> None:
        try:
            posted = time.perf_counter()
            status, answer = await asyncio.to_thread(connections.post, path, body, headers)
            answered.append(time.perf_counter() - posted)
            if status != 202:
                refused.append((status, answer[:300]))
            else:
                accepted = json.loads(answer)
                sent[accepted["batch"]] = posted
                superseded.append(accepted["superseded_total"])
        finally:
            busy.release()

    started = time.perf_counter()
    period = 1 / hz
    tick = 0
    while (due := started + tick * period) < started + seconds:
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        tick += 1
        if busy.locked():
            skipped += 1
            continue
        await busy.acquire()
        body, headers = collector.body(kind, time.perf_counter() - clock_start)
        task = asyncio.create_task(post(body, headers))
        pending.add(task)
        task.add_done_callback(pending.discard)
    await asyncio.gather(*pending)
    return {"ticks": tick, "sent": sent, "answered": answered, "refused": refused, "skipped": skipped, "superseded": superseded, "body_kb": len(body) / 1e3, "posting_s": time.perf_counter() - started}


def phase_figures(kind: str, outcome: dict, viewer: Viewer, *, web_s: float, worker_s: float, loads: tuple[float, float], hz: float) -> None:
    sent, answered = outcome["sent"], outcome["answered"]
    first_batch = min(sent, default=0)
    frames = {batch: at for batch, at in viewer.arrivals.items() if batch >= first_batch}
    framed = sorted(frames)
    lags = []
    for batch, at in sent.items():  # the first frame of this batch or a newer one
        newer = [frames[seen] for seen in framed if seen >= batch]
        if newer:
            lags.append(min(newer) - at)
    posts = max(1, len(sent))
    superseded = (max(outcome["superseded"]) - min(outcome["superseded"])) if outcome["superseded"] else 0
    window = [at for at in frames.values()]
    refresh_hz = (len(window) - 1) / (max(window) - min(window)) if len(window) > 1 else 0.0
    p95 = pct(lags, 95)
    print(f"[{kind}] body {outcome['body_kb']:.0f} kB; load average {loads[0]:.1f} -> {loads[1]:.1f} on {os.cpu_count()} cores")
    print(f"  collector: {outcome['ticks']} ticks at {hz:g} Hz, {len(sent)} posts accepted, {outcome['skipped']} ticks skipped (all posts in flight), {len(outcome['refused'])} refused {outcome['refused'][:1]}")
    print(f"  viewer: {len(frames)} frames, refresh {refresh_hz:.1f} frames/s (target {TARGET_HZ:g}); {superseded} batches superseded before the worker took them")
    print(f"  POST answered: p50 {pct(answered, 50) * 1e3:.0f} ms, p95 {pct(answered, 95) * 1e3:.0f} ms")
    print(f"  post-to-viewer: p50 {pct(lags, 50) * 1e3:.0f} ms, p95 {p95 * 1e3:.0f} ms, max {max(lags, default=float('nan')) * 1e3:.0f} ms; {len(sent) - len(lags)} posts never reached the viewer"
          f" (target p95 < {TARGET_P95_S * 1e3:.0f} ms at {TARGET_HZ:g} Hz: {'met' if p95 < TARGET_P95_S and refresh_hz >= 0.95 * TARGET_HZ else 'NOT met'})")  # fmt: skip
    # The target is for the columns body, the one documented for thousands of ports; a list of
    # sample objects is kept as the naive collector's reference.
    targeted = kind != "samples"
    keep_figure(f"telemetry refresh at the viewer, {hz:g} Hz posts ({kind} body)", refresh_hz, "frames/s",
                target=f">= {0.95 * TARGET_HZ:g} frames/s" if targeted else "none (objects body)", met=refresh_hz >= 0.95 * TARGET_HZ if targeted else None)  # fmt: skip
    keep_figure(f"telemetry post-to-viewer p95 ({kind} body)", p95 * 1e3, "ms",
                target=f"< {TARGET_P95_S * 1e3:.0f} ms" if targeted else "none (objects body)", met=p95 < TARGET_P95_S if targeted else None)  # fmt: skip
    print(f"  CPU per post: web {web_s / posts * 1e3:.1f} ms (HTTP, JSON, check, into the slot), live worker {worker_s / posts * 1e3:.1f} ms (frame, store, push)")


async def run(stack: Stack, session: Session, token: str, fabric_id: int, links: list[dict], chosen) -> None:
    from websockets.asyncio.client import connect

    collector = Collector(links, chosen.ports, time.time())
    clock_start = time.perf_counter()
    connections = Connections(stack.base_url, token)
    path = f"/api/fabrics/{fabric_id}/telemetry/"
    viewer = Viewer()
    url = stack.base_url.replace("http://", "ws://") + f"/ws/fabrics/{fabric_id}/"
    socket = await connect(url, additional_headers={"Cookie": f"sessionid={session.cookie('sessionid')}", "Origin": stack.base_url}, max_size=None, ping_interval=None)
    listener = asyncio.create_task(viewer.listen(socket))
    # Warm-up: the worker builds the snapshot's port index on the first batch.
    body, headers = collector.body("columns", time.perf_counter() - clock_start)
    status, answer = await asyncio.to_thread(connections.post, path, body, headers)
    assert status == 202, answer
    warm = time.perf_counter()
    assert await viewer.wait_for(json.loads(answer)["batch"], 300), "no frame of the first batch"
    print(f"first batch framed in {time.perf_counter() - warm:.1f} s (the worker built the port index)")
    for kind in chosen.bodies:
        loads = os.getloadavg()[0]
        web_before, worker_before = children_cpu_s(stack.process.pid, b"daphne"), children_cpu_s(stack.process.pid, b"live@")
        outcome = await scheduled_posts(connections, path, collector, kind, hz=chosen.hz, seconds=chosen.seconds, in_flight=chosen.in_flight, clock_start=clock_start)
        await asyncio.sleep(1.5)  # the last frames
        web_s = children_cpu_s(stack.process.pid, b"daphne") - web_before
        worker_s = children_cpu_s(stack.process.pid, b"live@") - worker_before
        phase_figures(kind, outcome, viewer, web_s=web_s, worker_s=worker_s, loads=(loads, os.getloadavg()[0]), hz=chosen.hz)
    listener.cancel()
    await socket.close()
    if viewer.sizes:
        print(f"frame on the websocket: {statistics.mean(viewer.sizes) / 1e3:.0f} kB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=16384)
    parser.add_argument("--ports", type=int, default=16384)
    parser.add_argument("--hz", type=float, default=TARGET_HZ)
    parser.add_argument("--seconds", type=float, default=20.0, help="posting time per body format")
    parser.add_argument("--in-flight", type=int, default=2, help="posts waiting for their answer at most")
    parser.add_argument("--bodies", default=",".join(BODIES), help=f"body formats to post, in order (of {', '.join(BODIES)})")
    chosen = parser.parse_args()
    chosen.bodies = [kind.strip() for kind in chosen.bodies.split(",") if kind.strip()]
    if unknown := set(chosen.bodies) - set(BODIES):
        parser.error(f"unknown body formats {sorted(unknown)}; expected some of {', '.join(BODIES)}")
    data_dir = Path(tempfile.mkdtemp(prefix="twin-bench-telemetry-"))
    stack = Stack(data_dir=data_dir, env_overrides={}, drop_env=("DATABASE_URL", "REDIS_URL"))
    try:
        stack.start()
        session = Session(stack.base_url)
        name = f"telemetry{chosen.cards}"
        made = subprocess.run([sys.executable, "manage.py", "generate-fabric", "--name", name, "--cards", str(chosen.cards), "--radix", "64"],
                              cwd=ROOT, env=stack.env, capture_output=True, text=True, timeout=900)  # fmt: skip
        if made.returncode:
            raise RuntimeError(f"generate-fabric failed:\n{made.stdout}\n{made.stderr}")
        token = subprocess.run([sys.executable, "manage.py", "api_token", "admin"], cwd=ROOT, env=stack.env, capture_output=True, text=True, check=True, timeout=120).stdout.strip()
        fabric = next(f for f in json.loads(session.get("/api/fabrics/?page_size=100"))["results"] if f["name"] == name)
        snapshot = fabric["latest_snapshot"]
        links = json.loads(session.get(f"/api/snapshots/{snapshot['id']}/export/"))["links"]
        print(f"fabric {name}: {snapshot['card_count']:,} cards, {len(links):,} links; {chosen.ports:,} ports posted at {chosen.hz:g} Hz, at most {chosen.in_flight} in flight, {chosen.seconds:g} s per body format")
        asyncio.run(run(stack, session, token, fabric["id"], links, chosen))
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
