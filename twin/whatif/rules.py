"""Design rules of a fabric: what a staged what-if needs to rebuild it at another size.

``design_rules(spec)`` reads them from the design keys a generator wrote into
``spec.attrs`` (``twin.simcore.generate``) and infers the rest from the graph
(most common value wins, so a few odd links do not decide); ``inferred`` says
for every rule where its value came from, so the user can check it and
override it with ``with_overrides``. A ``DesignRules`` is always valid: it
checks itself on construction and raises ``WhatIfError`` listing every
impossible value.

Sizing follows MODELLING.md section 7: a leaf of radix k at r:1 has
``d = round(k r / (r + 1))`` ports down and ``u = k - d`` up; 2 tiers hold
``k d`` cards, 3 tiers ``k (k / 2) d`` (``capacity``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from twin.simcore.model import MAX_LINK_GBPS, FabricSpec, LinkSpec, NodeSpec
from twin.simcore.translation import ENGLISH, LATER, Joined, Phrase, Translations, gettext_noop, rendered
from twin.whatif.errors import WhatIfError

__all__ = ["DESIGNS", "MAX_TIERS", "DesignRules", "design_rules", "reason_text", "tier_name", "tiers_needed"]

DESIGNS = ("fat-tree", "rail", "supernodes")
"""Base designs a snapshot can follow: one fat-tree ICN, rail-optimised, K super-nodes."""

MAX_TIERS = 3
"""Most switch tiers the generators build (leaf, spine, core)."""

# Generator defaults (twin.simcore.generate), used when a snapshot does not say.
_DEFAULTS: dict[str, Any] = {
    "cards_per_host": 8,
    "switch_latency_ns": 100.0,
    "nvlink_gbps": 3600.0,
    "servers_per_unit": 32,
    "scale_out_gbps": 200.0,
    "scale_out_radix": 64,
    "scale_out_oversubscription": 1.0,
    "scale_out_cable_latency_ns": 50.0,
    "scale_out_switch_latency_ns": 300.0,
}


@dataclass(frozen=True)
class DesignRules:
    """How a fabric is built; see the module docstring and docs/whatif.md.

    ``design``: one of ``DESIGNS``. ``cards``: cards in the snapshot (the 1x
    size). ``switch_radix``, ``tiers`` and ``oversubscription`` (r:1 at the
    leaf) describe the ICN fat-tree, ``link_gbps`` and the latencies its links
    and switches; ``cards_per_host`` is also the rail count of a rail design.
    ``nvlink_gbps``: the in-server NVLink of a rail design. ``supernodes``:
    super-nodes in the snapshot. ``scale_out_*``: the network joining
    super-nodes. ``max_tiers``: most tiers a stage may use (2 forbids a core
    tier). ``inferred``: rule name -> where its value came from.
    """

    design: str
    cards: int
    cards_per_host: int
    switch_radix: int
    tiers: int
    oversubscription: float
    link_gbps: float
    cable_latency_ns: float
    switch_latency_ns: float
    nvlink_gbps: float
    servers_per_unit: int
    supernodes: int
    scale_out_gbps: float
    scale_out_radix: int
    scale_out_oversubscription: float
    scale_out_cable_latency_ns: float
    scale_out_switch_latency_ns: float
    max_tiers: int = MAX_TIERS
    inferred: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        problems = [problem for _, problem in _problems({item.name: getattr(self, item.name) for item in fields(self)})]
        if problems:
            raise WhatIfError(LATER.gettext("impossible design rules"), problems)

    @property
    def leaf_ports_down(self) -> int:
        """Ports of a leaf going down to cards: ``round(k r / (r + 1))``."""
        return _ports_down(self.switch_radix, self.oversubscription)

    @property
    def leaf_ports_up(self) -> int:
        return self.switch_radix - self.leaf_ports_down

    @property
    def rails(self) -> int:
        """Rails of a rail-optimised design: one per card of a server."""
        return self.cards_per_host

    def capacity(self, tiers: int) -> int:
        """Most cards ``tiers`` tiers of these switches hold (MODELLING.md section 7)."""
        return _capacity(self.switch_radix, self.leaf_ports_down, tiers)

    def with_overrides(self, **overrides: Any) -> DesignRules:
        """A copy with ``overrides`` applied (marked ``"override"`` in ``inferred``).

        Raises ``WhatIfError`` naming unknown rules, values of the wrong type
        and impossible values.

        >>> from twin.simcore.generate import fat_tree
        >>> rules = design_rules(fat_tree(endpoints=64, radix=16))
        >>> rules.with_overrides(oversubscription=3).leaf_ports_down
        12
        """
        known = {item.name for item in fields(self)} - {"inferred"}
        unknown = sorted(set(overrides) - known)
        if unknown:
            unknown_rules = LATER.gettext("unknown design rules %(names)s; expected some of %(known)s")
            raise WhatIfError(unknown_rules % {"names": Joined(unknown), "known": Joined(sorted(known))})
        problems, converted = [], {}
        for name, value in overrides.items():
            try:
                converted[name] = _CONVERTERS[name](value)
            except (TypeError, ValueError):
                problems.append(_UNREADABLE % {"name": name, "value": repr(value), "expected": _EXPECTED[name]})
        if problems:
            raise WhatIfError(LATER.gettext("cannot read the overrides"), problems)
        return replace(self, **converted, inferred={**self.inferred, **dict.fromkeys(converted, "override")})

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready form; ``from_dict`` reads it back."""
        plain = asdict(self)
        plain["inferred"] = dict(self.inferred)
        return plain

    @classmethod
    def from_dict(cls, plain: Mapping[str, Any]) -> DesignRules:
        """Inverse of ``to_dict``; raises ``WhatIfError`` on missing or unknown keys."""
        names = {item.name for item in fields(cls)}
        required = {item.name for item in fields(cls) if item.name not in ("max_tiers", "inferred")}
        missing, unknown = sorted(required - set(plain)), sorted(set(plain) - names)
        if missing or unknown:
            raise WhatIfError(
                LATER.gettext("design rules do not have the expected keys"),
                [LATER.gettext("missing %(name)s") % {"name": name} for name in missing] + [LATER.gettext("unknown %(name)s") % {"name": name} for name in unknown],
            )
        problems, converted = [], {}
        for name, value in plain.items():
            if name == "inferred":
                converted[name] = dict(value)
                continue
            try:
                converted[name] = _CONVERTERS[name](value)
            except (TypeError, ValueError):
                problems.append(_UNREADABLE % {"name": name, "value": repr(value), "expected": _EXPECTED[name]})
        if problems:
            raise WhatIfError(LATER.gettext("cannot read the design rules"), problems)
        return cls(**converted)


