"""Pinned (d-mod-k) and hashed routes against a brute-force per-flow router on networkx: only
shortest paths, every parallel link and equal-cost next hop used, and the answers independent of
the order in which a file lists its cards (an uploaded SuperPOD routes as the generated one)."""

import dataclasses
import random

import networkx as nx
import numpy as np
import pytest

from tests.simcore.fabrics import irregular_fabric
from twin.simcore.compile import compile_fabric, route
from twin.simcore.congestion import max_min_rates
from twin.simcore.generate import fat_tree, rail_optimised
from twin.simcore.model import FabricSpec
from twin.simcore.simulate import Simulator

SCALE_OUT_COST = 10**6  # more than any path's links: the fewest scale-out links first


class ShortestPaths:
    """The fabric as arcs keyed (link position, tail) with the routing cost of docs/simulation.md
    (1 a link, 1 more between a card and a NIC, the fewest scale-out links first), and every
    node's cost to ``target``, never crossing a third card."""

    def __init__(self, fabric: FabricSpec, target: str) -> None:
        kinds = {node.id: node.kind for node in fabric.nodes}
        self.target = target
        self.third_cards = {node.id for node in fabric.cards()} - {target}
        self.graph = nx.MultiDiGraph()
        self.graph.add_nodes_from(kinds)
        for position, link in enumerate(fabric.links):
            if link.state == "down":
                continue
            for tail, head in ((link.a, link.b), (link.b, link.a)):
                card_nic = "card" in (kinds[tail], kinds[head]) and {kinds[tail], kinds[head]} & {"nic", "host"}
                cost = 1 + bool(card_nic) + SCALE_OUT_COST * (link.domain == "scale-out")
                self.graph.add_edge(tail, head, key=(position, tail), cost=cost)
        backwards = nx.DiGraph()  # after its first hop a flow leaves no card
        backwards.add_node(target)
        for tail, head, cost in self.graph.edges(data="cost"):
            if kinds[tail] != "card" and (not backwards.has_edge(head, tail) or backwards[head][tail]["cost"] > cost):
                backwards.add_edge(head, tail, cost=cost)
        self.distance = nx.single_source_dijkstra_path_length(backwards, target, weight="cost")

    def next_arcs(self, at: str) -> list[tuple[str, tuple]]:
        """(head, key) of the arcs out of ``at`` that start a shortest path to the target."""
        options = [
            (cost + self.distance.get(head, np.inf), head, key)
            for _, head, key, cost in self.graph.out_edges(at, keys=True, data="cost")
            if head not in self.third_cards
        ]
        best = min(cost for cost, _, _ in options)
        return [(head, key) for cost, head, key in options if cost == best and np.isfinite(best)]


def route_index(fabric: FabricSpec) -> dict[str, int]:
    """Cards in (leaf, port on the leaf) order: the leaf its scale-out port reaches, else its first
    switch, directly or through a NIC; leaves in fabric order."""
    position = {node.id: number for number, node in enumerate(fabric.nodes)}
    kinds = {node.id: node.kind for node in fabric.nodes}
    reached: dict[str, list[tuple]] = {}
    for link in fabric.links:
        for (near, _), (far, far_port) in (link.ends(), link.ends()[::-1]):
            if kinds[far] == "switch" and kinds[near] != "switch":
                reached.setdefault(near, []).append((link.domain != "scale-out", position[far], int(far_port)))
    nics = {}
    for link in fabric.links:
        for (near, _), (far, _) in (link.ends(), link.ends()[::-1]):
            if kinds[near] == "card" and kinds[far] == "nic":
                nics.setdefault(near, []).append(far)
    keys = {}
    for number, card in enumerate(node.id for node in fabric.cards()):
        ports = reached.get(card, []) + [port for nic in nics.get(card, []) for port in reached.get(nic, [])]
        keys[card] = (*(min(ports)[1:] if ports else (np.inf, np.inf)), number)  # no switch port: last
    return {card: rank for rank, card in enumerate(sorted(keys, key=keys.get))}


def tail_port(fabric: FabricSpec, position: int, tail: str) -> tuple:
    link = fabric.links[position]
    port = link.a_port if tail == link.a else link.b_port
    return (0, int(port), "") if port.isdigit() else (1, 0, port)


