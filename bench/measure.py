"""How the benchmarks measure: best wall time of a few runs, peak traced memory of one, and one
run timed and printed as a labelled row."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

__all__ = ["best_time", "peak_traced_bytes", "timed"]


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


def timed(label: str, function: Callable[[], object], *, width: int = 58) -> tuple[object, float]:
    """Run ``function`` once; print ``label`` and its seconds as one row; its result and seconds."""
    started = time.perf_counter()
    result = function()
    elapsed = time.perf_counter() - started
    print(f"{label:<{width}} {elapsed:8.2f} s")
    return result, elapsed
