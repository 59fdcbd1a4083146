"""Run a collective on a compiled fabric: congestion-aware time and link loads.

``Simulator`` holds one fabric compiled with one transport, a choice of ranks,
ECMP mode and channels; ``run`` evaluates a collective and returns plain,
JSON-ready data. The rates of each distinct flow pattern are computed once
(max-min fair, ``congestion.max_min_rates``) and reused by every step, phase,
message size and algorithm that uses the pattern, since rates do not depend on
the bytes moved. ``simulate(spec, ...)`` is the one-call form.

Each algorithm runs with the protocol (LL, LL128, Simple) that NCCL's tuner
would pick, the fastest predicted, unless one is asked for. The automatic
choice of algorithm evaluates the applicable ones of the transport's tuner
(``Transport.tuner``: NCCL's algorithms by default) the same way and keeps the
fastest, like NCCL's tuner but with the congestion-aware times; the result
says which protocol it used and why that algorithm (``choice``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from twin.simcore.algorithms import ALL_PAIRS, BUS_FACTORS, Phase, algorithms_for, check_collective, phases_for, posting_time, step_time
from twin.simcore.compile import CompiledFabric, Routes, all_pairs_walk_size, arc_record, compile_fabric, flow_keys, route, route_all_pairs
from twin.simcore.congestion import max_min_rates
from twin.simcore.errors import TwinCoreError
from twin.simcore.model import FabricSpec
from twin.simcore.translation import LATER, Joined, plain_words
from twin.simcore.transport import PROTOCOLS, FlowCosts, Transport, protocols_to_try, transport_for
from twin.simcore.units import three_digits

__all__ = ["MAX_CLASS_ENTRIES", "MAX_PATTERN_FLOWS", "Simulator", "phase_step_times", "reduction_tree", "simulate"]

MAX_PATTERN_FLOWS = 4_200_000
"""Largest flow pattern routed flow by flow (flows x channels): all pairs of 2,048 ranks. An
all-pairs pattern above it runs as flow classes."""
MAX_CLASS_ENTRIES = 20_000_000
"""Most walk entries an all-pairs pattern as flow classes handles: ``too_large`` refuses by that
count (``all_pairs_walk_size``: the entries it starts from, times the choices each splits into
when hashed or sprayed), the walk any later hop of a batch over it. A 16,384-card fat-tree
handles 8.4 million pinned or hashed (seconds), its rail design 16.8 million hashed; a
65,536-card fat-tree 134 million (minutes: refused, ``auto`` goes on without it)."""


@dataclass(frozen=True)
class _DistinctFlows:
    """One protocol's costs on a pattern's distinct flows (``_Pattern.distinct``), in s and bytes."""

    first: np.ndarray  # the first flow of each distinct one
    rates: np.ndarray  # payload rates (bytes/s, protocol efficiency applied)
    alpha: np.ndarray
    chunk_bytes: np.ndarray
    chunks_in_flight: np.ndarray
    peer_issue: np.ndarray
    base: float  # the costliest flow's base latency (once per collective)


@dataclass(frozen=True, eq=False)
class _Pattern:
    """A routed flow pattern with its max-min rates (bytes/s, domain efficiency applied) and,
    filled on first use, each protocol's costs on its distinct flows."""

    routes: Routes
    rates: np.ndarray
    channels: int
    costs: dict[str, _DistinctFlows]

    @property
    def flows(self) -> float:
        """Flows of the pattern: its rows, or their members when the rows are flow classes."""
        members = self.routes.members
        return self.routes.incidence.shape[0] if members is None else float(members.sum())

    @functools.cached_property
    def arc_flows(self) -> np.ndarray:
        """Flows on each arc (a class's members count): bytes per arc are these times the bytes
        a flow moves, whatever the message size."""
        return self.routes.incidence.T @ np.ones(self.routes.incidence.shape[0])

    @functools.cached_property
    def arc_rates(self) -> tuple[np.ndarray, np.ndarray]:
        """(load in bytes/s, fastest flow's rate) on each arc at the max-min rates."""
        incidence = self.routes.incidence
        rows = np.repeat(np.arange(incidence.shape[0]), np.diff(incidence.indptr))
        fastest = np.zeros(incidence.shape[1])
        np.maximum.at(fastest, incidence.indices, self.rates[rows])
        return incidence.T @ self.rates, fastest

    @functools.cached_property
    def distinct(self) -> np.ndarray:
        """The first flow of each distinct (rate, domain, path latency), in flow order. A flow's
        costs under every protocol follow from its domain and latency, so flows alike here take
        the same step time at every size: a step is timed once per distinct flow (a ring of
        4,096 flows on a regular fabric has one), and the first slowest of them is the first
        slowest flow."""
        keys = (self.routes.latency, self.routes.scale_out, self.rates)
        order = np.lexsort(keys)  # stable: each run of equal keys starts at its first flow
        if not len(order):
            return order
        same_as_previous = np.ones(len(order) - 1, dtype=bool)
        for key in keys:
            ordered = key[order]
            same_as_previous &= ordered[1:] == ordered[:-1]
        return np.sort(order[np.concatenate([[True], ~same_as_previous])])

    def distinct_flows(self, transport: Transport, protocol: str) -> _DistinctFlows:
        if protocol not in self.costs:
            first = self.distinct
            costs = transport.flow_costs(protocol, self.routes.scale_out[first], self.routes.latency[first])
            self.costs[protocol] = _DistinctFlows(
                first=first,
                rates=self.rates[first] * costs.efficiency,
                alpha=costs.alpha,
                chunk_bytes=costs.chunk_bytes,
                chunks_in_flight=costs.chunks_in_flight,
                peer_issue=costs.peer_issue,
                base=float(costs.base.max(initial=0.0)),
            )
        return self.costs[protocol]


