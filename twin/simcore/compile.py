"""Compile a fabric once into arrays, then route flows on them.

``compile_fabric(spec, transport)`` turns a ``FabricSpec`` into numpy arrays
(cached per content and transport, like a snapshot's compiled form):

- nodes in fabric order, cards numbered from 0 in fabric order;
- *arcs*: both directions of every live link (state ``"down"`` is left out),
  with capacity in bytes/s (link bandwidth times the domain's efficiency),
  latency (cable plus the forwarding latency of the switch it enters), domain,
  and link class (``"card-leaf"``, ``"leaf-spine"`` ...);
- routing costs: each arc costs 1, a scale-out arc costs one more than the
  number of arcs, so shortest paths use the fewest scale-out links first and
  then the fewest links (traffic inside a super-node stays on scale-up); an
  arc between a card and a NIC costs one more, so two GPUs sharing a NIC on a
  PCIe switch talk over their NVLink;
- distances from every transit (non-card) node to every *destination group*
  (cards with the same attachments), from which equal-cost next hops follow:
  a groups x transit nodes table, the fabric's own forwarding state by
  destination class (a switch's forwarding table holds a row per destination
  card). A card's distance, needed only where a flow starts, is derived on
  demand from its uplinks (``CompiledFabric.distance``): a groups x nodes table
  would grow with the square of the cards (1.1 GiB at 65,536 cards), this one
  with groups x switches (84 MB there).

Cards are endpoints: a path never crosses a third card.

``route(compiled, sources, targets, mode=..., seed=...)`` maps flows (card
numbers) onto arcs as a sparse flow-by-arc incidence (weights = fraction of
the flow's bytes on the arc) with one vectorised walk over all flows:

- ``"hash"``: per-flow ECMP, one equal-cost next hop per flow and hop, chosen
  by a seeded hash of (flow, hop), as switches hash a flow's header;
- ``"spray"``: ideal packet spraying, bytes split equally over the equal-cost
  next hops at every hop;
- ``"pinned"``: static destination routing (InfiniBand's d-mod-k), the same for
  every source: the next switch is the destination's *routing index* modulo
  the distinct next switches, divided first by the switch choices already made
  on the way, so successive tiers spread destinations the way a fat-tree's
  d-mod-k tables do; among parallel links to that switch, the next digit of
  the index picks one, without being used up, so a destination takes the
  same-numbered cable of each bundle going up and down.

Every mode uses every parallel link between two nodes: each is an equal-cost
next hop of its own. A card's routing index (``card_route_index``) is its
place in (leaf, port on the leaf) order, as a subnet manager numbers
destinations (OpenSM's ftree and updn route by the LIDs under each leaf): not
the order in which a file happens to list the cards, so an uploaded fabric and
the same design generated route alike. Its leaf is the switch its scale-out
port (else its first port) reaches, directly or through its NIC.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from twin.simcore.errors import FabricError, TwinCoreError
from twin.simcore.model import FabricSpec
from twin.simcore.transport import Transport

__all__ = [
    "ECMP_MODES",
    "CompiledFabric",
    "Routes",
    "all_pairs_entries",
    "compile_fabric",
    "compiled_with_links_down",
    "route",
    "route_all_pairs",
]

ECMP_MODES = ("hash", "spray", "pinned")
_LEVELS = {"card": 0, "nic": 1, "host": 1, "aggregation": 2, "nvswitch": 3, "leaf": 4, "spine": 5, "core": 6}
_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_SEARCHED_AT_ONCE = 256  # attachment nodes per Dijkstra call when compiling the distances


@dataclass(frozen=True, eq=False)
class CompiledFabric:
    """A fabric as arrays (see the module docstring); build with ``compile_fabric``."""

    spec: FabricSpec
    transport: Transport
    card_ids: tuple[str, ...]
    card_nodes: np.ndarray  # card number -> node position
    card_group: np.ndarray  # card number -> destination group
    card_route_index: np.ndarray  # card number -> place in (leaf, port on the leaf) order (d-mod-k)
    card_supernode: tuple[object, ...]  # card number -> attrs["supernode"] or host, for hierarchy
    in_switch_reduction: np.ndarray  # node position -> switch reduces in-network
    is_card: np.ndarray
    is_switch: np.ndarray
    arc_tail: np.ndarray
    arc_head: np.ndarray
    arc_link: np.ndarray  # index into spec.links
    arc_port: np.ndarray  # rank of the tail's port name (numbers in numeric order): parallel links in port order
    arc_capacity: np.ndarray  # bytes/s, efficiency applied
    arc_raw_capacity: np.ndarray  # bytes/s of the cable
    arc_latency: np.ndarray  # s: cable plus the forwarding latency of the head
    arc_scale_out: np.ndarray
    arc_class: np.ndarray
    arc_level: np.ndarray  # level of the arc's higher end: card 0, leaf 4, spine 5, core 6
    class_names: tuple[str, ...]
    arc_cost: np.ndarray
    arc_keys: np.ndarray  # tail * nodes + head, sorted
    arc_by_key: np.ndarray  # arc ids in arc_keys order
    out_arcs: np.ndarray  # (nodes, max degree) arc ids by next node, parallel ones in port order, -1 padded
    card_uplinks: np.ndarray  # (nodes, most uplinks of a card) a card's arcs into transit nodes, -1 padded
    transit_column: np.ndarray  # node position -> column of transit_distance; the last (all inf) for cards
    transit_distance: np.ndarray  # (groups, transit nodes + 1) routing cost to the group's cards

    @property
    def node_count(self) -> int:
        return len(self.is_card)

    def distance(self, groups: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Routing cost from ``nodes`` (positions) to the cards of destination ``groups``, broadcast
        together (``groups[:, None]`` and ``nodes`` give a table); inf where there is no path. A
        path never crosses a card: a card is as far as its best uplink plus that uplink's head."""
        cost = self.transit_distance[groups, self.transit_column[nodes]]
        for slot in range(self.card_uplinks.shape[1]):
            uplink = self.card_uplinks[nodes, slot]
            through = self.arc_cost[uplink] + self.transit_distance[groups, self.transit_column[self.arc_head[uplink]]]
            cost = np.minimum(cost, np.where(uplink >= 0, through, np.inf))
        return cost


