"""Benchmarks of the simulation core against issue 4's speed targets.

Run from the repository root: ``.venv/bin/python bench/bench_sim_collectives.py``.

Cases (targets on the 2-core machine):

1. congestion-aware ring AllReduce on a 16,384-card 3-tier fat-tree (< 1 s);
2. every algorithm x 20 message sizes on 4,096 cards (< 5 s);
3. AllToAll on 1,024 cards (< 5 s);
4. auto AllToAll on 16,384 cards: the direct (all-pairs) algorithm runs as flow classes, none of
   its 268 M pairs built (hashing at its expectation), against Bruck (time and traced peak memory);
5. peak memory of the whole script (< 2 GB, resident set size).

``--baseline /path/to/other/checkout`` runs case 2 alone on both checkouts instead, each in fresh
processes taking turns (best of ``--repeats``), and prints both times (wall and CPU, with the
load) and which (collective, algorithm) answers differ: every result of every size to the last
digit.

Each case also runs a straightforward networkx/pure-Python implementation of
the same computation (networkx shortest path per flow, dictionary-based
progressive filling) on a size it can finish, next to ours on that size,
and prints the speed ratio and whether the bottleneck rates agree. Figures
are printed, not asserted. Wall times include compiling the fabric unless
said otherwise; "best of" runs reuse nothing between runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # after a checkout put first (--baseline)

import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402

from bench.measure import keep_figure, peak_traced_bytes  # noqa: E402
from twin.simcore.algorithms import algorithms_for  # noqa: E402
from twin.simcore.compile import _compile_cached  # noqa: E402
from twin.simcore.generate import fat_tree  # noqa: E402
from twin.simcore.model import FabricSpec  # noqa: E402
from twin.simcore.simulate import Simulator  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SIZES = [2**exponent for exponent in range(10, 30)]  # 1 KiB .. 512 MiB: 20 sizes


def fresh(function):
    """Time ``function`` with the compile cache emptied first."""
    _compile_cached.cache_clear()
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def networkx_min_rate(fabric: FabricSpec, pairs: list[tuple[int, int]]) -> tuple[float, float]:
    """Baseline: one networkx shortest path per flow, then max-min fair rates with dicts.

    Returns (seconds, slowest flow rate in bytes/s).
    """
    start = time.perf_counter()
    graph = nx.Graph()
    for link in fabric.links:
        if link.state != "down":
            graph.add_edge(link.a, link.b, capacity=link.bandwidth_gbps * 1e9 / 8)
    cards = [card.id for card in fabric.cards()]
    paths = []
    for source, target in pairs:
        nodes = nx.shortest_path(graph, cards[source], cards[target])
        paths.append(list(zip(nodes, nodes[1:])))
    capacity = {}
    for a, b, data in graph.edges(data=True):
        capacity[(a, b)] = capacity[(b, a)] = data["capacity"]
    rates = [0.0] * len(paths)
    active = set(range(len(paths)))
    remaining = dict(capacity)
    while active:
        crossing = defaultdict(list)
        for flow in active:
            for arc in paths[flow]:
                crossing[arc].append(flow)
        step = min(remaining[arc] / len(flows) for arc, flows in crossing.items())
        for flow in active:
            rates[flow] += step
        frozen = set()
        for arc, flows in crossing.items():
            remaining[arc] -= step * len(flows)
            if remaining[arc] <= 1e-9 * capacity[arc]:
                frozen.update(flows)
        active -= frozen
    return time.perf_counter() - start, min(rates)


def sweep(simulator: Simulator, *, digest: bool = False) -> tuple[int, set[str], dict[str, str]]:
    """Case 2: every algorithm of every collective at every size: (runs, what was not run and
    why and, with ``digest``, a digest of each (collective/algorithm)'s results at all sizes)."""
    done, skipped, digests = 0, set(), {}
    for collective in ("allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall", "sendrecv"):
        for algorithm in algorithms_for(collective):  # every one, not only the tuner's
            hashed = hashlib.sha256()
            for size in SIZES:
                try:
                    result = simulator.run(collective, size, algorithm, top_links=5)
                    done += 1
                except Exception as error:  # noqa: BLE001 - reported below
                    skipped.add(f"{collective}/{algorithm}: {str(error).split(';')[0]}")
                    break
                if digest:
                    hashed.update(result_bytes(result))
            if digest:
                digests[f"{collective}/{algorithm}"] = hashed.hexdigest()
    return done, skipped, digests


def result_bytes(result: dict) -> bytes:
    """A result to the last digit, as bytes: its per-link lists as float64 (JSON text of tens of
    thousands of floats a result cost the sweep twice its own time), the rest as JSON."""
    per_link = ("link_bytes", "link_utilization")
    rest = {key: value for key, value in result.items() if key not in per_link}
    return json.dumps(rest, sort_keys=True).encode() + b"".join(np.asarray(result[key], dtype=np.float64).tobytes() for key in per_link)


def sweep_case() -> dict:
    """Case 2 in this process (what ``--baseline`` starts on each checkout), compile included."""
    medium = fat_tree(endpoints=4096)
    _compile_cached.cache_clear()
    wall, cpu = time.perf_counter(), time.process_time()
    done, skipped, digests = sweep(Simulator(medium), digest=True)
    return {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu, "runs": done, "digests": digests}


def compare_sweeps(baseline: Path, repeats: int) -> None:
    def fresh_process(root: Path) -> dict:
        code = (
            f"import json, sys; sys.path[:0] = [{str(root)!r}, {str(ROOT / 'bench')!r}]; "
            "from bench_sim_collectives import sweep_case; print(json.dumps(sweep_case()))"
        )
        done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"the sweep on {root} failed:\n{done.stderr}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    runs = {"ours": [], "baseline": []}
    for _ in range(repeats):
        for name, root in (("ours", ROOT), ("baseline", baseline.resolve())):
            load = os.getloadavg()[0]
            runs[name].append(fresh_process(root) | {"load": load})
    for name, results in runs.items():
        print(
            f"{name:>8}: all algorithms x 20 sizes on 4,096 cards, {results[0]['runs']} runs: "
            + ", ".join(f"{run['wall_s']:.2f} s wall / {run['cpu_s']:.2f} s CPU (load {run['load']:.1f})" for run in results)
        )
    best = {name: min(run["wall_s"] for run in results) for name, results in runs.items()}
    best_cpu = {name: min(run["cpu_s"] for run in results) for name, results in runs.items()}
    ours, theirs = runs["ours"][0]["digests"], runs["baseline"][0]["digests"]
    differ = sorted(name for name in ours.keys() | theirs.keys() if ours.get(name) != theirs.get(name))
    print(
        f"best: ours {best['ours']:.2f} s, baseline {best['baseline']:.2f} s (x{best['baseline'] / best['ours']:.2f}); "
        f"CPU x{best_cpu['baseline'] / best_cpu['ours']:.2f}; "
        f"answers to the last digit: {'all the same' if not differ else 'differ for ' + ', '.join(differ)}"
    )


def ring_pairs(count: int) -> list[tuple[int, int]]:
    return [(rank, (rank + 1) % count) for rank in range(count)]


def all_pairs(count: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(count) for b in range(count) if a != b]


def row(*cells: object) -> None:
    print(" | ".join(str(cell) for cell in cells))


def main() -> None:
    row("case", "cards", "flows", "ours s", "target s", "baseline", "notes")
    row(*("---",) * 7)

    # 1. Ring AllReduce, 16,384 cards, 3 tiers.
    big = fat_tree(endpoints=16384)
    seconds, result = fresh(lambda: Simulator(big).run("allreduce", 342e6, "ring"))
    simulator = Simulator(big)
    start = time.perf_counter()
    simulator.run("allreduce", 342e6, "ring")
    run_only = time.perf_counter() - start
    # Simple: its payload rate is the max-min rate itself (LL and LL128 carry flags).
    ours_pinned, pinned_result = fresh(lambda: Simulator(big, ecmp="pinned").run("allreduce", 342e6, "ring", "Simple"))
    base_seconds, base_rate = networkx_min_rate(big, ring_pairs(16384))
    agree = np.isclose(pinned_result["phases"][0]["slowest_rate_GBps"] * 1e9, base_rate)
    row(
        "ring AllReduce 342 MB", 16384, 16384, f"{seconds:.2f} (compile + run; run {run_only:.2f})", 1,
        f"same size: networkx {base_seconds:.2f} s vs ours {ours_pinned:.2f} s = "
        f"{base_seconds / ours_pinned:.1f}x",
        f"busbw {result['busbw_GBps']:.1f} GB/s, {result['bound']}-bound; slowest rates {'agree' if agree else 'DIFFER'}",
    )
    keep_figure("ring AllReduce, 16,384 cards, compile and run", seconds, "s", target="< 1 s", met=seconds < 1)

    # 2. All algorithms x 20 sizes, 4,096 cards.
    medium = fat_tree(endpoints=4096)

    seconds, (done, skipped, _) = fresh(lambda: sweep(Simulator(medium)))
    row(
        "all algorithms x 20 sizes", 4096, "-", f"{seconds:.2f}", 5, "-",
        f"{done} runs; not run: {'; '.join(sorted(skipped)) or 'none'}",
    )
    keep_figure(f"every algorithm x 20 sizes, 4,096 cards ({done} runs)", seconds, "s", target="< 5 s", met=seconds < 5)

    # 3. AllToAll, 1,024 cards.
    small = fat_tree(endpoints=1024, radix=16)  # 3 tiers
    seconds, result = fresh(lambda: Simulator(small).run("alltoall", 64 * 2**20, "direct"))
    tiny = fat_tree(endpoints=256, radix=16)
    ours_tiny, tiny_result = fresh(lambda: Simulator(tiny, ecmp="pinned").run("alltoall", 64 * 2**20, "direct", "Simple"))
    base_seconds, base_rate = networkx_min_rate(tiny, all_pairs(256))
    row(
        "AllToAll 64 MiB", 1024, 1024 * 1023, f"{seconds:.2f}", 5,
        f"256 cards: networkx {base_seconds:.2f} s vs ours {ours_tiny:.3f} s = {base_seconds / ours_tiny:.0f}x",
        f"busbw {result['busbw_GBps']:.2f} GB/s (hash ECMP); "
        f"networkx single shortest paths vs our d-mod-k: slowest {base_rate / 1e9:.3f} vs "
        f"{tiny_result['phases'][0]['slowest_rate_GBps']:.3f} GB/s",
    )
    keep_figure("direct AllToAll, 1,024 cards", seconds, "s", target="< 5 s", met=seconds < 5)

    # 4. Auto AllToAll, 16,384 cards: all-pairs as flow classes, its pairs never built.
    simulator = Simulator(big)
    start = time.perf_counter()
    result = simulator.run("alltoall", 1e6, "auto", top_links=0)
    seconds = time.perf_counter() - start
    traced = peak_traced_bytes(lambda: Simulator(big).run("alltoall", 1e6, "auto", top_links=0)) / 2**30
    row(
        "auto AllToAll 1 MB", 16384, "-", f"{seconds:.2f} (compiled)", "-", "-",
        f"chose {result['algorithm']} of {', '.join(f'{name} {time_s * 1e3:.2f} ms' for name, time_s in result['choice']['candidates'].items())}; "
        f"refused: {', '.join(result['choice']['skipped']) or 'none'}; traced peak {traced:.2f} GiB",
    )

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print()
    print(f"peak resident memory of the whole run: {peak:.2f} GiB (target < 2 GB)")
    keep_figure("simulation benchmarks, peak resident memory", peak * 2**30 / 1e9, "GB", target="< 2 GB", met=peak * 2**30 < 2e9)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout: run case 2 on both and compare")
    parser.add_argument("--repeats", type=int, default=2, help="runs of case 2 on each checkout (with --baseline)")
    options = parser.parse_args()
    if options.baseline:
        compare_sweeps(options.baseline, options.repeats)
    else:
        main()
