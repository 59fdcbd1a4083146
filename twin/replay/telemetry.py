"""Live telemetry: port-counter samples of a running fabric turned into replay-shaped frames.

A batch of samples (shape in docs/replay.md, "Live telemetry") and the state
kept from the previous batch give one frame, the same shape as a replay's,
plus a ``telemetry`` report. Per sample, for the port's link:

- **utilisation** of the port's transmit arc = delta ``tx_bytes`` / (link
  capacity x delta t), of its receive arc = delta ``rx_bytes`` / (...); or the
  sample's ``utilization`` (a number for both directions, or ``{"tx", "rx"}``);
  the two ends of a link both measure each direction: the higher reading wins;
- **congestion** of the transmit arc = (bytes sent + bytes the port could not
  send) / (capacity x delta t), the bytes not sent being delta ``xmit_wait``
  x ``xmit_wait_bytes`` (8 on NVIDIA Quantum switches, whose counter ticks
  every 8 bytes of lost time); a port that received PFC pause frames
  (delta ``pfc_pauses`` > 0) was told to stop, so its transmit arc counts as
  congested (at least 1);
- counters are cumulative: a counter lower than before either wrapped at
  2^32 (when the wrapped delta is plausible: within 1.05 x capacity x delta t
  for bytes, below 2^31 for the others) or was reset (the new value counts
  since the reset); both are counted in the report;
- a port's first sample only sets the state (no delta yet), unless it gives
  ``utilization``;
- newest wins: per port only the latest sample of a batch counts, and only
  when it is newer than the state's; the others are counted as stale.

A batch is a list of sample objects or one object of columns (the shape for
thousands of ports); both become ``PortReadings`` and are computed with numpy
over a ``TelemetryIndex`` built once per fabric. The state is per-port
arrays, as large as the fabric's ports, never as the history of batches.

Samples for ports that are not an end of a link of the fabric are counted
and listed, not dropped silently. A malformed batch raises
``TelemetryError`` listing its problems (at most 50); nothing of it is kept.
"""

from __future__ import annotations

import base64
import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from twin.replay.encoding import Frame
from twin.replay.layout import FabricLayout
from twin.replay.timeline import FrameBuilder
from twin.simcore.errors import ProblemsError, problem_phrase
from twin.simcore.model import FabricSpec
from twin.simcore.translation import LATER, Phrase

__all__ = [
    "COUNTER_WRAP",
    "DEFAULT_XMIT_WAIT_BYTES",
    "MAX_TELEMETRY_PROBLEMS",
    "TelemetryError",
    "PortReadings",
    "TelemetryIndex",
    "check_batch",
    "counters_frame",
    "measured_frame",
    "telemetry_frame",
]

COUNTER_WRAP = 2**32
"""Where 32-bit counters wrap."""
DEFAULT_XMIT_WAIT_BYTES = 8
"""Bytes of lost transmit time per ``xmit_wait`` tick (NVIDIA Quantum switches)."""
MAX_TELEMETRY_PROBLEMS = 50
_LISTED = 20  # unknown ports and error deltas listed in a report
_PLAUSIBLE_RATE = 1.05  # a wrapped byte delta above this share of line rate means a reset
_COUNTERS = ("tx_bytes", "rx_bytes", "xmit_wait", "pfc_pauses")


class TelemetryError(ProblemsError):
    """A batch of telemetry samples does not have the documented shape; ``problems`` says where."""


@dataclass(frozen=True)
class _Sample:
    node: str
    port: str
    t: float
    counters: Mapping[str, int]  # of _COUNTERS present
    errors: Mapping[str, int]
    utilization: tuple[float, float] | None  # (tx, rx)
    xmit_wait_bytes: float


