"""Benchmark of the ibnetdiscover parser on a 16,384-endpoint, 3-tier, k=64 fat-tree.

Run from the repository root: ``.venv/bin/python bench/bench_ingest_ibnetdiscover.py``.

The fabric (512 leaf, 512 spine, 256 core switches, 49,152 links) comes from
``twin.simcore.generate.fat_tree`` and is written out with
``export_ibnetdiscover``, giving a dump of ~200,000 lines. It prints the wall
time of ``parse_fabric`` on it (best of a few runs, without tracing; the
target is under 2 s), its peak traced memory (one more run under
``tracemalloc``), the process's peak resident set size, and the ratio against
a simple baseline: a line-by-line regex reader that builds a networkx graph,
checked to find the same number of links. Figures are printed, not asserted.
"""

from __future__ import annotations

import re
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import networkx as nx  # noqa: E402

from twin.ingest import parse_fabric  # noqa: E402
from twin.ingest.writers import export_ibnetdiscover  # noqa: E402
from twin.simcore.generate import fat_tree  # noqa: E402
from bench.measure import best_time, peak_traced_bytes  # noqa: E402

ENDPOINTS, RADIX = 16_384, 64
REPEATS = 3
TARGET_SECONDS = 2.0

_BASELINE_NODE = re.compile(r'^(Switch|Ca|Rt)\s+\d+\s+"[SHR]-([0-9a-f]{16})"')
_BASELINE_PORT = re.compile(r'^\[(\d+)\].*?"[SHR]-([0-9a-f]{16})"\[(\d+)\].*lid \d+ (\d+)x(\w+)\s*$')
_BASELINE_LANE_GBPS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}


def networkx_baseline(text: str) -> nx.MultiGraph:
    """The simple way: a regex per line, one multigraph edge per cable (from its lower end)."""
    graph = nx.MultiGraph()
    node = None
    for line in text.splitlines():
        if found := _BASELINE_NODE.match(line):
            node = found.group(2)
            graph.add_node(node, kind=found.group(1))
        elif node is not None and (found := _BASELINE_PORT.match(line)):
            port, remote, remote_port, lanes, speed = found.groups()
            if (node, int(port)) < (remote, int(remote_port)):
                graph.add_edge(node, remote, ports=(port, remote_port), gbps=int(lanes) * _BASELINE_LANE_GBPS[speed])
    return graph


def main() -> None:
    start = time.perf_counter()
    fabric = fat_tree(endpoints=ENDPOINTS, radix=RADIX)
    built = time.perf_counter()
    text = export_ibnetdiscover(fabric)
    exported = time.perf_counter()
    tiers = {tier: sum(node.tier == tier for node in fabric.switches()) for tier in ("leaf", "spine", "core")}
    print(
        f"fabric: {ENDPOINTS:,} endpoints, k={RADIX}, switches {tiers}, {len(fabric.links):,} links "
        f"(generated in {built - start:.2f} s)"
    )
    print(f"dump: {text.count(chr(10)):,} lines, {len(text) / 2**20:.1f} MiB (written in {exported - built:.2f} s)")

    def parse() -> object:
        return parse_fabric(text, source_name="fat-tree.topo", format="ibnetdiscover")

    parsed = parse()
    seconds = best_time(parse, REPEATS)
    peak = peak_traced_bytes(parse) / 2**20
    baseline_start = time.perf_counter()
    baseline = networkx_baseline(text)
    baseline_seconds = time.perf_counter() - baseline_start
    agreement = "agrees" if baseline.number_of_edges() == len(parsed.links) else "DIFFERS"

    print()
    print("parse_fabric s | target | peak traced MiB | peak RSS MiB | networkx baseline s | ratio")
    print("---------------|--------|-----------------|--------------|---------------------|------")
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
    verdict = "met" if seconds < TARGET_SECONDS else "MISSED"
    print(
        f"{seconds:14.3f} | {verdict:>6} | {peak:15.1f} | {rss_mib:12.0f} | {baseline_seconds:19.3f} | "
        f"{baseline_seconds / seconds:.2f}x"
    )
    print()
    print(f"parsed: {parsed.kind_counts()}, {len(parsed.links):,} links; the baseline's edge count {agreement}")
    print(
        f"time: best of {REPEATS} untraced runs, validation included; peak traced: one run under tracemalloc "
        "(the text is allocated beforehand); peak RSS: the whole process so far"
    )
    print(
        "the baseline only splits lines and adds edges: no checks, no error lines, no tiers, states, "
        "names or hosts, no FabricSpec"
    )


if __name__ == "__main__":
    main()
