"""Benchmark: the map layout of a 65,536-card fabric as the web server serves it.

Run from the repository root (starts the whole product with `manage.py serve`, embedded SQLite and
Redis in a temporary data directory, on a free port of 127.0.0.1; stops it at the end):
    .venv/bin/python bench/bench_layout_serve.py [--cards 65536] [--radix 64] [--requests 20]

Steps: `generate-fabric` stores the fabric (timed); the worker computes the snapshot's layout when
it is stored: the time from the end of generate-fabric until the layout is stored (read from the
stack's database every 0.2 s; no request asks for it first). Then, logged in, through HTTP on
127.0.0.1:
  - GET with Accept-Encoding: gzip: bytes on the wire (gzip) and as JSON; time to the last byte,
    median and max of --requests;
  - the same with If-None-Match (the ETag just received): the status (304) and its time.
Prints figures; asserts nothing.
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import keep_figure  # noqa: E402
from tests.stack import Session, Stack  # noqa: E402


def fetch(session: Session, path: str, headers: dict) -> tuple[int, dict, bytes, float]:
    """Status, headers, body (as on the wire) and seconds to the last byte."""
    request = urllib.request.Request(session.base_url + path, headers=headers)
    started = time.perf_counter()
    try:
        with session.opener.open(request, timeout=120) as response:
            body = response.read()
            return response.status, dict(response.headers), body, time.perf_counter() - started
    except urllib.error.HTTPError as error:  # a 304 reaches urllib as an "error"
        body = error.read()
        return error.code, dict(error.headers), body, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cards", type=int, default=65536)
    parser.add_argument("--radix", type=int, default=64)
    parser.add_argument("--requests", type=int, default=20)
    chosen = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="twin-bench-layout-"))
    stack = Stack(data_dir=data_dir, env_overrides={}, drop_env=("DATABASE_URL", "REDIS_URL"), serve_args=("--no-demo",))
    try:
        stack.start()
        session = Session(stack.base_url)
        name = f"layout{chosen.cards}"
        started = time.perf_counter()
        made = subprocess.run([sys.executable, "manage.py", "generate-fabric", "--name", name, "--cards", str(chosen.cards), "--radix", str(chosen.radix)],
                              cwd=ROOT, env=stack.command_env(), capture_output=True, text=True, timeout=1800)
        if made.returncode:
            raise RuntimeError(f"generate-fabric failed:\n{made.stdout}\n{made.stderr}")
        stored_at = time.perf_counter()
        print(f"generate-fabric {chosen.cards} cards (radix {chosen.radix}): {stored_at - started:.1f} s ({made.stdout.strip().splitlines()[-1]})")
        snapshot = json.loads(session.get("/api/fabrics/?page_size=100"))["results"][0]["latest_snapshot"]
        path = f"/api/snapshots/{snapshot['id']}/layout/"

        # The worker's layout, read from the stack's own database (no request, which would make it).
        os.environ.update(stack.command_env())
        import django

        django.setup()
        from twin.fabrics.models import SnapshotLayout

        while not SnapshotLayout.objects.filter(snapshot_id=snapshot["id"]).exists():
            if time.perf_counter() - stored_at > 1800:
                raise TimeoutError("the worker did not store the layout in 30 minutes")
            time.sleep(0.2)
        print(f"layout stored by the worker {time.perf_counter() - stored_at:.1f} s after generate-fabric ended (polled every 0.2 s)")

        zipped = [fetch(session, path, {"Accept-Encoding": "gzip"}) for _ in range(chosen.requests)]
        status, headers, body, _ = zipped[0]
        times = [t for *_, t in zipped]
        print(f"GET gzip: {status}, Content-Encoding {headers.get('Content-Encoding')}, {len(body) / 1e6:.2f} MB on the wire,"
              f" {len(gzip.decompress(body)) / 1e6:.2f} MB of JSON; to the last byte ms median {statistics.median(times) * 1e3:.1f}"
              f" / min {min(times) * 1e3:.1f} / max {max(times) * 1e3:.1f} ({chosen.requests} requests)")
        wire_mb, served_ms = len(body) / 1e6, statistics.median(times) * 1e3
        keep_figure(f"map layout of {chosen.cards:,} cards on the wire (gzip)", wire_mb, "MB", target="< 2 MB", met=wire_mb < 2)
        keep_figure(f"map layout of {chosen.cards:,} cards served, median of {chosen.requests}", served_ms, "ms", target="< 100 ms", met=served_ms < 100)
        tag = headers["ETag"]
        unchanged = [fetch(session, path, {"Accept-Encoding": "gzip", "If-None-Match": tag}) for _ in range(chosen.requests)]
        times = [t for *_, t in unchanged]
        print(f"GET If-None-Match: {unchanged[0][0]}, {len(unchanged[0][2])} bytes; ms median {statistics.median(times) * 1e3:.1f}"
              f" / min {min(times) * 1e3:.1f} / max {max(times) * 1e3:.1f}")
        plain = fetch(session, path, {})
        print(f"GET without Accept-Encoding: {plain[0]}, {len(plain[2]) / 1e6:.2f} MB; {plain[3] * 1e3:.1f} ms")
    except Exception:  # noqa: BLE001 - report what happened, then clean up
        traceback.print_exc()
        print("--- serve log (tail) ---\n" + stack.output()[-3000:])
    finally:
        print(f"\nstack stopped (exit {stack.stop()})")
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
