"""Benchmark of hop_statistics on generated 2-tier leaf-spine super-nodes.

Run from the repository root: ``.venv/bin/python bench/bench_hops.py``.

For each size it prints the fabric's size, the wall time of ``hop_statistics``
(best of a few runs, without tracing), its peak traced memory (a separate
run under ``tracemalloc``, which slows Python down) and, at 1,024 cards only,
how many times faster it is than a simple baseline: one networkx BFS per card
over the live links. The baseline's histogram is checked against ours.
Figures are printed, not asserted.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import networkx as nx  # noqa: E402

from twin.simcore.generate import supernode  # noqa: E402
from twin.simcore.hops import hop_statistics  # noqa: E402
from twin.simcore.model import FabricSpec  # noqa: E402
from bench.measure import best_time, peak_traced_bytes  # noqa: E402

# (cards, switch radix): the smallest radices in powers of two that fit 2 tiers (k*k/2 >= cards).
SIZES = ((1024, 64), (4096, 128), (16384, 256))
BASELINE_MAX_CARDS = 1024
REPEATS = 3


def networkx_histogram(fabric: FabricSpec) -> dict[str, int]:
    """Baseline: BFS from every card; in a leaf-spine, hops = path edges - 1."""
    graph = nx.Graph()
    graph.add_edges_from((link.a, link.b) for link in fabric.links if link.state != "down")
    card_ids = [card.id for card in fabric.cards()]
    order = {card_id: position for position, card_id in enumerate(card_ids)}
    counts: Counter[int] = Counter()
    for source in card_ids:
        for target, edges in nx.single_source_shortest_path_length(graph, source).items():
            if order.get(target, -1) > order[source]:
                counts[edges - 1] += 1
    return {str(hops): counts[hops] for hops in sorted(counts)}


def main() -> None:
    header = ("cards", "radix", "switches", "links", "hop_statistics s", "peak MiB", "vs networkx")
    print(" | ".join(header))
    print(" | ".join("-" * len(title) for title in header))
    notes = []
    for cards, radix in SIZES:
        fabric = supernode(cards=cards, switch_radix=radix)
        stats = hop_statistics(fabric)
        seconds = best_time(lambda: hop_statistics(fabric), REPEATS)
        peak = peak_traced_bytes(lambda: hop_statistics(fabric)) / 2**20
        if cards <= BASELINE_MAX_CARDS:
            start = time.perf_counter()
            baseline = networkx_histogram(fabric)
            baseline_seconds = time.perf_counter() - start
            versus = f"{baseline_seconds / seconds:.0f}x faster ({baseline_seconds:.2f} s)"
            agreement = "agrees" if baseline == stats["histogram"] else "DIFFERS"
            notes.append(f"{cards} cards: the networkx histogram {agreement}")
        else:
            versus = "skipped"
        row = (cards, radix, stats["switches"], stats["links"], f"{seconds:.3f}", f"{peak:.1f}")
        print(" | ".join(str(cell) for cell in (*row, versus)))
    print()
    print("\n".join(notes))
    print(
        f"networkx baseline skipped above {BASELINE_MAX_CARDS} cards: one pure-Python BFS per card"
    )
    print(
        f"time: best of {REPEATS} untraced runs; peak: memory traced during one run "
        "(the fabric is built beforehand)"
    )


if __name__ == "__main__":
    main()
