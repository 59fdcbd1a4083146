"""Expansion stages: the fabric at 1x, 2x, 4x ... cards, for each alternative design.

``plan_stages`` checks every parameter and sizes every stage up front, so an
impossible what-if fails with one ``WhatIfError`` listing all its problems
before any work starts; ``build_stage`` then builds one stage's fabric with
the generators of ``twin.simcore.generate`` (cheap to repeat, so a worker can
rebuild a stage from its plain-data ``StageSpec``).

Alternatives at the same size (``ALTERNATIVES``):

- ``one-supernode``: every card in one ICN super-node, a fat-tree by the
  rules (radix, oversubscription, speeds, latencies). This is also the plain
  fat-tree the rail design is compared with.
- ``k-supernodes``: ``k`` super-nodes of ``cards / k`` cards (non-blocking
  fat-trees inside, as the generator builds them) joined by the scale-out
  network of the rules (``scale_out_*``).
- ``rail``: rail-optimised: servers of ``cards_per_host`` cards on NVLink
  (``nvlink_gbps``), card i of every server of a unit on rail leaf i, rails
  joined by spines (and cores) of the same radix, speed and oversubscription.

Tiers: each stage uses the fewest tiers that hold its cards (never fewer than
the snapshot's), adding a tier when the ports run out (MODELLING.md
section 7); more than ``rules.max_tiers`` is an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from twin.simcore.errors import FabricError
from twin.simcore.generate import fat_tree, rail_optimised, supernode_cluster
from twin.simcore.model import Attrs, FabricSpec
from twin.simcore.translation import LATER, Joined, Phrase
from twin.whatif.errors import WhatIfError
from twin.whatif.rules import MAX_TIERS, DesignRules, tiers_needed

__all__ = [
    "ALTERNATIVES",
    "DEFAULT_FACTORS",
    "MAX_STAGE_CARDS",
    "StageSpec",
    "build_stage",
    "plan_stages",
    "plannable_choice",
]

ALTERNATIVES = ("one-supernode", "k-supernodes", "rail")
DEFAULT_FACTORS = (1, 2, 4, 8)
MAX_STAGE_CARDS = 131_072
"""Largest stage: beyond it one simulation cell needs more memory than a worker has (2 GB)."""

CANNOT_PLAN = LATER.gettext("cannot plan the what-if")

_GENERATORS: dict[str, Callable[..., FabricSpec]] = {
    "fat_tree": fat_tree,
    "rail_optimised": rail_optimised,
    "supernode_cluster": supernode_cluster,
}


@dataclass(frozen=True)
class StageSpec:
    """One stage of one alternative, as plain data a task can carry.

    ``generator`` names the function of ``twin.simcore.generate`` and
    ``parameters`` its keyword arguments; ``tiers`` is the tier count of the
    ICN (of each super-node for ``k-supernodes``), ``scale_out_tiers`` that of
    the scale-out network (``None`` when there is none).
    """

    alternative: str
    factor: float
    cards: int
    generator: str
    parameters: Mapping[str, Any]
    tiers: int
    scale_out_tiers: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", Attrs(self.parameters))

    @property
    def label(self) -> str:
        """For people: ``"4x one-supernode (4,096 cards)"``."""
        return f"{_factor_text(self.factor)}x {self.alternative} ({self.cards:,} cards)"

    @property
    def label_phrase(self) -> Phrase:
        """``label`` to render in the reader's language."""
        return LATER.ngettext("%(factor)sx %(alternative)s (%(count)s card)", "%(factor)sx %(alternative)s (%(count)s cards)", self.cards) % {
            "factor": _factor_text(self.factor), "alternative": self.alternative, "count": self.cards,
        }  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {
            "alternative": self.alternative,
            "factor": self.factor,
            "cards": self.cards,
            "label": self.label,
            "generator": self.generator,
            "parameters": self.parameters.to_plain(),
            "tiers": self.tiers,
            "scale_out_tiers": self.scale_out_tiers,
        }

    @classmethod
    def from_dict(cls, plain: Mapping[str, Any]) -> StageSpec:
        """Inverse of ``to_dict`` (``label`` is derived and ignored)."""
        try:
            return cls(
                alternative=plain["alternative"],
                factor=float(plain["factor"]),
                cards=int(plain["cards"]),
                generator=plain["generator"],
                parameters=plain["parameters"],
                tiers=int(plain["tiers"]),
                scale_out_tiers=plain.get("scale_out_tiers"),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise WhatIfError(LATER.gettext("not a stage description: %(error)s; expected StageSpec.to_dict()") % {"error": repr(error)}) from None


def plan_stages(
    rules: DesignRules,
    factors: Sequence[float] = DEFAULT_FACTORS,
    alternatives: Sequence[str] = ALTERNATIVES,
    *,
    k: int = 2,
) -> list[StageSpec]:
    """Every (factor, alternative) stage, in factor order, each checked and sized.

    ``factors`` multiply the snapshot's cards (at least 1, in increasing
    order; the first is the reference of the scaling efficiency). ``k`` is
    the super-node count of ``k-supernodes``. Raises ``WhatIfError`` listing
    every problem (bad factor, card count that does not fill hosts or
    super-nodes, too many cards, a stage needing more tiers than
    ``rules.max_tiers``).

    >>> from twin.simcore.generate import fat_tree
    >>> from twin.whatif.rules import design_rules
    >>> rules = design_rules(fat_tree(endpoints=1024))
    >>> [(stage.cards, stage.tiers) for stage in plan_stages(rules, (1, 2, 4), ["one-supernode"])]
    [(1024, 2), (2048, 2), (4096, 3)]
    """
    problems = list(_parameter_problems(factors, alternatives, k))
    if problems:
        raise WhatIfError(CANNOT_PLAN, problems)
    stages: list[StageSpec] = []
    for factor in factors:
        # Bounded before rounding: a factor such as 1e308 gives infinitely many cards, which
        # no integer holds.
        if rules.cards * factor > MAX_STAGE_CARDS:
            too_many = LATER.gettext("factor %(factor)s: %(cards)s cards; expected at most %(most)s")
            problems.append(too_many % {"factor": _factor_text(factor), "cards": f"{rules.cards * factor:,.6g}", "most": MAX_STAGE_CARDS})
            continue
        cards = round(rules.cards * factor)
        if abs(cards - rules.cards * factor) > 1e-6 or cards % rules.cards_per_host:
            not_hosts = LATER.gettext(
                "factor %(factor)s: %(cards)s x %(factor)s = %(grown)s cards; expected a whole number of hosts of %(per_host)s cards"
            )
            problems.append(not_hosts % {"factor": _factor_text(factor), "cards": rules.cards, "grown": f"{rules.cards * factor:,.6g}", "per_host": str(rules.cards_per_host)})
            continue
        for alternative in alternatives:
            try:
                stages.append(_PLANNERS[alternative](rules, float(factor), cards, k))
            except WhatIfError as error:
                impossible = LATER.gettext("factor %(factor)s, %(alternative)s: %(error)s")
                problems.append(impossible % {"factor": _factor_text(factor), "alternative": alternative, "error": error.words})
    if problems:
        raise WhatIfError(CANNOT_PLAN, problems)
    return stages


def plannable_choice(rules: DesignRules, factors: Sequence[float] = DEFAULT_FACTORS, *, most_k: int = 8) -> tuple[list[str], int]:
    """The designs that plan at every one of ``factors``, and the smallest k (2 to ``most_k``)
    that splits ``k-supernodes`` (2 when none does, and then it is left out): what a form should
    offer so that, submitted as shown, it runs (89 cards split into no k super-nodes).

    >>> from twin.simcore.generate import fat_tree
    >>> from twin.whatif.rules import design_rules
    >>> plannable_choice(design_rules(fat_tree(endpoints=96, radix=16, cards_per_host=8)), (1, 2))
    (['one-supernode', 'k-supernodes', 'rail'], 2)
    """

    def plans(alternative: str, k: int) -> bool:
        try:
            plan_stages(rules, factors, [alternative], k=k)
        except WhatIfError:
            return False
        return True

    k = next((k for k in range(2, most_k + 1) if plans("k-supernodes", k)), None)
    chosen = [alternative for alternative in ALTERNATIVES if (k is not None if alternative == "k-supernodes" else plans(alternative, 2))]
    return chosen, k or 2


def build_stage(stage: StageSpec) -> FabricSpec:
    """The fabric of ``stage``, built by its generator; ``WhatIfError`` if it cannot be."""
    generator = _GENERATORS.get(stage.generator)
    if generator is None:
        unknown = LATER.gettext("%(stage)s: unknown generator %(generator)s; expected one of %(generators)s")
        raise WhatIfError(unknown % {"stage": stage.label_phrase, "generator": repr(stage.generator), "generators": Joined(list(_GENERATORS))})
    name = f"whatif-{stage.alternative}-{_factor_text(stage.factor)}x"
    try:
        return generator(**stage.parameters.to_plain(), name=name)
    except (FabricError, TypeError) as error:
        reason = error.words if isinstance(error, FabricError) else str(error)  # a TypeError says it in English only
        raise WhatIfError(LATER.gettext("%(stage)s: cannot build the fabric: %(error)s") % {"stage": stage.label_phrase, "error": reason}) from None


# -- planning ---------------------------------------------------------------------------------


def _parameter_problems(factors: Sequence[float], alternatives: Sequence[str], k: int) -> list[Phrase]:
    problems = []
    if not factors:
        problems.append(LATER.gettext("no factors; expected at least one, e.g. 1, 2, 4, 8"))
    for factor in factors:
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor):
            problems.append(LATER.gettext("factor %(factor)s: expected a number") % {"factor": repr(factor)})
        elif factor < 1:
            problems.append(LATER.gettext("factor %(factor)s: expected at least 1 (a what-if grows the fabric)") % {"factor": str(factor)})
    numeric = [factor for factor in factors if isinstance(factor, (int, float)) and not isinstance(factor, bool)]
    if any(later <= earlier for earlier, later in zip(numeric, numeric[1:])):
        problems.append(LATER.gettext("factors %(factors)s: expected strictly increasing stages, e.g. 1, 2, 4, 8") % {"factors": str(list(factors))})
    if not alternatives:
        problems.append(LATER.gettext("no alternatives; expected some of %(alternatives)s") % {"alternatives": Joined(ALTERNATIVES)})
    for alternative in alternatives:
        if alternative not in _PLANNERS:
            unknown = LATER.gettext("alternative %(alternative)s: expected one of %(alternatives)s")
            problems.append(unknown % {"alternative": repr(alternative), "alternatives": Joined(ALTERNATIVES)})
    if len(set(alternatives)) != len(alternatives):
        problems.append(LATER.gettext("alternatives %(alternatives)s: each at most once") % {"alternatives": str(list(alternatives))})
    if "k-supernodes" in alternatives and (isinstance(k, bool) or not isinstance(k, int) or k < 2):
        problems.append(LATER.gettext("k = %(k)s: expected a whole number of super-nodes, at least 2") % {"k": repr(k)})
    return problems


