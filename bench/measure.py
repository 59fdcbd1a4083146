"""How the benchmarks measure: best wall time of a few runs, and peak traced memory of one."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

__all__ = ["best_time", "peak_traced_bytes"]


def best_time(function: Callable[[], object], repeats: int) -> float:
    """Seconds of the fastest of `repeats` runs (the least disturbed by the rest of the machine)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_traced_bytes(function: Callable[[], object]) -> int:
    """Peak memory Python allocated during one run (tracemalloc; slows the run down)."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
