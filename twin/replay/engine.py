"""The replay engine: a trace's events on the fabric, in time, with congestion.

Event-driven fluid model (docs/replay.md has the worked rules and limits):

* **Cost.** Every event is first costed alone (``costs.CostModel``): its solo
  duration ``d`` and the bytes it puts on each arc. Running at full speed it
  demands ``bytes / d`` bytes/s on each of those arcs.
* **Start.** An event starts at ``max(its timestamp, when what it queues on
  is free)``, in trace order. ``ReplayOptions.ordering`` says what it queues on:

  - ``"communicator"`` (default): a collective queues on its communicator
    (``comm`` when the trace names one, else its set of ranks), which runs
    one collective at a time as NCCL does on its stream; a flow queues on its
    (source, destination) pair. Communicators overlap freely, even on the
    same ranks (different communicators are different CUDA streams).
  - ``"rank"``: an event queues on each of its ranks; a rank runs one
    operation at a time, whatever the communicator (one stream per rank:
    the trace's order is the program order).
* **Congestion.** While events overlap, their demands add up per arc.
  ``congestion = demand / cable capacity`` (can exceed 1). An arc delivers at
  most its capacity times the protocol efficiency, so each event progresses
  at ``1 / max(1, demand / deliverable)`` over the worst arc it crosses: it is
  stretched by its worst bottleneck. Its carried bytes (demand x speed) then
  never exceed what any arc delivers, and ``utilisation = carried / cable
  capacity`` stays within [0, 1].
* **Progress.** Speeds change only when an event starts or ends; between two
  such moments everything runs at constant speed, so the engine jumps from
  one to the next (``O(events)`` steps, each over the active events' arcs).
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from twin.replay.binding import BoundTrace
from twin.replay.costs import CostModel, EventCost, ReplayOptions
from twin.replay.layout import FabricLayout
from twin.simcore.errors import TwinCoreError, problem_phrase
from twin.simcore.translation import LATER, Phrase
from twin.traces.errors import TraceError
from twin.traces.model import CollectiveEvent, FlowEvent

__all__ = ["MAX_COST_PROBLEMS", "Replay", "replay_trace"]

MAX_COST_PROBLEMS = 50
# Remaining solo time, as a fraction of the event's, below which an event counts as finished:
# absorbs rounding when several events end at the same moment.
_DONE = 1e-9
# Demand within rounding of what an arc delivers is not congestion, so lone events keep their solo time.
_OVERLOADED = 1 + 1e-9


@dataclass(frozen=True, eq=False)
class Replay:
    """The timed result of replaying a bound trace.

    Per event (trace order): ``cost_index`` into ``costs``, ``start_s`` and
    ``end_s``. ``pieces_*`` describe each event's progress as constant-speed
    pieces ``[t0, t1)`` (speed 1 = as fast as alone). ``peak_congestion`` is
    the highest instantaneous demand / capacity of any arc, at ``peak_t_s`` on
    ``peak_arc``. ``lookups``, ``distinct_costs`` and ``cost_compute_s``
    describe the cost cache.
    """

    bound: BoundTrace
    options: ReplayOptions
    layout: FabricLayout
    costs: tuple[EventCost, ...]
    cost_index: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    pieces_event: np.ndarray
    pieces_t0: np.ndarray
    pieces_t1: np.ndarray
    pieces_speed: np.ndarray
    peak_congestion: float
    peak_t_s: float
    peak_arc: int
    lookups: int
    distinct_costs: int
    cost_compute_s: float

    @property
    def duration_s(self) -> float:
        """When the last event ends (the replay starts at 0)."""
        return float(self.end_s.max(initial=0.0))

    @property
    def solo_s(self) -> np.ndarray:
        """Each event's duration when run alone."""
        return np.array([cost.duration_s for cost in self.costs])[self.cost_index]

    def arc_bytes(self) -> np.ndarray:
        """Bytes each arc carries over the whole replay."""
        per_cost = np.bincount(self.cost_index, minlength=len(self.costs))
        total = np.zeros(self.layout.arc_count)
        for cost, count in zip(self.costs, per_cost.tolist()):
            if count:
                total[cost.arcs] += count * cost.arc_bytes
        return total

    def link_bytes(self) -> np.ndarray:
        """Bytes each link carries over the whole replay, both directions (as the simulator's ``link_bytes``)."""
        arc_bytes = self.arc_bytes()
        return arc_bytes[: self.layout.link_count] + arc_bytes[self.layout.link_count :]