def _tiers(rules: DesignRules, cards: int, radix: int, ports_down: int, what: Phrase, *, at_least: int = 2) -> int:
    tiers = max(at_least, tiers_needed(cards, radix, ports_down))
    if tiers > rules.max_tiers:
        if rules.max_tiers < MAX_TIERS:
            too_many = LATER.gettext(
                "%(cards)s cards need %(tiers)s tiers of radix-%(radix)s switches with %(down)s ports down per leaf (%(what)s), "
                "more than max_tiers = %(max_tiers)s (at most %(capacity)s cards); use a larger radix, more oversubscription or "
                "fewer cards, or allow up to %(most)s tiers"
            )
        else:
            too_many = LATER.gettext(
                "%(cards)s cards need %(tiers)s tiers of radix-%(radix)s switches with %(down)s ports down per leaf (%(what)s), "
                "more than max_tiers = %(max_tiers)s (at most %(capacity)s cards); use a larger radix, more oversubscription or "
                "fewer cards"
            )
        raise WhatIfError(too_many % {
            "cards": cards, "tiers": str(tiers), "radix": str(radix), "down": str(ports_down), "what": what,
            "max_tiers": str(rules.max_tiers), "capacity": _capacity(radix, ports_down, rules.max_tiers), "most": str(MAX_TIERS),
        })  # fmt: skip
    return tiers


