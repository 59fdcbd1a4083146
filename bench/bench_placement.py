"""Benchmark of topology-aware placement (issue 8; target: 16,384 ranks in < 5 s).

Run from the repository root: ``.venv/bin/python bench/bench_placement.py``.

Places TP=8 x PP=4 x DP=512 (16,384 ranks, 175B model) on a 16,384-card,
3-tier fat-tree with each strategy and prints the placement time (the
aware one includes compiling the fabric, the first time) and the simulated
communication time per step by dimension. Figures are printed, not asserted.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twin.operations.placement import Job, evaluate_placement, place  # noqa: E402
from twin.simcore.generate import fat_tree  # noqa: E402


def main() -> None:
    fabric = fat_tree(endpoints=16384)
    job = Job(tp=8, pp=4, dp=512, model_params=175e9)
    print(f"fabric: {len(fabric.cards())} cards, {len(fabric.switches())} switches, {len(fabric.links)} links")
    print(f"job: TP {job.tp} x PP {job.pp} x DP {job.dp} = {job.world} ranks")
    for strategy in ("aware", "naive", "random"):
        start = time.perf_counter()
        placement = place(fabric, job, strategy)
        placed = time.perf_counter() - start
        start = time.perf_counter()
        result = evaluate_placement(fabric, placement)
        evaluated = time.perf_counter() - start
        by_dimension = ", ".join(f"{name} {value['time_s']:.3f} s" for name, value in result["dimensions"].items())
        print(
            f"{strategy:>6}: placed in {placed:.2f} s, evaluated in {evaluated:.2f} s; "
            f"communication {result['communication_time_s']:.3f} s per step ({by_dimension})"
        )


if __name__ == "__main__":
    main()
