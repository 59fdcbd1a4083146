"""Benchmark: one shared replay player watched by many websocket clients at once.

Run from the repository root (starts the whole product with `manage.py serve`, embedded SQLite and
Redis in a temporary data directory, on a free port of 127.0.0.1; stops it at the end):
    .venv/bin/python bench/bench_ws_load.py [--clients 500] [--web-processes 2] [--client-processes 4] [--cards 4096] [--play-s 20] [--seeks 20] [--frames binary,json]

Steps: log in as admin; generate a fat-tree of --cards cards (radix 64) inside the stack, or use the
1,024-card demo for --cards 1024; replay a 175B TP16 x DP(cards/16) training step (600 frames at most)
through the API and time it; then, first with 1 client and then with N clients, once per frame
encoding of --frames (binary: the binary frame messages every page gets, docs/replay.md; json: the
same frames as JSON text, `?frames=json`, the encoding before binary frames), so one run prints
their ratio:
  - seek fan-out: while paused, the driver (client 0) seeks; the web process pushes that frame to the
    group at once, so seek-sent -> frame-arrived is an end-to-end latency (first/last client);
  - play: speed 0 (as fast as allowed: 10 frames/s), play for --play-s seconds (or to the end), pause.
The driver runs in this process; the other clients are spread over --client-processes processes
(each an asyncio loop), so that the clients' own CPU (reading hundreds of MB/s) is not what limits
the figures: their CPU is printed next to the stack's. They record arrivals on the machine's
monotonic clock, shared by all processes, and hand them over at the end of each phase.
The server does not timestamp frames, so the play lag is the spread of arrival times of one seq across
clients (arrival minus that seq's earliest arrival), plus the inter-frame interval per client.
A client stalls if it got < 80 % of the frames the best client got, or saw a gap > 1 s.
Clients read a frame's seq and index from the head of its text (binary: of its header) and parse
the rest only if that fails: the browser parses every frame, but one benchmark process parsing 500
of them 10 times a second would measure itself. A frame's size is its websocket payload (what
goes on the wire, bar 4-10 bytes of framing; no compression is negotiated, printed per phase). The CPU each process of the stack (web servers, worker, Redis) and
the clients used while playing shows what limits the fan-out.
Prints figures; asserts nothing.
"""
import argparse
import asyncio
import json
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from bench.measure import keep_figure  # noqa: E402
from tests.stack import Session, Stack  # noqa: E402
from twin.replay.encoding import FRAME_MESSAGE_VERSION, decode_message  # noqa: E402

MAX_CLIENTS = 2000
MAX_PLAY_S = 60.0
STALL_FRACTION = 0.8
STALL_GAP_S = 1.0
FRAME_HEAD = re.compile(r'\{"type":"replay\.frame","seq":(\d+),"index":(\d+),')
BINARY_FRAME_HEAD = re.compile(FRAME_HEAD.pattern.encode())  # the header of a binary frame message, from byte 8
ENCODINGS = ("binary", "json")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def ms(value: float) -> str:
    return "-" if value != value else f"{value * 1e3:.1f}"