class TelemetryIndex:
    """A fabric's ports numbered for telemetry; built once per snapshot (the web layer keeps it).

    Port ``p`` is the end that transmits on arc ``p`` of ``FabricLayout``
    (``p < L``: the ``a`` end of link ``p``; else the ``b`` end of link
    ``p - L``) and receives on arc ``(p + L) % 2L``, so per-port arrays index
    arcs directly.
    """

    def __init__(self, spec: FabricSpec) -> None:
        self.layout = FabricLayout.of(spec)
        count = len(spec.links)
        self.port_count = 2 * count
        self.number: dict[tuple[str, str], int] = {}
        self.ports_of_node: dict[str, list[int]] = {}
        kinds = {node.id: node.kind for node in spec.nodes}
        # Per port: whether its peer is a switch (a GPU's NVLink port, unlike its PCIe link to a NIC).
        self.toward_switch = np.array([kinds[link.b] == "switch" for link in spec.links] + [kinds[link.a] == "switch" for link in spec.links], dtype=bool)
        # Per link: how many NVLinks it bundles (0: not an NVLink bundle), for per-NVLink readings.
        self.lanes = np.array([int(link.attrs.get("lanes") or 0) for link in spec.links], dtype=np.int64)
        for link_number, link in enumerate(spec.links):
            for port, node, name in ((link_number, link.a, link.a_port), (count + link_number, link.b, link.b_port)):
                self.number[(node, str(name))] = port
                self.ports_of_node.setdefault(node, []).append(port)
        self.port_names = tuple(key for key, _ in sorted(self.number.items(), key=lambda item: item[1]))
        # Names a monitoring system may know a node by (id, name, description), lower case; a name
        # two nodes share names neither.
        names: dict[str, str | None] = {}
        for node in spec.nodes:
            for name in {node.id, node.name, str(node.attrs.get("description") or "")} - {""}:
                key = name.strip().lower()
                names[key] = node.id if names.get(key, node.id) == node.id else None
        self.node_by_name = {name: node for name, node in names.items() if node is not None}
        self._last_columns: tuple[list[str], list[Any], np.ndarray] | None = None
        self.node_by_lid = {int(node.attrs["lid"]): node.id for node in spec.nodes if isinstance(node.attrs.get("lid"), int)}

    def numbers(self, nodes: list[str], names: list[Any]) -> np.ndarray:
        """Port numbers (-1: not at an end of a link) of a column of nodes and ports. A collector
        sends the same ports in the same order every time: the last answer is kept."""
        if self._last_columns is not None and self._last_columns[0] == nodes and self._last_columns[1] == names:
            return self._last_columns[2]
        number = self.number
        ports = np.array([number.get((node, str(name)), -1) for node, name in zip(nodes, names)], dtype=np.int64)
        self._last_columns = (list(nodes), list(names), ports)
        return ports

    def receive_arc(self, ports: np.ndarray) -> np.ndarray:
        return (ports + self.layout.link_count) % max(self.port_count, 1)

    def link(self, port: int) -> int:
        return int(port) % self.layout.link_count


@dataclass
class PortReadings:
    """One batch of cumulative port counters, a column per field (NaN: not given)."""

    samples: int
    ports: np.ndarray  # port numbers of TelemetryIndex, -1 where the port is not at an end of a link
    t: np.ndarray  # seconds since the epoch
    counters: dict[str, np.ndarray]  # _COUNTERS
    utilization: np.ndarray  # (samples, 2): given tx, rx fractions
    xmit_wait_bytes: np.ndarray
    errors: dict[str, np.ndarray]
    unknown: list[str]  # the first unknown node:port, in batch order


def telemetry_frame(
    fabric: FabricSpec | TelemetryIndex, samples: Sequence[Mapping[str, Any]] | Mapping[str, Any], *, previous: Mapping[str, Any] | None
) -> tuple[Frame, dict[str, Any]]:
    """One frame from ``samples`` and the state of the previous call (``None`` at first).

    ``samples`` is a list of sample objects, or one object of columns (the
    same fields, a list each: the fast shape for large batches; see
    docs/replay.md). Returns ``(frame, state)``: the frame (replay shape,
    ``source`` ``"telemetry"``, plus ``telemetry``: what was measured, unknown
    ports, counter wraps and resets, error deltas) and the plain-JSON state to
    pass as ``previous`` next time: per-port arrays, as large as the fabric's
    ports seen, however many batches came before.
    """
    index = fabric if isinstance(fabric, TelemetryIndex) else TelemetryIndex(fabric)
    readings = _columns_readings(index, samples) if isinstance(samples, Mapping) else _samples_readings(index, _parse(samples))
    return counters_frame(index, readings, previous=previous)