def tiers_needed(cards: int, radix: int, ports_down: int) -> int:
    """Fewest tiers (2 or more) whose capacity holds ``cards``; may exceed ``MAX_TIERS``.

    >>> [tiers_needed(cards, 64, 32) for cards in (1024, 2048, 4096, 65536, 65537)]
    [2, 2, 3, 3, 4]
    """
    tiers = 2
    while cards > _capacity(radix, ports_down, tiers):
        tiers += 1
    return tiers


_TIER_NAMES = {
    "leaf": gettext_noop("leaf"),
    "spine": gettext_noop("spine"),
    "core": gettext_noop("core"),
    "nvswitch": gettext_noop("NVSwitch"),
    "scale-out leaf": gettext_noop("scale-out leaf"),
    "scale-out spine": gettext_noop("scale-out spine"),
    "scale-out core": gettext_noop("scale-out core"),
}


def tier_name(tier: str, tr: Translations = ENGLISH) -> str:
    """A switch tier for people; a tier the twin does not know keeps its own name."""
    return str(rendered(tier_words(tier), tr))


def tier_words(tier: str) -> Phrase | str:
    return LATER.gettext(_TIER_NAMES[tier]) if tier in _TIER_NAMES else tier


# Where each rule's value came from (``inferred``), in English; ``reason_text`` gives it in the
# reader's language by matching it against these.
_ATTR = gettext_noop('fabric attrs["%(key)s"]')
_ATTR_DESIGN = gettext_noop('fabric attrs["design"] (%(design)s)')
_LEAF_PORTS_ATTRS = gettext_noop('fabric attrs["leaf_ports_down"] / attrs["leaf_ports_up"]')
_NO_NETWORK = gettext_noop("the snapshot has no switch network to read it from")
_DEFAULT = gettext_noop("default (the snapshot does not say)")
_DEFAULT_NONE = gettext_noop("default (the snapshot has none)")
_SINGLE_SWITCH = gettext_noop("a single switch grows as 2 tiers")
_CARDS = gettext_noop("graph: %(cards)s cards")
_CARDS_PER_HOST = gettext_noop("graph: most common cards per host (%(count)s)")
_NO_HOSTS = gettext_noop("graph: no card names its host (nameless HCAs): each card is a host of its own")
_RADIX = gettext_noop("graph: most common %(domain)s switch radix")
_RADIX_WITHOUT_SHARP = gettext_noop("graph: most common %(domain)s switch radix (without the SHARP engine's port)")
_PORTS_USED = gettext_noop("graph: most ports used by a %(domain)s switch (%(count)s), rounded up to even")
_TIERS = gettext_noop("graph: %(count)s switch tiers (%(tiers)s)")
_NO_UPLINKS = gettext_noop("graph: the fullest leaf has no uplinks; taken as non-blocking")
_BELOW_ONE = gettext_noop("below 1:1, taken as non-blocking")
_FULLEST_LEAF = gettext_noop("graph: fullest leaf has %(down)s ports down, %(up)s up")
_CARD_LINK = gettext_noop("graph: most common %(domain)s card-link bandwidth")
_LINK_LATENCY = gettext_noop("graph: most common %(domain)s link latency")
_FORWARDING = gettext_noop("graph: most common %(domain)s forwarding latency")
_NVLINK = gettext_noop("graph: most common NVLink bandwidth")
_RAILS = gettext_noop("graph: a host's cards reach %(rails)s leaves (rails); the fullest leaf has %(servers)s servers")
_SUPERNODES = gettext_noop('graph: %(count)s distinct card attrs["supernode"]')
_IN_SERVER_NVSWITCH = gettext_noop("graph: cards have an in-server NVSwitch")
_SEVERAL_SUPERNODES = gettext_noop("graph: cards belong to several super-nodes")
_ONE_NETWORK = gettext_noop("graph: one switch network, no NVSwitch, one super-node")
_REASONS = (
    _ATTR, _ATTR_DESIGN, _LEAF_PORTS_ATTRS, _NO_NETWORK, _DEFAULT, _DEFAULT_NONE, _SINGLE_SWITCH, _CARDS, _CARDS_PER_HOST,
    _NO_HOSTS, _RADIX, _RADIX_WITHOUT_SHARP, _PORTS_USED, _TIERS, _NO_UPLINKS, _BELOW_ONE, _FULLEST_LEAF, _CARD_LINK,
    _LINK_LATENCY, _FORWARDING, _NVLINK, _RAILS, _SUPERNODES, _IN_SERVER_NVSWITCH, _SEVERAL_SUPERNODES, _ONE_NETWORK,
)