class Viewer:
    """One websocket client: records every replay.frame (seq, index, arrival) and replay.state."""

    def __init__(self, number: int):
        self.number = number
        self.socket = None
        self.task: asyncio.Task | None = None
        self.frames: list[tuple[int, int, float, int]] = []  # seq, index, arrival (perf_counter), bytes
        self.states: list[tuple[float, dict]] = []
        self.errors: list[str] = []
        self.closed_reason: str | None = None
        self.extensions = ""

    async def open(self, url: str, headers: dict) -> None:
        from websockets.asyncio.client import connect

        self.socket = await connect(url, additional_headers=headers, open_timeout=30, max_size=None, ping_interval=None)
        self.extensions = self.socket.response.headers.get("Sec-WebSocket-Extensions") or "none"
        self.task = asyncio.create_task(self.listen())

    async def listen(self) -> None:
        try:
            async for raw in self.socket:
                arrived = time.perf_counter()
                if isinstance(raw, bytes):  # another layout version: decode_message below says so
                    head = BINARY_FRAME_HEAD.match(raw, 8) if raw[0] == FRAME_MESSAGE_VERSION else None
                else:
                    head = FRAME_HEAD.match(raw)
                if head:
                    self.frames.append((int(head[1]), int(head[2]), arrived, len(raw)))
                    continue
                message = decode_message(raw)
                kind = message.get("type")
                if kind == "replay.frame":
                    self.frames.append((message["seq"], message["index"], arrived, len(raw)))
                elif kind == "replay.state":
                    self.states.append((arrived, message["state"]))
                elif kind == "replay.error":
                    self.errors.append(message.get("detail", ""))
        except Exception as error:  # noqa: BLE001 - a dropped client is a finding, not a crash
            self.closed_reason = f"{type(error).__name__}: {error}"
        else:
            self.closed_reason = f"closed {getattr(self.socket, 'close_code', None)}"

    async def send(self, content: dict) -> None:
        await self.socket.send(json.dumps(content))

    async def close(self) -> None:
        if self.socket is not None:
            try:
                await asyncio.wait_for(self.socket.close(), timeout=5)
            except Exception:  # noqa: BLE001
                pass
        if self.task is not None:
            self.task.cancel()
            try:
                await self.task
            except BaseException:  # noqa: BLE001
                pass


async def wait_until(predicate, timeout_s: float, poll_s: float = 0.001) -> bool:
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        if predicate():
            return True
        await asyncio.sleep(poll_s)
    return predicate()


def max_seq(viewers: list[Viewer]) -> int:
    return max((frame[0] for v in viewers for frame in v.frames), default=0)


SETTLE_S = 0.5  # after the driver got a command's frame, for the other clients to get it too


async def seek_commands(driver: Viewer, seeks: int, frames_total: int) -> list[tuple[int, int, float]]:
    """While paused, seek; returns (target index, driver's last seq before, moment sent) per seek."""
    sent = []
    for k in range(seeks):
        target = 1 + (k * 7) % max(1, frames_total - 1)
        floor = max_seq([driver])
        sent.append((target, floor, time.perf_counter()))
        await driver.send({"action": "seek", "index": target})
        await wait_until(lambda: any(f[0] > floor and f[1] == target for f in driver.frames), timeout_s=10)
        await asyncio.sleep(SETTLE_S)
    return sent


def seek_fanout(viewers: list[Viewer], sent: list[tuple[int, int, float]]) -> dict:
    """Each seek's frame is pushed at once: time sent -> arrival at every client."""
    first, last, missed = [], [], 0
    for target, floor, moment in sent:
        times = [hit for v in viewers if (hit := next((f[2] for f in v.frames if f[0] > floor and f[1] == target), None)) is not None]
        missed += len(viewers) - len(times)
        if times:
            first.append(min(times) - moment)
            last.append(max(times) - moment)
    return {"first": first, "last": last, "missed": missed}


async def play_commands(driver: Viewer, play_s: float) -> dict:
    """Speed 0, from frame 0, play for play_s seconds (or to the end), pause."""
    for command in ({"action": "speed", "speed": 0}, {"action": "seek", "index": 0}):
        floor = max_seq([driver])
        await driver.send(command)
        await wait_until(lambda: max_seq([driver]) > floor, timeout_s=10)
        await asyncio.sleep(SETTLE_S)
    baseline = max_seq([driver])
    states_before = len(driver.states)
    started = time.perf_counter()
    await driver.send({"action": "play"})

    def finished() -> bool:  # the player stopped at the last frame by itself
        return any(t >= started and not state["playing"] for t, state in driver.states[states_before:])

    await wait_until(finished, timeout_s=play_s, poll_s=0.05)
    ended_by_itself = finished()
    stopped = time.perf_counter()
    if not ended_by_itself:
        await driver.send({"action": "pause"})
    await asyncio.sleep(1.0)  # let frames already sent arrive (the pause frame itself is excluded)
    return {"baseline": baseline, "started": started, "stopped": stopped, "ended_by_itself": ended_by_itself}


