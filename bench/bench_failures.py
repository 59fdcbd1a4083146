"""Benchmark of the worst single-switch failure search (issue 8) on a 4,096-card fabric.

Run from the repository root: ``.venv/bin/python bench/bench_failures.py [--limit N]``.

Evaluates single-switch failures of a 4,096-card 3-tier fat-tree (ring
all-reduce of 1 GiB on every card as the workload) one after the other, as
one worker would: prints the baseline time (once per chunk), the time per
candidate and the serial total (extrapolated when ``--limit`` evaluates only
the first N candidates, spread over every tier). The distributed target
(< 30 s) is the serial total divided by the workers. Figures are printed,
not asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twin.operations.failures import FailureBaseline, Workload, evaluate_failure, failure_candidates, rank_failures  # noqa: E402
from twin.simcore.generate import fat_tree  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None, help="evaluate only N candidates (spread evenly)")
    limit = parser.parse_args().limit
    fabric = fat_tree(endpoints=4096)
    workload = Workload(size_bytes=float(1 << 30))
    candidates = failure_candidates(fabric, "switch")
    chosen = candidates if limit is None else candidates[:: max(1, len(candidates) // limit)][:limit]
    print(f"fabric: {len(fabric.cards())} cards, {len(candidates)} switches, {len(fabric.links)} links")
    start = time.perf_counter()
    baseline = FailureBaseline.of(fabric, workload)
    print(f"baseline (hop matrix + workload): {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    results = [evaluate_failure(fabric, [switch], workload, baseline=baseline) for switch in chosen]
    elapsed = time.perf_counter() - start
    per_candidate = elapsed / len(chosen)
    worst = rank_failures(results)["worst"]
    print(f"{len(chosen)} candidates in {elapsed:.1f} s: {per_candidate * 1e3:.0f} ms per candidate")
    print(f"serial search of all {len(candidates)} switches: ~{per_candidate * len(candidates):.0f} s")
    print(
        f"worst of those evaluated: {worst['elements']} cuts off {worst['cards_cut_off_count']} cards, "
        f"time x{worst['workload']['time_change']:.2f}"
    )


if __name__ == "__main__":
    main()