def _reason(pattern: str, **values: Any) -> str:
    return pattern % values


def _pattern(reason: str) -> re.Pattern[str]:
    parts = re.split(r"%\((\w+)\)s", reason)
    return re.compile("".join(re.escape(part) if position % 2 == 0 else f"(?P<{part}>.+?)" for position, part in enumerate(parts)))


_REASON_PATTERNS = [(reason, _pattern(reason)) for reason in _REASONS]


def reason_text(inferred: str, tr: Translations = ENGLISH) -> str:
    """Where a rule came from (an ``inferred`` value) in the reader's language."""
    return str(rendered(reason_words(inferred), tr))


def reason_words(inferred: str) -> Joined:
    """An ``inferred`` value to render in the reader's language; parts joined by "; " are
    translated one by one, and anything else (``"override"``) is kept as it is."""
    parts: list[Phrase | str] = []
    for part in inferred.split("; "):
        for reason, pattern in _REASON_PATTERNS:
            if match := pattern.fullmatch(part):
                values: dict[str, Any] = match.groupdict()
                if "tiers" in values:
                    values["tiers"] = Joined([tier_words(tier) for tier in values["tiers"].split(", ")])
                parts.append(LATER.gettext(reason) % values)
                break
        else:
            parts.append(part)
    return Joined(parts, "; ")