def play_analysis(viewers: list[Viewer], commands: dict) -> dict:
    """Frames of the play window at every client: rates, lags, gaps, what went missing."""
    baseline, started, stopped, ended_by_itself = commands["baseline"], commands["started"], commands["stopped"], commands["ended_by_itself"]
    window = {v.number: [f for f in v.frames if f[0] > baseline and started <= f[2] <= stopped + 0.5] for v in viewers}
    # Frames in flight when pause was sent may arrive after it: keep seqs up to the best client's last one before `stopped`.
    last_seq = max((f[0] for fs in window.values() for f in fs if f[2] <= stopped), default=baseline)
    window = {n: [f for f in fs if f[0] <= last_seq] for n, fs in window.items()}
    earliest: dict[int, float] = {}
    for fs in window.values():
        for seq, _, t, _ in fs:
            earliest[seq] = min(t, earliest.get(seq, t))
    lags = [t - earliest[seq] for fs in window.values() for seq, _, t, _ in fs]
    spread = {}
    for fs in window.values():
        for seq, _, t, _ in fs:
            spread[seq] = max(spread.get(seq, 0.0), t - earliest[seq])
    counts = {n: len(fs) for n, fs in window.items()}
    best = max(counts.values(), default=0)
    intervals, rates, gaps, order_bad = [], [], {}, 0
    for n, fs in window.items():
        times = [f[2] for f in fs]
        steps = [b - a for a, b in zip(times, times[1:])]
        intervals += steps
        gaps[n] = max(steps, default=0.0)
        if len(times) > 1:
            rates.append((len(times) - 1) / (times[-1] - times[0]))
        seqs = [f[0] for f in fs]
        order_bad += sum(1 for a, b in zip(seqs, seqs[1:]) if b <= a)
    all_seqs = set(earliest)
    expected = set(range(baseline + 1, last_seq + 1))
    stalled = [n for n in counts if counts[n] < STALL_FRACTION * best or gaps[n] > STALL_GAP_S]
    first_frame = [min((f[2] for f in fs), default=float("nan")) - started for fs in window.values()]
    indexes = sorted({f[1] for fs in window.values() for f in fs})
    return {
        "wall_s": stopped - started, "ended_by_itself": ended_by_itself, "counts": counts, "best": best,
        "rates": rates, "lags": lags, "spread": list(spread.values()), "intervals": intervals, "gaps": gaps,
        "stalled": stalled, "first_frame": first_frame, "out_of_order": order_bad,
        "seqs_sent": len(expected), "seqs_seen_by_none": len(expected - all_seqs),
        "missing_per_client": [len(all_seqs - {f[0] for f in fs}) for fs in window.values()],
        "index_span": (indexes[0], indexes[-1]) if indexes else None,
        "frame_bytes": statistics.median([f[3] for fs in window.values() for f in fs] or [0]),
        "errors": [e for v in viewers for e in v.errors], "dropped": [v.closed_reason for v in viewers if v.closed_reason],
    }


def cpu_seconds(serve_pid: int, client_pids: list[int]) -> dict[str, float]:
    """CPU seconds (user + system) used so far by the clients (this process and its client
    processes, each) and by each process of the stack."""
    used = {"clients (driver)": sum(psutil.Process().cpu_times()[:2])}
    for number, pid in enumerate(client_pids):
        try:
            used[f"clients {number + 1}"] = sum(psutil.Process(pid).cpu_times()[:2])
        except psutil.Error:
            continue
    for child in psutil.Process(serve_pid).children(recursive=True):
        try:
            line, times = " ".join(child.cmdline()), child.cpu_times()
        except psutil.Error:
            continue
        label = f"web {child.pid}" if "daphne" in line else "worker" if "celery" in line else "redis" if "redis" in line else "other"
        used[label] = used.get(label, 0.0) + times.user + times.system
    return used