@dataclass(frozen=True, eq=False)
class Routes:
    """Flows mapped onto arcs: ``incidence[f, a]`` = fraction of flow f on arc a."""

    incidence: sparse.csr_array
    latency: np.ndarray  # s per flow (mass-weighted over its paths)
    switch_hops: np.ndarray  # switches traversed per flow
    scale_out: np.ndarray  # flow crosses at least one scale-out arc
    members: np.ndarray | None = None  # flows per row when rows are flow classes (route_all_pairs)


def compile_fabric(spec: FabricSpec, transport: Transport | None = None) -> CompiledFabric:
    """Validate and compile ``spec``; cached on the fabric's content and the transport."""
    return _compile_cached(spec, transport or Transport())


@functools.lru_cache(maxsize=8)
def _compile_cached(spec: FabricSpec, transport: Transport) -> CompiledFabric:
    spec.validate()
    nodes = spec.nodes
    index = spec.node_index()
    is_card = np.array([node.kind == "card" for node in nodes])
    is_switch = np.array([node.kind == "switch" for node in nodes])
    if not is_card.any():
        raise FabricError(f"fabric {spec.name!r} has no cards to simulate")
    forwarding = np.array(
        [
            float(node.attrs.get("forwarding_latency_ns", transport.switch_latency_ns))
            if node.kind == "switch"
            else 0.0
            for node in nodes
        ]
    ) * 1e-9
    level_names = [node.attrs.get("role") or node.tier or node.kind for node in nodes]

    live = [(position, link) for position, link in enumerate(spec.links) if link.state != "down"]
    link_ids = np.array([position for position, _ in live], dtype=np.intp)
    ends = np.array([(index[link.a], index[link.b]) for _, link in live], dtype=np.intp).reshape(-1, 2)
    gbps = np.array([link.bandwidth_gbps for _, link in live])
    cable = np.array([link.latency_ns for _, link in live]) * 1e-9
    scale_out = np.array([link.domain == "scale-out" for _, link in live])

    tail = np.concatenate([ends[:, 0], ends[:, 1]])
    head = np.concatenate([ends[:, 1], ends[:, 0]])
    raw_capacity = np.concatenate([gbps, gbps]) * 1e9 / 8
    arc_scale_out = np.concatenate([scale_out, scale_out])
    efficiency = np.where(arc_scale_out, transport.scale_out.efficiency, transport.scale_up.efficiency)

    # Link class: the two ends' levels (kind, tier or role), lower first, and the domain.
    level_codes, level_of_node = np.unique(level_names, return_inverse=True)
    rank_of_code = np.array([_LEVELS.get(name, 2) for name in level_codes])
    low_first = rank_of_code[level_of_node[tail]] <= rank_of_code[level_of_node[head]]
    low = np.where(low_first, level_of_node[tail], level_of_node[head])
    high = np.where(low_first, level_of_node[head], level_of_node[tail])
    class_keys, arc_class = np.unique(
        (low * len(level_codes) + high) * 2 + arc_scale_out, return_inverse=True
    )
    class_names = tuple(
        f"{level_codes[key // 2 // len(level_codes)]}-{level_codes[key // 2 % len(level_codes)]} "
        f"({'scale-out' if key % 2 else 'scale-up'})"
        for key in class_keys.tolist()
    )
    card_nodes = np.flatnonzero(is_card)
    return _with_routing(
        spec=spec,
        transport=transport,
        card_ids=tuple(nodes[position].id for position in card_nodes),
        card_nodes=card_nodes,
        card_route_index=_route_index(spec, index, card_nodes),
        card_supernode=tuple(
            nodes[position].attrs.get("supernode", nodes[position].host) for position in card_nodes
        ),
        in_switch_reduction=np.array([bool(node.attrs.get("in_switch_reduction", False)) for node in nodes]),
        is_card=is_card,
        is_switch=is_switch,
        arc_tail=tail,
        arc_head=head,
        arc_link=np.concatenate([link_ids, link_ids]),
        arc_port=_port_ranks([link.a_port for _, link in live] + [link.b_port for _, link in live]),
        arc_capacity=raw_capacity * efficiency,
        arc_raw_capacity=raw_capacity,
        arc_latency=np.concatenate([cable, cable]) + forwarding[head],
        arc_scale_out=arc_scale_out,
        arc_class=arc_class,
        arc_level=np.maximum(rank_of_code[level_of_node[tail]], rank_of_code[level_of_node[head]]),
        class_names=class_names,
    )


