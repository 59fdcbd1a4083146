"""What each distinct operation of a trace costs when it runs alone on the fabric.

A trace repeats the same operations thousands of times (a training step runs
the same all-reduce in every TP group, layer after layer), so an operation is
computed once per key and shared:

- a collective, per (operation, ranks' cards in order, bytes, algorithm), by
  ``twin.simcore.simulate.Simulator`` on those cards (one simulator per card
  tuple, so its flow patterns are reused across sizes and algorithms);
- a point-to-point flow, per (source card, destination card, bytes): routed
  like the core routes a sendrecv's flow (same ECMP hash key, mode, seed and
  channels) and timed by the same step law (``algorithms.step_time``) at its
  solo max-min rate. All distinct flows are routed in one vectorised pass.

A cost is the solo duration and the bytes the operation puts on each arc of
``FabricLayout`` (arc ``l`` = link ``l`` from ``a`` to ``b``, ``L + l`` back).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from twin.simcore.algorithms import step_time
from twin.simcore.compile import ECMP_MODES, CompiledFabric, compile_fabric, flow_keys, route
from twin.simcore.congestion import max_min_rates
from twin.simcore.errors import TwinCoreError
from twin.simcore.model import FabricSpec
from twin.simcore.translation import LATER, Joined
from twin.simcore.simulate import Simulator
from twin.simcore.transport import PROTOCOLS, Transport, transport_for

__all__ = ["FLOW", "NOTHING", "ORDERINGS", "CostModel", "EventCost", "ReplayOptions"]

ORDERINGS = ("communicator", "rank")

FLOW = "flow"
"""``EventCost.algorithm`` of a point-to-point flow."""
NOTHING = "none"
"""``EventCost.algorithm`` of an operation that moves nothing (0 bytes, or one rank)."""


@dataclass(frozen=True)
class ReplayOptions:
    """How the simulation core runs each operation (``Simulator``'s options).

    ``transport``: overrides on top of the fabric's stored transport, in
    ``Transport.to_dict()`` shape; ``ecmp``: ``"hash"``, ``"spray"`` or
    ``"pinned"``; ``seed`` of the ECMP hash; ``channels`` per rank pair.
    ``ordering``: what an event queues on, ``"communicator"`` or ``"rank"``
    (``twin.replay.engine``).
    """

    transport: Mapping[str, Any] | None = None
    ecmp: str = "hash"
    seed: int = 0
    channels: int = 1
    ordering: str = "communicator"

    def __post_init__(self) -> None:
        if self.ordering not in ORDERINGS:
            raise TwinCoreError(LATER.gettext("ordering %(ordering)s; expected one of %(names)s") % {"ordering": repr(self.ordering), "names": Joined(list(ORDERINGS))})
        if self.ecmp not in ECMP_MODES:
            raise TwinCoreError(LATER.gettext("ECMP mode %(mode)s; expected one of %(names)s") % {"mode": repr(self.ecmp), "names": Joined(list(ECMP_MODES))})
        if not (isinstance(self.channels, int) and self.channels >= 1):
            raise TwinCoreError(LATER.gettext("channels %(channels)s; expected a positive integer") % {"channels": repr(self.channels)})

    def to_plain(self) -> dict[str, Any]:
        return {
            "transport": dict(self.transport or {}), "ecmp": self.ecmp, "seed": self.seed,
            "channels": self.channels, "ordering": self.ordering,
        }  # fmt: skip


@dataclass(frozen=True, eq=False)
class EventCost:
    """One distinct operation run alone: duration, algorithm, NCCL protocol (LL, LL128 or
    Simple, chosen per operation as NCCL's tuner would) and bytes per arc it loads."""

    duration_s: float
    algorithm: str
    protocol: str
    arcs: np.ndarray  # FabricLayout arc ids, ascending
    arc_bytes: np.ndarray  # bytes on each of ``arcs``


class CostModel:
    """Computes and caches ``EventCost``s on one fabric with one set of options."""

    def __init__(self, spec: FabricSpec, options: ReplayOptions) -> None:
        self.spec, self.options = spec, options
        self.transport: Transport = transport_for(spec, options.transport)
        self.compiled: CompiledFabric = compile_fabric(spec, self.transport)
        self.card_number = {card: number for number, card in enumerate(self.compiled.card_ids)}
        half = len(self.compiled.arc_link) // 2
        # Compiled arcs cover live links only, a->b first; map them to layout arcs.
        self.layout_arc = self.compiled.arc_link + len(spec.links) * (np.arange(len(self.compiled.arc_link)) >= half)
        self._simulators: dict[tuple[str, ...], Simulator] = {}
        self._costs: dict[tuple, EventCost] = {}
        self.lookups = 0
        self.compute_s = 0.0

    @property
    def distinct(self) -> int:
        """Operations computed (the rest of ``lookups`` were cache hits)."""
        return len(self._costs)

    def collective(self, op: str, cards: tuple[str, ...], size_bytes: int, algorithm: str | None) -> EventCost:
        """Cost of collective ``op`` on ``cards`` (in rank order); ``TwinCoreError`` if it cannot run."""
        key = (op, cards, size_bytes, algorithm or "auto")
        self.lookups += 1
        cost = self._costs.get(key)
        if cost is None:
            started = time.perf_counter()
            cost = self._costs[key] = self._collective(op, cards, size_bytes, algorithm or "auto")
            self.compute_s += time.perf_counter() - started
        return cost

    def flows(self, flows: Sequence[tuple[str, str, int]]) -> list[EventCost]:
        """Costs of point-to-point flows ``(source card, destination card, bytes)``, in order."""
        self.lookups += len(flows)
        missing = sorted({("flow", *flow) for flow in flows} - self._costs.keys())
        if missing:
            started = time.perf_counter()
            for key, cost in zip(missing, self._route_flows([key[1:] for key in missing])):
                self._costs[key] = cost
            self.compute_s += time.perf_counter() - started
        return [self._costs[("flow", *flow)] for flow in flows]

    # -- collectives ---------------------------------------------------------------------------

    def _collective(self, op: str, cards: tuple[str, ...], size_bytes: int, algorithm: str) -> EventCost:
        if size_bytes == 0 or len(cards) < 2:
            return _nothing()
        simulator = self._simulators.get(cards)
        if simulator is None:
            simulator = self._simulators[cards] = Simulator(
                self.spec, ranks=cards, transport=self.transport,
                ecmp=self.options.ecmp, seed=self.options.seed, channels=self.options.channels,
            )  # fmt: skip
        chosen = simulator.run(op, size_bytes, algorithm, top_links=0)["algorithm"]
        # The public result has bytes per link, both directions summed; a replay adds loads per
        # direction (links are full duplex), so it reads the per-arc bytes of the chosen run.
        evaluation = simulator.evaluate(op, size_bytes, chosen)
        loaded = np.flatnonzero(evaluation.arc_bytes > 0)
        return self._cost(evaluation.time, chosen, evaluation.protocol, loaded, evaluation.arc_bytes[loaded])

    def _cost(self, duration_s: float, algorithm: str, protocol: str, compiled_arcs: np.ndarray, arc_bytes: np.ndarray) -> EventCost:
        """An ``EventCost`` from bytes on compiled arcs, renumbered as layout arcs."""
        arcs = self.layout_arc[compiled_arcs]
        order = np.argsort(arcs)
        return EventCost(float(duration_s), algorithm, protocol, arcs[order], arc_bytes[order])

    # -- flows ---------------------------------------------------------------------------------

    def _route_flows(self, flows: Sequence[tuple[str, str, int]]) -> list[EventCost]:
        """Route every distinct flow at once; each one's rate is max-min among its own channels only."""
        compiled, channels = self.compiled, self.options.channels
        sources = np.array([self.card_number[source] for source, _, _ in flows], dtype=np.intp)
        targets = np.array([self.card_number[target] for _, target, _ in flows], dtype=np.intp)
        sizes = np.array([size for _, _, size in flows], dtype=float)
        count = len(flows)
        # Channel c of flow f is row c * count + f, keyed like the simulator's channel flows.
        channel = np.repeat(np.arange(channels), count)
        all_sources, all_targets = np.tile(sources, channels), np.tile(targets, channels)
        keys = flow_keys(compiled, all_sources, all_targets, channel)
        routes = route(compiled, all_sources, all_targets, mode=self.options.ecmp, seed=self.options.seed, flow_keys=keys)
        incidence = sparse.csr_array(routes.incidence)
        rates = _independent_rates(incidence, compiled.arc_capacity, np.tile(np.arange(count), channels))
        per_channel = np.tile(sizes, channels) / channels
        # Each send with its fastest protocol, as NCCL's tuner picks one per operation.
        protocol_times = np.stack([
            np.asarray(costs.base + step_time(per_channel, rates * costs.efficiency, costs.alpha, costs.chunk_bytes, costs.chunks_in_flight), dtype=float)
            .reshape(channels, count).max(axis=0)
            for costs in (self.transport.flow_costs(protocol, routes.scale_out, routes.latency) for protocol in PROTOCOLS)
        ])  # fmt: skip
        fastest = protocol_times.argmin(axis=0)
        duration = protocol_times[fastest, np.arange(count)]
        arc_bytes = _rows_to_flows(incidence, per_channel, count)
        bounds = arc_bytes.indptr
        return [
            self._cost(duration[number], FLOW, PROTOCOLS[fastest[number]], arc_bytes.indices[bounds[number] : bounds[number + 1]], arc_bytes.data[bounds[number] : bounds[number + 1]])
            if sizes[number] > 0
            else _nothing()
            for number in range(count)
        ]


def _rows_to_flows(incidence: sparse.csr_array, bytes_per_row: np.ndarray, count: int) -> sparse.csr_array:
    """Bytes per (flow, arc): each channel row's incidence times its bytes, channels summed."""
    rows = incidence.shape[0]
    gather = sparse.csr_array(
        (bytes_per_row, (np.arange(rows) % count, np.arange(rows))), shape=(count, rows)
    )
    flow_bytes = sparse.csr_array(gather @ incidence)
    flow_bytes.sum_duplicates()  # canonical rows: each arc once
    return flow_bytes


def _independent_rates(incidence: sparse.csr_array, capacity: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Max-min rates where rows of different ``group``s never share an arc (each runs alone).

    Every (group, arc) pair becomes an arc of its own with that arc's capacity,
    so one progressive filling solves all the groups independently.
    """
    coo = incidence.tocoo()
    pair = group[coo.row].astype(np.int64) * incidence.shape[1] + coo.col
    pairs, column = np.unique(pair, return_inverse=True)
    separated = sparse.csr_array((coo.data, (coo.row, column)), shape=(incidence.shape[0], len(pairs)))
    return max_min_rates(separated, capacity[pairs % incidence.shape[1]])


def _nothing() -> EventCost:
    return EventCost(0.0, NOTHING, NOTHING, np.zeros(0, dtype=np.intp), np.zeros(0))