class Simulator:
    """A fabric ready to run collectives; see ``run`` for the result.

    ``ranks``: card ids taking part, in ring order (default: every card in
    fabric order). ``transport``: overrides on top of the fabric's stored
    ``attrs["transport"]`` (``Transport.updated`` shape) or a ``Transport``.
    ``ecmp``: ``"hash"`` (default, seeded by ``seed``), ``"spray"`` or
    ``"pinned"``. ``channels``: parallel flows per rank pair, each carrying
    ``1/channels`` of the bytes and hashed separately; ``channel_gbps`` caps
    each one (an engine limit; default none). ``in_switch_reduction``: ``None``
    uses the switches' ``attrs["in_switch_reduction"]``, ``True``/``False``
    assumes every switch can or cannot (a what-if). ``compiled``: ``spec`` already compiled
    (e.g. by ``compiled_with_links_down``); its transport is used. ``max_pattern_flows``: the
    largest flow pattern run (flows x channels, at most ``MAX_PATTERN_FLOWS``); an all-pairs
    algorithm above it is refused by its rank count before any pair is built (``too_large``).
    """

    def __init__(
        self,
        spec: FabricSpec,
        *,
        ranks: Sequence[str] | None = None,
        transport: Transport | Mapping[str, Any] | None = None,
        ecmp: str = "hash",
        seed: int = 0,
        channels: int = 1,
        channel_gbps: float | None = None,
        in_switch_reduction: bool | None = None,
        compiled: CompiledFabric | None = None,
        max_pattern_flows: int = MAX_PATTERN_FLOWS,
    ) -> None:
        if compiled is not None:
            if compiled.spec is not spec or transport is not None:
                raise ValueError("compiled must be spec's own compiled form, and comes with its transport")
            self.transport, self.compiled = compiled.transport, compiled
        else:
            self.transport = (
                transport if isinstance(transport, Transport) else transport_for(spec, transport)
            )
            self.compiled = compile_fabric(spec, self.transport)
        if channels < 1:
            raise TwinCoreError(LATER.gettext("channels %(channels)s; expected at least 1") % {"channels": str(channels)})
        self.ecmp, self.seed, self.channels = ecmp, seed, channels
        self.max_pattern_flows = min(max_pattern_flows, MAX_PATTERN_FLOWS)
        self.channel_limit = None if channel_gbps is None else channel_gbps * 1e9 / 8
        self.in_switch_reduction = in_switch_reduction
        if ranks is None:
            self.ranks = np.arange(len(self.compiled.card_ids))
        else:
            position = {card_id: number for number, card_id in enumerate(self.compiled.card_ids)}
            unknown = [card_id for card_id in ranks if card_id not in position]
            if unknown:
                unknown_cards = LATER.gettext("ranks name unknown cards %(cards)s; expected card ids of %(fabric)s")
                raise TwinCoreError(unknown_cards % {"cards": Joined([repr(card) for card in unknown[:5]]), "fabric": repr(spec.name)})
            self.ranks = np.array([position[card_id] for card_id in ranks], dtype=np.intp)
        self._patterns: dict[str, _Pattern] = {}

    # -- patterns -------------------------------------------------------------

    def _pattern(self, phase: Phase) -> _Pattern:
        cached = self._patterns.get(phase.pattern)
        if cached is not None:
            return cached
        if phase.unbuilt_pairs:
            pattern = self._all_pairs_classes()
            self._patterns[phase.pattern] = pattern
            return pattern
        flows = len(phase.sources) * self.channels
        if flows > self.max_pattern_flows:
            too_many = LATER.gettext("pattern %(pattern)s has %(flows)s flows, more than %(limit)s; use fewer ranks or channels, or another algorithm")
            raise TwinCoreError(too_many % {"pattern": repr(phase.pattern), "flows": flows, "limit": self.max_pattern_flows})
        sources = np.tile(self.ranks[phase.sources], self.channels)
        targets = np.tile(self.ranks[phase.targets], self.channels)
        keys = flow_keys(self.compiled, sources, targets, np.repeat(np.arange(self.channels), len(phase.sources)))
        if phase.in_switch:
            routes, rates = self._reduction_tree(sources)
        else:
            routes = route(self.compiled, sources, targets, mode=self.ecmp, seed=self.seed, flow_keys=keys)
            rates = max_min_rates(routes.incidence, self.compiled.arc_capacity, limit=self.channel_limit)
        pattern = _Pattern(routes=routes, rates=rates, channels=self.channels, costs={})
        self._patterns[phase.pattern] = pattern
        return pattern

    def _all_pairs_classes(self) -> _Pattern:
        """Every rank to every other as flow classes (``route_all_pairs``): past
        ``max_pattern_flows`` a row per flow would not fit. Each channel's flows take the same
        paths (d-mod-k and spraying ignore the channel; hashing is taken at its expectation)."""
        routes = route_all_pairs(self.compiled, self.ranks, mode=self.ecmp, max_entries=MAX_CLASS_ENTRIES)
        routes = Routes(
            incidence=routes.incidence * self.channels,
            latency=routes.latency,
            switch_hops=routes.switch_hops,
            scale_out=routes.scale_out,
            members=routes.members * self.channels,
        )
        rates = max_min_rates(routes.incidence, self.compiled.arc_capacity, limit=self.channel_limit)
        return _Pattern(routes=routes, rates=rates, channels=self.channels, costs={})

    def _reduction_tree(self, sources: np.ndarray) -> tuple[Routes, np.ndarray]:
        tree, slowest = reduction_tree(self.compiled, sources, in_switch_reduction=self.in_switch_reduction)
        return tree, np.full(len(sources), slowest / self.channels)

    @functools.cached_property
    def transport_dict(self) -> dict[str, Any]:
        """``transport.to_dict()`` once per simulator (each result gets its own copy)."""
        return self.transport.to_dict()

    @functools.cached_property
    def _rank_groups(self) -> np.ndarray | None:
        """Each rank's super-node as a number (what ``hierarchical`` groups by), once per simulator."""
        return _group_numbers(np.array(self.compiled.card_supernode, dtype=object)[self.ranks])

    # -- runs -----------------------------------------------------------------

    def candidates(self, collective: str) -> list[str]:
        """Algorithms ``auto`` weighs for ``collective``: those implementing it that the transport's
        tuner chooses from (``Transport.tuner``; applicability is checked when run)."""
        return self.transport.tuner_algorithms(collective, algorithms_for(collective))

    def too_large(self, collective: str) -> dict[str, Any]:
        """The all-pairs algorithms of ``collective`` refused on these ranks, each with why (words).
        Past ``max_pattern_flows`` flows an all-pairs pattern runs as flow classes
        (``route_all_pairs``), whose walk is bounded by ``MAX_CLASS_ENTRIES`` before anything is
        allocated (rows per flow would take gigabytes at 16,384 ranks: 268 million of them)."""
        flows = len(self.ranks) * (len(self.ranks) - 1) * self.channels
        if flows <= self.max_pattern_flows:
            return {}
        entries = all_pairs_walk_size(self.compiled, self.ranks, self.ecmp)
        if entries <= MAX_CLASS_ENTRIES:
            return {}
        why = LATER.gettext(
            "all-pairs pattern of %(flows)s flows; as flow classes its walk handles %(entries)s entries, more than %(limit)s "
            "(cards alike share an entry: here few are); use fewer ranks or another algorithm"
        ) % {"flows": flows, "entries": entries, "limit": MAX_CLASS_ENTRIES}
        return {name: why for name in algorithms_for(collective) if (collective, name) in ALL_PAIRS}

    def run(
        self, collective: str, size_bytes: float, algorithm: str = "auto", protocol: str = "auto", *, top_links: int = 10
    ) -> dict[str, Any]:
        """Simulate one collective; JSON-ready result (shape in docs/simulation.md).

        ``protocol``: ``"auto"`` (the fastest for each algorithm, as NCCL's
        tuner picks) or one of ``PROTOCOLS``. Keys: ``collective``,
        ``algorithm``, ``protocol``, ``protocol_times``, ``ranks``, ``size_bytes``,
        ``time_s``, ``algbw_GBps``, ``busbw_GBps`` (nccl-tests semantics),
        ``latency_s`` and ``bandwidth_s`` (the two parts of ``time_s``),
        ``bound`` (``"latency"`` or ``"bandwidth"``), ``bottleneck`` (link class,
        domain, bound, utilisation), ``max_link_utilization``, ``hottest_links``,
        ``link_bytes`` and ``link_utilization`` (per link of the fabric, in
        order), ``phases``, ``settings`` and, for ``auto``, ``choice``.
        """
        if size_bytes <= 0:
            raise TwinCoreError(LATER.gettext("size %(size)s bytes; expected a positive number") % {"size": str(size_bytes)})
        if protocol != "auto" and protocol not in PROTOCOLS:
            raise TwinCoreError(LATER.gettext("unknown protocol %(protocol)s; expected one of %(names)s or auto") % {"protocol": repr(protocol), "names": Joined(list(PROTOCOLS))})
        if algorithm == "auto":
            check_collective(collective)
            return self._auto(collective, size_bytes, protocol, top_links)
        return self.evaluate(collective, size_bytes, algorithm, protocol).result(self, top_links)

    def _auto(self, collective: str, size_bytes: float, protocol: str, top_links: int) -> dict[str, Any]:
        evaluated: dict[str, Evaluation] = {}
        skipped_words: dict[str, Any] = {}  # why each algorithm cannot run here
        candidates = self.candidates(collective)
        outside_tuner = [algorithm for algorithm in algorithms_for(collective) if algorithm not in candidates]
        # The tuner's algorithms first; the others only when none of those can run here (an
        # all-to-all too large for direct sends still gets an answer).
        for group in (candidates, outside_tuner):
            if evaluated:
                break
            for algorithm in group:
                try:
                    evaluated[algorithm] = self.evaluate(collective, size_bytes, algorithm, protocol)
                except TwinCoreError as error:
                    skipped_words[algorithm] = error.words
        unable = sorted(skipped_words)
        not_weighed = [algorithm for algorithm in outside_tuner if algorithm not in evaluated and algorithm not in skipped_words]
        tuner = self.transport.tuner
        outside = LATER.gettext("not among the %(tuner)s tuner's algorithms (transport tuner); run it by name, or with tuner any") % {"tuner": tuner}
        skipped_words.update((algorithm, outside) for algorithm in not_weighed)
        if not evaluated:
            reasons = [LATER.gettext("%(where)s: %(problem)s") % {"where": name, "problem": words} for name, words in skipped_words.items()]
            raise TwinCoreError(LATER.gettext("no algorithm can run %(collective)s here: %(reasons)s") % {"collective": collective, "reasons": Joined(reasons, "; ")})
        skipped = {name: str(words) for name, words in skipped_words.items()}  # the result keeps English
        ranking = sorted(evaluated, key=lambda name: evaluated[name].time)
        best = evaluated[ranking[0]]
        result = best.result(self, top_links)
        others = ", ".join(f"{name} {_ms(evaluated[name].time)}" for name in ranking[1:])
        reason = (
            f"{ranking[0]} ({best.protocol}) is the fastest ({_ms(best.time)}) for {_megabytes(size_bytes)} on "
            f"{len(self.ranks)} ranks, {result['bound']}-bound"
            + (f"; then {others}" if others else "")
            + (f"; not applicable: {', '.join(unable)}" if unable else "")
            + (f"; not weighed by the {tuner} tuner: {', '.join(not_weighed)}" if not_weighed else "")
        )
        result["choice"] = {
            "reason": reason,
            "candidates": {name: float(evaluated[name].time) for name in ranking},
            "skipped": skipped,
            "skipped_words": {name: plain_words(words) for name, words in skipped_words.items()},  # to show in another language
        }
        return result

    def evaluate(self, collective: str, size_bytes: float, algorithm: str, protocol: str = "auto") -> Evaluation:
        """One named algorithm's time and per-arc (per link direction) bytes with ``protocol``
        (``"auto"``: the fastest), before they are summarised into ``run``'s JSON result (the
        replay adds loads per direction)."""
        refused = self.too_large(collective).get(algorithm)
        if refused:
            raise TwinCoreError(refused)
        phases = phases_for(
            collective, algorithm, size_bytes, len(self.ranks), self._rank_groups,
            pairs_up_to=self.max_pattern_flows // self.channels, hosts=self.compiled.card_host[self.ranks],
        )  # fmt: skip
        limit = self.transport.direct_max_ranks
        if any(phase.memory_semantic for phase in phases) and len(self.ranks) > limit:
            too_many = LATER.gettext("%(algorithm)s writes to every peer: at most %(limit)s ranks (transport direct_max_ranks), got %(ranks)s")
            raise TwinCoreError(too_many % {"algorithm": algorithm, "limit": str(limit), "ranks": len(self.ranks)})
        patterns = [self._pattern(phase) for phase in phases]
        for phase, pattern in zip(phases, patterns):
            if phase.memory_semantic and pattern.routes.scale_out.any():
                raise TwinCoreError(LATER.gettext("%(algorithm)s writes directly to peers: only inside a scale-up domain") % {"algorithm": algorithm})
        evaluations = [
            Evaluation(collective, algorithm, name, size_bytes, len(self.ranks), phases, patterns, self.transport)
            for name in protocols_to_try(protocol, in_switch=any(phase.in_switch for phase in phases))
        ]
        best = min(evaluations, key=lambda evaluation: evaluation.time)
        best.protocol_times = {evaluation.protocol: evaluation.time for evaluation in evaluations}
        return best


