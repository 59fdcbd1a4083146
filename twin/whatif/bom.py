"""Bill of materials of a fabric: what to buy and power, counted from its nodes and links.

Counting rules (docs/whatif.md):

- switches per tier: ``leaf``, ``spine``, ``core`` of the ICN, ``nvswitch``
  for in-server NVSwitches, ``scale-out leaf`` ... for switches whose links
  are all scale-out;
- cables per link class, named like the simulator's bottleneck classes
  (``"card-leaf (scale-up)"``, ``"leaf-spine (scale-up)"``), every link
  whatever its state;
- a cable with a card at one end is in-rack copper (no optics); a cable
  between two switches leaves the rack: fibre plus one transceiver at each end;
- power and cost: count x the per-item figure of ``ItemParams``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from twin.simcore.model import FabricSpec, NodeSpec
from twin.simcore.translation import LATER, Joined
from twin.whatif.errors import WhatIfError

__all__ = ["DEFAULT_ITEMS", "LEVELS", "ItemParams", "bill_of_materials", "bom_delta", "link_class", "switch_tier"]

LEVELS = {"card": 0, "nic": 1, "host": 1, "aggregation": 2, "nvswitch": 3, "leaf": 4, "spine": 5, "core": 6}
"""Height of a node by role, tier or kind, as the simulator orders link classes (lower end first)."""


@dataclass(frozen=True)
class ItemParams:
    """Power (W) and cost (USD) per item; defaults are round public list-price-level figures.

    Defaults: a card 700 W (an H100 SXM's TDP), 30,000 USD; a 64-port 400G
    switch 1,000 W, 25,000 USD; an in-server NVSwitch tray 400 W, 10,000 USD;
    a copper cable 100 USD; a fibre 150 USD; a transceiver 15 W, 800 USD.
    Edit them for your hardware (``updated``), they only scale the totals.
    """

    card_w: float = 700.0
    card_usd: float = 30_000.0
    switch_w: float = 1_000.0
    switch_usd: float = 25_000.0
    nvswitch_w: float = 400.0
    nvswitch_usd: float = 10_000.0
    copper_cable_usd: float = 100.0
    fibre_cable_usd: float = 150.0
    transceiver_w: float = 15.0
    transceiver_usd: float = 800.0

    def __post_init__(self) -> None:
        negative = [item.name for item in fields(self) if not getattr(self, item.name) >= 0]
        if negative:
            raise WhatIfError(LATER.gettext("item parameters %(names)s: expected non-negative numbers") % {"names": Joined(negative)})

    def updated(self, changes: Mapping[str, Any]) -> ItemParams:
        """A copy with ``changes`` (any subset of the fields, numbers) applied."""
        known = {item.name for item in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            unknown_items = LATER.gettext("unknown item parameters %(names)s; expected some of %(known)s")
            raise WhatIfError(unknown_items % {"names": Joined(unknown), "known": Joined(sorted(known))})
        try:
            return replace(self, **{name: float(value) for name, value in changes.items()})
        except (TypeError, ValueError) as error:
            raise WhatIfError(LATER.gettext("item parameters: %(error)s; expected numbers") % {"error": str(error)}) from None

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


DEFAULT_ITEMS = ItemParams()


def switch_tier(node: NodeSpec, domain: str) -> str:
    """BOM tier of a switch: its role or tier, prefixed ``scale-out`` when its links are."""
    tier = node.attrs.get("role") or node.tier or "switch"
    return f"scale-out {tier}" if domain == "scale-out" else tier


def link_class(low: NodeSpec, high: NodeSpec, domain: str) -> str:
    """``"card-leaf (scale-up)"``: the two ends' levels, lower first, and the domain."""
    names = sorted((_level(low), _level(high)), key=lambda name: LEVELS.get(name, 2))
    return f"{names[0]}-{names[1]} ({domain})"


def bill_of_materials(spec: FabricSpec, items: ItemParams = DEFAULT_ITEMS) -> dict[str, Any]:
    """Counts, power and cost of ``spec`` (rules in the module docstring); JSON-ready.

    Keys: ``cards``, ``hosts``, ``switches`` (tier -> count), ``switches_total``,
    ``cables`` (link class -> count), ``cables_total``, ``transceivers``
    (link class -> count), ``transceivers_total``, ``power_kw`` and
    ``cost_usd`` (``cards``, ``switches``, ``cables``/``optics``, ``total``)
    and ``items`` (the parameters used).

    >>> from twin.simcore.generate import fat_tree
    >>> bom = bill_of_materials(fat_tree(endpoints=1024))
    >>> bom["switches"], bom["cables"]["leaf-spine (scale-up)"], bom["transceivers_total"]
    ({'leaf': 32, 'spine': 16}, 1024, 2048)
    """
    nodes = {node.id: node for node in spec.nodes}
    switch_domains: dict[str, set[str]] = {node.id: set() for node in spec.switches()}
    cables: Counter[str] = Counter()
    transceivers: Counter[str] = Counter()
    for link in spec.links:
        a, b = nodes[link.a], nodes[link.b]
        name = link_class(a, b, link.domain)
        cables[name] += 1
        if a.kind == "switch" and b.kind == "switch":
            transceivers[name] += 2
        for end in (a, b):
            if end.kind == "switch":
                switch_domains[end.id].add(link.domain)
    switches = Counter(
        switch_tier(node, "scale-out" if switch_domains[node.id] == {"scale-out"} else "scale-up")
        for node in spec.switches()
    )
    cards = len(spec.cards())
    nvswitches = sum(count for tier, count in switches.items() if tier.endswith("nvswitch"))
    fabric_switches = sum(switches.values()) - nvswitches
    copper = sum(count for name, count in cables.items() if name not in transceivers)
    fibre = sum(count for name, count in cables.items() if name in transceivers)
    optics = sum(transceivers.values())
    power_kw = {
        "cards": cards * items.card_w / 1e3,
        "switches": (fabric_switches * items.switch_w + nvswitches * items.nvswitch_w) / 1e3,
        "optics": optics * items.transceiver_w / 1e3,
    }
    cost_usd = {
        "cards": cards * items.card_usd,
        "switches": fabric_switches * items.switch_usd + nvswitches * items.nvswitch_usd,
        "cables": copper * items.copper_cable_usd + fibre * items.fibre_cable_usd,
        "optics": optics * items.transceiver_usd,
    }
    return {
        "cards": cards,
        "hosts": len({card.host for card in spec.cards() if card.host}),
        "switches": _ordered(switches),
        "switches_total": sum(switches.values()),
        "cables": dict(sorted(cables.items())),
        "cables_total": sum(cables.values()),
        "transceivers": dict(sorted(transceivers.items())),
        "transceivers_total": optics,
        "power_kw": {**power_kw, "total": sum(power_kw.values())},
        "cost_usd": {**cost_usd, "total": sum(cost_usd.values())},
        "items": items.to_dict(),
    }


def bom_delta(previous: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    """What ``current`` adds to ``previous`` (two ``bill_of_materials`` results).

    Same keys as the counts of a BOM (``items`` left out); a tier or class
    missing on one side counts 0, so new tiers show up as added.

    >>> bom_delta({"cards": 8, "switches": {"leaf": 1}}, {"cards": 16, "switches": {"leaf": 1, "spine": 2}})
    {'cards': 8, 'switches': {'leaf': 0, 'spine': 2}}
    """
    delta: dict[str, Any] = {}
    for key in current:
        if key == "items":
            continue
        now, before = current[key], previous.get(key)
        if isinstance(now, Mapping):
            before = before or {}
            keys = list(before) + [name for name in now if name not in before]
            delta[key] = {name: now.get(name, 0) - before.get(name, 0) for name in keys}
        else:
            delta[key] = now - (before or 0)
    return delta


def _level(node: NodeSpec) -> str:
    return node.attrs.get("role") or node.tier or node.kind


def _ordered(counts: Counter[str]) -> dict[str, int]:
    """Tiers bottom-up (nvswitch, leaf, spine, core), scale-out ones after."""
    def order(tier: str) -> tuple[bool, int, str]:
        base = tier.removeprefix("scale-out ")
        return tier != base, LEVELS.get(base, 9), tier

    return {tier: counts[tier] for tier in sorted(counts, key=order)}