def compiled_with_links_down(compiled: CompiledFabric, spec: FabricSpec) -> CompiledFabric:
    """``compile_fabric(spec, compiled.transport)`` where ``spec`` is ``compiled.spec`` with more
    links down, derived from ``compiled``'s arrays instead of re-reading the fabric: a failure
    search compiles one such fabric per candidate. Raises ``ValueError`` for any other ``spec``."""
    # Equal, not identical: the compile cache may hold an equal fabric loaded earlier.
    if len(spec.links) != len(compiled.spec.links) or spec.nodes != compiled.spec.nodes:
        raise ValueError(f"{spec.name!r} is not {compiled.spec.name!r} with links down")
    down = np.fromiter((link.state == "down" for link in spec.links), dtype=bool, count=len(spec.links))
    keep = ~down[compiled.arc_link]
    # Selecting arcs keeps the compiled order (forward arcs of live links, then backward ones).
    used_classes, arc_class = np.unique(compiled.arc_class[keep], return_inverse=True)
    arc_arrays = ("arc_tail", "arc_head", "arc_link", "arc_port", "arc_capacity", "arc_raw_capacity", "arc_latency", "arc_scale_out", "arc_level")
    return _with_routing(
        spec=spec,
        transport=compiled.transport,
        card_ids=compiled.card_ids,
        card_nodes=compiled.card_nodes,
        card_route_index=compiled.card_route_index,  # a port that goes down keeps its LID
        card_supernode=compiled.card_supernode,
        in_switch_reduction=compiled.in_switch_reduction,
        is_card=compiled.is_card,
        is_switch=compiled.is_switch,
        arc_class=arc_class,
        class_names=tuple(compiled.class_names[number] for number in used_classes.tolist()),
        **{name: getattr(compiled, name)[keep] for name in arc_arrays},
    )


def _with_routing(**fields) -> CompiledFabric:
    """The compiled fabric from its node and arc arrays: adds the routing costs, the arc lookup
    tables, the destination groups and the distances to them."""
    tail, head, is_card = fields["arc_tail"], fields["arc_head"], fields["is_card"]
    node_count = len(is_card)
    is_switch = fields["is_switch"]
    # The hop between a card and a NIC costs one more, on every path alike: a NIC that two GPUs
    # share on a PCIe switch (cloud hint files) must not look as short as the NVLink beside it.
    card_nic = (is_card[tail] & ~is_card[head] & ~is_switch[head]) | (is_card[head] & ~is_card[tail] & ~is_switch[tail])
    arc_cost = 1.0 + card_nic + fields["arc_scale_out"] * (len(tail) + 1.0)
    keys = tail * node_count + head
    order = np.lexsort((fields["arc_port"], keys))  # parallel arcs of a pair in port order
    card_group, attachments = _destination_groups(fields["card_nodes"], tail, head, arc_cost, is_card)
    transit_nodes = np.flatnonzero(~is_card)
    transit_column = np.full(node_count, len(transit_nodes), dtype=np.intp)
    transit_column[transit_nodes] = np.arange(len(transit_nodes))
    # Out arcs by next node, parallel ones in port order: pinned takes them in that order.
    by_head = np.lexsort((fields["arc_port"], head))
    uplinks = by_head[(is_card[tail] & ~is_card[head])[by_head]]
    return CompiledFabric(
        **fields,
        card_group=card_group,
        arc_cost=arc_cost,
        arc_keys=keys[order],
        arc_by_key=order,
        out_arcs=_padded_out_arcs(by_head, tail, node_count, min_width=1),
        # No column at all when no card has a live uplink: a -1 would index an empty arc array.
        card_uplinks=_padded_out_arcs(uplinks, tail, node_count, min_width=0),
        transit_column=transit_column,
        transit_distance=_transit_distances(attachments, tail, head, arc_cost, is_card, transit_nodes, transit_column),
    )


def _port_ranks(ports: list[str]) -> np.ndarray:
    """Each port name's rank among ``ports``, numbers in numeric order before other names."""
    keys = [(0, int(port), "") if port.isdigit() else (1, 0, port) for port in ports]
    rank = {key: number for number, key in enumerate(sorted(set(keys)))}
    return np.array([rank[key] for key in keys], dtype=np.intp)


def _route_index(spec: FabricSpec, index: dict[str, int], card_nodes: np.ndarray) -> np.ndarray:
    """Each card's place in (leaf, port on the leaf) order, leaves in fabric order (see the module
    docstring). A card without a switch port comes last, in card order."""
    kinds = [node.kind for node in spec.nodes]
    switch_ports: dict[int, list[tuple[bool, int, tuple]]] = {}  # node -> (not scale-out, switch, port key)
    nics: dict[int, list[int]] = {}  # card -> the NICs it is cabled to
    for link in spec.links:
        for (near, _), (far, far_port) in (link.ends(), link.ends()[::-1]):
            near, far = index[near], index[far]
            if kinds[far] == "switch" and kinds[near] != "switch":
                port_key = (0, int(far_port), "") if far_port.isdigit() else (1, 0, far_port)
                switch_ports.setdefault(near, []).append((link.domain != "scale-out", far, port_key))
            elif kinds[near] == "card" and kinds[far] not in ("card", "switch"):
                nics.setdefault(near, []).append(far)
    order_keys = []
    for number, card in enumerate(card_nodes.tolist()):
        reached = switch_ports.get(card, []) + [port for nic in nics.get(card, ()) for port in switch_ports.get(nic, ())]
        _, leaf, port_key = min(reached) if reached else (True, len(kinds), (2, 0, ""))
        order_keys.append((leaf, port_key, number))
    ranked = sorted(range(len(order_keys)), key=order_keys.__getitem__)
    route_index = np.empty(len(order_keys), dtype=np.intp)
    route_index[ranked] = np.arange(len(ranked))
    return route_index


