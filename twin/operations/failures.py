"""Failure what-ifs: take links or switches down, see what one failure costs.

Elements are named ``link:<index>`` (the link's position in ``spec.links``,
as in simulation results) or by a switch's node id. Failing a switch takes
every one of its links down; links are set to state ``"down"``, so routing,
hop counts and the simulator all recompute on the reduced fabric.

The worst-failure search is split so that a task queue can fan it out:
``failure_candidates(spec, kind)`` lists the elements, ``evaluate_failure``
evaluates one set of them (pass a ``FailureBaseline`` to reuse the healthy
fabric's figures across a chunk), and ``rank_failures`` orders the results.
``worst_failure`` runs the whole search serially.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
from scipy import sparse

from twin.operations.concurrent import route_phase
from twin.simcore.algorithms import phases_for
from twin.simcore.compile import CompiledFabric, compiled_with_links_down
from twin.simcore.errors import ProblemsError, TwinCoreError, problem_phrase
from twin.simcore.hops import HopClasses, hop_classes
from twin.simcore.model import FabricSpec
from twin.simcore.simulate import Simulator
from twin.simcore.translation import LATER, Joined, Phrase
from twin.simcore.units import counted

__all__ = [
    "FAILURE_KINDS",
    "FailureBaseline",
    "FailureError",
    "Workload",
    "evaluate_failure",
    "fail_elements",
    "failure_candidates",
    "link_impact",
    "rank_failures",
    "worst_failure",
]

FAILURE_KINDS = ("link", "switch", "leaf")
"""Candidate kinds: every live link, every switch, or the leaf switches only."""
_FAILABLE = LATER.gettext("a switch id or name, or link:<index>")


class FailureError(ProblemsError):
    """A failure list naming unknown elements, or a workload that cannot run; ``problems`` lists each."""


@dataclass(frozen=True)
class Workload:
    """The collective whose time a failure changes: run on ``ranks`` (default every card, fabric order)."""

    collective: str = "allreduce"
    size_bytes: float = float(1 << 30)
    algorithm: str = "ring"
    ranks: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "collective": self.collective,
            "size_bytes": self.size_bytes,
            "algorithm": self.algorithm,
            "ranks": None if self.ranks is None else len(self.ranks),
        }


def failure_candidates(spec: FabricSpec, kind: str) -> list[str]:
    """Element ids to try one at a time: live links (``link:<i>``), switches or leaf switches."""
    if kind == "link":
        return [f"link:{position}" for position, link in enumerate(spec.links) if link.state != "down"]
    if kind == "switch":
        return [node.id for node in spec.switches()]
    if kind == "leaf":
        return [node.id for node in spec.switches() if node.tier == "leaf"]
    raise FailureError(LATER.gettext("unknown failure kind %(kind)s; expected one of %(names)s") % {"kind": repr(kind), "names": Joined(list(FAILURE_KINDS))})


@dataclass(frozen=True, eq=False)
class _FabricIndex:
    """What failing elements asks of a fabric, looked up once per fabric rather than once per
    candidate of a search."""

    switch_of: Mapping[str, str]  # switch id, or a name no other switch has -> switch id
    switch_names: Counter[str]
    kinds: Mapping[str, str]  # node id -> kind
    cards_of_switch: Mapping[str, frozenset[str]]  # cabled to it directly or through their HCA
    block_of_card: Mapping[str, str]  # attrs["slurm_block"] of the cards that have one

    @classmethod
    def of(cls, spec: FabricSpec) -> _FabricIndex:
        switches = spec.switches()
        names = Counter(node.name for node in switches)
        switch_of = {node.name: node.id for node in switches if names[node.name] == 1}
        switch_of.update((node.id, node.id) for node in switches)
        kinds = {node.id: node.kind for node in spec.nodes}
        cards_behind: dict[str, set[str]] = defaultdict(set)  # an HCA -> its cards; a card -> itself
        for link in spec.links:
            for near, far in ((link.a, link.b), (link.b, link.a)):
                if kinds[near] == "card" and kinds[far] == "nic":
                    cards_behind[far].add(near)
        cards_of_switch: dict[str, set[str]] = defaultdict(set)
        for link in spec.links:
            for switch, other in ((link.a, link.b), (link.b, link.a)):
                if kinds[switch] == "switch":
                    cards_of_switch[switch] |= {other} if kinds[other] == "card" else cards_behind.get(other, set())
        blocks = {card.id: card.attrs["slurm_block"] for card in spec.cards() if card.attrs.get("slurm_block") is not None}
        frozen = {switch: frozenset(cards) for switch, cards in cards_of_switch.items()}
        return cls(switch_of, names, kinds, frozen, blocks)


def fail_elements(
    spec: FabricSpec, element_ids: Sequence[str], *, index: _FabricIndex | None = None
) -> tuple[FabricSpec, list[int]]:
    """The fabric with the elements' links down, and the positions of the links taken down.

    An element is ``link:<index>``, a switch id or a switch's name (when no other switch has
    it). Raises ``FailureError`` naming every element that is none of these. ``index`` is
    ``spec``'s, when the caller already has it.
    """
    index = index or _FabricIndex.of(spec)
    problems: list[Phrase] = []
    down_links: set[int] = set()
    failed_switches: set[str] = set()
    for element in element_ids:
        if element.startswith("link:"):
            text = element.removeprefix("link:")
            if text.isdigit() and int(text) < len(spec.links):
                down_links.add(int(text))
            else:
                problems.append(problem_phrase(repr(element), LATER.gettext("no such link"), f"link:0 .. link:{len(spec.links) - 1}"))
        elif element in index.switch_of:
            failed_switches.add(index.switch_of[element])
        elif index.switch_names[element] > 1:
            several = LATER.gettext("%(element)s names %(count)s switches; use the id of the one you mean")
            problems.append(several % {"element": repr(element), "count": index.switch_names[element]})
        elif element in index.kinds:
            problems.append(problem_phrase("", LATER.gettext("%(element)s is a %(kind)s") % {"element": repr(element), "kind": index.kinds[element]}, _FAILABLE))
        else:
            problems.append(problem_phrase("", LATER.gettext("%(element)s is not in %(fabric)s") % {"element": repr(element), "fabric": repr(spec.name)}, _FAILABLE))
    if problems:
        raise FailureError(LATER.gettext("cannot fail these elements"), problems)
    if failed_switches:
        down_links |= {
            position for position, link in enumerate(spec.links) if link.a in failed_switches or link.b in failed_switches
        }
    return spec.with_links_down(down_links, name=f"{spec.name} minus {counted(len(element_ids), 'element')}"), sorted(down_links)


@dataclass(frozen=True, eq=False)
class FailureBaseline:
    """Figures of the healthy fabric that every candidate compares with (build once per chunk)."""

    hops: HopClasses
    workload: Workload
    simulator: Simulator  # compiled once: each candidate's fabric is derived from it
    result: dict[str, Any]
    index: _FabricIndex

    @classmethod
    def of(cls, spec: FabricSpec, workload: Workload) -> FailureBaseline:
        simulator = _simulator(spec, workload.ranks)
        return cls(hop_classes(spec), workload, simulator, _run(simulator, workload), _FabricIndex.of(spec))


def _simulator(spec: FabricSpec, ranks: Sequence[str] | None, compiled: CompiledFabric | None = None) -> Simulator:
    try:
        return Simulator(spec, ranks=ranks, compiled=compiled)
    except TwinCoreError as error:
        raise FailureError(_cannot_run(spec.name, error)) from error


def _run(simulator: Simulator, workload: Workload) -> dict[str, Any]:
    try:
        return simulator.run(workload.collective, workload.size_bytes, workload.algorithm, top_links=5)
    except TwinCoreError as error:
        raise FailureError(_cannot_run(simulator.compiled.spec.name, error)) from error


def _cannot_run(fabric: str, error: TwinCoreError) -> Phrase:
    return LATER.gettext("the workload cannot run on %(fabric)s: %(error)s") % {"fabric": repr(fabric), "error": error.words}


def evaluate_failure(
    spec: FabricSpec, element_ids: Sequence[str], workload: Workload, *, baseline: FailureBaseline | None = None
) -> dict[str, Any]:
    """What failing ``element_ids`` together costs.

    Returns ``elements``, ``links_down`` (count), ``cards_cut_off`` (cards
    outside the largest group of cards still connected, listed up to 50, and
    ``cards_cut_off_count``), ``degraded_pairs`` (card pairs still connected
    but over more switches), ``disconnected_pairs``, ``blast_radius`` (per
    failed switch: cards attached to it, and of those how many are cut off),
    ``blast_radius_by_block`` (per Slurm block losing cards: its cards, how many are cut off;
    None without blocks), and ``workload``: ``before`` / ``after`` time and busbw, ``time_change``
    (ratio after / before), ``busbw_change``, ``ranks_lost`` (ranks on cut-off
    cards, left out of the run after), ``after_bottleneck``.
    """
    baseline = baseline or FailureBaseline.of(spec, workload)
    failed, down = fail_elements(spec, element_ids, index=baseline.index)
    pairs = _PairsBeforeAfter(baseline.hops, hop_classes(failed))
    cut_off = pairs.cut_off()
    ranks = list(workload.ranks) if workload.ranks is not None else list(pairs.card_ids)
    surviving = [card for card in ranks if card not in cut_off]
    after = None
    if len(surviving) >= 2:
        compiled = compiled_with_links_down(baseline.simulator.compiled, failed)
        after = _run(_simulator(failed, surviving, compiled), workload)
    return {
        "elements": list(element_ids),
        "links_down": len(down),
        "cards_cut_off_count": len(cut_off),
        "cards_cut_off": sorted(cut_off)[:50],
        "degraded_pairs": pairs.count((pairs.after > pairs.before) & (pairs.after >= 0) & (pairs.before >= 0)),
        "disconnected_pairs": pairs.count((pairs.after < 0) & (pairs.before >= 0)),
        "blast_radius": _blast_radius(baseline.index, element_ids, cut_off),
        "blast_radius_by_block": _blast_radius_by_block(baseline.index, cut_off),
        "workload": _workload_change(baseline.result, after, len(ranks) - len(surviving), workload),
    }


class _PairsBeforeAfter:
    """Card pairs' hops before and after a failure, by joint class: cards in the same class
    before and in the same class after are alike for both, so every pair question is a
    (classes, classes) array operation weighted by class sizes, not one over cards squared."""

    def __init__(self, before: HopClasses, after: HopClasses) -> None:
        self.card_ids = after.card_ids
        joint, self.card_joint, self.sizes = np.unique(
            np.column_stack([before.card_class, after.card_class]), axis=0, return_inverse=True, return_counts=True
        )
        self.card_joint = self.card_joint.reshape(-1)
        self.before = before.hops[np.ix_(joint[:, 0], joint[:, 0])]
        self.after = after.hops[np.ix_(joint[:, 1], joint[:, 1])]
        # Ordered pairs of distinct cards between (and within) joint classes.
        self.weights = np.outer(self.sizes, self.sizes) - np.diag(self.sizes)

    def count(self, marked: np.ndarray) -> int:
        """Unordered card pairs whose joint classes are marked in ``marked``."""
        return int(self.weights[marked].sum() // 2)

    def cut_off(self) -> set[str]:
        """Cards left out of the set of cards that can all still reach each other.

        Reachability is symmetric but not transitive: paths never cross a third card, so a
        GPU whose rail leaf failed still reaches its host's other GPUs over NVLink, and they
        reach everyone else, but it reaches nobody beyond its host. So, greedily, the class
        with the most unreachable partners (counted in cards) leaves until every pair of the
        classes that stay can reach each other. The cards of one class reach each other, unless
        the class is the cards of a dead leaf, each alone: then its other members count too."""
        if not len(self.card_ids):
            return set()
        unreachable = self.after < 0
        alone = np.diag(unreachable).copy()
        np.fill_diagonal(unreachable, False)
        kept = np.ones(len(self.sizes), dtype=bool)
        missing = unreachable.astype(np.int64) @ self.sizes + alone * (self.sizes - 1)
        while True:
            candidates = np.where(kept, missing, -1)
            worst = int(np.argmax(candidates))
            if candidates[worst] <= 0:
                break
            kept[worst] = False
            missing -= unreachable[:, worst] * self.sizes[worst]
        return {self.card_ids[position] for position in np.flatnonzero(~kept[self.card_joint])}


def _blast_radius(index: _FabricIndex, element_ids: Sequence[str], cut_off: set[str]) -> dict[str, dict[str, int]]:
    """Per failed switch (named as the user named it): the cards cabled to it, directly or
    through their HCA, and how many of those are cut off."""
    switches = {element: index.switch_of[element] for element in element_ids if element in index.switch_of}
    return {
        element: {"cards_attached": len(members), "cards_cut_off": len(members & cut_off)}
        for element, switch in switches.items()
        for members in [index.cards_of_switch.get(switch, frozenset())]
    }


def _blast_radius_by_block(index: _FabricIndex, cut_off: set[str]) -> dict[str, dict[str, int]] | None:
    """Per Slurm block that loses cards (``attrs["slurm_block"]`` of the cards): its cards and
    how many are cut off; None when the fabric has no Slurm blocks."""
    if not index.block_of_card:
        return None
    cards = Counter(index.block_of_card.values())
    lost = Counter(index.block_of_card[card] for card in cut_off if card in index.block_of_card)
    return {block: {"cards": cards[block], "cards_cut_off": lost[block]} for block in sorted(cards) if lost[block]}


def _workload_change(before: dict[str, Any], after: dict[str, Any] | None, ranks_lost: int, workload: Workload) -> dict[str, Any]:
    summary = {
        **workload.to_dict(),
        "before": {"time_s": before["time_s"], "busbw_GBps": before["busbw_GBps"]},
        "after": None,
        "time_change": None,
        "busbw_change": None,
        "ranks_lost": ranks_lost,
        "after_bottleneck": None,
    }
    if after is not None:
        summary["after"] = {"time_s": after["time_s"], "busbw_GBps": after["busbw_GBps"]}
        summary["time_change"] = after["time_s"] / before["time_s"]
        summary["busbw_change"] = after["busbw_GBps"] / before["busbw_GBps"]
        summary["after_bottleneck"] = after["bottleneck"]
    return summary


def rank_failures(results: Iterable[dict[str, Any]], *, top: int = 10) -> dict[str, Any]:
    """Order ``evaluate_failure`` results, worst first: most cards cut off, then slowest workload, then degraded pairs.

    Returns ``worst`` (the first result or None), ``ranking`` (the ``top``
    worst) and ``evaluated`` (how many results were given).
    """
    results = list(results)
    ordered = sorted(
        results,
        key=lambda result: (
            -result["cards_cut_off_count"],
            -(result["workload"]["time_change"] or float("inf")),
            -result["degraded_pairs"],
            result["elements"],
        ),
    )
    return {"worst": ordered[0] if ordered else None, "ranking": ordered[:top], "evaluated": len(results)}


def worst_failure(
    spec: FabricSpec,
    kind: str,
    workload: Workload,
    *,
    top: int = 10,
    on_progress: Callable[[float, Phrase], None] | None = None,
) -> dict[str, Any]:
    """Evaluate every single failure of ``kind`` in turn (serial form of the fan-out) and rank them."""
    baseline = FailureBaseline.of(spec, workload)
    candidates = failure_candidates(spec, kind)
    results = []
    evaluated = LATER.ngettext("%(done)s of %(count)s failure evaluated", "%(done)s of %(count)s failures evaluated", len(candidates))
    for done, element in enumerate(candidates, start=1):
        results.append(evaluate_failure(spec, [element], workload, baseline=baseline))
        if on_progress is not None:
            on_progress(done / len(candidates), evaluated % {"done": done, "count": len(candidates)})
    return {"kind": kind, **rank_failures(results, top=top)}


def link_impact(spec: FabricSpec, workload: Workload, *, top: int | None = None) -> list[dict[str, Any]]:
    """Every live link ranked by impact = bytes it carries in ``workload`` x cards affected if it fails.

    Cards affected: for a bridge of the live graph, the cards its failure cuts
    off (``cards_cut_off``; a card's only cable: 1); for any other link, the
    cards whose workload flows cross it and are rerouted (``cards_routed``).
    Flows over a bridge cannot be rerouted, since each ends on a card cut off,
    so a bridge's ``cards_routed`` is 0 and its cards are not counted twice.
    Each entry: ``link``, ``a``, ``a_port``, ``b``, ``b_port``, ``a_name``, ``b_name``, ``bytes``,
    ``cards_cut_off``, ``cards_routed``, ``cards_affected``, ``impact``;
    highest impact first.
    """
    simulator = _simulator(spec, workload.ranks)
    result = _run(simulator, workload)
    compiled = simulator.compiled
    number = {card_id: position for position, card_id in enumerate(compiled.card_ids)}
    ranks = np.array([number[card] for card in (workload.ranks or compiled.card_ids)], dtype=np.intp)
    routed = _cards_routed(compiled, ranks, workload)
    cut = _bridge_cut_off(spec)
    entries = []
    for position, link in enumerate(spec.links):
        if link.state == "down":
            continue
        carried = float(result["link_bytes"][position])
        cut_off, rerouted = (cut[position], 0) if position in cut else (0, int(routed[position]))
        entries.append(
            {
                "link": position, "a": link.a, "a_port": link.a_port, "b": link.b, "b_port": link.b_port,
                "a_name": spec.node_name(link.a), "b_name": spec.node_name(link.b),
                "bytes": carried, "cards_cut_off": cut_off, "cards_routed": rerouted,
                "cards_affected": cut_off + rerouted, "impact": carried * (cut_off + rerouted),
            }
        )  # fmt: skip
    entries.sort(key=lambda entry: (-entry["impact"], entry["link"]))
    return entries if top is None else entries[:top]


def _cards_routed(compiled, ranks: np.ndarray, workload: Workload) -> np.ndarray:
    """Per link of the spec: distinct cards whose workload flows cross it."""
    link_cards = sparse.csr_array((len(compiled.spec.links), len(compiled.card_ids)))
    arc_to_link = sparse.csr_array(
        (np.ones(len(compiled.arc_link)), (compiled.arc_link, np.arange(len(compiled.arc_link)))),
        shape=(len(compiled.spec.links), len(compiled.arc_link)),
    )
    groups = ranks[None, :]
    for phase in phases_for(workload.collective, workload.algorithm, workload.size_bytes, len(ranks)):
        incidence = route_phase(compiled, groups, phase, ecmp="hash", seed=0).incidence
        flows = incidence.shape[0]
        ends = sparse.csr_array(
            (np.ones(2 * flows), (np.tile(np.arange(flows), 2), np.concatenate([ranks[phase.sources], ranks[phase.targets]]))),
            shape=(flows, len(compiled.card_ids)),
        )
        link_cards = link_cards + arc_to_link @ ((incidence > 0).astype(float).T @ ends)
    return np.diff((link_cards > 0).astype(float).tocsr().indptr)


def _bridge_cut_off(spec: FabricSpec) -> dict[int, int]:
    """Link position -> cards cut off from the largest card group if that link alone fails."""
    graph = nx.MultiGraph()
    graph.add_nodes_from(node.id for node in spec.nodes)
    for position, link in enumerate(spec.links):
        if link.state != "down":
            graph.add_edge(link.a, link.b, key=position)
    cards = {node.id for node in spec.cards()}
    cut: dict[int, int] = {}
    for a, b in nx.bridges(nx.Graph(graph)):
        if graph.number_of_edges(a, b) > 1:
            continue  # parallel cables: not a bridge
        position = next(iter(graph[a][b]))
        trial = graph.copy() if not ({a, b} & cards) else None
        if trial is None:
            cut[position] = 1 if (a in cards) != (b in cards) else 2
            continue
        trial.remove_edge(a, b, key=position)
        sizes = sorted((len(component & cards) for component in map(set, nx.connected_components(trial))), reverse=True)
        cut[position] = sum(sizes[1:])
    return cut