async def open_viewers(viewers: list[Viewer], url: str, headers: dict) -> None:
    for batch in range(0, len(viewers), 10):  # 10 handshakes at a time
        await asyncio.gather(*(v.open(url, headers) for v in viewers[batch:batch + 10]))
    await wait_until(lambda: all(v.frames for v in viewers), timeout_s=30)


def client_process(url: str, headers: dict, numbers: list[int], connection) -> None:
    """A client process: open its viewers, say how many got their opening frame, listen until
    told to stop, then hand over what each viewer recorded."""

    async def main() -> None:
        viewers = [Viewer(number) for number in numbers]
        try:
            await open_viewers(viewers, url, headers)
            connection.send(sum(1 for v in viewers if v.frames))
            while not connection.poll():
                await asyncio.sleep(0.05)
            connection.recv()
            connection.send([(v.number, v.frames, v.states, v.errors, v.closed_reason) for v in viewers])
        finally:
            await asyncio.gather(*(v.close() for v in viewers))

    asyncio.run(main())


def phase(base_url: str, session_id: str, run_id: int, n: int, encoding: str, play_s: float, seeks: int, frames_total: int, serve_pid: int, client_processes: int) -> dict:
    """One phase with n clients, all receiving frames in `encoding`: the client processes are forked first (no event loop running yet)."""
    url = base_url.replace("http://", "ws://") + f"/ws/replays/{run_id}/" + ("?frames=json" if encoding == "json" else "")
    headers = {"Cookie": f"sessionid={session_id}", "Origin": base_url}
    others = list(range(1, n))
    shares = [others[k::client_processes] for k in range(client_processes) if others[k::client_processes]]
    fork = multiprocessing.get_context("fork")
    connections, processes = [], []
    started = time.perf_counter()
    try:
        for share in shares:
            ours, theirs = fork.Pipe()
            process = fork.Process(target=client_process, args=(url, headers, share, theirs), daemon=True)
            process.start()
            connections.append(ours)
            processes.append(process)
        return {"encoding": encoding, **asyncio.run(drive(url, headers, n, play_s, seeks, frames_total, serve_pid, connections, processes, started))}
    finally:
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()


async def drive(url: str, headers: dict, n: int, play_s: float, seeks: int, frames_total: int, serve_pid: int, connections: list, processes: list, started: float) -> dict:
    """The driver's side of a phase: seek, play, then gather what every client recorded."""
    driver = Viewer(0)
    try:
        await open_viewers([driver], url, headers)
        opened = (1 if driver.frames else 0) + sum([await asyncio.to_thread(connection.recv) for connection in connections])
        connected_s = time.perf_counter() - started
        sent = await seek_commands(driver, seeks, frames_total)
        client_pids = [process.pid for process in processes]
        before = cpu_seconds(serve_pid, client_pids)
        load_before = os.getloadavg()[0]
        commands = await play_commands(driver, play_s)
        after = cpu_seconds(serve_pid, client_pids)
        wall_s = commands["stopped"] - commands["started"] + 1.0  # play_commands waits 1 s after stopping
        busy = {label: (after[label] - before.get(label, 0.0)) / wall_s for label in after}
        viewers = [driver]
        for connection in connections:
            connection.send("stop")
            for number, frames, states, errors, closed_reason in await asyncio.to_thread(connection.recv):
                viewer = Viewer(number)
                viewer.frames, viewer.states, viewer.errors, viewer.closed_reason = frames, states, errors, closed_reason
                viewers.append(viewer)
        return {"n": n, "connect_s": connected_s, "opened": opened, "extensions": driver.extensions, "load_before": load_before, "seek": seek_fanout(viewers, sent), "play": play_analysis(viewers, commands), "busy": busy}
    finally:
        await driver.close()