def _padded_out_arcs(arcs: np.ndarray, tail: np.ndarray, node_count: int, *, min_width: int) -> np.ndarray:
    """(nodes, width) ``arcs`` by their tail node, in the order given, -1 padded; at least ``min_width`` wide."""
    arc_tails = tail[arcs]
    degree = np.bincount(arc_tails, minlength=node_count)
    padded = np.full((node_count, max(min_width, int(degree.max(initial=0)))), -1, dtype=np.intp)
    order = np.argsort(arc_tails, kind="stable")
    starts = np.concatenate([[0], np.cumsum(degree)[:-1]])
    slots = np.arange(len(arcs)) - np.repeat(starts, degree)
    padded[arc_tails[order], slots] = arcs[order]
    return padded


def _destination_groups(
    card_nodes: np.ndarray, tail: np.ndarray, head: np.ndarray, cost: np.ndarray, is_card: np.ndarray
) -> tuple[np.ndarray, list[tuple[tuple[int, float], ...]]]:
    """Group cards by their attachments: the (non-card node, arc cost) pairs leading into them."""
    into_card = is_card[head] & ~is_card[tail]
    attachments: dict[int, set[tuple[int, float]]] = {int(card): set() for card in card_nodes}
    for a, b, c in zip(tail[into_card].tolist(), head[into_card].tolist(), cost[into_card].tolist()):
        attachments[b].add((a, c))
    groups: dict[tuple[tuple[int, float], ...], int] = {}
    card_group = np.array(
        [groups.setdefault(tuple(sorted(attachments[int(card)])), len(groups)) for card in card_nodes],
        dtype=np.intp,
    )
    return card_group, list(groups)


def _transit_distances(
    attachments: list[tuple[tuple[int, float], ...]],
    tail: np.ndarray,
    head: np.ndarray,
    cost: np.ndarray,
    is_card: np.ndarray,
    transit_nodes: np.ndarray,
    transit_column: np.ndarray,
) -> np.ndarray:
    """Routing cost from every transit (non-card) node to each group's cards, never crossing a
    card on the way, plus a last column of inf (the column of every card, see ``transit_column``).

    Shortest paths run on the transit nodes only, from each attachment node backwards.
    """
    transit_count = len(transit_nodes)
    distance = np.full((len(attachments), transit_count + 1), np.inf)
    between = ~is_card[tail] & ~is_card[head]
    # One entry per node pair with the cheapest of its parallel arcs: sparse
    # constructors would add parallel arcs' costs up. Reversed: costs *to* a node.
    pair = transit_column[head[between]].astype(np.int64) * transit_count + transit_column[tail[between]]
    order = np.lexsort((cost[between], pair))
    pair, pair_cost = pair[order], cost[between][order]
    first = np.ones(len(pair), dtype=bool)
    first[1:] = pair[1:] != pair[:-1]
    rows, columns = np.divmod(pair[first], transit_count)
    reversed_graph = sparse.csr_array((pair_cost[first], (rows, columns)), shape=(transit_count, transit_count))
    attachment_nodes = np.array(sorted({node for group in attachments for node, _ in group}), dtype=np.intp)
    row = {node: position for position, node in enumerate(attachment_nodes.tolist())}
    # A group is as far as its cheapest attachment (node, cost of the arc into the card). Cards with no
    # live link (their leaf failed) form a group with no attachment: unreachable.
    attachment_group = np.array([number for number, group in enumerate(attachments) for _ in group], dtype=np.intp)
    attachment_row = np.array([row[node] for group in attachments for node, _ in group], dtype=np.intp)
    attachment_cost = np.array([arc_cost for group in attachments for _, arc_cost in group])
    transit_distance = distance[:, :transit_count]
    # A few attachment nodes searched at a time: Dijkstra's rows for all of them, and their sums,
    # would be two more tables the size of this one.
    for start in range(0, len(attachment_nodes), _SEARCHED_AT_ONCE):
        stop = start + _SEARCHED_AT_ONCE
        to_attachment = csgraph.dijkstra(reversed_graph, indices=transit_column[attachment_nodes[start:stop]])
        chosen = np.flatnonzero((attachment_row >= start) & (attachment_row < stop))
        chosen = chosen[np.argsort(attachment_group[chosen], kind="stable")]
        # Round r takes each group's r-th attachment here, so no group appears twice in one assignment.
        rounds = np.arange(len(chosen)) - np.searchsorted(attachment_group[chosen], attachment_group[chosen])
        for number in range(int(rounds.max(initial=-1)) + 1):
            taken = chosen[rounds == number]
            groups = attachment_group[taken]
            through = to_attachment[attachment_row[taken] - start] + attachment_cost[taken][:, None]
            transit_distance[groups] = np.minimum(transit_distance[groups], through)
    return distance