def design_rules(spec: FabricSpec) -> DesignRules:
    """Design rules of ``spec``: its design attrs first, else inferred from the graph.

    Raises ``WhatIfError`` when the fabric has no cards or the rules found are
    impossible (the message names each one and where it came from).

    >>> from twin.simcore.generate import supernode
    >>> rules = design_rules(supernode())
    >>> rules.design, rules.cards, rules.tiers, rules.leaf_ports_down, rules.inferred["tiers"]
    ('fat-tree', 1024, 2, 32, 'graph: 2 switch tiers (leaf, spine)')
    """
    graph = _Graph(spec)
    found: dict[str, Any] = {}
    inferred: dict[str, str] = {}

    def take(name: str, attr_key: str, from_graph: Callable[[], tuple[Any, str] | None]) -> None:
        stored = spec.attrs.get(attr_key)
        if stored is not None:
            found[name], inferred[name] = stored, _reason(_ATTR, key=attr_key)
            return
        guess = from_graph()
        if guess is None and name not in _DEFAULTS:
            found[name], inferred[name] = None, _NO_NETWORK
        elif guess is None:
            found[name], inferred[name] = _DEFAULTS[name], _DEFAULT
        else:
            found[name], inferred[name] = guess

    found["design"], inferred["design"] = _design(spec, graph)
    found["cards"], inferred["cards"] = len(graph.cards), _reason(_CARDS, cards=f"{len(graph.cards):,}")
    take("cards_per_host", "cards_per_host", graph.cards_per_host)
    take("switch_radix", "switch_radix", lambda: graph.radix(graph.main))
    take("tiers", "tiers", lambda: graph.tiers(graph.main))
    if "oversubscription" in spec.attrs:
        take("oversubscription", "oversubscription", lambda: None)
    elif "leaf_ports_down" in spec.attrs and "leaf_ports_up" in spec.attrs:
        down, up = spec.attrs["leaf_ports_down"], spec.attrs["leaf_ports_up"]
        found["oversubscription"] = max(1.0, down / up)
        inferred["oversubscription"] = _LEAF_PORTS_ATTRS
    else:
        found["oversubscription"], inferred["oversubscription"] = graph.oversubscription(graph.main) or (
            None, _NO_NETWORK
        )
    take("link_gbps", "link_gbps", lambda: graph.card_link_gbps(graph.main))
    take("cable_latency_ns", "cable_latency_ns", lambda: graph.cable_latency(graph.main))
    take("switch_latency_ns", "switch_latency_ns", lambda: graph.switch_latency(graph.main))
    take("nvlink_gbps", "nvlink_gbps", graph.nvlink_gbps)
    take("servers_per_unit", "servers_per_unit", graph.hosts_on_rails)
    take("supernodes", "supernodes", graph.supernodes)
    other = graph.other
    take("scale_out_gbps", "scale_out_gbps", lambda: other and graph.card_link_gbps(other))
    take("scale_out_radix", "scale_out_radix", lambda: other and graph.radix(other))
    take(
        "scale_out_oversubscription",
        "scale_out_oversubscription",
        lambda: other and graph.oversubscription(other),
    )
    take("scale_out_cable_latency_ns", "scale_out_cable_latency_ns", lambda: other and graph.cable_latency(other))
    take(
        "scale_out_switch_latency_ns",
        "scale_out_switch_latency_ns",
        lambda: other and graph.switch_latency(other),
    )
    if found["tiers"] is not None and found["tiers"] < 2:
        found["tiers"], inferred["tiers"] = 2, inferred["tiers"] + "; " + _SINGLE_SWITCH
    if found["nvlink_gbps"] is None:  # a rail design generated without NVLink
        found["nvlink_gbps"], inferred["nvlink_gbps"] = _DEFAULTS["nvlink_gbps"], _DEFAULT_NONE
    problems, converted = [], {}
    for name, value in found.items():
        try:
            converted[name] = _CONVERTERS[name](value)
        except (TypeError, ValueError):
            unreadable = LATER.gettext("%(name)s = %(value)s (%(source)s): expected %(expected)s")
            problems.append(unreadable % {"name": name, "value": repr(value), "source": reason_words(inferred[name]), "expected": _EXPECTED[name]})
    if problems:
        raise WhatIfError(LATER.gettext("cannot read the design rules of fabric %(fabric)s") % {"fabric": repr(spec.name)}, problems)
    # Checked here, before DesignRules checks them itself, to say where each value came from.
    impossible = list(_problems({"max_tiers": MAX_TIERS, **converted}))
    if impossible:
        sourced = [
            LATER.gettext("%(problem)s (from %(source)s)") % {"problem": problem, "source": reason_words(inferred[rule]) if rule in inferred else LATER.gettext("the defaults")}
            for rule, problem in impossible
        ]
        raise WhatIfError(LATER.gettext("fabric %(fabric)s has impossible design rules") % {"fabric": repr(spec.name)}, sourced)
    return DesignRules(**converted, inferred=inferred)


