"""Benchmark: fanned-out runs on real Celery worker processes, with 1 and then 2 workers.

Run from the repository root (starts its own Redis; uses a temporary SQLite database unless
DATABASE_URL names a PostgreSQL server, in which case a scratch database is created and dropped):
    .venv/bin/python bench/bench_distributed.py [--whatif] [--failures]

Cases (targets from the issues, 2-core machine):
  --whatif    5-stage what-if 1,024 -> 16,384 cards (factors 1,2,4,8,16), one super-node design,
              4 collectives x 21 sizes (1 KiB..1 GiB) x auto: target < 60 s with 2 workers.
  --failures  worst single-switch failure on a 4,096-card fat-tree: target < 30 s with workers.
Prints wall time per worker count and the speed-up; asserts nothing.
"""
import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.stack import scratch_database  # noqa: E402


def report_page_timing(run) -> None:
    """The finished report is served from the database: time the page (target < 1 s)."""
    from django.test import Client

    from twin.accounts.models import Role
    from twin.accounts.services import user_create

    client = Client()
    client.force_login(user_create(username=f"bench-{run.pk}", password="bench-password-123", role=Role.VIEWER))
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        response = client.get(f"/runs/{run.pk}/report/", HTTP_HOST="localhost")
        timings.append(time.perf_counter() - started)
    print(f"  report page: {min(timings) * 1e3:.0f} ms (best of 3, {len(response.content) / 1e6:.1f} MB, status {response.status_code}; target < 1 s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--whatif", action="store_true")
    parser.add_argument("--failures", action="store_true")
    parser.add_argument("--workers", default="1,2", help="Worker counts to try")
    chosen = parser.parse_args()
    if not (chosen.whatif or chosen.failures):
        chosen.whatif = chosen.failures = True

    from twin.common.embedded import EmbeddedRedis

    redis = EmbeddedRedis().start()
    scratch = contextlib.ExitStack()
    database_url = scratch.enter_context(scratch_database(Path(tempfile.mkdtemp()), "twin_bench"))
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis.url, "DJANGO_SETTINGS_MODULE": "twin.settings", "TWIN_DATA_DIR": tempfile.mkdtemp()}
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from twin.fabrics.services import snapshot_create
    from twin.runs.models import Run, RunKind
    from twin.runs.services import run_create
    from twin.simcore.generate import fat_tree, supernode

    workers: list[subprocess.Popen] = []
    try:
        call_command("migrate", verbosity=0)
        cases = []
        if chosen.whatif:
            base = snapshot_create(fabric_name="bench-whatif", spec=supernode(cards=1024), source_name="g", source_format="generated", checksum="0")
            cases.append(("what-if 1k->16k, 4 collectives x 21 sizes (target < 60 s with 2 workers)", RunKind.WHATIF, base,
                          {"factors": [1, 2, 4, 8, 16], "alternatives": ["one-supernode"]}))
        if chosen.failures:
            base = snapshot_create(fabric_name="bench-failures", spec=fat_tree(endpoints=4096, radix=64), source_name="g", source_format="generated", checksum="0")
            cases.append(("worst single-switch failure, 4,096 cards (target < 30 s)", RunKind.FAILURES, base,
                          {"worst": "switch", "workload": {"collective": "allreduce", "size_bytes": 2**28, "algorithm": "ring"}}))
        counts = [int(value) for value in chosen.workers.split(",")]
        for label, kind, snapshot, params in cases:
            times = {}
            for count in counts:
                for worker in workers:
                    worker.terminate()
                    worker.wait()
                workers = [
                    subprocess.Popen([sys.executable, "-m", "celery", "-A", "twin", "worker", "--pool=solo", "--loglevel=WARNING",
                                      "--without-gossip", "--without-mingle", "-n", f"bench{n}@%h"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    for n in range(count)
                ]
                time.sleep(3)  # let the workers connect
                started = time.perf_counter()
                run = run_create(kind=kind, snapshot=snapshot, params=params)
                while not Run.objects.get(pk=run.pk).is_terminal:
                    time.sleep(0.5)
                elapsed = time.perf_counter() - started
                run.refresh_from_db()
                times[count] = elapsed
                print(f"{label}: {count} worker(s): {elapsed:7.1f} s, {run.cells.count()} cells, {run.status}{' - ' + run.error if run.error else ''}", flush=True)
            if len(times) > 1:
                print(f"  speed-up {counts[0]} -> {counts[-1]} workers: {times[counts[0]] / times[counts[-1]]:.2f}x (2 cores)")
            if kind == RunKind.WHATIF and run.status == "succeeded":
                report_page_timing(run)
    finally:
        for worker in workers:
            worker.terminate()
            worker.wait()
        from django.db import connection

        connection.close()
        scratch.close()
        redis.stop()


if __name__ == "__main__":
    main()
