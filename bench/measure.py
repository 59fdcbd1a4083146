"""How the benchmarks measure: best wall time of a few runs, peak traced memory of one, one run
timed and printed as a labelled row, and headline figures kept for the README's table
(``bench/figures.py``)."""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from collections.abc import Callable

__all__ = ["FIGURES_FILE_VARIABLE", "best_time", "keep_figure", "peak_traced_bytes", "timed"]

FIGURES_FILE_VARIABLE = "TWIN_BENCH_FIGURES"


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


def keep_figure(figure: str, value: float, unit: str, *, target: str, met: bool | None) -> None:
    """Append one headline figure, its target and whether it is met, with the machine's load at
    that moment, as a JSON line to the file ``$TWIN_BENCH_FIGURES`` names (``bench/figures.py``
    sets it and prints the table). Without the variable nothing is kept: a benchmark run by hand
    only prints."""
    path = os.environ.get(FIGURES_FILE_VARIABLE)
    if not path:
        return
    row = {"figure": figure, "value": value, "unit": unit, "target": target, "met": met, "load": os.getloadavg()[0]}
    with open(path, "a", encoding="utf-8") as figures:
        figures.write(json.dumps(row) + "\n")