def print_phase(result: dict) -> None:
    n, seek, p = result["n"], result["seek"], result["play"]
    counts = sorted(p["counts"].values())
    print(f"\n-- {n} client(s), {result['encoding']} frames: {result['opened']}/{n} connected with their opening frame in {result['connect_s']:.2f} s"
          f" (websocket extensions: {result['extensions']}); load average {result['load_before']:.1f} before playing")
    print(f"  seek fan-out ({len(seek['first'])} seeks, paused; ms sent -> arrival): first client p50 {ms(pct(seek['first'], 50))}"
          f" / p95 {ms(pct(seek['first'], 95))}; last client p50 {ms(pct(seek['last'], 50))} / p95 {ms(pct(seek['last'], 95))}"
          f" / max {ms(max(seek['last'], default=float('nan')))}; missed {seek['missed']}")
    print(f"  play: {p['wall_s']:.1f} s ({'reached the last frame' if p['ended_by_itself'] else 'paused'}), frames {p['index_span']},"
          f" {p['seqs_sent']} frames pushed, ~{p['frame_bytes'] / 1e3:.1f} kB each; play -> first frame {ms(pct(p['first_frame'], 50))} ms")
    print(f"  frames per client min/median/max: {counts[0] if counts else 0} / {statistics.median(counts) if counts else 0:.0f} / {counts[-1] if counts else 0}"
          f"; frames/s per client min/median/max: {min(p['rates'], default=0):.2f} / {statistics.median(p['rates'] or [0]):.2f} / {max(p['rates'], default=0):.2f}")
    print(f"  inter-frame interval ms p50/p95/max: {ms(pct(p['intervals'], 50))} / {ms(pct(p['intervals'], 95))} / {ms(max(p['intervals'], default=float('nan')))}")
    print(f"  lag across clients (arrival - earliest arrival of that seq) ms p50/p95/max: {ms(pct(p['lags'], 50))} / {ms(pct(p['lags'], 95))} / {ms(max(p['lags'], default=float('nan')))};"
          f" per-frame fan-out spread p50/max: {ms(pct(p['spread'], 50))} / {ms(max(p['spread'], default=float('nan')))}")
    print(f"  dropped: {p['seqs_seen_by_none']} seqs seen by no client, max {max(p['missing_per_client'], default=0)} missing on one client;"
          f" {p['out_of_order']} out of order; stalled clients: {len(p['stalled'])} {p['stalled'][:10]}")
    print("  CPU while playing (share of one core): " + ", ".join(f"{label} {share * 100:.0f} %" for label, share in sorted(result["busy"].items()))
          + f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if p["errors"] or p["dropped"]:
        print(f"  errors: {p['errors'][:3]}; closed clients: {len(p['dropped'])} {p['dropped'][:3]}")


def wait_for_run(session: Session, run_id: int, timeout_s: float) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = json.loads(session.get(f"/api/runs/{run_id}/"))
        if run["status"] in ("succeeded", "failed", "cancelled"):
            return run
        time.sleep(0.5)
    raise TimeoutError(f"run {run_id} did not finish in {timeout_s:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", default=str(MAX_CLIENTS), help="clients of the big phases, comma-separated (e.g. 100,500); a 1-client phase always runs first")
    parser.add_argument("--cards", type=int, default=4096)
    parser.add_argument("--play-s", type=float, default=20.0, help=f"seconds of playing per phase (at most {MAX_PLAY_S:.0f})")
    parser.add_argument("--seeks", type=int, default=20)
    parser.add_argument("--max-frames", type=int, default=600)
    parser.add_argument("--web-processes", type=int, default=2)
    parser.add_argument("--client-processes", type=int, default=4, help="processes the clients (all but the driver) are spread over")
    parser.add_argument("--frames", default=",".join(ENCODINGS), help="frame encodings to measure, each phase once per encoding: binary, json or both (binary,json)")
    chosen = parser.parse_args()
    clients = [max(1, min(int(number), MAX_CLIENTS)) for number in chosen.clients.split(",")]
    encodings = [name for name in chosen.frames.split(",") if name]
    if not clients or not encodings or not set(encodings) <= set(ENCODINGS):
        parser.error(f"--clients takes numbers, --frames takes {' and/or '.join(ENCODINGS)}")
    play_s = max(1.0, min(chosen.play_s, MAX_PLAY_S))
    cards = chosen.cards

    data_dir = Path(tempfile.mkdtemp(prefix="twin-bench-ws-"))
    stack = Stack(data_dir=data_dir, env_overrides={}, drop_env=("DATABASE_URL", "REDIS_URL"), serve_args=("--web-processes", str(chosen.web_processes)))
    summary = []
    try:
        started = time.perf_counter()
        stack.start()
        print(f"stack up in {time.perf_counter() - started:.1f} s at {stack.base_url} (embedded SQLite + Redis, {chosen.web_processes} web processes, data {data_dir})")
        session = Session(stack.base_url)

        name = None
        if cards != 1024:
            name = f"bench{cards // 1024}k" if cards % 1024 == 0 else f"bench{cards}"
            started = time.perf_counter()
            made = subprocess.run([sys.executable, "manage.py", "generate-fabric", "--name", name, "--cards", str(cards), "--radix", "64"],
                                  cwd=ROOT, env=stack.command_env(), capture_output=True, text=True, timeout=600)
            if made.returncode:
                raise RuntimeError(f"generate-fabric failed:\n{made.stdout}\n{made.stderr}")
            print(f"generate-fabric {cards} cards: {time.perf_counter() - started:.1f} s ({made.stdout.strip().splitlines()[-1]})")
        fabrics = json.loads(session.get("/api/fabrics/?page_size=100"))["results"]
        fabric = next(f for f in fabrics if (f["name"] == name if name else f["latest_snapshot"] and f["latest_snapshot"]["card_count"] == 1024))
        snapshot = fabric["latest_snapshot"]
        print(f"fabric {fabric['name']}: snapshot {snapshot['id']}, {snapshot['card_count']} cards, {snapshot['link_count']} links")

        params = {"training": {"model_params": 175e9, "tp": 16, "dp": snapshot["card_count"] // 16, "hidden_size": 12288, "seq_len": 2048},
                  "max_frames": chosen.max_frames, "ordering": "rank"}
        started = time.perf_counter()
        status, body = session.post_json("/api/runs/", json.dumps({"kind": "replay", "snapshot": snapshot["id"], "params": params}).encode())
        if status != 201:
            raise RuntimeError(f"POST /api/runs/ -> {status}: {body[:500]!r}")
        run_id = json.loads(body)["id"]
        run = wait_for_run(session, run_id, timeout_s=900)
        replay_s = time.perf_counter() - started
        if run["status"] != "succeeded":
            raise RuntimeError(f"replay run {run_id} {run['status']}: {run.get('error')}")
        last = json.loads(session.get(f"/api/runs/{run_id}/frames/?index=last"))
        frames_total = last["index"] + 1
        result = run.get("result") or {}
        events = (result.get("events") or {}).get("total")
        print(f"replay run {run_id}: succeeded in {replay_s:.1f} s (POST -> succeeded, polled every 0.5 s);"
              f" {events} events, {frames_total} frames, simulated {result.get('duration_s')} s")

        for n in dict.fromkeys((1, *clients)):
            for encoding in encodings:
                outcome = phase(stack.base_url, session.cookie("sessionid"), run_id, n, encoding, play_s, chosen.seeks, frames_total, stack.process.pid, max(1, chosen.client_processes))
                print_phase(outcome)
                summary.append(outcome)
    except Exception:  # noqa: BLE001 - report what happened, then clean up
        traceback.print_exc()
        print("--- serve log (tail) ---\n" + stack.output()[-3000:])
    finally:
        code = stack.stop()
        print(f"\nstack stopped (exit {code})")
        shutil.rmtree(data_dir, ignore_errors=True)

    if summary:
        print(f"\nsummary ({chosen.web_processes} web processes, {cards} cards; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
        print(f"{'clients':>7} | {'frames':>6} | {'kB/frame':>8} | {'frames/client min/med/max':>25} | {'fps med':>7} | {'interval p95 ms':>15} | {'lag p50/p95/max ms':>20} |"
              f" {'seek last p50/max ms':>20} | {'stalled':>7} | {'dropped':>7} | {'web CPU':>7} | {'load':>4}")
        for o in summary:
            p, s = o["play"], o["seek"]
            c = sorted(p["counts"].values()) or [0]
            nan = float("nan")
            frames = f"{c[0]} / {statistics.median(c):.0f} / {c[-1]}"
            lag = f"{ms(pct(p['lags'], 50))} / {ms(pct(p['lags'], 95))} / {ms(max(p['lags'], default=nan))}"
            seek = f"{ms(pct(s['last'], 50))} / {ms(max(s['last'], default=nan))}"
            dropped = f"{p['seqs_seen_by_none']}+{max(p['missing_per_client'], default=0)}"
            print(f"{o['n']:>7} | {o['encoding']:>6} | {p['frame_bytes'] / 1e3:>8.1f} | {frames:>25} | {statistics.median(p['rates'] or [0]):>7.2f} | {ms(pct(p['intervals'], 95)):>15} | "
                  f"{lag:>20} | {seek:>20} | {len(p['stalled']):>7} | {dropped:>7} | {web_cpu(o) * 100:>6.0f}% | {o['load_before']:>4.1f}")
            keep_phase_figures(o, cards, chosen.web_processes)
        by_phase = {(o["n"], o["encoding"]): o for o in summary}
        for n in dict.fromkeys(o["n"] for o in summary):
            binary, text = by_phase.get((n, "binary")), by_phase.get((n, "json"))
            if binary and text:
                rate = lambda o: statistics.median(o["play"]["rates"] or [0])  # noqa: E731
                lag = lambda o: pct(o["play"]["lags"], 95)  # noqa: E731
                print(f"binary / json at {n} client(s): frame bytes {quotient(binary['play']['frame_bytes'], text['play']['frame_bytes']):.2f}x,"
                      f" web CPU {quotient(web_cpu(binary), web_cpu(text)):.2f}x, fps {quotient(rate(binary), rate(text)):.2f}x, lag p95 {quotient(lag(binary), lag(text)):.2f}x")


def keep_phase_figures(outcome: dict, cards: int, web_processes: int) -> None:
    """The issue's target for one phase: 10 frames/s to every viewer, p95 lag < 250 ms, no frame
    lost and no viewer stalled (skipping to the newest frame is allowed)."""
    p = outcome["play"]
    phase = f"{outcome['n']} viewers, {outcome['encoding']} frames, {cards:,} cards, {web_processes} web processes"
    rate, lag_ms = statistics.median(p["rates"] or [0]), pct(p["lags"], 95) * 1e3
    lost = p["seqs_seen_by_none"] + len(p["stalled"])
    keep_figure(f"replay push, {phase}: frames/s per viewer (median)", rate, "frames/s", target=">= 9.5 frames/s", met=rate >= 9.5)
    keep_figure(f"replay push, {phase}: lag p95", lag_ms, "ms", target="< 250 ms", met=lag_ms < 250)
    keep_figure(f"replay push, {phase}: frames lost by all + viewers stalled", lost, "", target="0", met=lost == 0)


def quotient(a: float, b: float) -> float:
    return a / b if b else float("nan")


def web_cpu(outcome: dict) -> float:
    """Share of one core the web processes used together while playing."""
    return sum(share for label, share in outcome["busy"].items() if label.startswith("web"))

if __name__ == "__main__":
    main()