# -- validation -------------------------------------------------------------------------------


def _integer(value: Any) -> int:
    if isinstance(value, bool):
        raise TypeError("a boolean is not a count")
    number = float(value)
    if not number.is_integer():
        raise ValueError(f"{value!r} is not a whole number")
    return int(number)


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number")
    return float(value)


def _design_name(value: Any) -> str:
    if value not in DESIGNS:
        raise ValueError(value)
    return str(value)


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "design": _design_name,
    **dict.fromkeys(
        ("cards", "cards_per_host", "switch_radix", "tiers", "servers_per_unit", "supernodes", "scale_out_radix", "max_tiers"),
        _integer,
    ),
    **dict.fromkeys(
        (
            "oversubscription",
            "link_gbps",
            "cable_latency_ns",
            "switch_latency_ns",
            "nvlink_gbps",
            "scale_out_gbps",
            "scale_out_oversubscription",
            "scale_out_cable_latency_ns",
            "scale_out_switch_latency_ns",
        ),
        _number,
    ),
}
_EXPECTED = {
    name: LATER.gettext("one of %(designs)s") % {"designs": Joined(DESIGNS)}
    if name == "design"
    else LATER.gettext("a whole number")
    if converter is _integer
    else LATER.gettext("a number")
    for name, converter in _CONVERTERS.items()
}
_UNREADABLE = LATER.gettext("%(name)s = %(value)s: expected %(expected)s")