def route(
    compiled: CompiledFabric,
    sources: np.ndarray,
    targets: np.ndarray,
    *,
    mode: str = "hash",
    seed: int = 0,
    flow_keys: np.ndarray | None = None,
) -> Routes:
    """Route flows ``sources[i] -> targets[i]`` (card numbers) on shortest paths with ECMP.

    ``flow_keys`` (default: the flow's position) feed the hash, so that the
    channels of one pair can take different paths. Raises ``TwinCoreError``
    when a flow has no path, naming the pair.
    """
    if mode not in ECMP_MODES:
        raise TwinCoreError(f"ECMP mode {mode!r}; expected one of {', '.join(ECMP_MODES)}")
    sources = np.asarray(sources, dtype=np.intp)
    targets = np.asarray(targets, dtype=np.intp)
    flow_count = len(sources)
    keys = np.arange(flow_count, dtype=np.uint64) if flow_keys is None else flow_keys.astype(np.uint64)
    node_count = compiled.node_count
    target_nodes = compiled.card_nodes[targets]
    groups = compiled.card_group[targets]
    flows = np.arange(flow_count, dtype=np.intp)
    at = compiled.card_nodes[sources]
    mass = np.ones(flow_count)
    # Flows from a card to itself move nothing.
    moving = at != target_nodes
    flows, at, mass = flows[moving], at[moving], mass[moving]
    recorded_flows, recorded_arcs, recorded_mass = [], [], []
    # Pinned: the destination's routing index, divided by the switch choices made so far.
    digits = compiled.card_route_index[targets].copy()
    for hop in range(node_count):
        if not len(flows):
            break
        dest = target_nodes[flows]
        group = groups[flows]
        here = compiled.distance(group, at)
        # Leave the fabric where an arc enters the destination at the best cost.
        lo = np.searchsorted(compiled.arc_keys, at * node_count + dest, side="left")
        hi = np.searchsorted(compiled.arc_keys, at * node_count + dest, side="right")
        exit_cost = np.where(hi > lo, compiled.arc_cost[compiled.arc_by_key[np.minimum(lo, len(compiled.arc_keys) - 1)]], np.inf)
        leaving = exit_cost <= here + 1e-9
        if not np.isfinite(np.where(leaving, exit_cost, here)).all():
            stuck = int(np.flatnonzero(~np.isfinite(np.where(leaving, exit_cost, here)))[0])
            raise TwinCoreError(
                f"no path from {compiled.card_ids[sources[flows[stuck]]]!r} to "
                f"{compiled.card_ids[targets[flows[stuck]]]!r} (links down or missing?)"
            )
        counts = (hi - lo)[leaving]
        exits_base = lo[leaving]
        chosen_flows, chosen_slots, chosen_mass = _choose(
            flows[leaving], mass[leaving], counts, hop, mode, seed, keys, digits
        )
        exit_arcs = compiled.arc_by_key[exits_base[chosen_slots[0]] + chosen_slots[1]]
        recorded_flows.append(chosen_flows)
        recorded_arcs.append(exit_arcs)
        recorded_mass.append(chosen_mass)

        stay = ~leaving
        flows, at, mass, group, here = flows[stay], at[stay], mass[stay], group[stay], here[stay]
        if not len(flows):
            break
        options, pair_of, pair_counts, pair_starts = _next_arcs(compiled, at, group, first_hop=hop == 0)
        if mode == "pinned":
            chosen_flows, entry, chosen_mass = flows, np.arange(len(flows)), mass
            slot = _pinned_slots(flows, pair_of, options, pair_counts, pair_starts, digits, compiled)
        else:
            chosen_flows, (entry, slot), chosen_mass = _choose(
                flows, mass, pair_counts[pair_of], hop, mode, seed, keys, digits
            )
        arcs = options[pair_starts[pair_of[entry]] + slot]
        recorded_flows.append(chosen_flows)
        recorded_arcs.append(arcs)
        recorded_mass.append(chosen_mass)
        flows, at, mass = _merge(chosen_flows, compiled.arc_head[arcs], chosen_mass, node_count)
    else:
        raise TwinCoreError("routing did not converge: a loop in the shortest-path graph")

    flow_index = np.concatenate(recorded_flows) if recorded_flows else np.empty(0, np.intp)
    arc_index = np.concatenate(recorded_arcs) if recorded_arcs else np.empty(0, np.intp)
    weights = np.concatenate(recorded_mass) if recorded_mass else np.empty(0)
    incidence = sparse.csr_array(
        (weights, (flow_index, arc_index)), shape=(flow_count, len(compiled.arc_tail))
    )
    switch_entered = compiled.is_switch[compiled.arc_head].astype(float)
    return Routes(
        incidence=incidence,
        latency=incidence @ compiled.arc_latency,
        switch_hops=incidence @ switch_entered,
        scale_out=(incidence @ compiled.arc_scale_out.astype(float)) > 0,
    )


def all_pairs_entries(compiled: CompiledFabric, ranks: np.ndarray, mode: str) -> int:
    """The walk entries ``route_all_pairs`` starts from on ``ranks``, known before anything is
    allocated: (source groups) x (destinations: cards pinned, groups else), spraying times a
    card's uplinks. What callers refuse a pattern by; the walk checks each later hop itself."""
    groups = len(np.unique(compiled.card_group[ranks]))
    if mode == "pinned":
        return groups * len(ranks)
    return groups * groups * max(1, compiled.card_uplinks.shape[1])


