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
  ``utilization``.

Samples for ports that are not an end of a link of the fabric are counted
and listed, not dropped silently. A malformed batch raises
``TelemetryError`` listing its problems (at most 50); nothing of it is kept.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from twin.replay.encoding import Frame
from twin.replay.layout import FabricLayout
from twin.replay.timeline import FrameBuilder
from twin.simcore.errors import TwinCoreError
from twin.simcore.model import FabricSpec

__all__ = [
    "COUNTER_WRAP",
    "DEFAULT_XMIT_WAIT_BYTES",
    "MAX_TELEMETRY_PROBLEMS",
    "TelemetryError",
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


class TelemetryError(TwinCoreError):
    """A batch of telemetry samples does not have the documented shape; ``problems`` says where."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        self.problems = tuple(problems)
        super().__init__(message + "".join(f"\n  - {problem}" for problem in self.problems))


@dataclass(frozen=True)
class _Sample:
    node: str
    port: str
    t: float
    counters: Mapping[str, int]  # of _COUNTERS present
    errors: Mapping[str, int]
    utilization: tuple[float, float] | None  # (tx, rx)
    xmit_wait_bytes: float


def telemetry_frame(
    spec: FabricSpec, samples: Sequence[Mapping[str, Any]], *, previous: Mapping[str, Any] | None
) -> tuple[Frame, dict[str, Any]]:
    """One frame from ``samples`` and the state of the previous call (``None`` at first).

    Returns ``(frame, state)``: the frame (replay shape, ``source``
    ``"telemetry"``, plus ``telemetry``: what was measured, unknown ports,
    counter wraps and resets, error deltas) and the plain-JSON state to pass
    as ``previous`` next time.
    """
    parsed = _parse(samples)
    layout = FabricLayout.of(spec)
    ports = _port_arcs(spec)
    state = _copy_state(previous)
    utilization = np.zeros(layout.arc_count)
    congestion = np.zeros(layout.arc_count)
    measured = np.zeros(layout.arc_count, dtype=bool)
    report = _Report()
    window = [math.inf, -math.inf]
    carried_bytes = 0.0
    for sample in parsed:
        arcs = ports.get((sample.node, sample.port))
        if arcs is None:
            report.unknown.append(f"{sample.node}:{sample.port}")
            continue
        tx_arc, rx_arc = arcs
        capacity = float(layout.arc_capacity[tx_arc])
        before = state["ports"].get(sample.node, {}).get(sample.port)
        if before is not None and sample.t <= before["t"]:
            report.stale += 1
            continue
        state["ports"].setdefault(sample.node, {})[sample.port] = _port_state(sample, before)
        window[1] = max(window[1], sample.t)
        if before is None:
            report.first += 1
            window[0] = min(window[0], sample.t)
            if sample.utilization is not None:
                _measure(utilization, congestion, measured, arcs, sample.utilization, sample.utilization)
            continue
        elapsed = sample.t - before["t"]
        window[0] = min(window[0], before["t"])
        delta = {name: report.delta(name, before.get(name), sample.counters.get(name), capacity * elapsed) for name in _COUNTERS}
        if sample.utilization is not None:
            tx, rx = sample.utilization
        else:
            tx = (delta["tx_bytes"] or 0) / (capacity * elapsed)
            rx = (delta["rx_bytes"] or 0) / (capacity * elapsed)
            carried_bytes += (delta["tx_bytes"] or 0) + (delta["rx_bytes"] or 0)
        lost = (delta["xmit_wait"] or 0) * sample.xmit_wait_bytes / (capacity * elapsed)
        tx_congestion = tx + lost
        if delta["pfc_pauses"]:
            tx_congestion = max(tx_congestion, 1.0)
        _measure(utilization, congestion, measured, arcs, (tx, rx), (tx_congestion, rx))
        report.errors_of(sample, before, layout.arc_link(tx_arc))

    if not math.isfinite(window[0]):
        window = [0.0, 0.0]
    builder = FrameBuilder(layout, 1)
    builder.add(slice(0, 1), utilization[None], congestion[None], np.array([carried_bytes]))
    timeline = builder.timeline(
        source="telemetry",
        t_s=np.array([window[0]]),
        t_end_s=np.array([window[1]]),
        active_offsets=np.zeros(2, dtype=np.int64),
        active_events=np.zeros(0, dtype=np.int64),
        events_done=np.zeros(1, dtype=np.int64),
        events_total=0,
    )
    frame = timeline.frame(0)
    frame["telemetry"] = report.plain(len(parsed), int(np.count_nonzero(layout.link_values(measured))))
    return frame, state


def _measure(
    utilization: np.ndarray, congestion: np.ndarray, measured: np.ndarray,
    arcs: tuple[int, int], arc_utilization: tuple[float, float], arc_congestion: tuple[float, float],
) -> None:  # fmt: skip
    """Both ends of a link measure each direction; keep the higher reading."""
    for arc, value, pressure in zip(arcs, arc_utilization, arc_congestion):
        utilization[arc] = max(utilization[arc], min(1.0, value))
        congestion[arc] = max(congestion[arc], pressure, value)
        measured[arc] = True


def _port_arcs(spec: FabricSpec) -> dict[tuple[str, str], tuple[int, int]]:
    """(node, port) -> (transmit arc, receive arc) in ``FabricLayout`` numbering."""
    count = len(spec.links)
    ports = {}
    for number, link in enumerate(spec.links):
        ports[(link.a, link.a_port)] = (number, count + number)
        ports[(link.b, link.b_port)] = (count + number, number)
    return ports


def _port_state(sample: _Sample, before: Mapping[str, Any] | None) -> dict[str, Any]:
    kept = dict(before or {})
    kept.update({"t": sample.t, **sample.counters})
    kept["errors"] = {**(before or {}).get("errors", {}), **sample.errors}
    return kept


def _copy_state(previous: Mapping[str, Any] | None) -> dict[str, Any]:
    if previous is None:
        return {"version": 1, "ports": {}}
    if not isinstance(previous, Mapping) or not isinstance(previous.get("ports"), Mapping):
        raise TelemetryError("previous telemetry state is not what telemetry_frame returned", ["expected {'version': 1, 'ports': {...}}"])
    return {"version": 1, "ports": {node: {port: dict(entry) for port, entry in ports.items()} for node, ports in previous["ports"].items()}}


class _Report:
    """What a batch measured, and what it could not."""

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.first = self.stale = self.wraps = self.resets = 0
        self.errors: list[dict[str, Any]] = []
        self.error_ports = 0

    def delta(self, name: str, before: int | None, now: int | None, line_bytes: float) -> int | None:
        """Increase of a cumulative counter, telling wraps from resets."""
        if before is None or now is None:
            return None
        if now >= before:
            return now - before
        wrapped = now + COUNTER_WRAP - before
        limit = _PLAUSIBLE_RATE * line_bytes if name in ("tx_bytes", "rx_bytes") else COUNTER_WRAP // 2
        if before < COUNTER_WRAP and 0 <= wrapped <= limit:
            self.wraps += 1
            return wrapped
        self.resets += 1
        return now

    def errors_of(self, sample: _Sample, before: Mapping[str, Any], link: int) -> None:
        counted = {}
        for name, now in sample.errors.items():
            increase = self.delta(name, before.get("errors", {}).get(name), now, 0.0)
            if increase:
                counted[name] = increase
        if counted:
            self.error_ports += 1
            if len(self.errors) < _LISTED:
                self.errors.append({"node": sample.node, "port": sample.port, "link": int(link), "counters": counted})

    def plain(self, samples: int, links_measured: int) -> dict[str, Any]:
        return {
            "samples": samples,
            "links_measured": links_measured,
            "first_samples": self.first,
            "stale_samples": self.stale,
            "unknown_ports": len(self.unknown),
            "unknown": self.unknown[:_LISTED],
            "counter_wraps": self.wraps,
            "counter_resets": self.resets,
            "ports_with_errors": self.error_ports,
            "errors": self.errors,
        }


# -- parsing --------------------------------------------------------------------------------------


def _parse(samples: Sequence[Mapping[str, Any]]) -> list[_Sample]:
    if not isinstance(samples, Sequence) or isinstance(samples, (str, bytes)):
        raise TelemetryError("telemetry samples must be a list", [f"got {type(samples).__name__}; expected a JSON array of sample objects"])
    problems: list[str] = []
    parsed = []
    for position, raw in enumerate(samples):
        where = f"samples[{position}]"
        sample = _parse_one(raw, where, problems)
        if sample is not None:
            parsed.append(sample)
        if len(problems) >= MAX_TELEMETRY_PROBLEMS:
            break
    if problems:
        raise TelemetryError(f"{len(problems)} problem(s) in the telemetry samples", problems[:MAX_TELEMETRY_PROBLEMS])
    return parsed


def _parse_one(raw: Any, where: str, problems: list[str]) -> _Sample | None:
    before = len(problems)
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: {type(raw).__name__}; expected an object")
        return None
    port = raw.get("port")
    if not (isinstance(port, Mapping) and isinstance(port.get("node"), str) and isinstance(port.get("port"), (str, int)) and not isinstance(port.get("port"), bool)):
        problems.append(f'{where}.port: {port!r}; expected {{"node": "<node id>", "port": "<port>"}}')
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
            problems.append(f"{where}.errors: {raw['errors']!r}; expected an object of counter name -> count")
    utilization = _utilization(raw.get("utilization"), f"{where}.utilization", problems)
    if utilization is None and not {"tx_bytes", "rx_bytes"} & raw.keys():
        problems.append(f"{where}: no measurement; expected tx_bytes/rx_bytes counters or utilization")
    wait_bytes = raw.get("xmit_wait_bytes", DEFAULT_XMIT_WAIT_BYTES)
    if not _is_number(wait_bytes) or wait_bytes <= 0:
        problems.append(f"{where}.xmit_wait_bytes: {wait_bytes!r}; expected a positive number of bytes per tick")
    if len(problems) > before:
        return None
    return _Sample(port["node"], str(port["port"]), t, counters, errors, utilization, float(wait_bytes))


def _timestamp(value: Any, where: str, problems: list[str]) -> float:
    if _is_number(value) and math.isfinite(value) and value >= 0:
        return float(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            pass
        else:
            return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
    problems.append(f"{where}: {value!r}; expected an ISO 8601 time or seconds since the epoch")
    return 0.0


def _counter(value: Any, where: str, problems: list[str]) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    problems.append(f"{where}: {value!r}; expected a non-negative integer counter")
    return None


def _utilization(value: Any, where: str, problems: list[str]) -> tuple[float, float] | None:
    if value is None:
        return None
    if _is_number(value) and 0 <= value <= 1:
        return float(value), float(value)
    if isinstance(value, Mapping) and set(value) <= {"tx", "rx"} and value and all(_is_number(v) and 0 <= v <= 1 for v in value.values()):
        return float(value.get("tx", 0.0)), float(value.get("rx", 0.0))
    problems.append(f'{where}: {value!r}; expected a fraction 0..1 or {{"tx": 0..1, "rx": 0..1}}')
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
