"""Structure of a fabric: tiers, hop distances, bisection bandwidth, oversubscription, fault domain.

Definitions (docs/whatif.md):

- **hops**: ``twin.simcore.hops.hop_statistics`` over every card pair (switches
  crossed on a shortest path; exact, no sampling).
- **bisection bandwidth**: the maximum flow, in GB/s one way, from the first
  half of the cards (fabric order) to the second half, cards supplying and
  absorbing at their own link speed; links in state ``down`` left out. The
  generators order cards by host, leaf, pod and super-node, so this is the
  fabric's natural bisection (for a fat-tree of N cards at B GB/s per card and
  r:1 at the leaf, ``N/2 x B / r``); for an ingested snapshot it is the cut
  between the file's two halves. Computed exactly with
  ``scipy.sparse.csgraph.maximum_flow`` on capacities in units of 0.1 Gb/s
  or finer.
- **oversubscription** per switch tier: the worst switch's capacity to the
  tier below over its capacity to the tier above.
- **fault domain** per switch tier: remove the busiest switch of the tier
  (most links; the first in fabric order on ties). *Cut off*: cards no longer
  joined to the part of the fabric holding most cards. *Degraded*: the other
  cards below a switch that lost a link to the removed one (they lost one of
  their paths up); ``worst_capacity_loss`` is the largest share of such a
  switch's (or card's) uplink capacity that went with it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from twin.simcore.hops import hop_statistics
from twin.simcore.model import FabricSpec
from twin.simcore.translation import LATER
from twin.whatif.bom import LEVELS, switch_tier
from twin.whatif.errors import WhatIfError

__all__ = ["bisection_gbps", "structure"]

_INT32_LIMIT = 2**31 - 1


def structure(spec: FabricSpec) -> dict[str, Any]:
    """Structure of ``spec`` (definitions in the module docstring); JSON-ready.

    Keys: ``cards``, ``switches``, ``tiers`` (distinct switch tiers, NVSwitches
    left out), ``tiers_by_domain``, ``diameter_hops``, ``mean_hops``,
    ``hop_histogram``, ``unreachable_pairs``, ``bisection_GBps``,
    ``bisection_per_card_GBps``, ``oversubscription`` (tier -> ratio) and
    ``fault_domain`` (tier -> ``switch``, ``cut_off_cards``,
    ``degraded_cards``, ``worst_capacity_loss``).

    >>> from twin.simcore.generate import fat_tree
    >>> result = structure(fat_tree(endpoints=64, radix=16))
    >>> result["tiers"], result["diameter_hops"], result["bisection_GBps"]
    (2, 3, 1600.0)
    >>> result["fault_domain"]["leaf"]["cut_off_cards"], result["fault_domain"]["spine"]["degraded_cards"]
    (8, 64)
    """
    if not spec.cards():
        raise WhatIfError(LATER.gettext("fabric %(fabric)s has no cards: nothing to measure") % {"fabric": repr(spec.name)})
    hops = hop_statistics(spec)
    graph = _Graph(spec)
    tiers_by_domain: dict[str, set[str]] = {}
    for position in np.flatnonzero(graph.is_switch):
        node = spec.nodes[position]
        if node.attrs.get("role") != "nvswitch":
            tiers_by_domain.setdefault(graph.domain_of(position), set()).add(node.tier)
    bisection = _bisection_gbps(graph) / 8
    cards = len(spec.cards())
    return {
        "cards": cards,
        "switches": int(graph.is_switch.sum()),
        "tiers": max((len(tiers) for tiers in tiers_by_domain.values()), default=0),
        "tiers_by_domain": {domain: len(tiers) for domain, tiers in sorted(tiers_by_domain.items())},
        "diameter_hops": hops["diameter"],
        "mean_hops": hops["mean_hops"],
        "hop_histogram": hops["histogram"],
        "unreachable_pairs": hops["unreachable_pairs"],
        "bisection_GBps": bisection,
        "bisection_per_card_GBps": bisection / (cards // 2) if cards > 1 else 0.0,
        "oversubscription": graph.oversubscription(),
        "fault_domain": graph.fault_domain(),
    }


def bisection_gbps(spec: FabricSpec) -> float:
    """Maximum flow in Gb/s from the first half of the cards to the second half (see module)."""
    return _bisection_gbps(_Graph(spec))


def _bisection_gbps(graph: _Graph) -> float:
    cards = graph.cards
    if len(cards) < 2:
        return 0.0
    half = len(cards) // 2
    card_gbps = np.bincount(graph.tail, weights=graph.gbps, minlength=graph.count)[cards]
    source, sink = graph.count, graph.count + 1
    tails = np.concatenate([graph.tail, np.full(half, source), cards[half:]])
    heads = np.concatenate([graph.head, cards[:half], np.full(len(cards) - half, sink)])
    gbps = np.concatenate([graph.gbps, card_gbps[:half], card_gbps[half:]])
    # maximum_flow takes int32 capacities and flows: the finest unit (down to 1 Gb/s) in which
    # every arc and the largest possible flow (all the first half's card links) fit. The sum of
    # all arcs, a far larger bound, refused generated 32,768-card stages.
    largest = max(gbps.max(), card_gbps[:half].sum())
    scale = 1000.0
    while scale > 1 and largest * scale >= _INT32_LIMIT:
        scale /= 10
    if largest * scale >= _INT32_LIMIT:
        raise WhatIfError(LATER.gettext("fabric %(fabric)s is too large for the bisection computation") % {"fabric": repr(graph.spec.name)})
    capacity = sparse.csr_array(
        (np.round(gbps * scale).astype(np.int32), (tails, heads)), shape=(graph.count + 2, graph.count + 2)
    )
    return float(csgraph.maximum_flow(capacity, source, sink).flow_value / scale)


class _Graph:
    """Live links as arcs (both directions) over node positions, with levels and domains."""

    def __init__(self, spec: FabricSpec) -> None:
        self.spec = spec
        index = spec.node_index()
        live = [link for link in spec.links if link.state != "down"]
        ends = np.array([(index[link.a], index[link.b]) for link in live], dtype=np.intp).reshape(-1, 2)
        self.count = len(spec.nodes)
        self.tail = np.concatenate([ends[:, 0], ends[:, 1]])
        self.head = np.concatenate([ends[:, 1], ends[:, 0]])
        link_gbps = np.array([link.bandwidth_gbps for link in live])
        self.gbps = np.concatenate([link_gbps, link_gbps])
        scale_out = np.array([link.domain == "scale-out" for link in live], dtype=bool)
        self.scale_out = np.concatenate([scale_out, scale_out])
        self.is_card = np.array([node.kind == "card" for node in spec.nodes])
        self.is_switch = np.array([node.kind == "switch" for node in spec.nodes])
        self.cards = np.flatnonzero(self.is_card)
        self.level = np.array(
            [LEVELS.get(node.attrs.get("role") or node.tier or node.kind, 2) for node in spec.nodes]
        )
        # A node is scale-out when every one of its links is.
        links = np.bincount(self.tail, minlength=self.count)
        out_links = np.bincount(self.tail, weights=self.scale_out, minlength=self.count)
        self.node_scale_out = (links > 0) & (out_links == links)

    def domain_of(self, position: int) -> str:
        return "scale-out" if self.node_scale_out[position] else "scale-up"

    def tier_of(self, position: int) -> str:
        return switch_tier(self.spec.nodes[position], self.domain_of(position))

    def oversubscription(self) -> dict[str, float]:
        """Per tier: the worst switch's capacity down over capacity up (tiers with uplinks)."""
        down = self.level[self.head] < self.level[self.tail]
        up = self.level[self.head] > self.level[self.tail]
        capacity_down = np.bincount(self.tail[down], weights=self.gbps[down], minlength=self.count)
        capacity_up = np.bincount(self.tail[up], weights=self.gbps[up], minlength=self.count)
        worst: dict[str, float] = {}
        for position in np.flatnonzero(self.is_switch & (capacity_up > 0)):
            tier = self.tier_of(position)
            worst[tier] = max(worst.get(tier, 0.0), float(capacity_down[position] / capacity_up[position]))
        return worst

    def fault_domain(self) -> dict[str, dict[str, Any]]:
        degree = np.bincount(self.tail, minlength=self.count)
        busiest: dict[str, int] = {}
        for position in np.flatnonzero(self.is_switch):
            tier = self.tier_of(position)
            if tier not in busiest or degree[position] > degree[busiest[tier]]:
                busiest[tier] = position
        return {tier: self._lose(position) for tier, position in sorted(busiest.items(), key=lambda item: self.level[item[1]])}

    def _lose(self, lost: int) -> dict[str, Any]:
        keep = (self.tail != lost) & (self.head != lost)
        tail, head = self.tail[keep], self.head[keep]
        # Components of the transit (non-card) nodes; a card joins those of its neighbours.
        transit = ~self.is_card[tail] & ~self.is_card[head]
        adjacency = sparse.csr_array(
            (np.ones(int(transit.sum())), (tail[transit], head[transit])), shape=(self.count, self.count)
        )
        _, component = csgraph.connected_components(adjacency, directed=False)
        card_arcs = self.is_card[tail] & ~self.is_card[head] & (head != lost)
        card_component = Counter()
        reach = {}
        for card, neighbour in zip(tail[card_arcs].tolist(), head[card_arcs].tolist()):
            reach.setdefault(card, set()).add(int(component[neighbour]))
        for components in reach.values():
            card_component.update(components)
        main = card_component.most_common(1)[0][0] if card_component else -1
        joined = np.zeros(self.count, dtype=bool)
        joined[[card for card, components in reach.items() if main in components]] = True
        cut_off = self.is_card & ~joined

        # Cards below the switches that lost a link to ``lost`` (walk down the levels).
        lower = self.head[(self.tail == lost) & (self.level[self.head] < self.level[lost])]
        below = np.zeros(self.count, dtype=bool)
        below[lower] = True
        frontier = below.copy()
        while frontier.any():
            down = frontier[self.tail] & (self.level[self.head] < self.level[self.tail])
            frontier = np.zeros(self.count, dtype=bool)
            frontier[self.head[down]] = True
            frontier &= ~below
            below |= frontier
        degraded = below & self.is_card & ~cut_off
        up = self.level[self.head] > self.level[self.tail]
        capacity_up = np.bincount(self.tail[up], weights=self.gbps[up], minlength=self.count)
        to_lost = (self.head == lost) & up
        lost_up = np.bincount(self.tail[to_lost], weights=self.gbps[to_lost], minlength=self.count)
        affected = np.unique(lower)
        affected = affected[~cut_off[affected]]
        loss = lost_up[affected] / np.maximum(capacity_up[affected], 1e-12)
        return {
            "switch": self.spec.nodes[lost].id,
            "cut_off_cards": int(cut_off.sum()),
            "degraded_cards": int(degraded.sum()),
            "worst_capacity_loss": float(loss.max(initial=0.0)),
        }