def route_all_pairs(compiled: CompiledFabric, ranks: np.ndarray, *, mode: str, max_entries: int) -> Routes:
    """Every rank to every other as *flow classes*, never a row per flow (p (p - 1) rows, 268
    million at 16,384 ranks): one row per class of flows with the same demand and domain (the
    scale-out flows, and the others), its incidence the sum of its members' (flows on each
    arc), ``members`` its flow count, its latency and switch hops its members' largest.

    The walk carries flow *mass* instead of flows. Cards of one destination group (same
    attachments) are alike: a group's cards leave as one entry per destination group (pinned:
    per destination card, whose digits steer), and entries merge wherever they meet at a node
    for the same group (and the same digits left). Each card's own uplinks get its share, less
    its flow to itself; a group's mass arriving at its attachment spreads evenly over its cards,
    exact for cards on one attachment each (every card receives p - 1 flows). ``"hash"`` is
    taken at its expectation, an equal split over the equal-cost next hops as ``"spray"``: with
    many flows on every arc a hash's collisions cost a few per cent more (the per-flow ``route``
    counts them; ``tests/simcore/test_simcore_classes.py`` measures the gap).

    Max-min over the classes (a class's rate applying to each of its members) is exact for the
    slowest flows: progressive filling's first level is the least capacity / flows crossing
    over the arcs, and a class adds its members' crossings. A class then moves at the pace of
    its slowest member, the per-flow answer when its members are alike (a symmetric fabric).
    Raises ``TwinCoreError`` for cards cabled to cards (they would not be alike), where a pair
    has no path, and before a hop that would hold more than ``max_entries`` entries.
    """
    if mode not in ECMP_MODES:
        raise TwinCoreError(f"ECMP mode {mode!r}; expected one of {', '.join(ECMP_MODES)}")
    if (compiled.is_card[compiled.arc_tail] & compiled.is_card[compiled.arc_head]).any():
        raise TwinCoreError("all-pairs flow classes need cards cabled to switches or NICs only, not to other cards")
    ranks = np.asarray(ranks, dtype=np.intp)
    pinned = mode == "pinned"
    arc_count, node_count = len(compiled.arc_tail), compiled.node_count
    rank_group = compiled.card_group[ranks]
    groups, first_rank, group_size = np.unique(rank_group, return_index=True, return_counts=True)
    rank_source = np.searchsorted(groups, rank_group)  # each rank's group, as its place in groups
    group_card = compiled.card_nodes[ranks[first_rank]]  # a node standing for each group's cards

    # Entries (source group S, destination): a destination rank pinned (its digits steer), else a
    # group T; each card of S sends 1 or n_T flows on it, less its flow to itself.
    destinations = len(ranks) if pinned else len(groups)
    entry_source = np.repeat(np.arange(len(groups)), destinations)
    entry_destination = np.tile(np.arange(destinations), len(groups))
    entry_target = rank_source[entry_destination] if pinned else entry_destination
    per_card = np.ones(len(entry_target)) if pinned else group_size[entry_target].astype(float)
    own = np.where(entry_source == entry_target, 1.0 if pinned else group_size[entry_source], 0.0)
    entry_mass = group_size[entry_source] * per_card - own
    own_entry = rank_source * destinations + (np.arange(len(ranks)) if pinned else rank_source)
    start = group_card[entry_source]
    cost = compiled.distance(groups[entry_target], start)
    if not np.isfinite(cost[entry_mass > 0]).all():
        stuck = int(np.flatnonzero((entry_mass > 0) & ~np.isfinite(cost))[0])
        raise TwinCoreError(
            f"no path from {compiled.card_ids[ranks[first_rank[entry_source[stuck]]]]!r} to "
            f"{compiled.card_ids[ranks[first_rank[entry_target[stuck]]]]!r} (links down or missing?)"
        )
    entry_class = (cost > arc_count).astype(np.intp)  # 1: crosses a scale-out arc
    digits = compiled.card_route_index[ranks[entry_destination]] if pinned else np.zeros(len(entry_target), np.intp)
    loads = np.zeros(2 * arc_count)  # class * arcs + arc: flows on the arc
    members = np.bincount(entry_class, weights=entry_mass, minlength=2)
    latency, hops = np.zeros(2), np.zeros(2)

    # First hop, worked out from each group's first card: every card of the group leaves the
    # same way (same head, same place among parallel cables), less its own entry's share.
    entry, arcs, share, digits = _step(compiled, start, groups[entry_target], digits, mode, first_hop=True, max_entries=max_entries)
    key = (entry_source[entry] * 2 + entry_class[entry]) * arc_count + arcs
    keys, inverse = np.unique(key, return_inverse=True)
    key_flows = np.bincount(inverse, weights=share * per_card[entry])
    key_source, key_class, key_arc = keys // (2 * arc_count), keys // arc_count % 2, keys % arc_count
    keys_per_group = np.bincount(key_source, minlength=len(groups))
    rank, chosen = _expand((np.cumsum(keys_per_group) - keys_per_group)[rank_source], keys_per_group[rank_source])
    _add(loads, key_class[chosen], _same_place_arcs(compiled, key_arc[chosen], ranks[rank]), key_flows[chosen], arc_count)
    first_choice = np.searchsorted(entry, own_entry)
    rank, chosen = _expand(first_choice, np.searchsorted(entry, own_entry, side="right") - first_choice)
    _add(loads, entry_class[entry[chosen]], _same_place_arcs(compiled, arcs[chosen], ranks[rank]), -share[chosen], arc_count)

    head = compiled.arc_head[arcs]
    state = _merged(
        (entry_class[entry], head, entry_target[entry], digits),
        (entry_mass[entry] * share, compiled.arc_latency[arcs], compiled.is_switch[head].astype(float)),
        (node_count, len(groups)),
    )
    ranks_by_group = np.argsort(rank_source, kind="stable")
    group_start = np.cumsum(group_size) - group_size
    for _ in range(node_count):
        (klass, at, target, digits), (mass, delay, switches) = state
        if not len(at):
            break
        # Leave where an arc enters the target's cards at the best cost (alike for all of them).
        exit_key = at * node_count + group_card[target]
        lo = np.searchsorted(compiled.arc_keys, exit_key, side="left")
        hi = np.searchsorted(compiled.arc_keys, exit_key, side="right")
        exit_cost = np.where(hi > lo, compiled.arc_cost[compiled.arc_by_key[np.minimum(lo, arc_count - 1)]], np.inf)
        leaving = exit_cost <= compiled.distance(groups[target], at) + 1e-9
        if leaving.any():
            # The mass spreads evenly over the group's ranks, over parallel cables as it steers.
            owner, member = _expand(group_start[target[leaving]], group_size[target[leaving]])
            owner = np.flatnonzero(leaving)[owner]
            cards = compiled.card_nodes[ranks[ranks_by_group[member]]]
            first_arc = np.searchsorted(compiled.arc_keys, at[owner] * node_count + cards)
            parallel = np.searchsorted(compiled.arc_keys, at[owner] * node_count + cards, side="right") - first_arc
            if pinned:
                exits, exit_share = compiled.arc_by_key[first_arc + digits[owner] % parallel], np.ones(len(owner))
            else:
                split, slot = _expand(first_arc, parallel)
                exits, exit_share, owner = compiled.arc_by_key[slot], 1.0 / parallel[split], owner[split]
            _add(loads, klass[owner], exits, mass[owner] / group_size[target[owner]] * exit_share, arc_count)
            np.maximum.at(latency, klass[owner], delay[owner] + compiled.arc_latency[exits])
            np.maximum.at(hops, klass[owner], switches[owner])
        stay = ~leaving
        klass, at, target, digits, mass, delay, switches = (
            array[stay] for array in (klass, at, target, digits, mass, delay, switches)
        )
        if not len(at):
            break
        entry, arcs, share, digits = _step(compiled, at, groups[target], digits, mode, first_hop=False, max_entries=max_entries)
        _add(loads, klass[entry], arcs, mass[entry] * share, arc_count)
        head = compiled.arc_head[arcs]
        state = _merged(
            (klass[entry], head, target[entry], digits),
            (mass[entry] * share, delay[entry] + compiled.arc_latency[arcs], switches[entry] + compiled.is_switch[head]),
            (node_count, len(groups)),
        )
    else:
        raise TwinCoreError("routing did not converge: a loop in the shortest-path graph")
    used = np.flatnonzero(members > 0)
    rows = loads.reshape(2, arc_count)[used]
    rows[np.abs(rows) < 1e-9 * max(1.0, float(np.abs(rows).max(initial=0.0)))] = 0.0  # rounding
    return Routes(
        incidence=sparse.csr_array(rows),
        latency=latency[used],
        switch_hops=hops[used],
        scale_out=used == 1,
        members=members[used],
    )


