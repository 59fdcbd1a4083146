"""Plain-data model of a traffic trace and of an nccl-tests measurement.

A ``Trace`` is what a replay plays: ranks bound to cards of a fabric, and a
time-ordered list of events, each a point-to-point ``FlowEvent`` or a
``CollectiveEvent`` over a group of ranks. Everything is a frozen dataclass;
free-form attributes are ``twin.simcore.model.Attrs`` (immutable, JSON-ready),
so ``trace_from_dict(trace_to_dict(t)) == t``.

Bytes of a collective follow nccl-tests and ``twin.simcore`` (``size``
column, ``Simulator.run(size_bytes=...)``): the per-rank buffer for
allreduce, broadcast, reduce, alltoall and sendrecv; the whole gathered
(allgather) or scattered (reducescatter) buffer, i.e. the per-rank count
times the number of ranks. A replay can pass ``bytes`` to the simulator
unchanged.

A ``Measurement`` is one nccl-tests report: the devices it ran on and its
rows of measured time and bandwidth, kept with the fabric to compare with the
twin's prediction.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from twin.simcore.errors import problem_phrase
from twin.simcore.model import Attrs
from twin.simcore.translation import LATER, Joined, Phrase
from twin.traces.errors import TraceError

__all__ = [
    "DTYPE_SIZES",
    "OPERATIONS",
    "CollectiveEvent",
    "Event",
    "FlowEvent",
    "Measurement",
    "MeasurementRow",
    "MeasuredTiming",
    "RankBinding",
    "Trace",
    "gpu_card_id",
    "measurement_from_dict",
    "measurement_to_dict",
    "trace_from_dict",
    "trace_to_dict",
]

OPERATIONS = ("allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall", "sendrecv")
"""Collective operations a trace may hold (those ``twin.simcore`` can run)."""

DTYPE_SIZES: Mapping[str, int] = {
    "int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
    "half": 2, "float": 4, "double": 8, "bfloat16": 2, "f8e4m3": 1, "f8e5m2": 1,
}  # fmt: skip
"""Bytes per element of each data type, under the names nccl-tests prints."""


def gpu_card_id(host: str, bus_id: str) -> str:
    """Fabric node id of a GPU known by host and PCI bus id (the identity convention).

    >>> gpu_card_id("node01", "0000:18:00.0")
    'node01/gpu:0000:18:00.0'
    """
    return f"{host}/gpu:{bus_id}"


def _set(instance: object, name: str, value: Any) -> None:
    # Normalising fields of a frozen dataclass in __post_init__.
    object.__setattr__(instance, name, value)


@dataclass(frozen=True)
class RankBinding:
    """Where rank ``rank`` ran: the fabric card id when known, and what identifies it.

    ``host`` is the short lower-case host name, ``bus_id`` the PCI bus id as
    ``dddd:bb:dd.f``, ``device`` the CUDA device index on the host.
    """

    rank: int
    card: str | None = None
    host: str | None = None
    bus_id: str | None = None
    device: int | None = None


@dataclass(frozen=True)
class FlowEvent:
    """At ``t_s`` seconds, rank ``src_rank`` starts sending ``bytes`` bytes to ``dst_rank``."""

    t_s: float
    src_rank: int
    dst_rank: int
    bytes: int

    def __post_init__(self) -> None:
        _set(self, "t_s", float(self.t_s))


@dataclass(frozen=True)
class CollectiveEvent:
    """At ``t_s`` seconds, ``ranks`` start collective ``op`` (one of ``OPERATIONS``).

    ``bytes`` follows nccl-tests (see the module docstring). ``algorithm``
    names a ``twin.simcore`` algorithm when the source fixes one (else the
    replay chooses); ``comm`` identifies the communicator, ``count`` and
    ``dtype`` are the element count and type name when the source gives them.
    """

    t_s: float
    op: str
    ranks: tuple[int, ...]
    bytes: int
    algorithm: str | None = None
    comm: str | None = None
    count: int | None = None
    dtype: str | None = None

    def __post_init__(self) -> None:
        _set(self, "t_s", float(self.t_s))
        _set(self, "ranks", tuple(self.ranks))


Event = FlowEvent | CollectiveEvent


@dataclass(frozen=True)
class Trace:
    """A replayable trace: rank bindings, time-ordered events and free-form attributes.

    Construction only normalises representation; ``validate`` checks
    consistency and every parser returns a validated trace.
    """

    name: str
    ranks: tuple[RankBinding, ...]
    events: tuple[Event, ...]
    attrs: Mapping[str, Any] = Attrs()

    def __post_init__(self) -> None:
        _set(self, "ranks", tuple(self.ranks))
        _set(self, "events", tuple(self.events))
        _set(self, "attrs", self.attrs if isinstance(self.attrs, Attrs) else Attrs(self.attrs))

    def cards(self) -> tuple[str | None, ...]:
        """Card id of each rank, in binding order (``None`` where unknown)."""
        return tuple(binding.card for binding in self.ranks)

    def unknown_cards(self, known: Collection[str]) -> tuple[str, ...]:
        """Card ids the trace names that are not in ``known`` (e.g. a fabric's card ids), sorted.

        A replay rejects a trace with any, listing them.
        """
        return tuple(sorted({card for card in self.cards() if card is not None and card not in known}))

    def validate(self, *, max_problems: int = 50) -> None:
        """Raise ``TraceError`` listing up to ``max_problems`` inconsistencies.

        Checks: rank numbers non-negative and unique; every event names bound
        ranks; times finite, non-negative and non-decreasing; bytes
        non-negative integers; known operations; a flow joins two different
        ranks; a collective's ranks are distinct and at least one.
        """
        problems: list[Phrase] = []
        for problem in self._problems():
            problems.append(problem)
            if len(problems) >= max_problems:
                break
        if problems:
            raise TraceError(LATER.gettext("trace %(trace)s is inconsistent") % {"trace": repr(self.name)}, problems)

    def _problems(self) -> Iterator[Phrase]:
        bound: set[int] = set()
        for position, binding in enumerate(self.ranks):
            if not isinstance(binding.rank, int) or binding.rank < 0:
                yield problem_phrase(f"ranks[{position}]", LATER.gettext("rank %(rank)s") % {"rank": repr(binding.rank)}, LATER.gettext("a non-negative integer"))
            elif binding.rank in bound:
                twice = LATER.gettext("rank %(rank)s is bound twice") % {"rank": str(binding.rank)}
                yield problem_phrase(f"ranks[{position}]", twice, LATER.gettext("one binding per rank"))
            bound.add(binding.rank)
        previous_t = 0.0
        for position, event in enumerate(self.events):
            where = f"events[{position}]"
            if not (math.isfinite(event.t_s) and event.t_s >= 0):
                time = LATER.gettext("time %(t)s s") % {"t": str(event.t_s)}
                yield problem_phrase(where, time, LATER.gettext("a finite, non-negative number of seconds"))
            elif event.t_s < previous_t:
                early = LATER.gettext("time %(t)s s is before the previous event's %(previous)s s") % {"t": str(event.t_s), "previous": str(previous_t)}
                yield problem_phrase(where, early, LATER.gettext("events in time order"))
            else:
                previous_t = event.t_s
            if not isinstance(event.bytes, int) or isinstance(event.bytes, bool) or event.bytes < 0:
                yield problem_phrase(where, LATER.gettext("bytes %(bytes)s") % {"bytes": repr(event.bytes)}, LATER.gettext("a non-negative integer"))
            if isinstance(event, FlowEvent):
                named = (event.src_rank, event.dst_rank)
                if event.src_rank == event.dst_rank:
                    itself = LATER.gettext("flow from rank %(rank)s to itself") % {"rank": str(event.src_rank)}
                    yield problem_phrase(where, itself, LATER.gettext("two different ranks"))
            else:
                named = event.ranks
                if event.op not in OPERATIONS:
                    unknown = LATER.gettext("unknown operation %(op)s") % {"op": repr(event.op)}
                    yield problem_phrase(where, unknown, LATER.gettext("one of %(names)s") % {"names": Joined(list(OPERATIONS))})
                if not event.ranks:
                    yield problem_phrase(where, LATER.gettext("collective without ranks"), LATER.gettext("at least one rank"))
                elif len(set(event.ranks)) != len(event.ranks):
                    yield problem_phrase(where, LATER.gettext("a rank appears twice in the collective"), LATER.gettext("distinct ranks"))
            unbound = sorted({rank for rank in named if rank not in bound}, key=str)
            if unbound:
                unbound_ranks = LATER.ngettext("rank %(ranks)s has no binding", "ranks %(ranks)s have no binding", len(unbound)) % {"ranks": Joined([str(rank) for rank in unbound[:10]])}
                yield problem_phrase(where, unbound_ranks, LATER.gettext("ranks listed in the trace's ranks"))


@dataclass(frozen=True)
class MeasuredTiming:
    """One half of an nccl-tests row (out-of-place or in-place).

    Bandwidths are in GB/s of 1e9 bytes, as nccl-tests prints them; ``wrong``
    is the ``#wrong`` column (``None`` for ``N/A``, i.e. validation off).
    """

    time_us: float
    algbw_gbytes_per_s: float
    busbw_gbytes_per_s: float
    wrong: float | None = None


@dataclass(frozen=True)
class MeasurementRow:
    """One message size of an nccl-tests sweep; ``root`` is -1 for unrooted collectives."""

    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int
    out_of_place: MeasuredTiming | None
    in_place: MeasuredTiming | None


@dataclass(frozen=True)
class Measurement:
    """One nccl-tests report: what ran, on which devices, and the measured rows.

    ``collective`` is the nccl-tests collective in our naming (one of
    ``OPERATIONS``, or ``gather``/``scatter``/``hypercube``, which the twin
    does not replay); ``program`` the binary when the report names it.
    ``avg_busbw_gbytes_per_s`` and ``out_of_bounds`` are the footer's figures.
    """

    collective: str
    program: str | None
    ranks: tuple[RankBinding, ...]
    rows: tuple[MeasurementRow, ...]
    avg_busbw_gbytes_per_s: float | None = None
    out_of_bounds: int | None = None
    attrs: Mapping[str, Any] = Attrs()

    def __post_init__(self) -> None:
        _set(self, "ranks", tuple(self.ranks))
        _set(self, "rows", tuple(self.rows))
        _set(self, "attrs", self.attrs if isinstance(self.attrs, Attrs) else Attrs(self.attrs))

    def peak_busbw_gbytes_per_s(self) -> float | None:
        """Highest bus bandwidth of any row and half, or ``None`` without rows."""
        values = [
            timing.busbw_gbytes_per_s
            for row in self.rows
            for timing in (row.out_of_place, row.in_place)
            if timing is not None and math.isfinite(timing.busbw_gbytes_per_s)
        ]
        return max(values, default=None)


# -- plain dicts ----------------------------------------------------------------------------------


def _binding_to_dict(binding: RankBinding) -> dict[str, Any]:
    plain: dict[str, Any] = {"rank": binding.rank}
    for name in ("card", "host", "bus_id", "device"):
        if getattr(binding, name) is not None:
            plain[name] = getattr(binding, name)
    return plain


def _event_to_dict(event: Event) -> dict[str, Any]:
    if isinstance(event, FlowEvent):
        return {"type": "flow", "t_s": event.t_s, "src_rank": event.src_rank, "dst_rank": event.dst_rank, "bytes": event.bytes}
    plain: dict[str, Any] = {"type": "collective", "t_s": event.t_s, "op": event.op, "ranks": list(event.ranks), "bytes": event.bytes}
    for name in ("algorithm", "comm", "count", "dtype"):
        if getattr(event, name) is not None:
            plain[name] = getattr(event, name)
    return plain


def _event_from_dict(plain: Mapping[str, Any]) -> Event:
    fields = {key: value for key, value in plain.items() if key != "type" and value is not None}
    return FlowEvent(**fields) if plain["type"] == "flow" else CollectiveEvent(**fields)


def trace_to_dict(trace: Trace) -> dict[str, Any]:
    """JSON-ready dict of a trace: ``name``, ``attrs`` (if any), ``ranks``, ``events``.

    Each event carries ``type`` (``"flow"`` or ``"collective"``); fields that
    are ``None`` are left out.
    """
    plain: dict[str, Any] = {"name": trace.name}
    if trace.attrs:
        plain["attrs"] = trace.attrs.to_plain()
    plain["ranks"] = [_binding_to_dict(binding) for binding in trace.ranks]
    plain["events"] = [_event_to_dict(event) for event in trace.events]
    return plain


def trace_from_dict(plain: Mapping[str, Any]) -> Trace:
    """Inverse of ``trace_to_dict``; the result is not validated."""
    return Trace(
        name=plain["name"],
        attrs=plain.get("attrs") or {},
        ranks=tuple(RankBinding(**binding) for binding in plain["ranks"]),
        events=tuple(_event_from_dict(event) for event in plain["events"]),
    )


def _timing_to_dict(timing: MeasuredTiming | None) -> dict[str, Any] | None:
    if timing is None:
        return None
    return {
        "time_us": timing.time_us,
        "algbw_gbytes_per_s": timing.algbw_gbytes_per_s,
        "busbw_gbytes_per_s": timing.busbw_gbytes_per_s,
        "wrong": timing.wrong,
    }


def measurement_to_dict(measurement: Measurement) -> dict[str, Any]:
    """JSON-ready dict of a measurement, to store with a fabric.

    Non-finite bandwidths (nccl-tests prints ``nan`` for failed rows) are kept
    as Python floats; serialise with ``allow_nan`` or replace them first.
    """
    return {
        "collective": measurement.collective,
        "program": measurement.program,
        "ranks": [_binding_to_dict(binding) for binding in measurement.ranks],
        "rows": [
            {
                "size_bytes": row.size_bytes,
                "count": row.count,
                "dtype": row.dtype,
                "redop": row.redop,
                "root": row.root,
                "out_of_place": _timing_to_dict(row.out_of_place),
                "in_place": _timing_to_dict(row.in_place),
            }
            for row in measurement.rows
        ],
        "avg_busbw_gbytes_per_s": measurement.avg_busbw_gbytes_per_s,
        "out_of_bounds": measurement.out_of_bounds,
        "attrs": measurement.attrs.to_plain(),
    }


def measurement_from_dict(plain: Mapping[str, Any]) -> Measurement:
    """Inverse of ``measurement_to_dict``."""

    def timing(value: Mapping[str, Any] | None) -> MeasuredTiming | None:
        return None if value is None else MeasuredTiming(**value)

    return Measurement(
        collective=plain["collective"],
        program=plain.get("program"),
        ranks=tuple(RankBinding(**binding) for binding in plain["ranks"]),
        rows=tuple(
            MeasurementRow(**{**row, "out_of_place": timing(row["out_of_place"]), "in_place": timing(row["in_place"])})
            for row in plain["rows"]
        ),
        avg_busbw_gbytes_per_s=plain.get("avg_busbw_gbytes_per_s"),
        out_of_bounds=plain.get("out_of_bounds"),
        attrs=plain.get("attrs") or {},
    )
