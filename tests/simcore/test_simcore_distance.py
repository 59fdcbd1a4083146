"""The compiled routing distances (groups x transit nodes, cards' derived from their uplinks)
against networkx, and the routes they give against a plain-Python walk of the same definition."""

import networkx as nx
import numpy as np
import pytest

from tests.simcore.test_simcore_compile import FABRICS as COMPILE_FABRICS
from twin.simcore import compile as compile_module
from twin.simcore.compile import CompiledFabric, compile_fabric, route
from twin.simcore.generate import fat_tree

FABRICS = {
    **COMPILE_FABRICS,
    "3-tier fat-tree": fat_tree(endpoints=128, radix=8),
    "irregular, a spine's links down": COMPILE_FABRICS["irregular"].with_links_down(
        position for position, link in enumerate(COMPILE_FABRICS["irregular"].links) if "spine-01" in (link.a, link.b)
    ),
}


def brute_force_distance(compiled: CompiledFabric) -> np.ndarray:
    """(groups, nodes) routing cost on the compiled arcs' costs: networkx Dijkstra from each group's
    cards backwards over transit nodes only; a card then starts with one of its arcs into them."""
    arcs = list(zip(compiled.arc_tail.tolist(), compiled.arc_head.tolist(), compiled.arc_cost.tolist()))
    table = np.full((len(compiled.transit_distance), compiled.node_count), np.inf)
    for group in range(len(table)):
        members = set(compiled.card_nodes[compiled.card_group == group].tolist())
        backwards = nx.DiGraph()
        for tail, head, cost in arcs:
            if not compiled.is_card[tail] and (head in members or not compiled.is_card[head]):
                cheapest = min(cost, backwards.get_edge_data(head, tail, {"weight": np.inf})["weight"])
                backwards.add_edge(head, tail, weight=cheapest)
        starts = members & set(backwards)
        reached = nx.multi_source_dijkstra_path_length(backwards, starts) if starts else {}
        for node, cost in reached.items():
            if not compiled.is_card[node]:
                table[group, node] = cost
        for tail, head, cost in arcs:
            if compiled.is_card[tail] and not compiled.is_card[head]:
                table[group, tail] = min(table[group, tail], cost + table[group, head])
    return table


def out_arcs(compiled: CompiledFabric) -> dict[int, list[tuple[int, int]]]:
    """Node -> its (arc, head) pairs."""
    out: dict[int, list[tuple[int, int]]] = {}
    for arc, (tail, head) in enumerate(zip(compiled.arc_tail.tolist(), compiled.arc_head.tolist())):
        out.setdefault(tail, []).append((arc, head))
    return out


def brute_force_spray(
    compiled: CompiledFabric, distance: np.ndarray, out: dict[int, list[tuple[int, int]]], source: int, target: int
) -> dict[int, float]:
    """Arc -> fraction of the flow, by ``route``'s spray rule, one node at a time: leave over the
    arcs into the target where they cost no more than going on, else split over every arc to a
    transit node on a shortest path."""
    target_node, group = compiled.card_nodes[target], compiled.card_group[target]
    on_arc: dict[int, float] = {}
    mass = {int(compiled.card_nodes[source]): 1.0}
    while mass:
        onwards: dict[int, float] = {}
        for node, share in mass.items():
            here = distance[group, node]
            exits = [arc for arc, head in out[node] if head == target_node]
            if exits and compiled.arc_cost[min(exits)] <= here + 1e-9:
                next_arcs = exits
            else:
                next_arcs = [
                    arc
                    for arc, head in out[node]
                    if not compiled.is_card[head] and abs(compiled.arc_cost[arc] + distance[group, head] - here) < 1e-9
                ]
            for arc in next_arcs:
                on_arc[arc] = on_arc.get(arc, 0.0) + share / len(next_arcs)
                if arc not in exits:
                    head = int(compiled.arc_head[arc])
                    onwards[head] = onwards.get(head, 0.0) + share / len(next_arcs)
        mass = onwards
    return on_arc


@pytest.fixture
def searched_at_once(request, monkeypatch):
    """Compile with this many attachment nodes per Dijkstra call (default: the module's)."""
    if request.param is not None:
        monkeypatch.setattr(compile_module, "_SEARCHED_AT_ONCE", request.param)
    compile_module._compile_cached.cache_clear()
    yield request.param
    compile_module._compile_cached.cache_clear()


@pytest.mark.parametrize("searched_at_once", [None, 1, 3], indirect=True)
@pytest.mark.parametrize("name", FABRICS)
def test_distances_equal_networkx(name, searched_at_once):
    compiled = compile_fabric(FABRICS[name])
    groups = np.arange(len(compiled.transit_distance))
    table = compiled.distance(groups[:, None], np.arange(compiled.node_count))
    np.testing.assert_array_equal(table, brute_force_distance(compiled))
    # Elementwise, as route asks: the same values.
    group_grid, node_grid = np.meshgrid(groups, np.arange(compiled.node_count), indexing="ij")
    np.testing.assert_array_equal(compiled.distance(group_grid.ravel(), node_grid.ravel()), table.ravel())


@pytest.mark.parametrize("name", FABRICS)
def test_spray_routes_equal_a_plain_walk(name):
    compiled = compile_fabric(FABRICS[name])
    distance = brute_force_distance(compiled)
    cards = len(compiled.card_ids)
    sources, targets = (grid.ravel() for grid in np.meshgrid(np.arange(cards), np.arange(cards), indexing="ij"))
    reachable = (sources != targets) & np.isfinite(
        distance[compiled.card_group[targets], compiled.card_nodes[sources]]
    )
    sources, targets = sources[reachable], targets[reachable]
    assert len(sources) > cards  # the oracle has work to do
    incidence = route(compiled, sources, targets, mode="spray").incidence.toarray()
    expected = np.zeros_like(incidence)
    out = out_arcs(compiled)
    for flow, (source, target) in enumerate(zip(sources.tolist(), targets.tolist())):
        for arc, share in brute_force_spray(compiled, distance, out, source, target).items():
            expected[flow, arc] = share
    np.testing.assert_allclose(incidence, expected, rtol=1e-12, atol=1e-15)
    # Hashed and pinned flows take one of those equal-cost paths each.
    for mode in ("hash", "pinned"):
        single = route(compiled, sources, targets, mode=mode).incidence.toarray()
        assert set(np.unique(single)) <= {0.0, 1.0}
        assert not (single[expected == 0] > 0).any()
