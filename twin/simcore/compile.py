"""Compile a fabric once into arrays, then route flows on them.

``compile_fabric(spec, transport)`` turns a ``FabricSpec`` into numpy arrays
(cached per content and transport, like a snapshot's compiled form):

- nodes in fabric order, cards numbered from 0 in fabric order;
- *arcs*: both directions of every live link (state ``"down"`` is left out),
  with capacity in bytes/s (link bandwidth times the domain's framing and efficiency),
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

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from twin.simcore.errors import FabricError, TwinCoreError
from twin.simcore.model import FabricSpec
from twin.simcore.translation import LATER, Joined
from twin.simcore.transport import Transport

__all__ = [
    "ECMP_MODES",
    "CompiledFabric",
    "Routes",
    "all_pairs_entries",
    "all_pairs_walk_size",
    "arc_record",
    "compile_fabric",
    "compiled_with_links_down",
    "flow_keys",
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
    card_host: np.ndarray  # card number -> host number (a card that names none: its own), for NCCL's trees
    in_switch_reduction: np.ndarray  # node position -> switch reduces in-network
    is_card: np.ndarray
    is_switch: np.ndarray
    arc_tail: np.ndarray
    arc_head: np.ndarray
    arc_link: np.ndarray  # index into spec.links
    arc_port: np.ndarray  # rank of the tail's port name (numbers in numeric order): parallel links in port order
    arc_capacity: np.ndarray  # bytes/s, the domain's framing and efficiency applied
    arc_raw_capacity: np.ndarray  # bytes/s of the cable
    arc_latency: np.ndarray  # s: cable plus the forwarding latency of the head
    arc_scale_out: np.ndarray
    arc_class: np.ndarray
    arc_level: np.ndarray  # level of the arc's higher end: card 0, leaf 4, spine 5, core 6
    class_names: tuple[str, ...]
    arc_cost: np.ndarray
    arc_keys: np.ndarray  # tail * nodes + head, sorted
    arc_by_key: np.ndarray  # arc ids in arc_keys order
    out_arcs: np.ndarray  # (nodes, most) arcs into transit nodes (next hops) by next node, parallel ones in port order, -1 padded
    card_uplinks: np.ndarray  # (nodes, most uplinks of a card) a card's arcs into transit nodes, -1 padded
    transit_column: np.ndarray  # node position -> column of transit_distance; the last (all inf) for cards
    transit_distance: np.ndarray  # (groups, transit nodes + 1) routing cost to the group's cards

    @property
    def node_count(self) -> int:
        return len(self.is_card)

    @functools.cached_property
    def hop_column(self) -> np.ndarray:
        """Each arc's head as a column of ``transit_distance``, then the all-inf column: what
        index -1 (padding) reads."""
        return np.append(self.transit_column[self.arc_head], self.transit_distance.shape[1] - 1)

    @functools.cached_property
    def distance_by_column(self) -> np.ndarray:
        """``transit_distance`` transposed (transit nodes x groups), for the all-pairs walk: the
        distances of one node to many groups side by side."""
        return np.ascontiguousarray(self.transit_distance.T)

    @functools.cached_property
    def hop_cost(self) -> np.ndarray:
        """``arc_cost``, then 0 for index -1 (padding, see ``hop_column``)."""
        return np.append(self.arc_cost, 0.0)

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


def _no_path(source: str, target: str) -> Any:
    return LATER.gettext("no path from %(source)s to %(target)s (links down or missing?)") % {"source": repr(source), "target": repr(target)}


def _too_many_walk_entries(what: Any, entries: int, limit: int) -> Any:
    too_many = LATER.gettext(
        "all-pairs flow classes: %(what)s, more than %(limit)s (cards alike share an entry: here few are); use fewer ranks, d-mod-k routing or another algorithm"
    )
    return too_many % {"what": what % {"entries": entries}, "limit": limit}


def _unknown_ecmp_mode(mode: Any) -> Any:
    return LATER.gettext("ECMP mode %(mode)s; expected one of %(names)s") % {"mode": repr(mode), "names": Joined(list(ECMP_MODES))}


@functools.lru_cache(maxsize=8)
def _compile_cached(spec: FabricSpec, transport: Transport) -> CompiledFabric:
    spec.validate()
    nodes = spec.nodes
    index = spec.node_index()
    is_card = np.array([node.kind == "card" for node in nodes])
    is_switch = np.array([node.kind == "switch" for node in nodes])
    if not is_card.any():
        raise FabricError(LATER.gettext("fabric %(fabric)s has no cards to simulate") % {"fabric": repr(spec.name)})
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
    efficiency = np.where(arc_scale_out, transport.scale_out.link_efficiency, transport.scale_up.link_efficiency)

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
        card_host=_host_numbers([nodes[position].host for position in card_nodes]),
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


def _host_numbers(hosts: list[str | None]) -> np.ndarray:
    """Each card's host as a number, in order of first appearance; a card that names no host is
    a host of its own."""
    numbers: dict[object, int] = {}
    keys = (host if host is not None else ("card", card) for card, host in enumerate(hosts))
    return np.fromiter((numbers.setdefault(key, len(numbers)) for key in keys), dtype=np.intp, count=len(hosts))


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
    arc_arrays = tuple(name for name in _ARC_ARRAYS if name != "arc_class")
    return _with_routing(
        spec=spec,
        transport=compiled.transport,
        card_ids=compiled.card_ids,
        card_nodes=compiled.card_nodes,
        card_route_index=compiled.card_route_index,  # a port that goes down keeps its LID
        card_supernode=compiled.card_supernode,
        card_host=compiled.card_host,
        in_switch_reduction=compiled.in_switch_reduction,
        is_card=compiled.is_card,
        is_switch=compiled.is_switch,
        arc_class=arc_class,
        class_names=tuple(compiled.class_names[number] for number in used_classes.tolist()),
        **{name: getattr(compiled, name)[keep] for name in arc_arrays},
    )


_ARC_ARRAYS = ("arc_tail", "arc_head", "arc_link", "arc_port", "arc_capacity", "arc_raw_capacity", "arc_latency", "arc_scale_out", "arc_class", "arc_level")
"""The per-arc arrays of a ``CompiledFabric`` that ``_with_routing`` is given."""


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
    # Out arcs by next node, parallel ones in port order: pinned takes them in that order. An arc
    # into a card is never a next hop (a path ends there, see route's exits).
    by_head = np.lexsort((fields["arc_port"], head))
    uplinks = by_head[(is_card[tail] & ~is_card[head])[by_head]]
    return CompiledFabric(
        **fields,
        card_group=card_group,
        arc_cost=arc_cost,
        arc_keys=keys[order],
        arc_by_key=order,
        out_arcs=_padded_out_arcs(by_head[~is_card[head[by_head]]], tail, node_count, min_width=1),
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


def arc_record(compiled: CompiledFabric, arc: int, bytes_moved: float, utilization: float) -> dict[str, Any]:
    """One arc as plain data: the link's index in the spec, its direction (ends by id, for the
    map, and by name, for people), class and load."""
    spec = compiled.spec
    link = spec.links[compiled.arc_link[arc]]
    tail = spec.nodes[compiled.arc_tail[arc]].id
    head = link.b if tail == link.a else link.a
    return {
        "link": int(compiled.arc_link[arc]),
        "from": tail,
        "to": head,
        "from_name": spec.node_name(tail),
        "to_name": spec.node_name(head),
        "class": compiled.class_names[compiled.arc_class[arc]],
        "bytes": float(bytes_moved),
        "utilization": float(utilization),
    }


def flow_keys(
    compiled: CompiledFabric, sources: np.ndarray, targets: np.ndarray, channels: np.ndarray | None = None
) -> np.ndarray:
    """ECMP hash keys of flows ``sources[i] -> targets[i]`` (card numbers) on channels
    ``channels[i]`` (default 0): the ends' routing indices (``card_route_index``), not their
    numbers, so that a fabric listing its cards in another order hashes alike."""
    index = compiled.card_route_index
    keys = (index[sources].astype(np.uint64) << np.uint64(20)) + index[targets].astype(np.uint64)
    if channels is not None:
        keys += np.asarray(channels, dtype=np.uint64) << np.uint64(40)
    return keys


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
        raise TwinCoreError(_unknown_ecmp_mode(mode))
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
            raise TwinCoreError(_no_path(compiled.card_ids[sources[flows[stuck]]], compiled.card_ids[targets[flows[stuck]]]))
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
            chosen_flows, chosen_mass = flows, mass
            choice, digits[flows] = _pinned_choices(compiled, pair_of, options, pair_counts, digits[flows])
        else:
            chosen_flows, (entry, slot), chosen_mass = _choose(
                flows, mass, pair_counts[pair_of], hop, mode, seed, keys, digits
            )
            choice = pair_starts[pair_of[entry]] + slot
        arcs = options[choice]
        recorded_flows.append(chosen_flows)
        recorded_arcs.append(arcs)
        recorded_mass.append(chosen_mass)
        flows, at, mass = _merge(chosen_flows, compiled.arc_head[arcs], chosen_mass, node_count)
    else:
        raise TwinCoreError(LATER.gettext("routing did not converge: a loop in the shortest-path graph"))

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
    compiled = _through_private_nics(compiled)[0]
    groups = len(_all_pairs_plan(compiled, np.asarray(ranks, dtype=np.intp)).group_size)
    if mode == "pinned":
        return groups * len(ranks)
    return groups * groups * max(1, compiled.card_uplinks.shape[1])


def all_pairs_walk_size(compiled: CompiledFabric, ranks: np.ndarray, mode: str) -> int:
    """How much the walk of ``route_all_pairs`` handles in all, known before anything is
    allocated: the entries it starts from (``all_pairs_entries``) times the equal-cost choices
    each may split into at a hop when hashing or spraying (half the widest transit node's links:
    a fat-tree switch's uplinks); pinned entries never split. Its time grows with this: 8.4
    million on a 16,384-card fat-tree, pinned or hashed, take seconds; 134 million hashed on
    65,536 cards take minutes, which is why callers refuse a pattern by it."""
    return all_pairs_entries(compiled, ranks, mode) * _widest_split(compiled, mode)


def _widest_split(compiled: CompiledFabric, mode: str) -> int:
    """The most equal-cost choices one walk entry may split into at a hop: half the widest
    transit node's links hashed or sprayed (a fat-tree switch's uplinks), one pinned."""
    if mode == "pinned":
        return 1
    transit_links = np.bincount(compiled.arc_tail, minlength=compiled.node_count)[~compiled.is_card]
    return max(1, int(transit_links.max(initial=0)) // 2)


def route_all_pairs(compiled: CompiledFabric, ranks: np.ndarray, *, mode: str, max_entries: int) -> Routes:
    """Every rank to every other as *flow classes*, never a row per flow (p (p - 1) rows, 268
    million at 16,384 ranks): one row per class of flows with the same demand and domain (the
    scale-out flows, and the others), its incidence the sum of its members' (flows on each
    arc), ``members`` its flow count, its latency and switch hops its members' largest.

    *Islands* first: a part of the fabric that only some cards reach and that is not joined to
    the rest but through cards (a server's NVSwitch) can only carry flows between its own cards.
    Those pairs, few, are routed flow by flow (``route``); every other pair avoids the islands,
    so cards are alike when their attachments outside the islands are: the cards at one rail
    position of a rail-optimised unit, whatever their servers (see ``_all_pairs_plan``).

    The walk carries flow *mass* instead of flows. Cards of one group (same attachments outside
    the islands) are alike: a group's cards leave as one entry per destination group (pinned:
    per destination card, whose digits steer), and entries merge wherever they meet at a node
    for the same group (and the same digits left). Each card's own uplinks get its share, less
    its flows to itself and to its island partners; a group's mass arriving at its attachment
    spreads over its cards by the flows each receives outside the islands, exact for cards on
    one attachment each. ``"hash"`` is taken at its expectation, an equal split over the
    equal-cost next hops as ``"spray"`` (islands included): with many flows on every arc a
    hash's collisions cost a few per cent more (the per-flow ``route`` counts them;
    ``tests/simcore/test_simcore_classes.py`` measures the gap). Destinations are walked a few
    at a time (``_WALK_AT_ONCE`` entries): entries only merge for one destination.

    Max-min over the classes (a class's rate applying to each of its members) is exact for the
    slowest flows: progressive filling's first level is the least capacity / flows crossing
    over the arcs, and a class adds its members' crossings. A class then moves at the pace of
    its slowest member, the per-flow answer when its members are alike (a symmetric fabric).
    Raises ``TwinCoreError`` for cards cabled to cards (they would not be alike), where a pair
    has no path, and before a hop that would hold more than ``max_entries`` entries.
    """
    if mode not in ECMP_MODES:
        raise TwinCoreError(_unknown_ecmp_mode(mode))
    direct, to_original = _through_private_nics(compiled)
    if to_original is not None:
        routes = route_all_pairs(direct, ranks, mode=mode, max_entries=max_entries)
        return dataclasses.replace(routes, incidence=sparse.csr_array(routes.incidence @ to_original))
    if (compiled.is_card[compiled.arc_tail] & compiled.is_card[compiled.arc_head]).any():
        raise TwinCoreError(LATER.gettext("all-pairs flow classes need cards cabled to switches or NICs only, not to other cards"))
    ranks = np.asarray(ranks, dtype=np.intp)
    plan = _all_pairs_plan(compiled, ranks)
    entries = all_pairs_entries(compiled, ranks, mode)
    if entries > max_entries:
        raise TwinCoreError(_too_many_walk_entries(LATER.gettext("a walk from %(entries)s walk entries"), entries, max_entries))
    arc_count = len(compiled.arc_tail)
    totals = _ClassTotals(loads=np.zeros(2 * arc_count), latency=np.zeros(2), hops=np.zeros(2), members=np.zeros(2))
    island_sources, island_targets = plan.island_pairs
    for start in range(0, len(island_sources), _DESTINATIONS_AT_ONCE):
        chosen = slice(start, start + _DESTINATIONS_AT_ONCE)
        island_mode = "pinned" if mode == "pinned" else "spray"  # hashing at its expectation
        flows = route(compiled, ranks[island_sources[chosen]], ranks[island_targets[chosen]], mode=island_mode)
        klass = flows.scale_out.astype(np.intp)
        coo = flows.incidence.tocoo()
        _add(totals.loads, klass[coo.row], coo.col, coo.data, arc_count)
        np.maximum.at(totals.latency, klass, flows.latency)
        np.maximum.at(totals.hops, klass, flows.switch_hops)
        totals.members[:] += np.bincount(klass, minlength=2)

    group_count = len(plan.group_size)
    cost = _group_costs(compiled, plan)  # (source group, target group) routing cost
    # Flows between two groups' cards that the walk carries: all but to itself and island partners.
    walked = np.outer(plan.group_size, plan.group_size) - np.diag(plan.group_size).astype(float)
    np.subtract.at(walked, (plan.group_of_rank[island_sources], plan.group_of_rank[island_targets]), 1.0)
    if not np.isfinite(cost[walked > 0]).all():
        source, target = np.argwhere((walked > 0) & ~np.isfinite(cost))[0]
        raise TwinCoreError(_no_path(compiled.card_ids[ranks[plan.group_rank[source]]], compiled.card_ids[ranks[plan.group_rank[target]]]))
    # Pinned destinations in group order: a few groups at a time, their (node, group) pairs apart.
    # As many at once as keep a hop's entries, once split, near ``_WALK_AT_ONCE``.
    destinations = np.argsort(plan.group_of_rank, kind="stable") if mode == "pinned" else np.arange(group_count)
    per_walk = max(1, _WALK_AT_ONCE // (group_count * _widest_split(compiled, mode)))
    for start in range(0, len(destinations), per_walk):
        _walk_destinations(compiled, plan, ranks, destinations[start : start + per_walk], cost, walked, mode, max_entries, totals)

    used = np.flatnonzero(totals.members > 0)
    rows = totals.loads.reshape(2, arc_count)[used]
    rows[np.abs(rows) < 1e-9 * max(1.0, float(np.abs(rows).max(initial=0.0)))] = 0.0  # rounding
    return Routes(
        incidence=sparse.csr_array(rows),
        latency=totals.latency[used],
        switch_hops=totals.hops[used],
        scale_out=used == 1,
        members=totals.members[used],
    )


@functools.lru_cache(maxsize=4)
def _through_private_nics(compiled: CompiledFabric) -> tuple[CompiledFabric, sparse.csr_array | None]:
    """``compiled`` with every *private NIC* passed through, for the all-pairs walk: (the fabric
    with each such card cabled straight to the NIC's switch, a matrix from its arcs to
    ``compiled``'s), or (``compiled``, None) without private NICs.

    A private NIC (an HCA of an ibnetdiscover dump, a SuperPOD's per-GPU NIC) is a node that is
    neither card nor switch with two live links, one to a single card and one onward: every
    path of its card crosses both links, and no other path crosses either (a path never crosses
    a card). Its two hops each way are then one arc with the smaller capacity, the summed latency
    and either's domain: the same paths (the NIC's single next hop adds no choice, pinned or
    not), so cards behind their own NICs on one switch collapse into one group as cards cabled
    to it do. The matrix puts each joined arc's flows back on both of its arcs, the rest on
    themselves; every node keeps its place (the NICs stay, without arcs)."""
    tail, head, is_card = compiled.arc_tail, compiled.arc_head, compiled.is_card
    node_count, arc_count = compiled.node_count, len(tail)
    degree = np.bincount(tail, minlength=node_count)
    card_arcs = np.bincount(tail[is_card[head]], minlength=node_count)
    private = ~is_card & ~compiled.is_switch & (degree == 2) & (card_arcs == 1)
    if not private.any():
        return compiled, None
    out_of_nic = np.flatnonzero(private[tail])
    out_of_nic = out_of_nic[np.argsort(tail[out_of_nic], kind="stable")].reshape(-1, 2)  # a row a NIC
    into_card = np.where(is_card[head[out_of_nic[:, 0]]], out_of_nic[:, 0], out_of_nic[:, 1])
    onward = out_of_nic.sum(axis=1) - into_card
    half = arc_count // 2  # arcs come in two halves: each link forward, then backward
    from_card, back = (into_card + half) % arc_count, (onward + half) % arc_count
    # The card's arc out becomes card -> switch, its arc in switch -> card; the NIC's onward
    # link leaves (both its arcs: the two halves stay aligned).
    fields = {name: getattr(compiled, name).copy() for name in _ARC_ARRAYS}
    fields["arc_head"][from_card] = head[onward]
    fields["arc_tail"][into_card] = tail[back]
    fields["arc_port"][into_card] = compiled.arc_port[back]
    for name in ("arc_capacity", "arc_raw_capacity"):
        values = getattr(compiled, name)
        fields[name][from_card] = np.minimum(values[from_card], values[onward])
        fields[name][into_card] = np.minimum(values[back], values[into_card])
    fields["arc_latency"][from_card] += compiled.arc_latency[onward]
    fields["arc_latency"][into_card] += compiled.arc_latency[back]
    fields["arc_scale_out"][from_card] |= compiled.arc_scale_out[onward]
    fields["arc_scale_out"][into_card] |= compiled.arc_scale_out[back]
    keep = np.ones(arc_count, dtype=bool)
    keep[onward] = keep[back] = False
    kept = np.flatnonzero(keep)
    position = np.cumsum(keep) - 1
    rows = np.concatenate([position[kept], position[from_card], position[into_card]])
    columns = np.concatenate([kept, onward, back])
    to_original = sparse.csr_array((np.ones(len(rows)), (rows, columns)), shape=(len(kept), arc_count))
    direct = _with_routing(
        spec=compiled.spec,
        transport=compiled.transport,
        card_ids=compiled.card_ids,
        card_nodes=compiled.card_nodes,
        card_route_index=compiled.card_route_index,
        card_supernode=compiled.card_supernode,
        card_host=compiled.card_host,
        in_switch_reduction=compiled.in_switch_reduction,
        is_card=is_card,
        is_switch=compiled.is_switch,
        class_names=compiled.class_names,
        **{name: values[keep] for name, values in fields.items()},
    )
    return direct, to_original


_DESTINATIONS_AT_ONCE = 1 << 21
"""Island flows routed at once."""
_WALK_AT_ONCE = 1 << 19
"""Walk entries a hop may hold, once split, for the destinations walked at once: the walk's
memory (a 16,384-card hashed all-to-all peaks at 0.2 GB, where 2 million entries a walk made
8.4 million at once and 1.1 GB) without loops too short to pay their overhead."""
_ISLAND_FLOWS = 1024 * 1024
"""Most pairs routed flow by flow as islands' (``_all_pairs_plan``): past it, no islands."""


@dataclass(frozen=True, eq=False)
class _AllPairsPlan:
    """How ``route_all_pairs`` splits every rank to every other (positions in its ``ranks``)."""

    group_of_rank: np.ndarray  # rank -> group: same attachments outside the islands
    group_size: np.ndarray
    group_rank: np.ndarray  # a rank standing for each group (its first)
    group_card: np.ndarray  # that rank's card node
    group_row: np.ndarray  # that card's row of ``transit_distance``: alike outside the islands
    group_uplinks: np.ndarray  # (groups, width) that card's uplinks outside the islands, -1 padded
    group_start: np.ndarray  # where each group's ranks start in ranks_by_group
    ranks_by_group: np.ndarray  # ranks in group order
    shared_first_hops: bool  # two groups' uplinks reach a common node (entries may meet there)
    island_pairs: tuple[np.ndarray, np.ndarray]  # (sources, targets) sharing an island: routed flow by flow
    island_partners: sparse.csr_array  # (groups, ranks): island partners of each rank in each group
    arrival_share: np.ndarray  # rank -> share of its group's walked flows it receives


@dataclass(frozen=True, eq=False)
class _ClassTotals:
    """What the walk adds up, per class (0 scale-up, 1 scale-out): flows per arc (class-major),
    largest latency and switch hops, flows."""

    loads: np.ndarray
    latency: np.ndarray
    hops: np.ndarray
    members: np.ndarray


@functools.lru_cache(maxsize=4)
def _cached_plan(compiled: CompiledFabric, ranks_bytes: bytes) -> _AllPairsPlan:
    ranks = np.frombuffer(ranks_bytes, dtype=np.intp)
    card_nodes = compiled.card_nodes[ranks]
    uplinks = compiled.card_uplinks[card_nodes]
    rank_count, width = uplinks.shape
    heads = compiled.arc_head[np.maximum(uplinks, 0)]
    is_transit = ~compiled.is_card
    between = is_transit[compiled.arc_tail] & is_transit[compiled.arc_head]
    column = compiled.transit_column
    transit_count = int(is_transit.sum())
    graph = sparse.csr_array(
        (np.ones(int(between.sum())), (column[compiled.arc_tail[between]], column[compiled.arc_head[between]])),
        shape=(transit_count, transit_count),
    )
    components, component = csgraph.connected_components(graph, directed=False)
    slot_component = np.where(uplinks >= 0, component[column[heads]], -1)
    # Each (rank, component) once: a card reaches a component or not.
    rank_component = np.unique(np.arange(rank_count).repeat(width) * (components + 1) + slot_component.ravel() + 1)
    member_rank, member_component = np.divmod(rank_component, components + 1)
    member_rank, member_component = member_rank[member_component > 0], member_component[member_component > 0] - 1
    cards_on = np.bincount(member_component, minlength=components)
    # Islands: every component but the most reached, if all their pairs fit.
    island = np.zeros(components, dtype=bool)
    if components > 1:
        island[cards_on > 0] = True
        island[np.argmax(cards_on)] = False
        if int((cards_on[island].astype(np.int64) ** 2).sum()) > _ISLAND_FLOWS:
            island[:] = False
    island_slot = (slot_component >= 0) & island[np.maximum(slot_component, 0)]
    outside = np.where(island_slot, -1, uplinks)

    # Island pairs: every two ranks on one island, each pair once.
    on_island = island[member_component]
    island_rank, island_of = member_rank[on_island], member_component[on_island]
    order = np.argsort(island_of, kind="stable")
    island_rank, island_of = island_rank[order], island_of[order]
    starts = np.searchsorted(island_of, island_of)
    sizes = np.searchsorted(island_of, island_of, side="right") - starts
    owner, partner = _expand(starts, sizes)
    pair_key = np.unique(island_rank[owner].astype(np.int64) * rank_count + island_rank[partner])
    sources, targets = np.divmod(pair_key, rank_count)
    keep = sources != targets
    sources, targets = sources[keep].astype(np.intp), targets[keep].astype(np.intp)

    # Groups: the same (head, cost) attachments outside the islands, a set (parallel cables alike).
    costs, cost_code = np.unique(compiled.arc_cost[np.maximum(outside, 0)], return_inverse=True)
    slot_key = np.where(outside >= 0, heads.astype(np.int64) * len(costs) + cost_code.reshape(outside.shape), -1)
    slot_key = np.sort(slot_key, axis=1)
    if width > 1:
        slot_key[:, 1:][slot_key[:, 1:] == slot_key[:, :-1]] = -1
        slot_key = np.sort(slot_key, axis=1)
    _, first_rank, group_of_rank = np.unique(slot_key, axis=0, return_index=True, return_inverse=True)
    # Numbered by their first rank, as ranks come.
    renumber = np.empty(len(first_rank), dtype=np.intp)
    renumber[np.argsort(first_rank, kind="stable")] = np.arange(len(first_rank))
    group_of_rank = renumber[group_of_rank.ravel()]
    group_rank = np.sort(first_rank)
    group_count = len(group_rank)
    group_size = np.bincount(group_of_rank, minlength=group_count)

    island_partners = sparse.csr_array(
        (np.ones(len(sources)), (group_of_rank[sources], targets)), shape=(group_count, rank_count)
    )
    received = (rank_count - 1) - np.bincount(targets, minlength=rank_count)
    group_received = np.bincount(group_of_rank, weights=received, minlength=group_count)
    arrival_share = np.divide(received, group_received[group_of_rank], out=np.zeros(rank_count), where=group_received[group_of_rank] > 0)
    group_uplinks = outside[group_rank]
    reached = group_uplinks >= 0
    group_heads = np.unique(np.nonzero(reached)[0] * compiled.node_count + compiled.arc_head[group_uplinks[reached]])
    return _AllPairsPlan(
        group_of_rank=group_of_rank,
        group_size=group_size,
        group_rank=group_rank,
        group_card=card_nodes[group_rank],
        group_row=compiled.card_group[ranks[group_rank]],
        group_uplinks=group_uplinks,
        group_start=np.cumsum(group_size) - group_size,
        ranks_by_group=np.argsort(group_of_rank, kind="stable"),
        shared_first_hops=bool(len(np.unique(group_heads % compiled.node_count)) < len(group_heads)),
        island_pairs=(sources, targets),
        island_partners=island_partners,
        arrival_share=arrival_share,
    )


def _all_pairs_plan(compiled: CompiledFabric, ranks: np.ndarray) -> _AllPairsPlan:
    """Islands, island pairs and groups of alike cards for ``route_all_pairs`` on ``ranks``.

    The transit nodes (all but cards) fall into connected components, joined to one another
    only through cards, which a path never crosses: a flow stays in one component, one both its
    ends reach. Every component but the one most cards reach is an *island* (a server's
    NVSwitch), if their pairs (cards on each, squared, summed) stay within ``_ISLAND_FLOWS``
    (else none is: 16 super-nodes of 1,024 cards stay as they were). Pairs of cards on a common island are routed flow by flow; every other
    pair's paths lie outside the islands, so cards are grouped by their attachments there."""
    return _cached_plan(compiled, np.ascontiguousarray(ranks, dtype=np.intp).tobytes())


def _group_costs(compiled: CompiledFabric, plan: _AllPairsPlan) -> np.ndarray:
    """(source group, target group) routing cost from the source's standing card through its
    uplinks outside the islands, where the target group's cards are alike."""
    cost = np.full((len(plan.group_size), len(plan.group_size)), np.inf)
    for slot in range(plan.group_uplinks.shape[1]):
        uplink = plan.group_uplinks[:, slot]
        head_column = compiled.transit_column[compiled.arc_head[np.maximum(uplink, 0)]]
        through = compiled.arc_cost[uplink][:, None] + compiled.transit_distance[plan.group_row[None, :], head_column[:, None]]
        cost = np.minimum(cost, np.where(uplink[:, None] >= 0, through, np.inf))
    return cost


def _walk_destinations(
    compiled: CompiledFabric,
    plan: _AllPairsPlan,
    ranks: np.ndarray,
    destinations: np.ndarray,
    cost: np.ndarray,
    walked: np.ndarray,
    mode: str,
    max_entries: int,
    totals: _ClassTotals,
) -> None:
    """Walk every group's cards to ``destinations`` (pinned: ranks, else groups) and add their
    flows to ``totals`` (see ``route_all_pairs``; ``cost`` and ``walked``: routing cost and flows
    from a group's cards to another's)."""
    pinned = mode == "pinned"
    arc_count, node_count = len(compiled.arc_tail), compiled.node_count
    group_count, width = plan.group_uplinks.shape
    count = len(destinations)
    # Entries (source group S, destination): each card of S sends 1 (pinned) or n_T flows on it,
    # less its flows to itself and to its island partners (``excluded``).
    source = np.repeat(np.arange(group_count), count)
    target = np.tile(plan.group_of_rank[destinations] if pinned else destinations, group_count)
    if pinned:
        per_card = np.ones(len(source))
        partners = plan.island_partners[:, destinations].toarray().ravel()
        mass = plan.group_size[source] - (source == target) - partners
    else:
        per_card = plan.group_size[target].astype(float)
        mass = walked[source, target]
    island_sources, island_targets = plan.island_pairs
    position = np.full(len(ranks) if pinned else group_count, -1)
    position[destinations] = np.arange(count)
    excluded_rank = np.concatenate([np.arange(len(ranks)), island_sources])
    excluded_to = np.concatenate([np.arange(len(ranks)), island_targets])
    excluded_to = position[excluded_to if pinned else plan.group_of_rank[excluded_to]]
    excluded_rank = excluded_rank[excluded_to >= 0]
    excluded = plan.group_of_rank[excluded_rank] * count + excluded_to[excluded_to >= 0]
    digits = compiled.card_route_index[ranks[np.tile(destinations, group_count)]] if pinned else np.zeros(len(source), np.intp)
    # An entry without flows is left out, and so are its cards' exclusions (they add up to it).
    moving = mass > 0
    if not moving.all():
        renumbered = np.cumsum(moving) - 1
        excluded_rank, excluded = excluded_rank[moving[excluded]], renumbered[excluded[moving[excluded]]]
        source, target, per_card, mass, digits = source[moving], target[moving], per_card[moving], mass[moving], digits[moving]
    klass = (cost[source, target] > arc_count).astype(np.intp)  # 1: crosses a scale-out arc
    totals.members[:] += np.bincount(klass, weights=mass, minlength=2)

    # First hop, worked out from each group's standing card: every card of the group leaves the
    # same way (same head, same place among parallel cables), less its exclusions.
    pairs, pair_of = _indexed(source.astype(np.int64) * group_count + target, group_count * group_count)
    pair_source, pair_target = np.divmod(pairs, group_count)
    set_of, options, columns, counts, starts = _next_options(
        compiled, plan.group_uplinks[pair_source], plan.group_row[pair_target], cost[pair_source, pair_target], pair_source
    )
    entry, choice, share, digits = _choices(
        compiled, np.arange(len(source)), set_of[pair_of], options, counts, starts, digits, pinned, max_entries
    )
    arcs = options[choice]
    key = (source[entry] * 2 + klass[entry]) * width + columns[choice]
    flows = np.bincount(key, weights=share * per_card[entry], minlength=group_count * 2 * width)
    used = np.flatnonzero(flows)
    used_source, used_class, used_column = used // (2 * width), used // width % 2, used % width
    member, place = _expand(plan.group_start[used_source], plan.group_size[used_source])
    rank = plan.ranks_by_group[place]
    uplinks = plan.group_uplinks[used_source[member], used_column[member]]
    _add(totals.loads, used_class[member], _same_place_arcs(compiled, uplinks, ranks[rank]), flows[used][member], arc_count)
    first_choice = np.searchsorted(entry, excluded)
    owner, chosen = _expand(first_choice, np.searchsorted(entry, excluded, side="right") - first_choice)
    arcs_out = _same_place_arcs(compiled, arcs[chosen], ranks[excluded_rank[owner]])
    _add(totals.loads, klass[entry[chosen]], arcs_out, -share[chosen], arc_count)

    # Entries sit at transit nodes from here on, held as their columns of ``transit_distance``.
    keys = (klass[entry], compiled.hop_column[arcs], target[entry], digits)
    values = (mass[entry] * share, compiled.arc_latency[arcs], compiled.is_switch[compiled.arc_head[arcs]].astype(float))
    if plan.shared_first_hops:
        keys, values = _merged(keys, values, group_count, compiled)
    (klass, at, target, digits), (mass, delay, switches) = keys, values
    transit_nodes = np.flatnonzero(~compiled.is_card)
    for _ in range(node_count):
        if not len(at):
            break
        pairs, pair_of = _indexed(at.astype(np.int64) * group_count + target, len(transit_nodes) * group_count)
        pair_column, pair_target = np.divmod(pairs, group_count)
        pair_node = transit_nodes[pair_column]
        here = compiled.transit_distance[plan.group_row[pair_target], pair_column]
        # Leave where an arc enters the target's cards at the best cost (alike for all of them).
        exit_key = pair_node * node_count + plan.group_card[pair_target]
        lo = np.searchsorted(compiled.arc_keys, exit_key, side="left")
        hi = np.searchsorted(compiled.arc_keys, exit_key, side="right")
        exit_cost = np.where(hi > lo, compiled.arc_cost[compiled.arc_by_key[np.minimum(lo, arc_count - 1)]], np.inf)
        pair_leaving = exit_cost <= here + 1e-9
        leaving = pair_leaving[pair_of]
        if pair_leaving.any():
            # The mass spreads over the group's ranks by the flows each receives, over parallel
            # cables as it steers.
            owner, member = _expand(plan.group_start[target[leaving]], plan.group_size[target[leaving]])
            owner = np.flatnonzero(leaving)[owner]
            rank = plan.ranks_by_group[member]
            arc_key = transit_nodes[at[owner]] * node_count + compiled.card_nodes[ranks[rank]]
            first_arc = np.searchsorted(compiled.arc_keys, arc_key)
            parallel = np.searchsorted(compiled.arc_keys, arc_key, side="right") - first_arc
            if pinned:
                exits, exit_share = compiled.arc_by_key[first_arc + digits[owner] % parallel], np.ones(len(owner))
            else:
                split, slot = _expand(first_arc, parallel)
                exits, exit_share, owner, rank = compiled.arc_by_key[slot], 1.0 / parallel[split], owner[split], rank[split]
            _add(totals.loads, klass[owner], exits, mass[owner] * plan.arrival_share[rank] * exit_share, arc_count)
            np.maximum.at(totals.latency, klass[owner], delay[owner] + compiled.arc_latency[exits])
            np.maximum.at(totals.hops, klass[owner], switches[owner])
            moving = np.flatnonzero(~leaving)
        else:
            moving = np.arange(len(at))
        if not len(moving):
            break
        set_of, options, _, counts, starts = _next_options(
            compiled, compiled.out_arcs[pair_node], plan.group_row[pair_target], here, pair_node
        )
        entry, choice, share, digits = _choices(
            compiled, moving, set_of[pair_of[moving]], options, counts, starts, digits[moving], pinned, max_entries
        )
        arcs = options[choice]
        _add(totals.loads, klass[entry], arcs, mass[entry] * share, arc_count)
        (klass, at, target, digits), (mass, delay, switches) = _merged(
            (klass[entry], compiled.hop_column[arcs], target[entry], digits),
            (mass[entry] * share, delay[entry] + compiled.arc_latency[arcs], switches[entry] + compiled.is_switch[compiled.arc_head[arcs]]),
            group_count,
            compiled,
        )
    else:
        raise TwinCoreError(LATER.gettext("routing did not converge: a loop in the shortest-path graph"))


def _choices(
    compiled: CompiledFabric,
    entries: np.ndarray,
    set_of: np.ndarray,
    options: np.ndarray,
    counts: np.ndarray,
    starts: np.ndarray,
    digits: np.ndarray,
    pinned: bool,
    max_entries: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One hop of walk ``entries`` (``set_of`` and ``digits``: each one's choice set among
    ``_next_options``'s and its digits): (entry, option, share of the entry's mass, digits after
    the hop) per choice; pinned one choice an entry, else an equal split (spray, and hash at its
    expectation). Refuses a hop of more than ``max_entries``."""
    choices = len(entries) if pinned else int(counts[set_of].sum())
    if choices > max_entries:
        raise TwinCoreError(_too_many_walk_entries(LATER.gettext("a hop of %(entries)s walk entries"), choices, max_entries))
    if pinned:
        choice, digits = _pinned_choices(compiled, set_of, options, counts, digits)
        return entries, choice, np.ones(len(entries)), digits
    owner, choice = _expand(starts[set_of], counts[set_of])
    return entries[owner], choice, 1.0 / counts[set_of][owner], digits[owner]


def _indexed(keys: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for keys in ``0 .. bound - 1``: by a table when
    ``bound`` is small, else by one sort."""
    if bound <= max(1 << 23, 2 * len(keys)):
        seen = np.zeros(bound, dtype=bool)
        seen[keys] = True
        unique = np.flatnonzero(seen)
        place = np.empty(bound, dtype=np.int32 if len(unique) < 2**31 else np.intp)
        place[unique] = np.arange(len(unique))
        return unique, place[keys]
    order, firsts = _sorted_runs(keys, bound)
    inverse = np.empty(len(keys), dtype=np.intp)
    inverse[order] = np.repeat(np.arange(len(firsts)), np.diff(np.append(firsts, len(keys))))
    return keys[order[firsts]], inverse


def _sorted_runs(keys: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """The order sorting ``keys`` (in ``0 .. bound - 1``) and where each run of equal keys starts
    in it. Keys and positions packed into one int64 sort when they fit: several times faster
    than an argsort."""
    position_bits = max(1, (len(keys) - 1).bit_length())
    if (bound - 1).bit_length() + position_bits <= 63:
        packed = np.sort((keys.astype(np.int64) << position_bits) | np.arange(len(keys), dtype=np.int64))
        order, ordered = packed & ((1 << position_bits) - 1), packed >> position_bits
    else:
        order = np.argsort(keys)
        ordered = keys[order]
    firsts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]])) if len(keys) else np.empty(0, np.intp)
    return order, firsts


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