def replay_trace(bound: BoundTrace, *, options: ReplayOptions = ReplayOptions()) -> Replay:
    """Cost, schedule and congest every event of ``bound`` (see the module docstring).

    Raises ``TraceError`` listing the events the simulation core cannot run
    (at most 50), naming each one's position in the trace.
    """
    spec, events = bound.spec, bound.trace.events
    model = CostModel(spec, options)
    layout = FabricLayout.of(spec)
    cost_of_event = _cost_events(bound, model)
    costs: list[EventCost] = []  # distinct, in order of first use
    position: dict[int, int] = {}
    for cost in cost_of_event:
        if id(cost) not in position:
            position[id(cost)] = len(costs)
            costs.append(cost)
    cost_index = np.array([position[id(cost)] for cost in cost_of_event], dtype=np.intp)

    efficiency = np.where(layout.arc_scale_out, model.transport.scale_out.efficiency, model.transport.scale_up.efficiency)
    schedule = _Schedule(
        costs, cost_index, np.array([event.t_s for event in events], dtype=float),
        [_queues(event, options.ordering) for event in events], layout.arc_capacity, layout.arc_capacity * efficiency,
    )  # fmt: skip
    schedule.run()
    pieces = schedule.pieces()
    return Replay(
        bound=bound,
        options=options,
        layout=layout,
        costs=tuple(costs),
        cost_index=cost_index,
        start_s=schedule.start,
        end_s=schedule.end,
        pieces_event=pieces[0],
        pieces_t0=pieces[1],
        pieces_t1=pieces[2],
        pieces_speed=pieces[3],
        peak_congestion=schedule.peak[0],
        peak_t_s=schedule.peak[1],
        peak_arc=schedule.peak[2],
        lookups=model.lookups,
        distinct_costs=model.distinct,
        cost_compute_s=model.compute_s,
    )


def _cost_events(bound: BoundTrace, model: CostModel) -> list[EventCost]:
    """The cost of each event, in trace order; ``TraceError`` listing those that cannot run."""
    card = bound.card_of_rank
    events = bound.trace.events
    costs: list[EventCost | None] = [None] * len(events)
    problems: list[Phrase] = []
    failed: dict[tuple, int] = {}  # an operation that failed once is reported once
    flows = [position for position, event in enumerate(events) if isinstance(event, FlowEvent)]
    for position, event in enumerate(events):
        if isinstance(event, FlowEvent) or len(problems) >= MAX_COST_PROBLEMS:
            continue
        cards = tuple(card[rank] for rank in event.ranks)
        key = (event.op, cards, event.bytes, event.algorithm)
        if key in failed:
            continue
        try:
            costs[position] = model.collective(event.op, cards, event.bytes, event.algorithm)
        except TwinCoreError as error:
            failed[key] = position
            cannot = LATER.gettext("%(event)s cannot be simulated: %(error)s") % {"event": _described(event), "error": error.words}
            problems.append(problem_phrase(f"events[{position}]", cannot))
    if flows and not problems:
        try:
            flow_costs = model.flows([(card[events[p].src_rank], card[events[p].dst_rank], events[p].bytes) for p in flows])
        except TwinCoreError as error:
            problems.append(LATER.gettext("flows of the trace cannot be routed: %(error)s") % {"error": error.words})
        else:
            for position, cost in zip(flows, flow_costs):
                costs[position] = cost
    if problems:
        cannot = LATER.gettext("trace %(trace)s cannot be replayed on fabric %(fabric)s")
        raise TraceError(cannot % {"trace": repr(bound.trace.name), "fabric": repr(bound.spec.name)}, problems)
    return costs  # type: ignore[return-value]  # every slot is filled when there is no problem


