"""Design-rule generators: build a ``FabricSpec`` from a handful of parameters.

The rules follow the fat-tree sizing in MODELLING.md section 7: with switch
radix k and equal-speed ports, a non-blocking (1:1) leaf uses k/2 ports down
and k/2 up, and a 2-tier leaf-spine reaches at most k leaves (k*k/2 cards).
"""

from __future__ import annotations

import math

from twin.simcore.errors import FabricError
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

__all__ = ["supernode"]


def supernode(
    *,
    cards: int = 1024,
    cards_per_host: int = 8,
    switch_radix: int = 64,
    link_gbps: float = 400.0,
    cable_latency_ns: float = 10.0,
    switch_latency_ns: float = 100.0,
    name: str = "demo-supernode",
) -> FabricSpec:
    """A 2-tier, non-blocking leaf-spine scale-up fabric.

    Every card has one fabric port (``"1"``) to a leaf; leaf ports ``1..k/2``
    go down to cards (filled in card order, so only the last leaf may be
    partly used) and ``k/2+1..k`` go up. There are ``ceil(leaves * k/2 / k)``
    spines; the uplinks are dealt round-robin over the spines in global order,
    so every leaf reaches every spine, parallel links appear when there are
    fewer spines than uplinks, and no spine gets more than ``k`` links.

    Ids are ``card-0001``, ``leaf-01``, ``spine-01`` (widened for larger
    counts). Hosts are not nodes: a card records its ``host`` (``host-001``)
    and ``attrs["index_on_host"]``. Link latency is the cable alone; switches
    carry ``attrs["forwarding_latency_ns"]``. The design rules used are in the
    fabric's ``attrs``.

    Raises ``FabricError`` when the parameters cannot be built.

    >>> fabric = supernode()
    >>> fabric.kind_counts()["switch"], len(fabric.links)
    (48, 2048)
    """
    _check_parameters(cards, cards_per_host, switch_radix)
    ports_down = ports_up = switch_radix // 2
    leaves = math.ceil(cards / ports_down)
    spines = math.ceil(leaves * ports_up / switch_radix)

    card_ids = _ids("card", cards, width=4)
    leaf_ids = _ids("leaf", leaves, width=2)
    spine_ids = _ids("spine", spines, width=2)
    host_ids = _ids("host", cards // cards_per_host, width=3)

    def switch(node_id: str, tier: str) -> NodeSpec:
        return NodeSpec(
            id=node_id,
            kind="switch",
            name=node_id,
            tier=tier,
            radix=switch_radix,
            attrs={"forwarding_latency_ns": switch_latency_ns},
        )

    def link(a: str, a_port: int, b: str, b_port: int) -> LinkSpec:
        return LinkSpec(a, str(a_port), b, str(b_port), link_gbps, cable_latency_ns)

    nodes = [
        NodeSpec(
            id=card_id,
            kind="card",
            name=card_id,
            host=host_ids[position // cards_per_host],
            attrs={"index_on_host": position % cards_per_host},
        )
        for position, card_id in enumerate(card_ids)
    ]
    nodes += [switch(leaf_id, "leaf") for leaf_id in leaf_ids]
    nodes += [switch(spine_id, "spine") for spine_id in spine_ids]

    links = [
        link(card_id, 1, leaf_ids[position // ports_down], position % ports_down + 1)
        for position, card_id in enumerate(card_ids)
    ]
    spine_ports_used = [0] * spines
    for leaf_position, leaf_id in enumerate(leaf_ids):
        for uplink in range(ports_up):
            spine = (leaf_position * ports_up + uplink) % spines
            spine_ports_used[spine] += 1
            links.append(
                link(leaf_id, ports_down + uplink + 1, spine_ids[spine], spine_ports_used[spine])
            )

    return FabricSpec(
        name=name,
        nodes=tuple(nodes),
        links=tuple(links),
        attrs={
            "design": "leaf-spine, 2 tiers, non-blocking",
            "cards_per_host": cards_per_host,
            "switch_radix": switch_radix,
            "leaf_ports_down": ports_down,
            "leaf_ports_up": ports_up,
            "link_gbps": link_gbps,
            "cable_latency_ns": cable_latency_ns,
            "switch_latency_ns": switch_latency_ns,
        },
    )


def _check_parameters(cards: int, cards_per_host: int, switch_radix: int) -> None:
    if cards < 1 or cards_per_host < 1:
        raise FabricError(
            f"need at least one card and one card per host, got {cards} and {cards_per_host}"
        )
    if cards % cards_per_host:
        raise FabricError(
            f"{cards} cards do not fill hosts of {cards_per_host} cards; "
            "use a card count that is a multiple of cards_per_host"
        )
    if switch_radix < 2 or switch_radix % 2:
        raise FabricError(
            f"switch radix {switch_radix} cannot be split evenly into ports down and up; "
            "use an even radix of at least 2"
        )
    most_cards = switch_radix * switch_radix // 2
    if cards > most_cards:
        raise FabricError(
            f"{cards} cards need {math.ceil(cards / (switch_radix // 2))} leaves, but a 2-tier "
            f"leaf-spine of radix {switch_radix} has at most {switch_radix} leaves "
            f"({most_cards} cards); use radix >= {_smallest_radix(cards)} or a 3-tier design"
        )


def _smallest_radix(cards: int) -> int:
    # Smallest even k with k*k/2 >= cards.
    radix = math.isqrt(2 * cards - 1) + 1
    return radix + radix % 2


def _ids(prefix: str, count: int, *, width: int) -> list[str]:
    """``prefix-0001``-style ids numbered from 1, widened so they sort as numbers."""
    width = max(width, len(str(count)))
    return [f"{prefix}-{number:0{width}d}" for number in range(1, count + 1)]