class Evaluation:
    """Phase times of one (collective, algorithm, protocol, size); per-arc bytes on demand."""

    def __init__(
        self,
        collective: str,
        algorithm: str,
        protocol: str,
        size_bytes: float,
        ranks: int,
        phases: list[Phase],
        patterns: list[_Pattern],
        transport: Transport,
    ) -> None:
        self.collective, self.algorithm, self.protocol = collective, algorithm, protocol
        self.size_bytes, self.ranks = size_bytes, ranks
        self.protocol_times: dict[str, float] = {}
        self.phases: list[dict[str, Any]] = []
        self._loads = list(zip(phases, patterns))
        self.dominant: tuple[float, _Pattern, int] | None = None  # (bandwidth time, pattern, slowest flow)
        costs = [pattern.distinct_flows(transport, protocol) for pattern in patterns]
        base = max(cost.base for cost in costs)  # once per collective
        self.time, self.latency, self.bandwidth = base, base, 0.0
        for phase, pattern, cost in zip(phases, patterns, costs):
            self._add(phase, pattern, cost, transport)

    def _add(self, phase: Phase, pattern: _Pattern, costs: _DistinctFlows, transport: Transport) -> None:
        bytes_per_flow = phase.bytes_per_flow / pattern.channels
        rates = costs.rates
        times = phase_step_times(phase, bytes_per_flow, rates, costs, transport)
        slowest = int(np.argmax(times))
        step = float(times[slowest])
        bandwidth_part = float(bytes_per_flow / rates[slowest]) if np.isfinite(rates[slowest]) else 0.0
        slowest_rate, slowest = rates[slowest], int(costs.first[slowest])
        self.time += phase.steps * step
        self.bandwidth += phase.steps * bandwidth_part
        self.latency += phase.steps * (step - bandwidth_part)
        if self.dominant is None or phase.steps * bandwidth_part > self.dominant[0]:
            # An in-switch tree's arcs are all on its first row (the others stand for its streams).
            self.dominant = (phase.steps * bandwidth_part, pattern, 0 if phase.in_switch else slowest)
        self.phases.append(
            {
                "name": phase.name,
                "steps": phase.steps,
                "flows": int(pattern.flows),
                "bytes_per_flow": float(bytes_per_flow),
                "slowest_rate_GBps": float(slowest_rate) / 1e9,
                "step_s": step,
                "time_s": phase.steps * step,
            }
        )

    @functools.cached_property
    def arc_bytes(self) -> np.ndarray:
        """Bytes on each compiled arc over the whole collective (whatever the protocol)."""
        total = 0.0
        for phase, pattern in self._loads:
            total = total + phase.steps * phase.bytes_per_flow / pattern.channels * pattern.arc_flows
        return total

    def result(self, simulator: Simulator, top_links: int) -> dict[str, Any]:
        compiled = simulator.compiled
        spec = compiled.spec
        link_count = len(spec.links)
        arc_utilization = self.arc_bytes / (compiled.arc_raw_capacity * self.time) if self.time > 0 else self.arc_bytes * 0
        link_bytes = np.bincount(compiled.arc_link, weights=self.arc_bytes, minlength=link_count)
        link_utilization = np.zeros(link_count)
        np.maximum.at(link_utilization, compiled.arc_link, arc_utilization)
        hottest = _hottest(arc_utilization, top_links)
        algbw = float(self.size_bytes / self.time / 1e9)
        bound = "latency" if self.latency > self.bandwidth else "bandwidth"
        return {
            "collective": self.collective,
            "algorithm": self.algorithm,
            "protocol": self.protocol,
            "protocol_times": dict(self.protocol_times),
            "ranks": self.ranks,
            "size_bytes": float(self.size_bytes),
            "time_s": float(self.time),
            "algbw_GBps": algbw,
            "busbw_GBps": algbw * BUS_FACTORS[self.collective](self.ranks),
            "latency_s": float(self.latency),
            "bandwidth_s": float(self.bandwidth),
            "bound": bound,
            "bottleneck": self._bottleneck(compiled, arc_utilization, bound),
            "max_link_utilization": float(link_utilization.max(initial=0.0)),
            "hottest_links": [arc_record(compiled, int(arc), self.arc_bytes[arc], arc_utilization[arc]) for arc in hottest if self.arc_bytes[arc] > 0],
            "link_bytes": link_bytes.tolist(),
            "link_utilization": link_utilization.tolist(),
            "phases": self.phases,
            "settings": {
                "ecmp": simulator.ecmp,
                "seed": simulator.seed,
                "channels": simulator.channels,
                "transport": _copied(simulator.transport_dict),
            },
        }

    def _bottleneck(self, compiled: CompiledFabric, arc_utilization: np.ndarray, bound: str) -> dict[str, Any]:
        """The arc limiting the slowest flow of the phase that spends longest moving bytes.

        In a max-min allocation a flow's bottleneck is a full arc on which no
        other flow goes faster; ties (a non-blocking fabric fills every hop
        of a ring alike) go to the hop nearest the card, its port.
        """
        _, pattern, slowest = self.dominant
        incidence = pattern.routes.incidence
        arcs = incidence.indices[incidence.indptr[slowest] : incidence.indptr[slowest + 1]]
        if not len(arcs):
            return {"link_class": None, "domain": None, "bound": bound, "utilization": 0.0}
        load, fastest_on_arc = pattern.arc_rates
        full = load[arcs] >= compiled.arc_capacity[arcs] * (1 - 1e-6)
        limiting = full & (fastest_on_arc[arcs] <= pattern.rates[slowest] * (1 + 1e-6))
        candidates = arcs[limiting] if limiting.any() else arcs[np.argmax(load[arcs] / compiled.arc_capacity[arcs])][None]
        arc = int(candidates[np.argmin(compiled.arc_level[candidates])])
        return {
            "link_class": compiled.class_names[compiled.arc_class[arc]],
            "domain": "scale-out" if compiled.arc_scale_out[arc] else "scale-up",
            "bound": bound,
            "utilization": float(arc_utilization[arc]),
        }


