"""Benchmark: live telemetry of 16,384 ports refreshed at 10 Hz, post to viewer, on the whole product.

Run from the repository root (starts `manage.py serve` with embedded SQLite and Redis in a temporary
data directory on a free port; stops it at the end):
    .venv/bin/python bench/bench_telemetry.py [--cards 16384] [--ports 16384] [--hz 10] [--seconds 20]

Steps: generate a fat-tree of --cards cards (radix 64) inside the stack; read its links from the
export; open one websocket viewer of the fabric; then post the counters of --ports link ends (the
first ports of the export, the column shape of POST /api/fabrics/{id}/telemetry/) --hz times a
second for --seconds, byte counters growing at 40 % of line rate. A collector posts one batch at
a time: when a post takes longer than the period, the next starts when it returns. The web
process only checks a post and leaves it in the fabric's newest-wins slot; the live worker makes
the frames (a batch it has not taken yet is superseded by the next). Post-to-viewer = the moment
a post is sent -> the moment the viewer receives the first frame made of that batch or a newer
one (a superseded batch's counters reach the viewer in the newer batch's frame). CPU per post:
of the web processes (daphne) and of the live worker (`live@`), over the posting time. Then, in
this process, what one Prometheus poll of the
same ports costs the worker once the answers are in: JSON-decoding three instant vectors
(tx, rx, xmit_wait) of --ports series and turning them into the frame (labels resolved once,
then cached). Prints figures; asserts nothing.
"""
import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.stack import Session, Stack  # noqa: E402

TARGET_P95_S = 0.5
LOAD = 0.4  # share of line rate the counters grow at


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


async def run(base_url: str, session: Session, fabric_id: int, links: list[dict], ports: int, hz: float, seconds: float) -> dict:
    from websockets.asyncio.client import connect

    ends = [(link["a"], link["a_port"], link["bandwidth_gbps"]) for link in links] + [(link["b"], link["b_port"], link["bandwidth_gbps"]) for link in links]
    ends = ends[:ports]
    nodes, names = [node for node, _, _ in ends], [port for _, port, _ in ends]
    rates = [LOAD * gbps * 1e9 / 8 for _, _, gbps in ends]
    arrivals: dict[int, float] = {}
    sizes: list[int] = []
    url = base_url.replace("http://", "ws://") + f"/ws/fabrics/{fabric_id}/"
    socket = await connect(url, additional_headers={"Cookie": f"sessionid={session.cookie('sessionid')}", "Origin": base_url}, max_size=None, ping_interval=None)

    async def listen():
        async for raw in socket:
            message = json.loads(raw)
            if message.get("type") == "fabric.telemetry" and "batch" in message["frame"]:
                arrivals[message["frame"]["batch"]] = time.perf_counter()
                sizes.append(len(raw))

    listener = asyncio.create_task(listen())
    sent: dict[int, float] = {}
    answered: list[float] = []
    refused = []
    superseded = 0
    start_epoch = time.time()
    started = time.perf_counter()
    period = 1 / hz
    tick = 0
    while time.perf_counter() - started < seconds:
        due = started + tick * period
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        elapsed = max(time.perf_counter() - started, 0.0)
        columns = {"node": nodes, "port": names, "timestamp": start_epoch + elapsed, "tx_bytes": [int(rate * elapsed) for rate in rates], "rx_bytes": [int(rate * elapsed / 2) for rate in rates]}
        body = json.dumps({"columns": columns}).encode()
        posted = time.perf_counter()
        status, answer = await asyncio.to_thread(session.post_json, f"/api/fabrics/{fabric_id}/telemetry/", body)
        answered.append(time.perf_counter() - posted)
        if status != 202:
            refused.append((status, answer[:300]))
        else:
            accepted = json.loads(answer)
            sent[accepted["batch"]] = posted
            superseded = accepted["superseded_total"]
        tick = max(tick + 1, int((time.perf_counter() - started) / period))  # late: skip to the next due tick
    await asyncio.sleep(2.0)
    listener.cancel()
    await socket.close()
    framed = sorted(arrivals)
    lags, steady = [], []
    first_frame = min(arrivals.values(), default=math.inf)
    for batch, at in sent.items():  # the first frame of this batch or a newer one
        newer = [arrivals[framed_batch] for framed_batch in framed if framed_batch >= batch]
        if newer:
            lags.append(min(newer) - at)
            if at > first_frame:  # posted once the worker had built the snapshot's port index
                steady.append(min(newer) - at)
    return {
        "posts": len(sent), "refused": refused, "rate_hz": len(sent) / seconds, "body_kb": len(body) / 1e3, "frames": len(arrivals),
        "superseded": superseded, "answered": answered, "lags": lags, "steady": steady, "missed": len(sent) - len(lags),
        "frame_kb": statistics.mean(sizes) / 1e3 if sizes else 0.0,
    }


