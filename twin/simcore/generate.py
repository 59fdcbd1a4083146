"""Design-rule generators: build a ``FabricSpec`` from a handful of parameters.

The rules follow the fat-tree sizing in MODELLING.md section 7. With switch
radix k and equal-speed ports, a leaf oversubscribed r:1 uses
``d = k r / (r + 1)`` ports down and ``u = k - d`` up; a 2-tier leaf-spine
reaches at most k leaves (``k d`` endpoints, ``k*k/2`` when non-blocking) and a
3-tier fat-tree (Al-Fares et al. 2008) at most k pods of k/2 leaves and ``u``
aggregation ("spine") switches each, joined by core switches.

Generators:

- ``supernode``: the demo's non-blocking 2-tier leaf-spine (kept as it was).
- ``fat_tree``: 2- or 3-tier fat-tree of any size, partial pods allowed,
  oversubscription at the leaf.
- ``rail_optimised``: servers of g cards, NIC i of every server of a scalable
  unit on rail leaf i; optionally an NVLink-style switch inside each server.
- ``supernode_cluster``: K super-nodes (scale-up fat-trees) joined by a
  scale-out fat-tree with its own speed, latency and oversubscription.

Every generator records its design rules in ``FabricSpec.attrs`` so that a
what-if can rebuild the fabric at another size with the same rules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from twin.simcore.errors import FabricError
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec
from twin.simcore.translation import LATER

__all__ = ["fat_tree", "rail_optimised", "supernode", "supernode_cluster"]

_MAX_TIERS = 3


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
    _check_hosts(cards, cards_per_host)
    _check_radix(switch_radix)
    most_cards = switch_radix * switch_radix // 2
    if cards > most_cards:
        too_many = LATER.gettext(
            "%(cards)s cards need %(leaves)s leaves, but a 2-tier leaf-spine of radix %(radix)s has at most %(radix)s leaves "
            "(%(most)s cards); use radix >= %(smallest)s or a 3-tier design"
        )
        raise FabricError(too_many % {
            "cards": str(cards), "leaves": str(math.ceil(cards / (switch_radix // 2))), "radix": str(switch_radix),
            "most": str(most_cards), "smallest": str(_smallest_radix(cards)),
        })  # fmt: skip
    link = _LinkStyle(link_gbps, cable_latency_ns, "scale-up")
    cards_nodes = _cards(cards, cards_per_host, card_width=4, host_width=3)
    clos = _Clos(
        radix=switch_radix,
        ports_down=switch_radix // 2,
        switch_latency_ns=switch_latency_ns,
        link=link,
        id_width=2,
    )
    switches, links = clos.two_tier(_leaf_groups([card.id for card in cards_nodes], clos.ports_down))
    return FabricSpec(
        name=name,
        nodes=(*cards_nodes, *switches),
        links=tuple(links),
        attrs={
            "design": "leaf-spine, 2 tiers, non-blocking",
            "cards_per_host": cards_per_host,
            "switch_radix": switch_radix,
            "leaf_ports_down": clos.ports_down,
            "leaf_ports_up": clos.ports_up,
            "link_gbps": link_gbps,
            "cable_latency_ns": cable_latency_ns,
            "switch_latency_ns": switch_latency_ns,
        },
    )


def fat_tree(
    *,
    endpoints: int,
    radix: int = 64,
    tiers: int | None = None,
    oversubscription: float = 1.0,
    link_gbps: float = 400.0,
    cable_latency_ns: float = 10.0,
    switch_latency_ns: float = 100.0,
    cards_per_host: int = 8,
    name: str = "fat-tree",
) -> FabricSpec:
    """A 2- or 3-tier fat-tree of ``endpoints`` cards built from radix-``radix`` switches.

    Each leaf has ``d = round(radix * r / (r + 1))`` ports down (``"1".."d"``, to
    cards in card order) and ``u = radix - d`` up, ``r`` being
    ``oversubscription`` (1.0 is non-blocking). ``tiers=None`` picks the fewest
    tiers that fit: 2 up to ``radix * d`` endpoints, else 3 up to
    ``radix * radix/2 * d``.

    - 2 tiers: ``ceil(leaves * u / radix)`` spines; the leaves' uplinks are
      dealt round-robin over them, so every leaf reaches every spine.
    - 3 tiers: pods of ``radix/2`` leaves (the last pod may be partial) and
      ``u`` spines (the aggregation tier) per pod, every leaf linked once to
      every spine of its pod; spine ``j`` of every pod sends its ``radix/2``
      uplinks round-robin over core plane ``j`` of ``ceil(pods / 2)`` cores.
      Spine-to-core is non-blocking.

    Ids are ``card-00001``, ``leaf-001``, ``spine-001``, ``core-001`` (zero-padded
    to the width of each count); cards carry ``host`` (``host-0001``) and
    ``attrs["index_on_host"]``; switches ``attrs["forwarding_latency_ns"]`` (and
    ``pod`` for 3 tiers). All links are ``scale-up``. ``attrs`` of the fabric
    record the design rules (``design``, ``tiers``, ``switch_radix``,
    ``oversubscription`` as built, ``leaf_ports_down``/``up``, ``pods`` ...).

    Raises ``FabricError`` when the parameters cannot be built.

    >>> fabric = fat_tree(endpoints=16384)
    >>> [len([s for s in fabric.switches() if s.tier == t]) for t in ("leaf", "spine", "core")]
    [512, 512, 256]
    >>> len(fabric.links), fabric.attrs["tiers"], fabric.attrs["pods"]
    (49152, 3, 16)
    """
    _check_hosts(endpoints, cards_per_host)
    clos = _Clos.oversubscribed(
        radix=radix,
        oversubscription=oversubscription,
        switch_latency_ns=switch_latency_ns,
        link=_LinkStyle(link_gbps, cable_latency_ns, "scale-up"),
    )
    cards = _cards(endpoints, cards_per_host)
    tiers = clos.tiers_for(endpoints, tiers)
    switches, links = clos.build(_leaf_groups([card.id for card in cards], clos.ports_down), tiers)
    return FabricSpec(
        name=name,
        nodes=(*cards, *switches),
        links=tuple(links),
        attrs={
            "design": f"fat-tree, {tiers} tiers",
            "endpoints": endpoints,
            "cards_per_host": cards_per_host,
            **clos.design_attrs(tiers, endpoints),
        },
    )


def rail_optimised(
    *,
    servers: int,
    cards_per_server: int = 8,
    servers_per_unit: int = 32,
    radix: int = 64,
    tiers: int | None = None,
    oversubscription: float = 1.0,
    link_gbps: float = 400.0,
    cable_latency_ns: float = 10.0,
    switch_latency_ns: float = 100.0,
    nvlink_gbps: float | None = 3600.0,
    nvlink_latency_ns: float = 10.0,
    nvswitch_latency_ns: float = 100.0,
    name: str = "rail-optimised",
) -> FabricSpec:
    """A rail-optimised fabric: card i of every server in a unit on rail leaf i.

    Servers are grouped into scalable units of ``servers_per_unit``; each unit
    has ``cards_per_server`` rail leaves, and card ``i`` of every server of the
    unit plugs its NIC (port ``"2"``, domain ``scale-out``) into the unit's rail
    leaf ``i``. Leaves then join spines (and cores) exactly as in ``fat_tree``,
    with the same radix and oversubscription rules (``servers_per_unit`` must
    fit the leaf's ``d`` ports down; 3 tiers group ``radix/2`` leaves per pod).

    With ``nvlink_gbps`` set, every server also has a scale-up switch
    (``<host>-nvswitch``, tier ``leaf``, ``attrs["role"] = "nvswitch"``) joined
    to each of its cards' port ``"1"`` (domain ``scale-up``, medium ``nvlink``),
    so that same-server traffic stays inside the server; ``None`` leaves it out.

    >>> fabric = rail_optimised(servers=64)
    >>> fabric.attrs["tiers"], fabric.attrs["units"], len(fabric.cards())
    (2, 2, 512)
    """
    if servers < 1 or cards_per_server < 1 or servers_per_unit < 1:
        too_few = LATER.gettext("need at least one server, one card per server and one server per unit, got %(servers)s, %(cards)s and %(per_unit)s")
        raise FabricError(too_few % {"servers": str(servers), "cards": str(cards_per_server), "per_unit": str(servers_per_unit)})
    clos = _Clos.oversubscribed(
        radix=radix,
        oversubscription=oversubscription,
        switch_latency_ns=switch_latency_ns,
        link=_LinkStyle(link_gbps, cable_latency_ns, "scale-out", port="2"),
    )
    if servers_per_unit > clos.ports_down:
        short = LATER.gettext(
            "%(per_unit)s servers per unit need %(per_unit)s ports down on each rail leaf, but a radix-%(radix)s leaf at %(ratio)s:1 has "
            "%(down)s; use fewer servers per unit, a larger radix or more oversubscription"
        )
        raise FabricError(short % {"per_unit": str(servers_per_unit), "radix": str(radix), "ratio": str(oversubscription), "down": str(clos.ports_down)})
    endpoints = servers * cards_per_server
    cards = _cards(endpoints, cards_per_server)
    card_ids = [card.id for card in cards]
    units = math.ceil(servers / servers_per_unit)
    rails = [
        card_ids[first_card + rail : last_card : cards_per_server]
        for unit in range(units)
        for first_card, last_card in [
            (
                unit * servers_per_unit * cards_per_server,
                min(servers, (unit + 1) * servers_per_unit) * cards_per_server,
            )
        ]
        for rail in range(cards_per_server)
    ]
    tiers = clos.tiers_for(len(rails) * clos.ports_down, tiers, leaves=len(rails))
    switches, links = clos.build(rails, tiers)
    nodes = [*cards, *switches]
    if nvlink_gbps is not None:
        nvlink = _LinkStyle(nvlink_gbps, nvlink_latency_ns, "scale-up", medium="nvlink")
        for host in sorted({card.host for card in cards}):
            nvswitch = f"{host}-nvswitch"
            nodes.append(
                NodeSpec(
                    id=nvswitch,
                    kind="switch",
                    name=nvswitch,
                    tier="leaf",
                    radix=cards_per_server,
                    host=host,
                    attrs={"forwarding_latency_ns": nvswitch_latency_ns, "role": "nvswitch"},
                )
            )
            members = [card.id for card in cards if card.host == host]
            links += [
                nvlink.between(card_id, nvswitch, position + 1)
                for position, card_id in enumerate(members)
            ]
    return FabricSpec(
        name=name,
        nodes=tuple(nodes),
        links=tuple(links),
        attrs={
            "design": f"rail-optimised, {tiers} tiers",
            "endpoints": endpoints,
            "cards_per_host": cards_per_server,
            "servers": servers,
            "servers_per_unit": servers_per_unit,
            "units": units,
            "rails": cards_per_server,
            "nvlink_gbps": nvlink_gbps,
            "nvlink_latency_ns": nvlink_latency_ns,
            "nvswitch_latency_ns": nvswitch_latency_ns,
            **clos.design_attrs(tiers, endpoints),
        },
    )


def supernode_cluster(
    *,
    supernodes: int,
    cards_per_supernode: int = 1024,
    cards_per_host: int = 8,
    radix: int = 64,
    tiers: int | None = None,
    link_gbps: float = 400.0,
    cable_latency_ns: float = 10.0,
    switch_latency_ns: float = 100.0,
    scale_out_gbps: float = 200.0,
    scale_out_radix: int = 64,
    scale_out_tiers: int | None = None,
    scale_out_oversubscription: float = 1.0,
    scale_out_cable_latency_ns: float = 50.0,
    scale_out_switch_latency_ns: float = 300.0,
    name: str = "supernode-cluster",
) -> FabricSpec:
    """``supernodes`` ICN super-nodes joined by a scale-out network.

    Super-node ``s`` (1-based) is a non-blocking ``fat_tree`` of
    ``cards_per_supernode`` cards on port ``"1"`` (domain ``scale-up``), its
    switches named ``sn<s>-leaf-01`` and so on; cards are numbered globally
    (``card-0001``) and carry ``attrs["supernode"] = s``. Every card's port
    ``"2"`` joins one scale-out fat-tree over all cards (domain ``scale-out``,
    switches ``so-leaf-01`` ...) with its own speed, radix, tiers,
    oversubscription and latencies. One super-node with ``supernodes=1`` is a
    plain ICN super-node plus its scale-out NICs.

    >>> fabric = supernode_cluster(supernodes=2, cards_per_supernode=256)
    >>> sorted({link.domain for link in fabric.links}), fabric.attrs["scale_out_tiers"]
    (['scale-out', 'scale-up'], 2)
    """
    if supernodes < 1:
        raise FabricError(LATER.gettext("need at least one super-node, got %(supernodes)s") % {"supernodes": str(supernodes)})
    _check_hosts(cards_per_supernode, cards_per_host)
    endpoints = supernodes * cards_per_supernode
    cards = list(_cards(endpoints, cards_per_host))
    for position, card in enumerate(cards):
        cards[position] = NodeSpec(
            id=card.id,
            kind="card",
            name=card.name,
            host=card.host,
            attrs={**card.attrs, "supernode": position // cards_per_supernode + 1},
        )
    card_ids = [card.id for card in cards]
    width = len(str(supernodes))
    nodes: list[NodeSpec] = list(cards)
    links: list[LinkSpec] = []
    scale_up_tiers = None
    for supernode_index in range(supernodes):
        clos = _Clos.oversubscribed(
            radix=radix,
            oversubscription=1.0,
            switch_latency_ns=switch_latency_ns,
            link=_LinkStyle(link_gbps, cable_latency_ns, "scale-up"),
            prefix=f"sn{supernode_index + 1:0{width}d}-",
        )
        members = card_ids[
            supernode_index * cards_per_supernode : (supernode_index + 1) * cards_per_supernode
        ]
        scale_up_tiers = clos.tiers_for(len(members), tiers)
        switches, supernode_links = clos.build(_leaf_groups(members, clos.ports_down), scale_up_tiers)
        nodes += switches
        links += supernode_links
    scale_out = _Clos.oversubscribed(
        radix=scale_out_radix,
        oversubscription=scale_out_oversubscription,
        switch_latency_ns=scale_out_switch_latency_ns,
        link=_LinkStyle(scale_out_gbps, scale_out_cable_latency_ns, "scale-out", port="2"),
        prefix="so-",
    )
    scale_out_tiers = scale_out.tiers_for(endpoints, scale_out_tiers)
    switches, scale_out_links = scale_out.build(
        _leaf_groups(card_ids, scale_out.ports_down), scale_out_tiers
    )
    return FabricSpec(
        name=name,
        nodes=(*nodes, *switches),
        links=(*links, *scale_out_links),
        attrs={
            "design": f"{supernodes} super-nodes joined by a scale-out network",
            "endpoints": endpoints,
            "supernodes": supernodes,
            "cards_per_supernode": cards_per_supernode,
            "cards_per_host": cards_per_host,
            "tiers": scale_up_tiers,
            "switch_radix": radix,
            "link_gbps": link_gbps,
            "cable_latency_ns": cable_latency_ns,
            "switch_latency_ns": switch_latency_ns,
            "scale_out_gbps": scale_out_gbps,
            "scale_out_radix": scale_out_radix,
            "scale_out_tiers": scale_out_tiers,
            "scale_out_oversubscription": scale_out.oversubscription,
            "scale_out_cable_latency_ns": scale_out_cable_latency_ns,
            "scale_out_switch_latency_ns": scale_out_switch_latency_ns,
        },
    )


@dataclass(frozen=True)
class _LinkStyle:
    """Speed, latency and domain of one network's links; ``port`` is the card's port."""

    gbps: float
    latency_ns: float
    domain: str
    port: str = "1"
    medium: str | None = None

    def between(self, a: str, b: str, b_port: int, a_port: int | str | None = None) -> LinkSpec:
        return LinkSpec(
            a,
            self.port if a_port is None else str(a_port),
            b,
            str(b_port),
            self.gbps,
            self.latency_ns,
            domain=self.domain,
            attrs={"medium": self.medium} if self.medium else {},
        )


@dataclass(frozen=True)
class _Clos:
    """Wiring rules of one leaf-spine(-core) network of equal-radix switches."""

    radix: int
    ports_down: int
    switch_latency_ns: float
    link: _LinkStyle
    prefix: str = ""
    id_width: int = 1

    @classmethod
    def oversubscribed(
        cls,
        *,
        radix: int,
        oversubscription: float,
        switch_latency_ns: float,
        link: _LinkStyle,
        prefix: str = "",
    ) -> _Clos:
        _check_radix(radix)
        if not (math.isfinite(oversubscription) and oversubscription >= 1.0):
            below_one = LATER.gettext(
                "oversubscription %(ratio)s:1; expected a ratio of at least 1 (1 is non-blocking, 3 means three times more bandwidth down than up)"
            )
            raise FabricError(below_one % {"ratio": str(oversubscription)})
        ports_down = round(radix * oversubscription / (oversubscription + 1))
        if ports_down >= radix:
            no_uplink = LATER.gettext("oversubscription %(ratio)s:1 leaves no uplink on a radix-%(radix)s leaf")
            raise FabricError(no_uplink % {"ratio": str(oversubscription), "radix": str(radix)})
        return cls(radix, ports_down, switch_latency_ns, link, prefix)

    @property
    def ports_up(self) -> int:
        return self.radix - self.ports_down

    @property
    def oversubscription(self) -> float:
        return self.ports_down / self.ports_up

    @property
    def leaves_per_pod(self) -> int:
        return self.radix // 2

    def capacity(self, tiers: int) -> int:
        """Most endpoints with ``tiers`` tiers: k leaves, or k pods of k/2 leaves."""
        leaves = self.radix if tiers == 2 else self.radix * self.leaves_per_pod
        return leaves * self.ports_down

    def tiers_for(self, endpoints: int, tiers: int | None, *, leaves: int | None = None) -> int:
        """The requested tier count, checked, or the fewest that fit ``endpoints``."""
        needed = endpoints if leaves is None else leaves * self.ports_down
        if tiers is None:
            tiers = next((count for count in (2, 3) if needed <= self.capacity(count)), _MAX_TIERS)
        if tiers not in (2, 3):
            raise FabricError(LATER.gettext("tiers %(tiers)s; expected 2, 3 or None (the fewest that fit)") % {"tiers": str(tiers)})
        if needed > self.capacity(tiers):
            too_many = (
                LATER.gettext(
                    "%(endpoints)s endpoints need %(leaves)s leaves, but %(tiers)s tiers of radix %(radix)s with %(down)s ports down per leaf "
                    "hold at most %(most)s endpoints; use tiers=3 or None"
                )
                if tiers == 2 and needed <= self.capacity(3)
                else LATER.gettext(
                    "%(endpoints)s endpoints need %(leaves)s leaves, but %(tiers)s tiers of radix %(radix)s with %(down)s ports down per leaf "
                    "hold at most %(most)s endpoints; use a larger radix or more oversubscription"
                )
            )
            raise FabricError(too_many % {
                "endpoints": str(endpoints), "leaves": str(math.ceil(needed / self.ports_down)), "tiers": str(tiers), "radix": str(self.radix),
                "down": str(self.ports_down), "most": str(self.capacity(tiers)),
            })  # fmt: skip
        return tiers

    def build(
        self, leaf_groups: Sequence[Sequence[str]], tiers: int
    ) -> tuple[list[NodeSpec], list[LinkSpec]]:
        return self.two_tier(leaf_groups) if tiers == 2 else self.three_tier(leaf_groups)

    def design_attrs(self, tiers: int, endpoints: int) -> dict[str, object]:
        leaves = math.ceil(endpoints / self.ports_down)
        return {
            "tiers": tiers,
            "switch_radix": self.radix,
            "oversubscription": self.oversubscription,
            "leaf_ports_down": self.ports_down,
            "leaf_ports_up": self.ports_up,
            "leaves_per_pod": self.leaves_per_pod if tiers == 3 else None,
            "pods": math.ceil(leaves / self.leaves_per_pod) if tiers == 3 else None,
            "link_gbps": self.link.gbps,
            "cable_latency_ns": self.link.latency_ns,
            "switch_latency_ns": self.switch_latency_ns,
        }

    def two_tier(self, leaf_groups: Sequence[Sequence[str]]) -> tuple[list[NodeSpec], list[LinkSpec]]:
        leaves = self._ids("leaf", len(leaf_groups))
        spines = self._ids("spine", math.ceil(len(leaves) * self.ports_up / self.radix))
        links = self._leaf_downlinks(leaves, leaf_groups)
        spine_ports_used = [0] * len(spines)
        for leaf_position, leaf in enumerate(leaves):
            for uplink in range(self.ports_up):
                spine = (leaf_position * self.ports_up + uplink) % len(spines)
                spine_ports_used[spine] += 1
                links.append(
                    self.link.between(
                        leaf, spines[spine], spine_ports_used[spine], self.ports_down + uplink + 1
                    )
                )
        switches = [self._switch(leaf, "leaf") for leaf in leaves]
        switches += [self._switch(spine, "spine") for spine in spines]
        return switches, links

    def three_tier(
        self, leaf_groups: Sequence[Sequence[str]]
    ) -> tuple[list[NodeSpec], list[LinkSpec]]:
        half = self.leaves_per_pod
        leaves = self._ids("leaf", len(leaf_groups))
        pods = math.ceil(len(leaves) / half)
        spines = self._ids("spine", pods * self.ports_up)
        cores_per_plane = math.ceil(pods * half / self.radix)
        cores = self._ids("core", self.ports_up * cores_per_plane)
        links = self._leaf_downlinks(leaves, leaf_groups)
        for leaf_position, leaf in enumerate(leaves):
            pod, position_in_pod = divmod(leaf_position, half)
            for uplink in range(self.ports_up):
                spine = spines[pod * self.ports_up + uplink]
                links.append(
                    self.link.between(leaf, spine, position_in_pod + 1, self.ports_down + uplink + 1)
                )
        core_ports_used = [0] * len(cores)
        for spine_position, spine in enumerate(spines):
            pod, plane = divmod(spine_position, self.ports_up)
            for uplink in range(half):
                core = plane * cores_per_plane + (pod * half + uplink) % cores_per_plane
                core_ports_used[core] += 1
                links.append(
                    self.link.between(spine, cores[core], core_ports_used[core], half + uplink + 1)
                )
        switches = [
            self._switch(leaf, "leaf", pod=position // half + 1) for position, leaf in enumerate(leaves)
        ]
        switches += [
            self._switch(spine, "spine", pod=position // self.ports_up + 1)
            for position, spine in enumerate(spines)
        ]
        switches += [self._switch(core, "core") for core in cores]
        return switches, links

    def _leaf_downlinks(
        self, leaves: Sequence[str], leaf_groups: Sequence[Sequence[str]]
    ) -> list[LinkSpec]:
        return [
            self.link.between(card, leaf, position + 1)
            for leaf, group in zip(leaves, leaf_groups)
            for position, card in enumerate(group)
        ]

    def _switch(self, node_id: str, tier: str, pod: int | None = None) -> NodeSpec:
        attrs: dict[str, object] = {"forwarding_latency_ns": self.switch_latency_ns}
        if pod is not None:
            attrs["pod"] = pod
        return NodeSpec(id=node_id, kind="switch", name=node_id, tier=tier, radix=self.radix, attrs=attrs)

    def _ids(self, tier: str, count: int) -> list[str]:
        return _ids(f"{self.prefix}{tier}", count, width=self.id_width)


def _cards(
    count: int, cards_per_host: int, *, card_width: int = 1, host_width: int = 1
) -> list[NodeSpec]:
    """Cards ``card-…`` in order, ``cards_per_host`` to each host ``host-…``."""
    host_ids = _ids("host", count // cards_per_host, width=host_width)
    return [
        NodeSpec(
            id=card_id,
            kind="card",
            name=card_id,
            host=host_ids[position // cards_per_host],
            attrs={"index_on_host": position % cards_per_host},
        )
        for position, card_id in enumerate(_ids("card", count, width=card_width))
    ]


def _leaf_groups(card_ids: Sequence[str], per_leaf: int) -> list[Sequence[str]]:
    """Cards dealt to leaves in order, ``per_leaf`` each (the last leaf may be partial)."""
    return [card_ids[start : start + per_leaf] for start in range(0, len(card_ids), per_leaf)]


def _check_hosts(cards: int, cards_per_host: int) -> None:
    if cards < 1 or cards_per_host < 1:
        too_few = LATER.gettext("need at least one card and one card per host, got %(cards)s and %(per_host)s")
        raise FabricError(too_few % {"cards": str(cards), "per_host": str(cards_per_host)})
    if cards % cards_per_host:
        unfilled = LATER.gettext("%(cards)s cards do not fill hosts of %(per_host)s cards; use a card count that is a multiple of cards_per_host")
        raise FabricError(unfilled % {"cards": str(cards), "per_host": str(cards_per_host)})


def _check_radix(radix: int) -> None:
    if radix < 2 or radix % 2:
        odd = LATER.gettext("switch radix %(radix)s cannot be split evenly into ports down and up; use an even radix of at least 2")
        raise FabricError(odd % {"radix": str(radix)})


def _smallest_radix(cards: int) -> int:
    # Smallest even k with k*k/2 >= cards.
    radix = math.isqrt(2 * cards - 1) + 1
    return radix + radix % 2


def _ids(prefix: str, count: int, *, width: int) -> list[str]:
    """``prefix-0001``-style ids numbered from 1, widened so they sort as numbers."""
    width = max(width, len(str(count)))
    return [f"{prefix}-{number:0{width}d}" for number in range(1, count + 1)]