def _problems(rules: Mapping[str, Any]) -> Iterable[tuple[str, Phrase]]:
    """``(rule, sentence)`` for each impossible value of ``rules`` (rule name -> value)."""
    for name in ("cards", "cards_per_host", "servers_per_unit", "supernodes"):
        if rules[name] < 1:
            yield name, LATER.gettext("%(name)s = %(value)s: expected at least 1") % {"name": name, "value": str(rules[name])}
    for name in ("link_gbps", "nvlink_gbps", "scale_out_gbps"):
        value = rules[name]
        if not (math.isfinite(value) and 0 < value <= MAX_LINK_GBPS):
            too_fast = LATER.gettext("%(name)s = %(value)s: expected a positive number of Gb/s, at most %(most)s")
            yield name, too_fast % {"name": name, "value": str(value), "most": f"{MAX_LINK_GBPS:,.0f}"}
    for name in ("cable_latency_ns", "switch_latency_ns", "scale_out_cable_latency_ns", "scale_out_switch_latency_ns"):
        value = rules[name]
        if not (math.isfinite(value) and value >= 0):
            yield name, LATER.gettext("%(name)s = %(value)s: expected a non-negative number of ns") % {"name": name, "value": str(value)}
    for prefix, radix, ratio in (
        ("", rules["switch_radix"], rules["oversubscription"]),
        ("scale_out_", rules["scale_out_radix"], rules["scale_out_oversubscription"]),
    ):
        yield from _radix_problems(prefix, radix, ratio)
    max_tiers, tiers = rules["max_tiers"], rules["tiers"]
    if not 2 <= max_tiers <= MAX_TIERS:
        no_core = LATER.gettext("max_tiers = %(value)s: expected 2 or %(most)s (the generators build leaf, spine and core)")
        yield "max_tiers", no_core % {"value": str(max_tiers), "most": str(MAX_TIERS)}
    if not 2 <= tiers <= MAX_TIERS:
        yield "tiers", LATER.gettext("tiers = %(value)s: expected 2 or %(most)s") % {"value": str(tiers), "most": str(MAX_TIERS)}
    elif tiers > max_tiers:
        too_many = LATER.gettext("tiers = %(value)s but max_tiers = %(max_tiers)s: the snapshot already has more tiers than allowed")
        yield "tiers", too_many % {"value": str(tiers), "max_tiers": str(max_tiers)}


def _radix_problems(prefix: str, radix: int, ratio: float) -> Iterable[tuple[str, Phrase]]:
    if not (math.isfinite(ratio) and ratio >= 1):
        below_one = LATER.gettext(
            "%(name)s = %(ratio)s: expected a ratio of at least 1 (1 is non-blocking, 3 means three times more bandwidth down than up)"
        )
        yield f"{prefix}oversubscription", below_one % {"name": f"{prefix}oversubscription", "ratio": str(ratio)}
        return
    if radix < 2 or radix % 2:
        if prefix:
            odd = LATER.gettext("%(name)s = %(radix)s: expected an even port count of at least 2")
            yield f"{prefix}radix", odd % {"name": f"{prefix}radix", "radix": str(radix)}
        else:
            odd = LATER.gettext("switch_radix = %(radix)s: too small or odd for even one tier; expected an even port count of at least 2 (ports down and up)")
            yield "switch_radix", odd % {"radix": str(radix)}
        return
    down = _ports_down(radix, ratio)
    if down >= radix:
        no_uplink = LATER.gettext("%(name)s %(ratio)s:1 leaves no uplink on a radix-%(radix)s leaf; expected a smaller ratio or a larger radix")
        yield f"{prefix}oversubscription", no_uplink % {"name": f"{prefix}oversubscription", "ratio": str(ratio), "radix": str(radix)}


def _ports_down(radix: int, ratio: float) -> int:
    return round(radix * ratio / (ratio + 1))