def prometheus_poll_cost(cards: int, ports: int, polls: int = 10) -> tuple[float, float]:
    """Median seconds of the first poll (labels resolved) and of the next ones (cached)."""
    from twin.replay.prometheus import prometheus_mapping, rates_frame
    from twin.replay.telemetry import TelemetryIndex
    from twin.simcore.generate import fat_tree

    spec = fat_tree(endpoints=cards, radix=64)
    index = TelemetryIndex(spec)
    ends = [(link.a, link.a_port) for link in spec.links][:ports]
    mapping = prometheus_mapping({"node": "{node}", "port": "{port}"}, preset="node_exporter_infiniband")

    def answer(value: float) -> str:
        series = [{"metric": {"node": node, "port": port, "instance": "ib-exporter:9315", "job": "ib"}, "value": [1796000000.0, str(value)]} for node, port in ends]
        return json.dumps({"status": "success", "data": {"resultType": "vector", "result": series}})

    bodies = {"tx_bytes": answer(20e9), "rx_bytes": answer(10e9), "xmit_wait": answer(1e6)}
    cache: dict = {}
    times = []
    for _ in range(polls):
        started = time.perf_counter()
        answers = {key: json.loads(body)["data"] for key, body in bodies.items()}
        rates_frame(index, mapping, answers, window_s=30, ports_of=cache)
        times.append(time.perf_counter() - started)
    return times[0], statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=16384)
    parser.add_argument("--ports", type=int, default=16384)
    parser.add_argument("--hz", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    chosen = parser.parse_args()
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
        fabric = next(f for f in json.loads(session.get("/api/fabrics/?page_size=100"))["results"] if f["name"] == name)
        snapshot = fabric["latest_snapshot"]
        links = json.loads(session.get(f"/api/snapshots/{snapshot['id']}/export/"))["links"]
        print(f"fabric {name}: {snapshot['card_count']:,} cards, {len(links):,} links; {chosen.ports:,} ports posted at {chosen.hz:g} Hz for {chosen.seconds:g} s")
        web_before, worker_before = children_cpu_s(stack.process.pid, b"daphne"), children_cpu_s(stack.process.pid, b"live@")
        outcome = asyncio.run(run(stack.base_url, session, fabric["id"], links, chosen.ports, chosen.hz, chosen.seconds))
        posts = max(1, outcome["posts"])
        web_per_post = (children_cpu_s(stack.process.pid, b"daphne") - web_before) / posts
        worker_per_post = (children_cpu_s(stack.process.pid, b"live@") - worker_before) / posts
        print(f"CPU per post: web {web_per_post * 1e3:.0f} ms (HTTP, JSON, check, into the slot), live worker {worker_per_post * 1e3:.0f} ms"
              f" (frame, store, push); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
        answered, lags = outcome["answered"], outcome["lags"]
        print(f"posts: {outcome['posts']} accepted ({outcome['rate_hz']:.1f}/s achieved), {len(outcome['refused'])} refused {outcome['refused'][:1]}; body {outcome['body_kb']:.0f} kB, frame {outcome['frame_kb']:.0f} kB")
        print(f"frames: {outcome['frames']} seen by the viewer, {outcome['superseded']} batches superseded before the worker took them")
        print(f"POST answered (checked, left for the worker): p50 {pct(answered, 50) * 1e3:.0f} ms, p95 {pct(answered, 95) * 1e3:.0f} ms, max {max(answered) * 1e3:.0f} ms")
        if lags:
            p95 = pct(lags, 95)
            print(f"post-to-viewer: p50 {pct(lags, 50) * 1e3:.0f} ms, p95 {p95 * 1e3:.0f} ms, max {max(lags) * 1e3:.0f} ms; {outcome['missed']} posts never reached the viewer"
                  f" (target p95 < {TARGET_P95_S * 1e3:.0f} ms: {'met' if p95 < TARGET_P95_S else 'NOT met'})")  # fmt: skip
        if outcome["steady"]:
            steady = outcome["steady"]
            print(f"  posted after the first frame (port index built): p50 {pct(steady, 50) * 1e3:.0f} ms, p95 {pct(steady, 95) * 1e3:.0f} ms ({len(steady)} posts)")
    finally:
        stack.stop()
    first, cached = prometheus_poll_cost(chosen.cards, chosen.ports)
    print(f"Prometheus poll in the worker ({chosen.ports:,} series x 3 queries, answers in hand): first {first * 1e3:.0f} ms (labels resolved), then {cached * 1e3:.0f} ms median")


if __name__ == "__main__":
    main()