def _described(event: CollectiveEvent) -> Phrase:
    operation = f"{event.op} ({event.algorithm})" if event.algorithm else event.op
    described = LATER.ngettext("%(op)s of %(bytes)s bytes on %(ranks)s rank", "%(op)s of %(bytes)s bytes on %(ranks)s ranks", len(event.ranks))
    return described % {"op": operation, "bytes": event.bytes, "ranks": len(event.ranks)}


def _queues(event: FlowEvent | CollectiveEvent, ordering: str) -> tuple[Hashable, ...]:
    """What an event queues on (see the module docstring)."""
    if isinstance(event, FlowEvent):
        ranks = (event.src_rank, event.dst_rank)
        return ranks if ordering == "rank" else (("flow", *ranks),)
    if ordering == "rank":
        return event.ranks
    return (("comm", event.comm),) if event.comm is not None else (("ranks", tuple(sorted(event.ranks))),)


class _Schedule:
    """The fluid simulation over events; see the module docstring."""

    def __init__(
        self,
        costs: list[EventCost],
        cost_index: np.ndarray,
        requested: np.ndarray,
        queues: list[tuple[Hashable, ...]],
        capacity: np.ndarray,
        deliverable: np.ndarray,
    ) -> None:
        self.costs, self.cost_index, self.requested = costs, cost_index, requested
        self.capacity, self.deliverable = capacity, deliverable
        self.duration = np.array([cost.duration_s for cost in costs])[cost_index] if len(cost_index) else np.zeros(0)
        # Demand of each cost at full speed, bytes/s on its arcs.
        self.rates = [cost.arc_bytes / cost.duration_s if cost.duration_s > 0 else np.zeros_like(cost.arc_bytes) for cost in costs]
        count = len(cost_index)
        self.start = np.full(count, np.nan)
        self.end = np.full(count, np.nan)
        # An event waits for the previous event of each of its queues to end.
        self.waiting_for = np.zeros(count, dtype=np.intp)
        self.dependents: list[list[int]] = [[] for _ in range(count)]
        last: dict[Hashable, int] = {}
        heads: list[tuple[float, int]] = []
        for event, event_queues in enumerate(queues):
            before = {last[queue] for queue in event_queues if queue in last}
            for predecessor in before:
                self.dependents[predecessor].append(event)
            self.waiting_for[event] = len(before)
            if not before:
                heads.append((float(requested[event]), event))
            for queue in event_queues:
                last[queue] = event
        heapq.heapify(heads)
        self.ready = heads
        self.demand = np.zeros(len(capacity))
        self.overloaded = np.zeros(len(capacity), dtype=bool)
        self.peak = (0.0, 0.0, -1)
        self._pieces: list[tuple[np.ndarray, float, np.ndarray]] = []

    def run(self) -> None:
        now = 0.0
        # The running events, in start order, with their remaining solo time, current speed and
        # arcs (concatenated, ``lengths`` per event): kept as arrays, so a step costs a few
        # vector operations over the running events' arcs.
        active = np.zeros(0, dtype=np.intp)
        remaining, speed = np.zeros(0), np.zeros(0)
        lengths, arcs = np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
        while len(active) or self.ready:
            if len(active):
                finish_at = now + float(np.min(remaining / speed))
                next_time = min(finish_at, self.ready[0][0]) if self.ready else finish_at
                remaining = remaining - speed * (next_time - now)
            else:
                next_time = self.ready[0][0]
            now = next_time
            done = remaining <= _DONE * self.duration[active]
            changed_arcs = [arcs[np.repeat(done, lengths)]]
            if done.any():
                for event in active[done].tolist():
                    self._finish(event, now)
                arcs = arcs[np.repeat(~done, lengths)]
                active, remaining, speed, lengths = active[~done], remaining[~done], speed[~done], lengths[~done]
            started = self._start_ready(now)
            if started:
                started_arcs = [self.costs[self.cost_index[event]].arcs for event in started]
                new_arcs = np.concatenate(started_arcs)
                changed_arcs.append(new_arcs)
                self._note_peak(new_arcs, now)
                active = np.concatenate([active, started])
                remaining = np.concatenate([remaining, self.duration[started]])
                speed = np.concatenate([speed, np.full(len(started), np.nan)])  # nan: no piece yet
                lengths = np.concatenate([lengths, [len(event_arcs) for event_arcs in started_arcs]])
                arcs = np.concatenate([arcs, new_arcs])
            self._update_overloaded(np.concatenate(changed_arcs))
            previous = speed
            # Without an overloaded arc every event runs at its solo speed.
            speed = self._speeds(arcs, lengths) if self.overloaded.any() else np.ones(len(active))
            changed = previous != speed
            if changed.any():
                self._pieces.append((active[changed], now, speed[changed]))

    def _finish(self, event: int, now: float) -> None:
        self.end[event] = now
        cost = self.costs[self.cost_index[event]]
        self.demand[cost.arcs] -= self.rates[self.cost_index[event]]
        for dependent in self.dependents[event]:
            self.waiting_for[dependent] -= 1
            if not self.waiting_for[dependent]:
                heapq.heappush(self.ready, (max(float(self.requested[dependent]), now), dependent))

    def _start_ready(self, now: float) -> list[int]:
        """Start every event whose time has come; those that take no time end at once."""
        started = []
        while self.ready and self.ready[0][0] <= now:
            _, event = heapq.heappop(self.ready)
            self.start[event] = now
            if self.duration[event] > 0:
                cost = self.cost_index[event]
                self.demand[self.costs[cost].arcs] += self.rates[cost]
                started.append(event)
            else:
                self._finish(event, now)
        return started

    def _note_peak(self, arcs: np.ndarray, now: float) -> None:
        """Demand only rises when events start, so the peak is found on the arcs of those starting."""
        if len(arcs):
            congestion = self.demand[arcs] / self.capacity[arcs]
            best = int(np.argmax(congestion))
            if congestion[best] > self.peak[0]:
                self.peak = (float(congestion[best]), now, int(arcs[best]))

    def _update_overloaded(self, changed: np.ndarray) -> None:
        """Mark the arcs whose demand (which changed) exceeds what they deliver."""
        self.overloaded[changed] = self.demand[changed] > self.deliverable[changed] * _OVERLOADED

    def _speeds(self, arcs: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """1 / the worst demand-over-deliverable ratio (at least 1) over each running event's arcs."""
        slowdown = np.ones(len(lengths))
        loaded = lengths > 0
        if loaded.any():
            ratio = self.demand[arcs] / self.deliverable[arcs]
            starts = (np.cumsum(lengths) - lengths)[loaded]
            slowdown[loaded] = np.maximum(1.0, np.maximum.reduceat(ratio, starts))
        slowdown[slowdown < _OVERLOADED] = 1.0
        return 1.0 / slowdown

    def pieces(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(event, t0, t1, speed) of every constant-speed piece, by event then time."""
        if not self._pieces:
            empty = np.zeros(0)
            return np.zeros(0, dtype=np.intp), empty, empty, empty
        events = np.concatenate([piece[0] for piece in self._pieces])
        t0 = np.concatenate([np.full(len(piece[0]), piece[1]) for piece in self._pieces])
        speed = np.concatenate([piece[2] for piece in self._pieces])
        order = np.lexsort((t0, events))
        events, t0, speed = events[order], t0[order], speed[order]
        t1 = self.end[events].copy()
        same = events[1:] == events[:-1]
        t1[:-1][same] = t0[1:][same]
        return events, t0, t1, speed
