"""Benchmark of the worst single-failure search (issue 8): switches of a 4,096-card fabric by default.

Run from the repository root: ``.venv/bin/python bench/bench_failures.py [--limit N] [--endpoints 16384] [--kind link]``.

Evaluates single failures (switches by default) of a 3-tier fat-tree (4,096 cards by default; ring
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
    parser.add_argument("--endpoints", type=int, default=4096, help="cards of the fat-tree (4,096: the issue's case)")
    parser.add_argument("--kind", default="switch", choices=("switch", "link", "leaf"), help="which single failures")
    options = parser.parse_args()
    limit = options.limit
    fabric = fat_tree(endpoints=options.endpoints)
    workload = Workload(size_bytes=float(1 << 30))
    candidates = failure_candidates(fabric, options.kind)
    chosen = candidates if limit is None else candidates[:: max(1, len(candidates) // limit)][:limit]
    print(f"fabric: {len(fabric.cards())} cards, {len(fabric.switches())} switches, {len(fabric.links)} links; {len(candidates)} {options.kind} candidates")
    start = time.perf_counter()
    baseline = FailureBaseline.of(fabric, workload)
    print(f"baseline (hop matrix + workload): {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    results = [evaluate_failure(fabric, [element], workload, baseline=baseline) for element in chosen]
    elapsed = time.perf_counter() - start
    per_candidate = elapsed / len(chosen)
    worst = rank_failures(results)["worst"]
    print(f"{len(chosen)} candidates in {elapsed:.1f} s: {per_candidate * 1e3:.0f} ms per candidate")
    print(f"serial search of all {len(candidates)} {options.kind} candidates: ~{per_candidate * len(candidates):.0f} s")
    print(
        f"worst of those evaluated: {worst['elements']} cuts off {worst['cards_cut_off_count']} cards, "
        f"time x{worst['workload']['time_change']:.2f}"
    )


if __name__ == "__main__":
    main()