def reduction_tree(
    compiled: CompiledFabric, sources: np.ndarray, *, in_switch_reduction: bool | None = None
) -> tuple[Routes, float]:
    """One stream up and one down on every arc of a pinned tree from ranks ``sources`` (card
    numbers) to a root, and the tree's rate (bytes/s): its slowest arc, as the switches reduce
    at line rate, times ``in_switch_efficiency``.

    The tree is the union of the pinned routes from every rank to the first rank (their last
    arc, into that card, is replaced by its own uplink). All its arcs are on the first row; the
    other rows stand for the other ranks' streams. ``in_switch_reduction``: as ``Simulator``'s.
    """
    root = sources[:1].repeat(len(sources))
    routes = route(compiled, sources, root, mode="pinned")
    reverse = route(compiled, root[:1], sources[1:2], mode="pinned") if len(sources) > 1 else routes
    arcs = np.union1d(routes.incidence.indices, reverse.incidence.indices)
    tree_switches = np.unique(compiled.arc_head[arcs][compiled.is_switch[compiled.arc_head[arcs]]])
    if in_switch_reduction is not True:
        unable = tree_switches[~compiled.in_switch_reduction[tree_switches]]
        if in_switch_reduction is False or len(unable):
            unable_words = LATER.gettext("in-switch reduction needs every switch of the reduction tree to reduce (attrs in_switch_reduction); %(unable)s of %(switches)s do not")
            raise TwinCoreError(unable_words % {"unable": len(unable), "switches": len(tree_switches)})
    both_ways = np.union1d(arcs, _reverse_arcs(compiled, arcs))
    slowest = compiled.arc_capacity[both_ways].min() * compiled.transport.in_switch_efficiency
    # Each rank's flow stands for its stream; latency up to the root and back.
    latency = routes.latency + routes.latency.max()
    incidence = sparse.csr_array(
        (np.ones(len(both_ways)), (np.zeros(len(both_ways), np.intp), both_ways)),
        shape=(len(sources), len(compiled.arc_tail)),
    )
    tree = Routes(incidence=incidence, latency=latency, switch_hops=2 * routes.switch_hops, scale_out=routes.scale_out)
    return tree, float(slowest)