def _step(
    compiled: CompiledFabric,
    at: np.ndarray,
    group: np.ndarray,
    digits: np.ndarray,
    mode: str,
    *,
    first_hop: bool,
    max_entries: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One hop of walk entries at nodes ``at`` towards ``group``: (entry, arc, share of the
    entry's mass, digits after the hop) per choice; pinned one choice an entry, else an equal
    split (spray, and hash at its expectation). Refuses a hop of more than ``max_entries``."""
    options, pair_of, pair_counts, pair_starts = _next_arcs(compiled, at, group, first_hop=first_hop)
    choices = len(at) if mode == "pinned" else int(pair_counts[pair_of].sum())
    if choices > max_entries:
        raise TwinCoreError(
            f"all-pairs flow classes: a hop of {choices:,} walk entries, more than {max_entries:,} "
            "(cards alike share an entry: here few are); use fewer ranks, d-mod-k routing or another algorithm"
        )
    if mode == "pinned":
        digits = digits.copy()
        entry = np.arange(len(at))
        slot = _pinned_slots(entry, pair_of, options, pair_counts, pair_starts, digits, compiled)
        return entry, options[pair_starts[pair_of] + slot], np.ones(len(at)), digits
    entry, choice = _expand(pair_starts[pair_of], pair_counts[pair_of])
    return entry, options[choice], 1.0 / pair_counts[pair_of][entry], digits[entry]


def _expand(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges ``starts[i] .. starts[i] + counts[i]``: (i, position) of every element."""
    owner = np.repeat(np.arange(len(starts)), counts)
    offsets = np.cumsum(counts) - counts
    return owner, np.arange(int(counts.sum())) - offsets[owner] + starts[owner]


def _add(loads: np.ndarray, klass: np.ndarray, arcs: np.ndarray, flows: np.ndarray, arc_count: int) -> None:
    loads += np.bincount(klass * arc_count + arcs, weights=flows, minlength=len(loads))


def _same_place_arcs(compiled: CompiledFabric, arcs: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """For each of ``arcs`` (out of a card), the arc out of ``cards`` (card numbers) to the same
    head in the same place among parallel cables (port order)."""
    node_count = compiled.node_count
    key_position = np.empty(len(compiled.arc_by_key), dtype=np.intp)
    key_position[compiled.arc_by_key] = np.arange(len(compiled.arc_by_key))
    head = compiled.arc_head[arcs]
    place = key_position[arcs] - np.searchsorted(compiled.arc_keys, compiled.arc_tail[arcs] * node_count + head)
    return compiled.arc_by_key[np.searchsorted(compiled.arc_keys, compiled.card_nodes[cards] * node_count + head) + place]


def _merged(keys: tuple, values: tuple, sizes: tuple[int, int]) -> tuple[tuple, tuple]:
    """Walk entries with equal (class, node, target, digits) as one: mass summed, latency and
    switch hops their largest."""
    klass, node, target, digits = keys
    mass, delay, switches = values
    node_count, target_count = sizes
    span = int(digits.max(initial=0)) + 1
    combined = ((klass.astype(np.int64) * node_count + node) * target_count + target) * span + digits
    order = np.argsort(combined, kind="stable")
    combined = combined[order]
    first = np.flatnonzero(np.concatenate([[True], combined[1:] != combined[:-1]])) if len(combined) else np.empty(0, np.intp)
    pick = order[first]
    return (
        (klass[pick], node[pick], target[pick], digits[pick]),
        (
            np.add.reduceat(mass[order], first) if len(first) else mass[:0],
            np.maximum.reduceat(delay[order], first) if len(first) else delay[:0],
            np.maximum.reduceat(switches[order], first) if len(first) else switches[:0],
        ),
    )


def _choose(
    flows: np.ndarray,
    mass: np.ndarray,
    counts: np.ndarray,
    hop: int,
    mode: str,
    seed: int,
    keys: np.ndarray,
    digits: np.ndarray,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Pick next-hop slots among ``counts`` options: returns (flow, (entry, slot), mass) per
    chosen option. Pinned takes the next digit of the flow's destination index, as for
    parallel links (see ``_pinned_slots``)."""
    entries = np.arange(len(flows))
    if mode == "spray":
        entry = np.repeat(entries, counts)
        starts = np.cumsum(counts) - counts
        slot = np.arange(int(counts.sum())) - np.repeat(starts, counts)
        return flows[entry], (entry, slot), (mass / counts)[entry]
    if mode == "pinned":
        slot = digits[flows] % counts
    else:
        slot = (_hash(keys[flows], seed, hop) % counts.astype(np.uint64)).astype(np.intp)
    return flows, (entries, slot), mass


def _next_arcs(
    compiled: CompiledFabric, at: np.ndarray, group: np.ndarray, *, first_hop: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The equal-cost next arcs from nodes ``at`` towards destination ``group``s, worked out once
    per distinct (node, group) pair: (the pairs' valid arcs one pair after the other, each
    entry's pair, arcs per pair, first arc of each pair), in out-arc order: by next node,
    parallel links in port order."""
    group_count, width = compiled.transit_distance.shape
    unique_pairs, pair_of = np.unique(at.astype(np.int64) * group_count + group, return_inverse=True)
    pair_node, pair_group = np.divmod(unique_pairs, group_count)
    # Flows start on cards, where the next hops can only be uplinks (a path never crosses a
    # card): a card's few instead of the widest switch's out arcs.
    candidates = (compiled.card_uplinks if first_hop else compiled.out_arcs)[pair_node]
    safe = np.maximum(candidates, 0)
    # One flat gather instead of a 2-D one: a card's column is all inf, so an arc into a card is
    # never a next hop.
    beyond = compiled.transit_distance.ravel()[pair_group[:, None] * width + compiled.transit_column[compiled.arc_head[safe]]]
    valid = (candidates >= 0) & (
        np.abs(compiled.arc_cost[safe] + beyond - compiled.distance(pair_group, pair_node)[:, None]) < 1e-9
    )
    valid_pairs, valid_slots = np.nonzero(valid)
    options = candidates[valid_pairs, valid_slots]
    pair_counts = np.bincount(valid_pairs, minlength=len(unique_pairs))
    return options, pair_of, pair_counts, np.cumsum(pair_counts) - pair_counts


def _pinned_slots(
    flows: np.ndarray,
    pair_of: np.ndarray,
    options: np.ndarray,
    pair_counts: np.ndarray,
    pair_starts: np.ndarray,
    digits: np.ndarray,
    compiled: CompiledFabric,
) -> np.ndarray:
    """d-mod-k over one hop: each flow's slot among its pair's ``options`` (``_next_arcs``,
    grouped by next node: runs of parallel links). The next node is the destination's digit
    modulo the distinct next nodes, and that digit is used up (``digits[flows]`` is divided in
    place); the parallel link is the next digit, kept for the next hop."""
    entry_pair = np.repeat(np.arange(len(pair_counts)), pair_counts)
    entry_node = compiled.arc_head[options]
    new_run = np.ones(len(options), dtype=bool)
    new_run[1:] = (entry_pair[1:] != entry_pair[:-1]) | (entry_node[1:] != entry_node[:-1])
    run_starts = np.flatnonzero(new_run)
    run_lengths = np.diff(np.append(run_starts, len(options)))
    runs_per_pair = np.bincount(entry_pair[run_starts], minlength=len(pair_counts))
    first_run = np.cumsum(runs_per_pair) - runs_per_pair
    choices = runs_per_pair[pair_of]
    run = first_run[pair_of] + digits[flows] % choices
    digits[flows] //= choices
    return run_starts[run] + digits[flows] % run_lengths[run] - pair_starts[pair_of]


def _hash(keys: np.ndarray, seed: int, hop: int) -> np.ndarray:
    """splitmix64 of (seed, flow key, hop): well-mixed, reproducible, vectorised."""
    with np.errstate(over="ignore"):
        value = keys * np.uint64(0x9E3779B97F4A7C15) + np.uint64((seed * 1_000_003 + hop) & 0xFFFFFFFF)
        value = (value ^ (value >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        value = (value ^ (value >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return (value ^ (value >> np.uint64(31))) & _MASK64


def _merge(
    flows: np.ndarray, nodes: np.ndarray, mass: np.ndarray, node_count: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum the mass of entries that reached the same node for the same flow (spraying)."""
    keys = flows.astype(np.int64) * node_count + nodes
    unique, inverse = np.unique(keys, return_inverse=True)
    if len(unique) == len(keys):
        return flows, nodes, mass
    merged_flows, merged_nodes = np.divmod(unique, node_count)
    return merged_flows.astype(np.intp), merged_nodes.astype(np.intp), np.bincount(inverse, weights=mass)