def check_batch(samples: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> None:
    """Raise ``TelemetryError`` if ``samples`` is not a batch ``telemetry_frame`` takes (the same
    checks, without the fabric: a batch that passes is refused later for nothing but its ports,
    which are reported, not refused). A web process checks a post with it before handing the
    batch to a worker."""
    if isinstance(samples, Mapping):
        _checked_columns(samples)
    else:
        _parse(samples)


def counters_frame(index: TelemetryIndex, readings: PortReadings, *, previous: Mapping[str, Any] | None) -> tuple[Frame, dict[str, Any]]:
    """The frame of a batch of cumulative counters against the previous state (vectorised)."""
    report = _Report()
    ports, t = readings.ports, readings.t
    report.unknown = readings.unknown
    report.unknown_count = int(np.count_nonzero(ports < 0))
    state = _PortState.load(previous, index.port_count)

    # Newest wins: per port, only the latest sample of the batch counts, and only if it is newer
    # than what the state holds; the others are stale.
    known = np.flatnonzero(ports >= 0)
    order = known[np.lexsort((t[known], ports[known]))]
    latest = order[np.r_[ports[order][1:] != ports[order][:-1], True]] if len(order) else order
    fresh = latest[~(t[latest] <= state.t[ports[latest]])]
    report.stale = len(known) - len(fresh)
    port, now = ports[fresh], t[fresh]
    before_t = state.t[port]
    first = np.isnan(before_t)
    report.first = int(np.count_nonzero(first))

    counters = {name: values[fresh] for name, values in readings.counters.items()}
    given = readings.utilization[fresh]
    capacity = index.layout.arc_capacity[port]
    line_bytes = capacity * np.where(first, np.nan, now - before_t)
    delta = {name: report.increase(name, state.counters[name][port], values, line_bytes) for name, values in counters.items()}
    with np.errstate(invalid="ignore", divide="ignore"):
        tx = np.where(np.isnan(given[:, 0]), delta["tx_bytes"] / line_bytes, given[:, 0])
        rx = np.where(np.isnan(given[:, 1]), delta["rx_bytes"] / line_bytes, given[:, 1])
        lost = np.nan_to_num(np.nan_to_num(delta["xmit_wait"]) * readings.xmit_wait_bytes[fresh] / line_bytes)
    paused = np.nan_to_num(delta["pfc_pauses"]) > 0
    tx_congestion = np.where(paused, np.maximum(np.nan_to_num(tx) + lost, 1.0), tx + lost)
    counted = np.isnan(given[:, 0]) & np.isnan(given[:, 1])
    carried = float(np.sum(np.where(counted, np.nan_to_num(delta["tx_bytes"]) + np.nan_to_num(delta["rx_bytes"]), 0.0)))

    errors = {name: values[fresh] for name, values in readings.errors.items()}
    report.errors_of(index, port, {name: report.increase(name, state.errors.get(name, np.full(index.port_count, np.nan))[port], values, None) for name, values in errors.items()})

    window_start = np.concatenate([before_t[~first], now[first]])
    window = (float(window_start.min()), float(now.max())) if len(now) else (0.0, 0.0)
    state.update(port, now, counters, errors)
    frame = measured_frame(
        index, port, tx, rx, tx_congestion, t_s=window[0], t_end_s=window[1], carried_bytes=carried,
        report=lambda links_measured: report.plain(readings.samples, links_measured),
    )
    return frame, state.plain()


def _samples_readings(index: TelemetryIndex, parsed: list[_Sample]) -> PortReadings:
    ports = np.array([index.number.get((sample.node, sample.port), -1) for sample in parsed], dtype=np.int64)
    names = sorted({name for sample in parsed for name in sample.errors})
    return PortReadings(
        samples=len(parsed),
        ports=ports,
        t=np.array([sample.t for sample in parsed], dtype=float),
        counters={name: np.array([sample.counters.get(name, np.nan) for sample in parsed], dtype=float) for name in _COUNTERS},
        utilization=np.array([sample.utilization or (np.nan, np.nan) for sample in parsed], dtype=float).reshape(-1, 2),
        xmit_wait_bytes=np.array([sample.xmit_wait_bytes for sample in parsed], dtype=float),
        errors={name: np.array([sample.errors.get(name, np.nan) for sample in parsed], dtype=float) for name in names},
        unknown=[f"{parsed[i].node}:{parsed[i].port}" for i in np.flatnonzero(ports < 0)[:_LISTED]],
    )


def _columns_readings(index: TelemetryIndex, columns: Mapping[str, Any]) -> PortReadings:
    """Readings from the column shape, checked a column at a time (no per-sample objects)."""
    nodes, names, t, counters, errors = _checked_columns(columns)
    count = len(nodes)
    ports = index.numbers(nodes, names)
    return PortReadings(
        samples=count, ports=ports, t=t, counters=counters,
        utilization=np.full((count, 2), np.nan), xmit_wait_bytes=np.full(count, float(DEFAULT_XMIT_WAIT_BYTES)),
        errors=errors, unknown=[f"{nodes[i]}:{names[i]}" for i in np.flatnonzero(ports < 0)[:_LISTED]],
    )  # fmt: skip


def _checked_columns(columns: Mapping[str, Any]) -> tuple[list[str], list[Any], np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The columns' nodes, ports, times, counters and error counters, or ``TelemetryError``."""
    problems: list[Phrase] = []
    nodes, names = columns.get("node"), columns.get("port")
    if not (isinstance(nodes, list) and isinstance(names, list) and len(nodes) == len(names) and set(map(type, nodes)) <= {str}):
        raise TelemetryError(
            LATER.gettext("telemetry samples must be a list of samples, or an object of columns"),
            [problem_phrase("columns.node, columns.port", "", LATER.gettext("two lists of the same length, node ids (strings) and their ports"))],
        )
    count = len(nodes)
    t = _number_column(columns.get("timestamp"), "columns.timestamp", count, problems, scalar=True)
    counters = {name: _number_column(columns.get(name), f"columns.{name}", count, problems, counter=True) for name in _COUNTERS}
    raw_errors = columns.get("errors", {})
    errors = {}
    if isinstance(raw_errors, Mapping):
        errors = {str(name): _number_column(values, f"columns.errors.{name}", count, problems, counter=True) for name, values in raw_errors.items()}
    else:
        problems.append(problem_phrase("columns.errors", "", LATER.gettext("an object of counter name -> list of counts")))
    if count and np.isnan(counters["tx_bytes"]).all() and np.isnan(counters["rx_bytes"]).all():
        problems.append(problem_phrase("columns", LATER.gettext("no measurement"), LATER.gettext("tx_bytes/rx_bytes columns")))
    if problems:
        found = LATER.ngettext("%(count)s problem in the telemetry columns", "%(count)s problems in the telemetry columns", len(problems))
        raise TelemetryError(found % {"count": len(problems)}, problems[:MAX_TELEMETRY_PROBLEMS])
    return nodes, names, t, counters, errors


def _number_column(values: Any, where: str, count: int, problems: list[Phrase], *, scalar: bool = False, counter: bool = False) -> np.ndarray:
    """A column of non-negative numbers (counters: integers), NaN for a counter not given."""
    if counter and values is None:
        return np.full(count, np.nan)
    if scalar and _is_number(values) and math.isfinite(values) and values >= 0:
        return np.full(count, float(values))
    column = np.asarray(values) if isinstance(values, list) else np.zeros(0)
    kinds = "iu" if counter else "iuf"
    if column.shape != (count,) or (count and column.dtype.kind not in kinds) or not np.isfinite(column.astype(float)).all() or (column < 0).any():
        if counter:
            expected = LATER.ngettext("a list of %(count)s non-negative integer counter", "a list of %(count)s non-negative integer counters", count)
        elif scalar:
            expected = LATER.ngettext("seconds since the epoch, or a list of %(count)s non-negative number", "seconds since the epoch, or a list of %(count)s non-negative numbers", count)
        else:
            expected = LATER.ngettext("a list of %(count)s non-negative number", "a list of %(count)s non-negative numbers", count)
        problems.append(problem_phrase(where, "", expected % {"count": count}))
        return np.zeros(count)
    return column.astype(float)


def measured_frame(
    index: TelemetryIndex, ports: np.ndarray, tx: np.ndarray, rx: np.ndarray, tx_congestion: np.ndarray, *,
    t_s: float, t_end_s: float, carried_bytes: float, report: Callable[[int], dict[str, Any]],
) -> Frame:  # fmt: skip
    """The frame of per-port readings: utilisation of each port's transmit and receive arcs (NaN:
    not measured), congestion of its transmit arc. Both ends of a link measure each direction;
    the higher reading wins. ``report(links_measured)`` gives the frame's ``telemetry``."""
    layout = index.layout
    arcs = np.concatenate([ports, index.receive_arc(ports)])
    values = np.concatenate([tx, rx])
    pressure = np.concatenate([tx_congestion, rx])
    taken = ~np.isnan(values)
    arcs, values, pressure = arcs[taken], values[taken], pressure[taken]
    utilization = np.zeros(layout.arc_count)
    congestion = np.zeros(layout.arc_count)
    measured = np.zeros(layout.arc_count, dtype=bool)
    np.maximum.at(utilization, arcs, np.minimum(values, 1.0))
    np.maximum.at(congestion, arcs, np.maximum(np.nan_to_num(pressure), values))
    measured[arcs] = True
    builder = FrameBuilder(layout, 1)
    builder.add(slice(0, 1), utilization[None], congestion[None], np.array([carried_bytes]))
    timeline = builder.timeline(
        source="telemetry",
        t_s=np.array([t_s]),
        t_end_s=np.array([t_end_s]),
        active_offsets=np.zeros(2, dtype=np.int64),
        active_events=np.zeros(0, dtype=np.int64),
        events_done=np.zeros(1, dtype=np.int64),
        events_total=0,
    )
    frame = timeline.frame(0)
    frame["telemetry"] = report(int(np.count_nonzero(layout.link_values(measured))))
    return frame


class _PortState:
    """The last sample of every port seen: per-port arrays, stored sparse (the ports seen) as
    base64 blocks, so the state is as large as the fabric, not as the history of batches."""

    VERSION = 2

    def __init__(self, port_count: int) -> None:
        self.port_count = port_count
        self.t = np.full(port_count, np.nan)
        self.counters = {name: np.full(port_count, np.nan) for name in _COUNTERS}
        self.errors: dict[str, np.ndarray] = {}

    @classmethod
    def load(cls, previous: Mapping[str, Any] | None, port_count: int) -> _PortState:
        state = cls(port_count)
        if previous is None:
            return state
        if not isinstance(previous, Mapping):
            expected = f"{{'version': {cls.VERSION}, 'ports': <count>, ...}}"
            raise TelemetryError(LATER.gettext("previous telemetry state is not what telemetry_frame returned"), [problem_phrase("", type(previous).__name__, expected)])
        if previous.get("version") != cls.VERSION or previous.get("ports") != port_count:
            return state  # an older state, or another snapshot's ports: every port's next sample is a first one
        seen = _unpack(previous["seen"], np.int64)
        state.t[seen] = _unpack(previous["t"], float)
        for name in _COUNTERS:
            state.counters[name][seen] = _unpack(previous["counters"][name], float)
        for name, values in previous["errors"].items():
            state.errors[name] = np.full(port_count, np.nan)
            state.errors[name][seen] = _unpack(values, float)
        return state

    def update(self, ports: np.ndarray, t: np.ndarray, counters: Mapping[str, np.ndarray], errors: Mapping[str, np.ndarray]) -> None:
        self.t[ports] = t
        for name, values in counters.items():
            kept = ~np.isnan(values)
            self.counters[name][ports[kept]] = values[kept]
        for name, values in errors.items():
            column = self.errors.setdefault(name, np.full(self.port_count, np.nan))
            kept = ~np.isnan(values)
            column[ports[kept]] = values[kept]

    def plain(self) -> dict[str, Any]:
        seen = np.flatnonzero(~np.isnan(self.t))
        return {
            "version": self.VERSION,
            "ports": self.port_count,
            "seen": _pack(seen.astype(np.int64)),
            "t": _pack(self.t[seen]),
            "counters": {name: _pack(values[seen]) for name, values in self.counters.items()},
            "errors": {name: _pack(values[seen]) for name, values in sorted(self.errors.items())},
        }


def _pack(values: np.ndarray) -> str:
    return base64.b64encode(zlib.compress(np.ascontiguousarray(values).tobytes(), 1)).decode("ascii")


def _unpack(text: str, dtype: Any) -> np.ndarray:
    return np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=dtype)


class _Report:
    """What a batch measured, and what it could not."""

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.unknown_count = 0
        self.first = self.stale = self.wraps = self.resets = 0
        self.errors: list[dict[str, Any]] = []
        self.error_ports = 0

    def increase(self, name: str, before: np.ndarray, now: np.ndarray, line_bytes: np.ndarray | None) -> np.ndarray:
        """Increase of cumulative counters (NaN where either reading is missing), telling wraps
        from resets: a lower reading wrapped at 2^32 if the wrapped increase is plausible
        (bytes: within 1.05 x line rate x elapsed; other counters: below 2^31), else was reset."""
        with np.errstate(invalid="ignore"):
            increase = now - before
            lower = increase < 0
            wrapped = now + COUNTER_WRAP - before
            limit = _PLAUSIBLE_RATE * line_bytes if line_bytes is not None and name in ("tx_bytes", "rx_bytes") else COUNTER_WRAP // 2
            plausible = lower & (before < COUNTER_WRAP) & (wrapped >= 0) & (wrapped <= limit)
        self.wraps += int(np.count_nonzero(plausible))
        self.resets += int(np.count_nonzero(lower & ~plausible))
        return np.where(lower, np.where(plausible, wrapped, now), increase)

    def errors_of(self, index: TelemetryIndex, ports: np.ndarray, increases: Mapping[str, np.ndarray]) -> None:
        if not increases:
            return
        names = sorted(increases)
        table = np.stack([np.nan_to_num(increases[name]) for name in names], axis=1)
        grew = np.flatnonzero((table > 0).any(axis=1))
        self.error_ports += len(grew)
        for row in grew[:_LISTED]:
            node, port = index.port_names[ports[row]]
            counted = {name: int(table[row, column]) for column, name in enumerate(names) if table[row, column] > 0}
            self.errors.append({"node": node, "port": port, "link": index.link(ports[row]), "counters": counted})

    def plain(self, samples: int, links_measured: int) -> dict[str, Any]:
        return {
            "samples": samples,
            "links_measured": links_measured,
            "first_samples": self.first,
            "stale_samples": self.stale,
            "unknown_ports": self.unknown_count,
            "unknown": self.unknown[:_LISTED],
            "counter_wraps": self.wraps,
            "counter_resets": self.resets,
            "ports_with_errors": self.error_ports,
            "errors": self.errors,
        }


# -- parsing --------------------------------------------------------------------------------------


def _parse(samples: Sequence[Mapping[str, Any]]) -> list[_Sample]:
    if not isinstance(samples, Sequence) or isinstance(samples, (str, bytes)):
        raise TelemetryError(LATER.gettext("telemetry samples must be a list"), [problem_phrase("", type(samples).__name__, LATER.gettext("a JSON array of sample objects"))])
    problems: list[Phrase] = []
    parsed = []
    for position, raw in enumerate(samples):
        where = f"samples[{position}]"
        sample = _parse_one(raw, where, problems)
        if sample is not None:
            parsed.append(sample)
        if len(problems) >= MAX_TELEMETRY_PROBLEMS:
            break
    if problems:
        found = LATER.ngettext("%(count)s problem in the telemetry samples", "%(count)s problems in the telemetry samples", len(problems))
        raise TelemetryError(found % {"count": len(problems)}, problems[:MAX_TELEMETRY_PROBLEMS])
    return parsed


def _parse_one(raw: Any, where: str, problems: list[Phrase]) -> _Sample | None:
    before = len(problems)
    if not isinstance(raw, Mapping):
        problems.append(problem_phrase(where, type(raw).__name__, LATER.gettext("an object")))
        return None
    port = raw.get("port")
    if not (isinstance(port, Mapping) and isinstance(port.get("node"), str) and isinstance(port.get("port"), (str, int)) and not isinstance(port.get("port"), bool)):
        problems.append(problem_phrase(f"{where}.port", repr(port), '{"node": "<node id>", "port": "<port>"}'))
    t = _timestamp(raw.get("timestamp"), f"{where}.timestamp", problems)
    counters = {}
    for name in _COUNTERS:
        if name in raw:
            value = _counter(raw[name], f"{where}.{name}", problems)
            if value is not None:
                counters[name] = value
    errors = {}
    if "errors" in raw:
        if isinstance(raw["errors"], Mapping):
            for name, value in raw["errors"].items():
                counted = _counter(value, f"{where}.errors.{name}", problems)
                if counted is not None:
                    errors[str(name)] = counted
        else:
            problems.append(problem_phrase(f"{where}.errors", repr(raw["errors"]), LATER.gettext("an object of counter name -> count")))
    utilization = _utilization(raw.get("utilization"), f"{where}.utilization", problems)
    if utilization is None and not {"tx_bytes", "rx_bytes", "errors"} & raw.keys():
        problems.append(problem_phrase(where, LATER.gettext("no measurement"), LATER.gettext("tx_bytes/rx_bytes counters, utilization or error counters")))
    wait_bytes = raw.get("xmit_wait_bytes", DEFAULT_XMIT_WAIT_BYTES)
    if not _is_number(wait_bytes) or wait_bytes <= 0:
        problems.append(problem_phrase(f"{where}.xmit_wait_bytes", repr(wait_bytes), LATER.gettext("a positive number of bytes per tick")))
    if len(problems) > before:
        return None
    return _Sample(port["node"], str(port["port"]), t, counters, errors, utilization, float(wait_bytes))


def _timestamp(value: Any, where: str, problems: list[Phrase]) -> float:
    if _is_number(value) and math.isfinite(value) and value >= 0:
        return float(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            pass
        else:
            return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
    problems.append(problem_phrase(where, repr(value), LATER.gettext("an ISO 8601 time or seconds since the epoch")))
    return 0.0


def _counter(value: Any, where: str, problems: list[Phrase]) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    problems.append(problem_phrase(where, repr(value), LATER.gettext("a non-negative integer counter")))
    return None


def _utilization(value: Any, where: str, problems: list[Phrase]) -> tuple[float, float] | None:
    if value is None:
        return None
    if _is_number(value) and 0 <= value <= 1:
        return float(value), float(value)
    if isinstance(value, Mapping) and set(value) <= {"tx", "rx"} and value and all(_is_number(v) and 0 <= v <= 1 for v in value.values()):
        return float(value.get("tx", 0.0)), float(value.get("rx", 0.0))
    problems.append(problem_phrase(where, repr(value), LATER.gettext('a fraction 0..1 or {"tx": 0..1, "rx": 0..1}')))
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