def phase_step_times(
    phase: Phase, bytes_per_flow: float, rates: np.ndarray, costs: FlowCosts | _DistinctFlows, transport: Transport
) -> np.ndarray:
    """Time of one step of ``phase`` for each flow carrying ``bytes_per_flow`` at payload
    ``rates`` with one protocol's ``costs`` (``algorithms.step_time``): the start-up is the
    per-peer posting of a direct step (``algorithms.posting_time``) and, for in-switch
    reduction, NVLS's start-up and loops, at the share of the rate its channels carry
    (``Transport.in_switch_share``).
    The one step law of the simulator and of concurrent groups (``twin.operations.concurrent``)."""
    startup = posting_time(phase, costs.peer_issue, bytes_per_flow, rates)
    if phase.in_switch:
        startup = startup + transport.in_switch_startup(phase.bytes_per_flow, phase.heads)
        rates = rates * transport.in_switch_share(phase.bytes_per_flow, phase.heads)
    return step_time(
        bytes_per_flow, rates, costs.alpha, costs.chunk_bytes, costs.chunks_in_flight, depth=phase.depth, startup=startup
    )


def simulate(
    spec: FabricSpec,
    *,
    collective: str,
    size_bytes: float,
    algorithm: str = "auto",
    protocol: str = "auto",
    top_links: int = 10,
    **options: Any,
) -> dict[str, Any]:
    """One collective on ``spec``: ``Simulator(spec, **options).run(...)``.

    >>> from twin.simcore.generate import fat_tree
    >>> result = simulate(fat_tree(endpoints=64, radix=16), collective="allreduce",
    ...                   size_bytes=64 * 2**20, algorithm="ring")
    >>> result["protocol"], round(result["busbw_GBps"], 1), result["bound"], result["bottleneck"]["link_class"]
    ('Simple', 42.3, 'bandwidth', 'card-leaf (scale-up)')
    """
    return Simulator(spec, **options).run(collective, size_bytes, algorithm, protocol, top_links=top_links)