def _merged(keys: tuple, values: tuple, target_count: int, compiled: CompiledFabric) -> tuple[tuple, tuple]:
    """Walk entries with equal (class, node column, target, digits) as one: mass summed, latency
    and switch hops their largest."""
    klass, column, target, digits = keys
    mass, delay, switches = values
    if not len(column):
        return keys, values
    # (target, digits) first, numbered among those present: the key then stays small enough to
    # index by a table rather than a sort.
    span = int(digits.max()) + 1
    states, state_of = _indexed(target.astype(np.int64) * span + digits, target_count * span)
    columns = compiled.transit_distance.shape[1]
    merged, merged_of = _indexed((klass.astype(np.int64) * columns + column) * len(states) + state_of, 2 * columns * len(states))
    place, state = np.divmod(merged, len(states))
    merged_target, merged_digits = np.divmod(states[state], span)
    longest, most_switches = np.zeros(len(merged)), np.zeros(len(merged))
    np.maximum.at(longest, merged_of, delay)
    np.maximum.at(most_switches, merged_of, switches)
    return (
        (place // columns, place % columns, merged_target, merged_digits),
        (np.bincount(merged_of, weights=mass, minlength=len(merged)), longest, most_switches),
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
    parallel links (see ``_pinned_choices``)."""
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
    per distinct (node, group) pair and kept once per choice set (``_next_options``): (the sets'
    valid arcs one set after the other, each entry's set, arcs per set, first arc of each set),
    in out-arc order: by next node, parallel links in port order."""
    group_count = compiled.transit_distance.shape[0]
    unique_pairs, pair_of = np.unique(at.astype(np.int64) * group_count + group, return_inverse=True)
    pair_node, pair_group = np.divmod(unique_pairs, group_count)
    # Flows start on cards, where the next hops can only be uplinks (a path never crosses a
    # card): a card's few instead of the widest switch's out arcs.
    candidates = (compiled.card_uplinks if first_hop else compiled.out_arcs)[pair_node]
    set_of, options, _, set_counts, set_starts = _next_options(
        compiled, candidates, pair_group, compiled.distance(pair_group, pair_node), pair_node
    )
    return options, set_of[pair_of], set_counts, set_starts


def _next_options(
    compiled: CompiledFabric, candidates: np.ndarray, rows: np.ndarray, distance: np.ndarray, candidate_of: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The equal-cost next arcs among ``candidates`` (pairs x width arc ids, -1 padded; alike for
    pairs of one ``candidate_of``) towards the cards of ``transit_distance`` rows ``rows``, from
    nodes at ``distance``. Pairs with the same candidates and valid ones share a *choice set*
    (a switch's way up serves every destination above it): (each pair's set, then the sets'
    arcs one set after the other, each one's column in ``candidates``, arcs per set, first arc
    of each set)."""
    groups = compiled.transit_distance.shape[0]
    # One flat gather instead of a 2-D one, a node's distances to many groups side by side: a
    # card's column is all inf, so an arc into a card is never a next hop, and neither is
    # padding (-1: the all-inf column too).
    beyond = compiled.distance_by_column.ravel()[compiled.hop_column[candidates] * groups + rows[:, None]]
    valid = np.abs(compiled.hop_cost[candidates] + beyond - distance[:, None]) < 1e-9
    bits = np.packbits(valid, axis=1, bitorder="little")
    bits = np.pad(bits, ((0, 0), (0, -bits.shape[1] % 8))).view(np.uint64)
    _, first, set_of = _unique_rows(np.column_stack([candidate_of.astype(np.uint64), bits]))
    valid_sets, valid_columns = np.nonzero(valid[first])
    counts = np.bincount(valid_sets, minlength=len(first))
    return set_of.ravel(), candidates[first][valid_sets, valid_columns], valid_columns, counts, np.cumsum(counts) - counts


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_index=True, return_inverse=True)`` of a 2-D unsigned
    array, the same rows in the same (lexicographic) order, as a stable sort of one integer key
    per row built column by column (numpy's row unique sorts every row as a record: several
    times slower)."""
    key = np.zeros(len(rows), dtype=np.int64)
    for column in rows.T:
        values, numbers = np.unique(column, return_inverse=True)
        key = key * len(values) + numbers
        key = np.unique(key, return_inverse=True)[1]  # renumbered: never overflows
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return rows[first], first, inverse


def _pinned_choices(
    compiled: CompiledFabric, set_of: np.ndarray, options: np.ndarray, set_counts: np.ndarray, digits: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """d-mod-k over one hop: each entry's choice among the ``options`` of its choice set
    (``set_of``; ``_next_options``, grouped by next node: runs of parallel links), and its digits
    after the hop. The next node is the destination's digit modulo the distinct next nodes, and that digit
    is used up; the parallel link is the next digit, kept for the next hop."""
    option_set = np.repeat(np.arange(len(set_counts)), set_counts)
    option_node = compiled.arc_head[options]
    new_run = np.ones(len(options), dtype=bool)
    new_run[1:] = (option_set[1:] != option_set[:-1]) | (option_node[1:] != option_node[:-1])
    run_starts = np.flatnonzero(new_run)
    run_lengths = np.diff(np.append(run_starts, len(options)))
    runs_per_set = np.bincount(option_set[run_starts], minlength=len(set_counts))
    first_run = np.cumsum(runs_per_set) - runs_per_set
    left, picked = np.divmod(digits, runs_per_set[set_of])
    run = first_run[set_of] + picked
    return run_starts[run] + left % run_lengths[run], left


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
