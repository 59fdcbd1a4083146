"""Benchmark of diff_fabrics on a 16,384-card, 3-tier fat-tree with injected faults.

Run from the repository root: ``.venv/bin/python bench/bench_diff.py``.

It builds the plan with ``fat_tree(endpoints=16384)`` (1,280 switches, 49,152
links), derives a "found" copy with a known set of faults (100 missing links,
50 miswired cables, 20 swapped pairs, 30 degraded links, 10 unknown devices),
times ``diff_fabrics`` (best of a few runs) and checks the counts per class.
For scale it times a simple baseline: two networkx graphs of ``(node, port)``
ends and their edge-set difference, which finds missing and extra links only.
It also times the same diff with every found node re-keyed by a GUID-style
id (``ib:<16 hex>``), so that all nodes must be matched by name, as when a
plan written with names meets a discovery. Figures are printed, not asserted.
"""

from __future__ import annotations

import dataclasses
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import networkx as nx  # noqa: E402

from twin.simcore.diff import diff_fabrics, punch_list_csv  # noqa: E402
from twin.simcore.generate import fat_tree  # noqa: E402
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec  # noqa: E402
from bench.measure import best_time  # noqa: E402

ENDPOINTS = 16_384
FAULTS = {"MISSING": 100, "MISWIRED": 50, "SWAPPED": 20, "DEGRADED": 30, "UNKNOWN_DEVICE": 10}
REPEATS = 3
SEED = 2024


def with_faults(plan: FabricSpec, seed: int = SEED) -> FabricSpec:
    """A copy of ``plan`` with the faults of ``FAULTS``, each on its own leaf so none overlap.

    Missing links free leaf ports; a miswired card moves to a freed port of its
    own leaf and an unknown card takes another one, so their counts stay exact.
    """
    rng = random.Random(seed)
    kinds = {node.id: node.kind for node in plan.nodes}
    card_links_by_leaf: dict[str, list[int]] = defaultdict(list)
    uplinks = []
    for position, link in enumerate(plan.links):
        if kinds[link.a] == "card":
            card_links_by_leaf[link.b].append(position)
        else:
            uplinks.append(position)
    leaves = sorted(card_links_by_leaf)
    rng.shuffle(leaves)
    links: list[LinkSpec | None] = list(plan.links)
    nodes = list(plan.nodes)

    fault_leaves = iter(leaves)
    for _ in range(FAULTS["MISSING"] - FAULTS["MISWIRED"] - FAULTS["UNKNOWN_DEVICE"]):
        links[card_links_by_leaf[next(fault_leaves)][0]] = None
    for _ in range(FAULTS["MISWIRED"]):
        removed, moved = card_links_by_leaf[next(fault_leaves)][:2]
        free_port = links[removed].b_port
        links[removed] = None
        links[moved] = dataclasses.replace(links[moved], b_port=free_port)
    for number in range(1, FAULTS["UNKNOWN_DEVICE"] + 1):
        removed = card_links_by_leaf[next(fault_leaves)][0]
        stranger = NodeSpec(id=f"stranger-{number:02d}", kind="card", name=f"stranger-{number:02d}")
        nodes.append(stranger)
        links[removed] = dataclasses.replace(links[removed], a=stranger.id, a_port="1")
    for _ in range(FAULTS["SWAPPED"]):
        first, second = card_links_by_leaf[next(fault_leaves)][:2]
        links[first], links[second] = (
            dataclasses.replace(links[first], b_port=links[second].b_port),
            dataclasses.replace(links[second], b_port=links[first].b_port),
        )
    for position in rng.sample(uplinks, FAULTS["DEGRADED"]):
        links[position] = dataclasses.replace(links[position], bandwidth_gbps=200.0, state="degraded")
    return FabricSpec(f"{plan.name} (found)", tuple(nodes), tuple(link for link in links if link))


def keyed_by_guid(spec: FabricSpec) -> FabricSpec:
    """The same fabric with every node id replaced by an ``ib:<guid>`` id, names kept."""
    new_id = {node.id: f"ib:{position:016x}" for position, node in enumerate(spec.nodes)}
    nodes = tuple(dataclasses.replace(node, id=new_id[node.id]) for node in spec.nodes)
    links = tuple(dataclasses.replace(link, a=new_id[link.a], b=new_id[link.b]) for link in spec.links)
    return FabricSpec(spec.name, nodes, links, spec.attrs)


def networkx_missing_extra(plan: FabricSpec, found: FabricSpec) -> tuple[int, int]:
    """Baseline: edge-set difference of two graphs whose nodes are (node, port) ends."""
    graphs = []
    for spec in (plan, found):
        graph = nx.Graph()
        graph.add_edges_from(((link.a, link.a_port), (link.b, link.b_port)) for link in spec.links)
        graphs.append(graph)
    planned, discovered = graphs
    missing = sum(1 for edge in planned.edges if not discovered.has_edge(*edge))
    extra = sum(1 for edge in discovered.edges if not planned.has_edge(*edge))
    return missing, extra


def main() -> None:
    start = time.perf_counter()
    plan = fat_tree(endpoints=ENDPOINTS)
    found = with_faults(plan)
    build_seconds = time.perf_counter() - start
    print(
        f"plan: {len(plan.cards())} cards, {len(plan.switches())} switches, {len(plan.links)} links; "
        f"found: {len(found.nodes)} nodes, {len(found.links)} links (built in {build_seconds:.1f} s)"
    )

    report = diff_fabrics(plan, found)
    seconds = best_time(lambda: diff_fabrics(plan, found), REPEATS)
    csv_seconds = best_time(lambda: punch_list_csv(report), REPEATS)
    baseline_seconds = best_time(lambda: networkx_missing_extra(plan, found), REPEATS)
    baseline_missing, baseline_extra = networkx_missing_extra(plan, found)
    found_by_guid = keyed_by_guid(found)
    by_name_seconds = best_time(lambda: diff_fabrics(plan, found_by_guid), REPEATS)
    by_name_counts = diff_fabrics(plan, found_by_guid).counts

    print()
    print("class | injected | reported")
    print("----- | -------- | --------")
    counts = report.counts
    for finding_class, count in counts.items():
        injected = FAULTS.get(finding_class, 0)
        mark = "" if injected == count else "  <- DIFFERS"
        print(f"{finding_class} | {injected} | {count}{mark}")
    print()
    print(f"diff_fabrics: {seconds:.3f} s (best of {REPEATS}); punch list CSV: {csv_seconds:.3f} s")
    print(
        f"networkx edge-set baseline: {baseline_seconds:.3f} s, finds {baseline_missing} missing "
        f"and {baseline_extra} extra (every moved cable counts as both; no classes, no quality)"
    )
    print(f"diff_fabrics / baseline time: {seconds / baseline_seconds:.2f}")
    agreement = "same counts" if by_name_counts == counts else f"DIFFERENT counts {by_name_counts}"
    print(f"diff_fabrics with every node matched by name: {by_name_seconds:.3f} s, {agreement}")
    print(f"summary: {report.summary}")


if __name__ == "__main__":
    main()
