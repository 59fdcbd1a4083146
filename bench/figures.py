"""The README's figures table from one run of the benchmarks that carry a target.

Run from the repository root on a machine doing nothing else (the table records the load):
    .venv/bin/python bench/figures.py                 # every benchmark below, ~15 min on 2 cores
    .venv/bin/python bench/figures.py --only layout telemetry

Each benchmark runs in its own process, one after another, with ``TWIN_BENCH_FIGURES`` naming a
file its ``keep_figure`` calls append to (``bench/measure.py``); its printed output goes to
``var/bench/<name>.log``. At the end the kept figures are printed as one markdown table: figure,
target, measured, met, and the load average when it was measured. A benchmark that fails is
named with the tail of its log, and the others still run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import FIGURES_FILE_VARIABLE  # noqa: E402

# name -> the benchmark's command line (after the interpreter); the targets live in each script.
BENCHMARKS = {
    "simulation": ["bench/bench_sim_collectives.py"],
    "scale": ["bench/bench_scale.py", "--cards", "16384", "65536", "--cases", "compile", "ring", "alltoall", "placement"],
    "alltoall": ["bench/bench_scale.py", "--cards", "4096", "16384", "--cases", "a2a-hash", "a2a-pinned", "a2a-rail-hash", "a2a-rail-pinned"],
    "ws-load": ["bench/bench_ws_load.py", "--clients", "500", "--web-processes", "2", "--client-processes", "4", "--frames", "binary"],
    "telemetry": ["bench/bench_telemetry.py", "--seconds", "20"],
    "layout": ["bench/bench_layout_serve.py"],
    "map": ["bench/bench_map.py"],
}
LOG_DIRECTORY = ROOT / "var" / "bench"


def run_benchmark(name: str, figures_file: Path, position: str) -> bool:
    """Run one benchmark to its log, showing its elapsed time; whether it exited cleanly."""
    command = [sys.executable, *BENCHMARKS[name]]
    log_path = LOG_DIRECTORY / f"{name}.log"
    started = time.monotonic()
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, FIGURES_FILE_VARIABLE: str(figures_file)})
        while process.poll() is None:
            print(f"\r{position} {name}: running, {time.monotonic() - started:5.0f} s", end="", flush=True)
            time.sleep(1)
    elapsed = time.monotonic() - started
    if process.returncode:
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        print(f"\r{position} {name}: FAILED (exit {process.returncode}) after {elapsed:.0f} s; {log_path}:\n    " + "\n    ".join(tail))
        return False
    print(f"\r{position} {name}: done in {elapsed:.0f} s ({log_path.relative_to(ROOT)})")
    return True


def measured(row: dict) -> str:
    value = row["value"]
    number = f"{value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:,.3g}"
    return f"{number} {row['unit']}".strip()


def table(rows: list[dict]) -> str:
    met = {True: "yes", False: "**no**", None: "-"}
    lines = ["| figure | target | measured | met | load |", "|---|---|---|---|---|"]
    lines += [f"| {row['figure']} | {row['target']} | {measured(row)} | {met[row['met']]} | {row['load']:.1f} |" for row in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, help="run these benchmarks only")
    options = parser.parse_args()
    chosen = options.only or list(BENCHMARKS)
    LOG_DIRECTORY.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        figures_file = Path(scratch) / "figures.jsonl"
        figures_file.touch()
        failed = [name for number, name in enumerate(chosen, 1) if not run_benchmark(name, figures_file, f"[{number}/{len(chosen)}]")]
        rows = [json.loads(line) for line in figures_file.read_text(encoding="utf-8").splitlines()]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"\nFigures of one run, {time.strftime('%Y-%m-%d')}, commit {commit or 'unknown'}, {os.cpu_count()} cores (load: 1-minute average when measured):\n")
    print(table(rows))
    if failed:
        print(f"\nfailed: {', '.join(failed)} (their figures are missing above)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
