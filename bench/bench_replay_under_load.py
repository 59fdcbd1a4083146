"""Benchmark: replay frames a viewer receives per second, alone and while two default what-ifs run
(issue 15 saw 270/s fall to 0.2/s with one worker for everything).

Run from the repository root; starts the whole product (`manage.py serve`: embedded Redis, the
live and the heavy worker, SQLite in a temporary data directory unless DATABASE_URL names a
PostgreSQL server) and the demo fabric:
    .venv/bin/python bench/bench_replay_under_load.py [--seconds 30]

The player sends at most 10 frames a second (speed 0 = as fast as frames may go), so 10/s is
the ceiling. Prints frames/s and the longest gap between two frames, idle and under load, and
the what-ifs' progress; asserts nothing.
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from websockets.sync.client import connect  # noqa: E402

from tests.stack import Session, Stack, scratch_database  # noqa: E402
from twin.replay.encoding import decode_message  # noqa: E402


def frames_for(socket, seconds: float) -> tuple[int, float]:
    """Frames received in `seconds`, and the longest gap between two of them."""
    count, last, longest_gap = 0, time.monotonic(), 0.0
    deadline = last + seconds
    while (now := time.monotonic()) < deadline:
        try:
            message = decode_message(socket.recv(timeout=max(0.01, deadline - now)))
        except TimeoutError:
            break
        if message["type"] == "replay.frame":
            now = time.monotonic()
            count, longest_gap, last = count + 1, max(longest_gap, now - last), now
    return count, max(longest_gap, time.monotonic() - last)


def finished(session: Session, run_id: int) -> dict:
    while (state := json.loads(session.get(f"/api/runs/{run_id}/")))["status"] in ("pending", "running"):
        time.sleep(0.5)
    return state


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30, help="How long to count frames in each phase")
    chosen = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="twin-bench-replay-"))
    with scratch_database(data_dir, "twin_bench_replay") as database_url, Stack(data_dir=data_dir, env_overrides={"DATABASE_URL": database_url}, drop_env=("REDIS_URL",)) as stack:
        print(next(line.strip() for line in stack.output().splitlines() if line.strip().startswith("workers:")))
        session = Session(stack.base_url)
        snapshot = next(f for f in json.loads(session.get("/api/fabrics/"))["results"] if f["name"] == "demo-supernode")["latest_snapshot"]["id"]

        def start(kind: str, params: dict) -> int:
            status, body = session.post_json("/api/runs/", json.dumps({"kind": kind, "snapshot": snapshot, "params": params}).encode())
            assert status == 201, body
            return json.loads(body)["id"]

        replay = start("replay", {"training": {"model_params": 1e9, "tp": 8, "dp": 8, "hidden_size": 2048, "seq_len": 1024}, "max_frames": 600})
        assert finished(session, replay)["status"] == "succeeded"
        headers = {"Cookie": f"sessionid={session.cookie('sessionid')}", "Origin": stack.base_url}
        with connect(stack.base_url.replace("http://", "ws://") + f"/ws/replays/{replay}/", additional_headers=headers, open_timeout=10) as socket:
            for command in ({"action": "speed", "speed": 0}, {"action": "loop", "loop": True}, {"action": "play"}):
                socket.send(json.dumps(command))
            frames_for(socket, 3)  # the player is running
            count, gap = frames_for(socket, chosen.seconds)
            print(f"replay alone:                 {count / chosen.seconds:5.1f} frames/s, longest gap {gap:5.2f} s ({chosen.seconds:.0f} s)")
            whatifs = [start("whatif", {}), start("whatif", {})]
            frames_for(socket, 3)  # the what-ifs have fanned out
            count, gap = frames_for(socket, chosen.seconds)
            progress = [json.loads(session.get(f"/api/runs/{run}/"))["message"] for run in whatifs]
            print(f"replay with two what-ifs:     {count / chosen.seconds:5.1f} frames/s, longest gap {gap:5.2f} s ({chosen.seconds:.0f} s; what-ifs: {'; '.join(progress)})")
        for run in whatifs:
            session.post_json(f"/api/runs/{run}/cancel/", b"{}")


if __name__ == "__main__":
    main()