def _capacity(radix: int, ports_down: int, tiers: int) -> int:
    # 2 tiers: k leaves; each further tier multiplies the leaves by k/2 (pods of k/2 leaves).
    return radix * (radix // 2) ** (tiers - 2) * ports_down


# -- inference from the graph ------------------------------------------------------------------


def _most_common(values: Iterable[Any]) -> tuple[Any, int] | None:
    counts = Counter(values).most_common(1)
    return counts[0] if counts else None


class _Graph:
    """The snapshot's cards, switches and links, split into the ICN and the other network.

    ``main`` is the domain the cards' fabric links are in (scale-up if any card
    has a scale-up link to a switch other than an in-server NVSwitch, else
    scale-out); ``other`` the other domain if it has switches, else ``None``.
    """

    def __init__(self, spec: FabricSpec) -> None:
        self.spec = spec
        self.cards = spec.cards()
        if not self.cards:
            no_cards = LATER.gettext('fabric %(fabric)s has no cards (nodes of kind "card"); a what-if grows the cards of a snapshot, so upload one that has them')
            raise WhatIfError(no_cards % {"fabric": repr(spec.name)})
        self.nodes = {node.id: node for node in spec.nodes}
        self.card_ids = {card.id for card in self.cards}

        def is_fabric_switch(node_id: str) -> bool:
            node = self.nodes.get(node_id)
            return node is not None and node.kind == "switch" and node.attrs.get("role") != "nvswitch"

        # A card of an uploaded fabric reaches its switch through its HCA: the HCA's cable is
        # the card's fabric link (card -> NIC -> leaf counts as card -> leaf).
        card_of_nic: dict[str, str] = {}
        for link in spec.links:
            for card, peer in ((link.a, link.b), (link.b, link.a)):
                if card in self.card_ids and self.nodes[peer].kind == "nic":
                    card_of_nic.setdefault(peer, card)
        self.engine_ports: Counter[str] = Counter()
        for link in spec.links:
            for engine, switch in ((link.a, link.b), (link.b, link.a)):
                if self.nodes[engine].kind == "aggregation" and self.nodes[switch].kind == "switch":
                    self.engine_ports[switch] += 1
        self.card_links: dict[str, list[tuple[LinkSpec, str]]] = {"scale-up": [], "scale-out": []}
        self.switch_links: dict[str, list[LinkSpec]] = {"scale-up": [], "scale-out": []}
        # domain -> card -> the fabric switches it is cabled to
        self.card_switches: dict[str, dict[str, set[str]]] = {"scale-up": {}, "scale-out": {}}
        for link in spec.links:
            if link.domain not in self.card_links:
                continue
            a_card = link.a in self.card_ids or link.a in card_of_nic
            b_card = link.b in self.card_ids or link.b in card_of_nic
            if a_card != b_card and is_fabric_switch(link.b if a_card else link.a):
                card, switch = (link.a, link.b) if a_card else (link.b, link.a)
                self.card_links[link.domain].append((link, switch))
                self.card_switches[link.domain].setdefault(card_of_nic.get(card, card), set()).add(switch)
            elif is_fabric_switch(link.a) and is_fabric_switch(link.b):
                self.switch_links[link.domain].append(link)
        self.main = "scale-up" if self.card_links["scale-up"] else "scale-out"
        other = "scale-out" if self.main == "scale-up" else "scale-up"
        self.other = other if self.card_links[other] else None

    def switches(self, domain: str) -> list[NodeSpec]:
        ids = {switch for _, switch in self.card_links[domain]}
        ids |= {end for link in self.switch_links[domain] for end in (link.a, link.b)}
        return [self.nodes[node_id] for node_id in sorted(ids)]

    def cards_per_host(self) -> tuple[int, str] | None:
        common = _most_common(card.host for card in self.cards if card.host)
        if common is None:
            # A discovery whose HCAs carry no host names (X5.topofile) says nothing of hosts; eight
            # cards a host would refuse every stage of 89 cards.
            return (1, _NO_HOSTS) if self.cards else None
        return common[1], _reason(_CARDS_PER_HOST, count=common[1])

    def radix(self, domain: str) -> tuple[int, str] | None:
        switches = self.switches(domain)
        # A Quantum switch counts its SHARP engine as port 65: that port carries no cable.
        declared = _most_common(switch.radix - self.engine_ports[switch.id] for switch in switches if switch.radix)
        if declared:
            return declared[0], _reason(_RADIX_WITHOUT_SHARP if any(self.engine_ports.values()) else _RADIX, domain=domain)
        used = Counter()
        for link, switch in self.card_links[domain]:
            used[switch] += 1
        for link in self.switch_links[domain]:
            used[link.a] += 1
            used[link.b] += 1
        if not used:
            return None
        most = max(used.values())
        return most + most % 2, _reason(_PORTS_USED, domain=domain, count=most)

    def tiers(self, domain: str) -> tuple[int, str] | None:
        tiers = sorted({switch.tier for switch in self.switches(domain)}, key=("leaf", "spine", "core").index)
        return (len(tiers), _reason(_TIERS, count=len(tiers), tiers=", ".join(tiers))) if tiers else None

    def oversubscription(self, domain: str) -> tuple[float, str] | None:
        down, up = Counter(), Counter()
        for _, switch in self.card_links[domain]:
            down[switch] += 1
        for link in self.switch_links[domain]:
            for end in (link.a, link.b):
                if end in down:
                    up[end] += 1
        if not down:
            return None
        fullest = max(down, key=lambda leaf: (down[leaf], leaf))
        if not up[fullest]:
            return 1.0, _NO_UPLINKS
        ratio = down[fullest] / up[fullest]
        note = "" if ratio >= 1 else "; " + _BELOW_ONE
        return max(1.0, ratio), _reason(_FULLEST_LEAF, down=down[fullest], up=up[fullest]) + note

    def card_link_gbps(self, domain: str) -> tuple[float, str] | None:
        common = _most_common(link.bandwidth_gbps for link, _ in self.card_links[domain])
        return None if common is None else (common[0], _reason(_CARD_LINK, domain=domain))

    def cable_latency(self, domain: str) -> tuple[float, str] | None:
        links = [link for link, _ in self.card_links[domain]] + self.switch_links[domain]
        common = _most_common(link.latency_ns for link in links)
        return None if common is None else (common[0], _reason(_LINK_LATENCY, domain=domain))

    def switch_latency(self, domain: str) -> tuple[float, str] | None:
        common = _most_common(
            switch.attrs["forwarding_latency_ns"]
            for switch in self.switches(domain)
            if "forwarding_latency_ns" in switch.attrs
        )
        return None if common is None else (common[0], _reason(_FORWARDING, domain=domain))

    def nvlink_gbps(self) -> tuple[float, str] | None:
        common = _most_common(
            link.bandwidth_gbps for link in self.spec.links if link.attrs.get("medium") == "nvlink"
        )
        return None if common is None else (common[0], _NVLINK)

    def hosts_on_rails(self) -> tuple[int, str] | None:
        """Servers per unit of a rail design: the cards on the fullest leaf (one a server), when
        a host's cards reach several leaves (one per rail); else None."""
        leaves_of_host: dict[str, set[str]] = {}
        cards_of_leaf: Counter[str] = Counter()
        for card in self.cards:
            for switch in self.card_switches[self.main].get(card.id, ()):
                cards_of_leaf[switch] += 1
                if card.host:
                    leaves_of_host.setdefault(card.host, set()).add(switch)
        spread = _most_common(len(leaves) for leaves in leaves_of_host.values())
        if spread is None or spread[0] < 2:
            return None
        fullest = max(cards_of_leaf.values())
        return fullest, _reason(_RAILS, rails=spread[0], servers=fullest)

    def supernodes(self) -> tuple[int, str]:
        labels = {card.attrs.get("supernode") for card in self.cards} - {None}
        return max(1, len(labels)), _reason(_SUPERNODES, count=max(1, len(labels)))


def _design(spec: FabricSpec, graph: _Graph) -> tuple[str, str]:
    stored = str(spec.attrs.get("design", ""))
    for design, marker in (("rail", "rail"), ("supernodes", "super-nodes"), ("fat-tree", "fat-tree"), ("fat-tree", "leaf-spine")):
        if marker in stored:
            return design, _reason(_ATTR_DESIGN, design=repr(stored))
    if any(node.attrs.get("role") == "nvswitch" for node in spec.switches()):
        return "rail", _IN_SERVER_NVSWITCH
    if graph.supernodes()[0] > 1:
        return "supernodes", _SEVERAL_SUPERNODES
    if (rails := graph.hosts_on_rails()) is not None:
        return "rail", rails[1]
    return "fat-tree", _ONE_NETWORK