def brute_force_pinned(fabric: FabricSpec, source: str, target: str, index: dict[str, int]) -> list[tuple]:
    """One flow's d-mod-k path, hop by hop: the next arcs grouped by next node (fabric order),
    the destination index's next digit picks the node and the digit after it the parallel link
    (in the order of the ports they leave by)."""
    paths = ShortestPaths(fabric, target)
    position = {node.id: number for number, node in enumerate(fabric.nodes)}
    digits = index[target]
    at, path = source, []
    while at != target:
        options = paths.next_arcs(at)
        heads = sorted({head for head, _ in options}, key=position.get)
        head = heads[digits % len(heads)]
        digits //= len(heads)
        parallel = sorted((key for other, key in options if other == head), key=lambda key: tail_port(fabric, *key))
        path.append(parallel[digits % len(parallel)])
        at = head
    return path


FABRICS = {
    "2-tier fat-tree, 2 parallel links a leaf-spine pair": fat_tree(endpoints=64, radix=16),
    "3-tier fat-tree, 2 parallel links a spine-core pair": fat_tree(endpoints=512, radix=16),
    "rail-optimised": rail_optimised(servers=8, servers_per_unit=4, radix=16),
    "irregular": irregular_fabric(),
}


def all_pairs(fabric: FabricSpec, limit: int = 400, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    cards = len(fabric.cards())
    pairs = [(a, b) for a in range(cards) for b in range(cards) if a != b]
    random.Random(seed).shuffle(pairs)
    sources, targets = np.array(pairs[:limit]).T
    return sources, targets


def reachable(fabric: FabricSpec, sources: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs with a path (the irregular fabric has an isolated card and one whose link is down)."""
    compiled = compile_fabric(fabric)
    cards = compiled.card_nodes
    ok = np.isfinite(compiled.distance(compiled.card_group[targets], cards[sources]))
    return sources[ok], targets[ok]


@pytest.mark.parametrize("name", FABRICS)
def test_pinned_takes_the_brute_force_d_mod_k_path(name):
    fabric = FABRICS[name]
    compiled = compile_fabric(fabric)
    index = route_index(fabric)
    assert [index[card] for card in compiled.card_ids] == compiled.card_route_index.tolist()
    sources, targets = reachable(fabric, *all_pairs(fabric, limit=150))
    incidence = route(compiled, sources, targets, mode="pinned").incidence.toarray()
    for flow, (source, target) in enumerate(zip(sources, targets)):
        expected = brute_force_pinned(fabric, compiled.card_ids[source], compiled.card_ids[target], index)
        arcs = np.flatnonzero(incidence[flow])
        assert set(np.unique(incidence[flow][arcs])) == {1.0}
        assert sorted((int(compiled.arc_link[arc]), fabric.nodes[compiled.arc_tail[arc]].id) for arc in arcs) == sorted(expected)


@pytest.mark.parametrize("name", FABRICS)
def test_hashed_flows_take_shortest_next_hops_only(name):
    fabric = FABRICS[name]
    compiled = compile_fabric(fabric)
    sources, targets = reachable(fabric, *all_pairs(fabric, limit=150))
    incidence = route(compiled, sources, targets, mode="hash", seed=5).incidence.toarray()
    for flow, (source, target) in enumerate(zip(sources, targets)):
        target_id = compiled.card_ids[target]
        paths = ShortestPaths(fabric, target_id)
        at = compiled.card_ids[source]
        by_tail = {fabric.nodes[compiled.arc_tail[arc]].id: arc for arc in np.flatnonzero(incidence[flow])}
        assert set(np.unique(incidence[flow][list(by_tail.values())])) == {1.0}
        for _ in range(len(by_tail)):
            arc = by_tail[at]
            assert (int(compiled.arc_link[arc]), at) in {key for _, key in paths.next_arcs(at)}
            at = fabric.nodes[compiled.arc_head[arc]].id
        assert at == target_id


def leaf_uplink_loads(fabric: FabricSpec, mode: str) -> np.ndarray:
    """Flows on each leaf-to-spine arc when every card sends to every other."""
    compiled = compile_fabric(fabric)
    cards = len(compiled.card_ids)
    sources, targets = np.nonzero(~np.eye(cards, dtype=bool))
    load = route(compiled, sources, targets, mode=mode, seed=1).incidence.sum(axis=0)
    names = [node.tier for node in fabric.nodes]
    uplinks = np.flatnonzero(
        (np.array(names)[compiled.arc_tail] == "leaf") & (np.array(names)[compiled.arc_head] == "spine")
    )
    return load[uplinks]


@pytest.mark.parametrize("mode", ["pinned", "hash"])
def test_all_to_all_uses_every_parallel_uplink(mode):
    """Two cables from each leaf to each spine: both carry flows, pinned exactly as many."""
    loads = leaf_uplink_loads(FABRICS["2-tier fat-tree, 2 parallel links a leaf-spine pair"], mode)
    assert loads.min() > 0
    if mode == "pinned":
        assert loads.min() == loads.max()
    else:
        assert loads.max() < 1.5 * loads.mean()


@pytest.mark.parametrize("shift", ["leaf", "pod"])
def test_pinned_gives_a_shift_permutation_line_rate(shift):
    """Card i to card i + one leaf (or one pod) of a non-blocking 3-tier fat-tree with parallel
    spine-core links: d-mod-k spreads the destinations of every cable bundle over its cables."""
    fabric = FABRICS["3-tier fat-tree, 2 parallel links a spine-core pair"]
    compiled = compile_fabric(fabric)
    cards = len(compiled.card_ids)
    step = fabric.attrs["leaf_ports_down"] * (1 if shift == "leaf" else fabric.attrs["leaves_per_pod"])
    sources = np.arange(cards)
    for mode in ("pinned", "spray"):
        routes = route(compiled, sources, (sources + step) % cards, mode=mode)
        rates = max_min_rates(routes.incidence, compiled.arc_capacity)
        np.testing.assert_allclose(rates, compiled.arc_capacity.max(), rtol=1e-9)


def with_cards_and_links_shuffled(fabric: FabricSpec, seed: int) -> FabricSpec:
    """The same fabric as another file would list it: cards and links in another order."""
    rng = random.Random(seed)
    cards = list(fabric.cards())
    rng.shuffle(cards)
    links = list(fabric.links)
    rng.shuffle(links)
    others = [node for node in fabric.nodes if node.kind != "card"]
    return dataclasses.replace(fabric, nodes=(*cards, *others), links=tuple(links))


def link_loads(fabric: FabricSpec, ranks: list[str], mode: str) -> dict[tuple, float]:
    """Bytes per link (by its two ends) of a ring AllReduce over ``ranks``."""
    result = Simulator(fabric, ranks=ranks, ecmp=mode).run("allreduce", 2**26, "ring")
    return {
        tuple(sorted(((link.a, link.a_port), (link.b, link.b_port)))): load
        for link, load in zip(fabric.links, result["link_bytes"])
    }


@pytest.mark.parametrize("name", ["3-tier fat-tree, 2 parallel links a spine-core pair", "rail-optimised"])
def test_pinned_does_not_depend_on_the_files_order(name):
    fabric = FABRICS[name]
    ranks = [node.id for node in fabric.cards()]
    random.Random(7).shuffle(ranks)
    expected = link_loads(fabric, ranks, "pinned")
    assert link_loads(with_cards_and_links_shuffled(fabric, seed=11), ranks, "pinned") == expected


def uploaded_superpod(units: int, servers_per_unit: int) -> FabricSpec:
    """A SuperPOD as an operator uploads it: the ibnetdiscover dump and each host's NCCL XML,
    parsed, merged and completed by twin.ingest (GPUs in bus order, HCAs on their leaf ports)."""
    from twin.ingest import detect_format, parse_fabric
    from twin.ingest.completion import complete_fabric
    from twin.ingest.merge import merge_fabrics
    from twin.ingest.writers.superpod import superpod_files

    files = superpod_files(units=units, servers_per_unit=servers_per_unit, storage_hosts=0)
    formats = {name: detect_format(text) for name, text in files.items()}
    parts = [(name, parse_fabric(text, source_name=name, format=formats[name])) for name, text in files.items()]
    return complete_fabric(merge_fabrics(parts, name="superpod"), formats=formats).spec


def test_an_uploaded_superpod_routes_as_the_generated_design():
    """9 units of 4 DGX: 72 rail leaves, so 3 tiers with parallel spine-core cables. Before the
    routing index, pinned hierarchical AllReduce on the upload got 2/3 of the generated design's."""
    uploaded = uploaded_superpod(units=9, servers_per_unit=4)
    generated = rail_optimised(servers=36, servers_per_unit=4)
    assert generated.attrs["tiers"] == 3
    for mode, collective, algorithm in (
        ("pinned", "allreduce", "hierarchical"),
        ("pinned", "allreduce", "ring"),
        ("hash", "allreduce", "hierarchical"),
        ("hash", "alltoall", "direct"),
    ):
        got, want = (
            Simulator(fabric, ecmp=mode).run(collective, 2**28, algorithm)["busbw_GBps"] for fabric in (uploaded, generated)
        )
        assert got == pytest.approx(want, rel=0.03), (mode, collective, algorithm)