def _hottest(utilization: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` arcs of highest ``utilization``, highest first, ties in arc order (a stable
    sort's first ``count``) without sorting every arc."""
    if count <= 0:
        return np.empty(0, dtype=np.intp)
    if count >= len(utilization):
        return np.argsort(-utilization, kind="stable")
    threshold = np.partition(utilization, len(utilization) - count)[len(utilization) - count]
    above = np.flatnonzero(utilization > threshold)
    tied = np.flatnonzero(utilization == threshold)[: count - len(above)]
    chosen = np.concatenate([above, tied])
    return chosen[np.argsort(-utilization[chosen], kind="stable")]


def _copied(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy of nested dicts of plain values (``copy.deepcopy`` costs ten times more)."""
    return {key: _copied(value) if isinstance(value, dict) else value for key, value in settings.items()}


def _reverse_arcs(compiled: CompiledFabric, arcs: np.ndarray) -> np.ndarray:
    """The opposite direction of each arc (arcs come in two halves)."""
    half = len(compiled.arc_tail) // 2
    return np.where(arcs < half, arcs + half, arcs - half)


def _group_numbers(labels: np.ndarray) -> np.ndarray | None:
    if any(label is None for label in labels):
        return None
    _, numbers = np.unique(np.array([str(label) for label in labels]), return_inverse=True)
    return numbers


def _ms(seconds: float) -> str:
    return f"{three_digits(seconds * 1e3)} ms"


def _megabytes(size: float) -> str:
    return f"{three_digits(size / 1e6)} MB per rank"