def _snapshot_tiers(rules: DesignRules, design: str) -> int:
    """A stage of the snapshot's own design keeps at least the snapshot's tiers."""
    return rules.tiers if rules.design == design else 2


def _capacity(radix: int, ports_down: int, tiers: int) -> int:
    return radix * (radix // 2) ** (tiers - 2) * ports_down


def _common(rules: DesignRules) -> dict[str, Any]:
    return {
        "link_gbps": rules.link_gbps,
        "cable_latency_ns": rules.cable_latency_ns,
        "switch_latency_ns": rules.switch_latency_ns,
    }


def _one_supernode(rules: DesignRules, factor: float, cards: int, k: int) -> StageSpec:
    tiers = _tiers(rules, cards, rules.switch_radix, rules.leaf_ports_down, LATER.gettext("ICN"), at_least=_snapshot_tiers(rules, "fat-tree"))
    return StageSpec(
        alternative="one-supernode",
        factor=factor,
        cards=cards,
        generator="fat_tree",
        parameters={
            "endpoints": cards,
            "radix": rules.switch_radix,
            "tiers": tiers,
            "oversubscription": rules.oversubscription,
            "cards_per_host": rules.cards_per_host,
            **_common(rules),
        },
        tiers=tiers,
    )


def _k_supernodes(rules: DesignRules, factor: float, cards: int, k: int) -> StageSpec:
    per_supernode = cards // k
    if cards % k or per_supernode % rules.cards_per_host:
        no_split = LATER.gettext("%(cards)s cards do not split into %(k)s super-nodes of whole hosts of %(per_host)s cards")
        raise WhatIfError(no_split % {"cards": cards, "k": str(k), "per_host": str(rules.cards_per_host)})
    tiers = _tiers(rules, per_supernode, rules.switch_radix, rules.switch_radix // 2, LATER.gettext("ICN of each super-node"))
    scale_out_down = round(
        rules.scale_out_radix * rules.scale_out_oversubscription / (rules.scale_out_oversubscription + 1)
    )
    scale_out_tiers = _tiers(rules, cards, rules.scale_out_radix, scale_out_down, LATER.gettext("scale-out network"))
    return StageSpec(
        alternative="k-supernodes",
        factor=factor,
        cards=cards,
        generator="supernode_cluster",
        parameters={
            "supernodes": k,
            "cards_per_supernode": per_supernode,
            "cards_per_host": rules.cards_per_host,
            "radix": rules.switch_radix,
            "tiers": tiers,
            **_common(rules),
            "scale_out_gbps": rules.scale_out_gbps,
            "scale_out_radix": rules.scale_out_radix,
            "scale_out_tiers": scale_out_tiers,
            "scale_out_oversubscription": rules.scale_out_oversubscription,
            "scale_out_cable_latency_ns": rules.scale_out_cable_latency_ns,
            "scale_out_switch_latency_ns": rules.scale_out_switch_latency_ns,
        },
        tiers=tiers,
        scale_out_tiers=scale_out_tiers,
    )


def _rail(rules: DesignRules, factor: float, cards: int, k: int) -> StageSpec:
    servers = cards // rules.cards_per_host
    per_unit = min(rules.servers_per_unit, rules.leaf_ports_down)
    units = math.ceil(servers / per_unit)
    rail_leaves = units * rules.rails
    # Leaves are the unit: the fat-tree rule applies to leaves of ``leaf_ports_down`` ports.
    tiers = _tiers(
        rules, rail_leaves * rules.leaf_ports_down, rules.switch_radix, rules.leaf_ports_down, LATER.gettext("rails"),
        at_least=_snapshot_tiers(rules, "rail"),
    )
    return StageSpec(
        alternative="rail",
        factor=factor,
        cards=cards,
        generator="rail_optimised",
        parameters={
            "servers": servers,
            "cards_per_server": rules.cards_per_host,
            "servers_per_unit": per_unit,
            "radix": rules.switch_radix,
            "tiers": tiers,
            "oversubscription": rules.oversubscription,
            **_common(rules),
            "nvlink_gbps": rules.nvlink_gbps,
        },
        tiers=tiers,
    )


_PLANNERS: dict[str, Callable[[DesignRules, float, int, int], StageSpec]] = {
    "one-supernode": _one_supernode,
    "k-supernodes": _k_supernodes,
    "rail": _rail,
}


def _factor_text(factor: float) -> str:
    return f"{factor:g}"
