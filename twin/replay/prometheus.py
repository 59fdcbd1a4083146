"""Live telemetry from Prometheus: which series to ask for, and their answers turned into frames.

Ops already scrape their fabrics: node_exporter's infiniband collector (one
series per HCA port, labels ``device`` and ``port``, plus the ``instance``
Prometheus adds) and NVIDIA's DCGM exporter (one series per GPU, labels
``Hostname`` and ``gpu``). A ``PrometheusMapping`` says which metric gives
each reading and how a series' labels name a port of the fabric:

- counters (bytes, ``xmit_wait`` ticks, errors) are asked for as
  ``rate(metric{selector}[window])``, gauges that already are rates (DCGM's
  NVLink bytes per second) as ``metric{selector}``;
- ``node`` and ``port`` are templates over the series' labels
  (``"{host}/{device}"``; ``host`` is added: ``instance`` without its
  ``:port`` and domain), looked up among the fabric's node ids, names and
  descriptions (case-insensitive) after the ``nodes`` table; an empty port
  names the node's only link to a switch (a GPU's NVLink, not its PCIe links).

A poll is one query per reading (``queries``: ``rate()`` of tx, rx, xmit_wait)
and one for all the error counters that are not zero (``errors_query``).
``error_counters`` reads the latter: each counter's value and its growth
since the previous poll. ``rates_frame`` turns the answers
(Prometheus ``vector`` results) and the counters that grew into the same frame
as the POST endpoint's; ``error_totals`` turns the counters' values into the
cumulative per-link readings the POST endpoint keeps for the diagnosis rules.
It is plain Python and numpy: the web layer does the HTTP.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from twin.replay.encoding import Frame
from twin.replay.telemetry import DEFAULT_XMIT_WAIT_BYTES, TelemetryError, TelemetryIndex, measured_frame

__all__ = ["PRESETS", "ErrorCounter", "MetricSpec", "PrometheusMapping", "error_counters", "error_totals", "prometheus_mapping", "rates_frame"]

_LISTED = 20
_READINGS = ("tx_bytes", "rx_bytes", "xmit_wait")

PRESETS: dict[str, dict[str, Any]] = {
    # node_exporter's infiniband collector (metric names as node_exporter 1.5 exports them).
    "node_exporter_infiniband": {
        "tx_bytes": "node_infiniband_port_data_transmitted_bytes_total",
        "rx_bytes": "node_infiniband_port_data_received_bytes_total",
        "xmit_wait": "node_infiniband_port_transmit_wait_total",
        "errors": {
            "symbol_errors": "node_infiniband_symbol_error_total",
            "link_downed": "node_infiniband_link_downed_total",
            "link_error_recovery": "node_infiniband_link_error_recovery_total",
            "port_rcv_errors": "node_infiniband_port_errors_received_total",
            "port_xmit_discards": "node_infiniband_port_discards_transmitted_total",
        },
        "node": "{host}/{device}",
        "port": "{port}",
    },
    # NVIDIA's dcgm-exporter: NVLink bytes per second per GPU (gauges), NVLink error counters.
    "dcgm_nvlink": {
        "tx_bytes": {"metric": "DCGM_FI_PROF_NVLINK_TX_BYTES", "type": "gauge"},
        "rx_bytes": {"metric": "DCGM_FI_PROF_NVLINK_RX_BYTES", "type": "gauge"},
        "errors": {
            "nvlink_crc_flit_errors": "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
            "nvlink_replay_errors": "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
            "nvlink_recovery_errors": "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
        },
        "node": "{Hostname}/gpu{gpu}",
        "port": "",
    },
}
_KEYS = {*_READINGS, "errors", "node", "port", "nodes", "selector", "xmit_wait_bytes"}
_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_MATCHER = r'\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(?:=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*"\s*'
_SELECTOR = re.compile(rf"^(?:{_MATCHER}(?:,{_MATCHER})*,?)?$")


@dataclass(frozen=True)
class MetricSpec:
    metric: str
    type: str = "counter"  # "counter": asked for as rate(); "gauge": already a rate


@dataclass(frozen=True)
class PrometheusMapping:
    """Checked configuration: what to ask Prometheus, and how its labels name ports."""

    readings: dict[str, MetricSpec]  # of _READINGS present
    errors: dict[str, MetricSpec]
    node: str
    port: str
    nodes: dict[str, str] = field(default_factory=dict)  # rendered node -> fabric node id
    selector: str = ""
    xmit_wait_bytes: float = DEFAULT_XMIT_WAIT_BYTES

    def queries(self, window_s: int) -> dict[str, str]:
        """PromQL per reading (``tx_bytes``, ...; an error counter given as a gauge, already a
        rate: ``errors.<name>``). The error counters come in one query, ``errors_query``."""
        specs = {**self.readings, **{f"errors.{name}": spec for name, spec in self.errors.items() if spec.type == "gauge"}}
        selector = f"{{{self.selector}}}" if self.selector else ""
        return {
            key: f"rate({spec.metric}{selector}[{window_s}s])" if spec.type == "counter" else f"{spec.metric}{selector}"
            for key, spec in specs.items()
        }

    def errors_query(self) -> str | None:
        """One PromQL query for every error counter that is not zero,
        ``{__name__=~"a|b",selector} > 0``: each series keeps its metric name (``rate()`` would
        drop it, and the counters of one port would then clash), and a healthy fabric's zeros
        stay in Prometheus. ``error_counters`` reads the answer."""
        metrics = sorted({spec.metric for spec in self.errors.values() if spec.type == "counter"})
        if not metrics:
            return None
        matchers = [f'__name__=~"{"|".join(metrics)}"', *([self.selector.rstrip(",")] if self.selector else [])]
        return f"{{{','.join(matchers)}}} > 0"


def prometheus_mapping(plain: Any, *, preset: str | None = None) -> PrometheusMapping:
    """The mapping of ``plain`` (JSON), over the preset's fields; ``TelemetryError`` lists what is
    wrong with it (unknown keys, metric names, templates, selector)."""
    problems: list[str] = []
    if preset is not None and preset not in PRESETS:
        problems.append(f"preset {preset!r}: expected one of {', '.join(PRESETS)}")
    if plain is None:
        plain = {}
    if not isinstance(plain, Mapping):
        raise TelemetryError("the label mapping must be a JSON object", [f"got {type(plain).__name__}; expected an object such as {{\"node\": \"{{host}}/{{device}}\"}}"])
    merged = {**PRESETS.get(preset or "", {}), **plain}
    for key in sorted(set(merged) - _KEYS):
        problems.append(f"{key}: unknown key; expected one of {', '.join(sorted(_KEYS))}")
    readings = {name: spec for name in _READINGS if merged.get(name) is not None and (spec := _metric(merged[name], name, problems))}
    if not {"tx_bytes", "rx_bytes"} & readings.keys():
        problems.append("tx_bytes/rx_bytes: neither is given; expected the metric of at least one byte counter")
    errors = {}
    raw_errors = merged.get("errors") or {}
    if isinstance(raw_errors, Mapping):
        errors = {str(name): spec for name, value in raw_errors.items() if (spec := _metric(value, f"errors.{name}", problems))}
    else:
        problems.append("errors: expected an object of counter name -> metric")
    node = _template(merged.get("node"), "node", problems, required=True)
    port = _template(merged.get("port", ""), "port", problems, required=False)
    nodes = merged.get("nodes") or {}
    if not (isinstance(nodes, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in nodes.items())):
        problems.append("nodes: expected an object of rendered node name -> node id of the fabric")
        nodes = {}
    selector = merged.get("selector") or ""
    if not (isinstance(selector, str) and _SELECTOR.match(selector)):
        problems.append(f'selector: {selector!r}; expected label matchers such as job="infiniband", cluster=~"a|b"')
        selector = ""
    wait_bytes = merged.get("xmit_wait_bytes", DEFAULT_XMIT_WAIT_BYTES)
    if not (isinstance(wait_bytes, (int, float)) and not isinstance(wait_bytes, bool) and wait_bytes > 0):
        problems.append(f"xmit_wait_bytes: {wait_bytes!r}; expected a positive number of bytes per tick")
        wait_bytes = DEFAULT_XMIT_WAIT_BYTES
    if problems:
        raise TelemetryError(f"{len(problems)} problem(s) in the label mapping", problems)
    return PrometheusMapping(readings, errors, node, port, dict(nodes), selector.strip(), float(wait_bytes))


def _metric(given: Any, where: str, problems: list[str]) -> MetricSpec | None:
    value = {"metric": given} if isinstance(given, str) else given
    if not isinstance(value, Mapping) or not isinstance(value.get("metric"), str) or not _METRIC_NAME.match(value["metric"]):
        problems.append(f'{where}: {given!r}; expected a metric name, or {{"metric": "<name>", "type": "counter" | "gauge"}}')
        return None
    kind = value.get("type", "counter")
    if kind not in ("counter", "gauge"):
        problems.append(f'{where}.type: {kind!r}; expected "counter" (asked for as rate()) or "gauge" (already per second)')
        return None
    return MetricSpec(value["metric"], kind)


def _template(value: Any, where: str, problems: list[str], *, required: bool) -> str:
    if not isinstance(value, str) or (required and not value.strip()):
        problems.append(f"{where}: {value!r}; expected a template over the series' labels, such as \"{{host}}/{{device}}\"")
        return ""
    try:
        parts = list(string.Formatter().parse(value))
    except ValueError as error:
        problems.append(f"{where}: {value!r}: {error}; expected labels in braces, such as {{device}}")
        return ""
    for _, name, spec, conversion in parts:
        if name is not None and (not name.isidentifier() or spec or conversion):
            problems.append(f"{where}: {value!r}; expected label names in braces, such as {{device}}")
    return value


# -- answers into frames --------------------------------------------------------------------------


def rates_frame(
    index: TelemetryIndex, mapping: PrometheusMapping, answers: Mapping[str, Any], *, window_s: int,
    ports_of: dict[tuple, int | str] | None = None, error_counters: Sequence[ErrorCounter] = (),
) -> Frame:  # fmt: skip
    """One frame from Prometheus' answers (``{"tx_bytes": <data of /api/v1/query>, ...}``, the
    keys of ``mapping.queries``) and the ``error_counters`` of the answer to ``errors_query``
    (those that grew since the previous poll are listed).

    ``ports_of`` caches which port each label set names (or why none): pass the same dict
    for every poll of one snapshot and the labels are resolved once. A series that names no
    port of the fabric is counted and listed, not dropped silently.
    """
    ports_of = {} if ports_of is None else ports_of
    values: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    unknown: dict[tuple, str] = {}
    t_end = -math.inf
    series = 0
    for key in mapping.queries(window_s):
        labels, t, readings = _vector(answers.get(key), key)
        series += len(labels)
        ports = [ports_of.get(label_set) for label_set in labels]
        for position in [i for i, port in enumerate(ports) if port is None]:
            ports[position] = ports_of[labels[position]] = _resolve(index, mapping, dict(labels[position]))
        named = np.array([isinstance(port, int) for port in ports], dtype=bool)
        for position in np.flatnonzero(~named):
            unknown.setdefault(labels[position], ports[position])
        keep = named & np.isfinite(readings) & (readings >= 0)
        values[key] = (np.array([port for port, kept in zip(ports, keep) if kept], dtype=np.int64), readings[keep])
        if keep.any():
            t_end = max(t_end, float(t[keep].max()))

    measured = np.unique(np.concatenate([ports for ports, _ in values.values()] or [np.zeros(0, dtype=np.int64)]))
    capacity = index.layout.arc_capacity[measured]

    def per_port(key: str) -> np.ndarray:
        column = np.full(len(measured), np.nan)
        if key in values:
            ports, readings = values[key]
            column[np.searchsorted(measured, ports)] = readings
        return column

    tx, rx = per_port("tx_bytes") / capacity, per_port("rx_bytes") / capacity
    lost = np.nan_to_num(per_port("xmit_wait")) * mapping.xmit_wait_bytes / capacity
    tx_congestion = tx + lost
    carried = float(np.nansum(per_port("tx_bytes")) + np.nansum(per_port("rx_bytes"))) * window_s
    errors, error_ports = _errors(index, mapping, values, window_s, error_counters)
    t_start, t_end = (t_end - window_s, t_end) if math.isfinite(t_end) else (0.0, 0.0)
    report = {
        "source": "prometheus",
        "samples": series,
        "first_samples": 0,
        "stale_samples": 0,
        "unknown_ports": len(unknown),
        "unknown": [f"{reason}" for reason in list(unknown.values())[:_LISTED]],
        "counter_wraps": 0,
        "counter_resets": 0,
        "ports_with_errors": error_ports,
        "errors": errors,
    }
    return measured_frame(
        index, measured, tx, rx, tx_congestion, t_s=t_start, t_end_s=t_end, carried_bytes=carried,
        report=lambda links_measured: {**report, "links_measured": links_measured},
    )  # fmt: skip


def _errors(
    index: TelemetryIndex, mapping: PrometheusMapping, values: Mapping[str, tuple[np.ndarray, np.ndarray]], window_s: int, counters: Sequence[ErrorCounter]
) -> tuple[list[dict[str, Any]], int]:
    """Error counters that grew, per port: counters by their growth since the previous poll,
    gauges (already rates) by rate x window."""
    grown: dict[int, dict[str, int]] = {}
    for counter in counters:
        if counter.growth > 0:
            grown.setdefault(counter.port, {})[counter.name] = max(1, round(counter.growth))
    for name, spec in mapping.errors.items():
        if spec.type != "gauge":
            continue
        ports, rates = values.get(f"errors.{name}", (np.zeros(0, dtype=np.int64), np.zeros(0)))
        for port, rate in zip(ports[rates > 0].tolist(), rates[rates > 0].tolist()):
            grown.setdefault(port, {})[name] = max(1, round(rate * window_s))
    listed = []
    for port in sorted(grown)[:_LISTED]:
        node, name = index.port_names[port]
        listed.append({"node": node, "port": name, "link": index.link(port), "counters": grown[port]})
    return listed, len(grown)


@dataclass(frozen=True)
class ErrorCounter:
    """One error counter of one port, from the answer to ``errors_query``."""

    name: str  # the mapping's name of the counter (symbol_errors)
    port: int
    t: float
    value: float  # the count so far
    growth: float  # since the previous poll (0 at the first); a lower count is a reset, counted from zero


def error_counters(
    index: TelemetryIndex, mapping: PrometheusMapping, data: Any, *, previous: dict[tuple[int, str], float], ports_of: dict[tuple, int | str] | None = None
) -> list[ErrorCounter]:
    """The error counters of the answer to ``errors_query`` (an instant vector: ``data`` of
    /api/v1/query) on the ports their series name, with their growth since the counts in
    ``previous`` ((port, name) -> count: pass the same dict every poll; it is updated). A counter
    absent from the answer is zero. Series that name no port are left out (``rates_frame``
    reports them); ``ports_of`` is the cache ``rates_frame`` takes."""
    ports_of = {} if ports_of is None else ports_of
    names: dict[str, list[str]] = {}
    for name, spec in mapping.errors.items():
        if spec.type == "counter":
            names.setdefault(spec.metric, []).append(name)
    labels, t, values = _vector(data, "errors")
    counters = []
    for label_set, moment, value in zip(labels, t.tolist(), values.tolist()):
        metric = dict(label_set).get("__name__", "")
        label_set = tuple(pair for pair in label_set if pair[0] != "__name__")  # as rate()'s answers: one cache
        port = ports_of.get(label_set)
        if port is None:
            port = ports_of[label_set] = _resolve(index, mapping, dict(label_set))
        if not (isinstance(port, int) and 0 <= value < math.inf):
            continue
        for name in names.get(metric, ()):
            before = previous.get((port, name))
            growth = 0.0 if before is None else value - before if value >= before else value
            previous[(port, name)] = value
            counters.append(ErrorCounter(name, port, moment, value, growth))
    seen = {(counter.port, counter.name) for counter in counters}
    for key in [key for key in previous if key not in seen]:  # back to zero (reset), or gone
        del previous[key]
    return counters


def error_totals(index: TelemetryIndex, counters: Sequence[ErrorCounter]) -> list[dict[str, Any]]:
    """The error counters of each link (``error_counters``): ``[{"t_s", "link", "counters": {name:
    count}}]``, the shape of the POST endpoint's error readings. A link's count is the sum over
    the ends that report it (both ends see the errors of one cable)."""
    counts: dict[int, dict[str, float]] = {}
    times: dict[int, float] = {}
    for counter in counters:
        link = index.link(counter.port)
        counts.setdefault(link, {})[counter.name] = counts.get(link, {}).get(counter.name, 0.0) + counter.value
        times[link] = max(times.get(link, -math.inf), counter.t)
    return [{"t_s": times[link], "link": link, "counters": {name: int(value) for name, value in sorted(counts[link].items())}} for link in sorted(counts)]


def _vector(data: Any, key: str) -> tuple[list[tuple], np.ndarray, np.ndarray]:
    """Label sets (as Prometheus orders them), times and values of an instant-vector answer."""
    if data is None:
        return [], np.zeros(0), np.zeros(0)
    if not (isinstance(data, Mapping) and data.get("resultType") == "vector" and isinstance(data.get("result"), list)):
        raise TelemetryError(f"Prometheus' answer for {key} is not an instant vector", [f'{key}: expected {{"resultType": "vector", "result": [...]}}'])
    result = data["result"]
    try:
        labels = [tuple(item["metric"].items()) for item in result]
        t = np.array([item["value"][0] for item in result], dtype=float)
        readings = np.array([item["value"][1] for item in result], dtype=float)  # "NaN", "+Inf" included
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        raise TelemetryError(f"Prometheus' answer for {key} has a malformed series", [f"{key}: {error}; expected {{\"metric\": {{...}}, \"value\": [<time>, \"<number>\"]}}"]) from error
    return labels, t, readings


def _resolve(index: TelemetryIndex, mapping: PrometheusMapping, labels: dict[str, str]) -> int | str:
    """The port a series names, or why it names none."""
    instance = labels.get("instance", "")
    host = instance.rsplit(":", 1)[0] if instance.count(":") == 1 else instance
    if not re.fullmatch(r"[\d.]+", host):
        host = host.split(".", 1)[0]
    labels = {"host": host, **labels}
    try:
        node_name = mapping.node.format_map(labels)
        port_name = mapping.port.format_map(labels)
    except KeyError as missing:
        return f"{_describe(labels)}: no label {missing}"
    node = mapping.nodes.get(node_name) or index.node_by_name.get(node_name.strip().lower())
    if node is None:
        return f"{node_name}: no node of the fabric has this id, name or description"
    if port_name == "":  # a GPU's NVLink counters: its one link to a switch (the others are PCIe, to NICs)
        ports = [port for port in index.ports_of_node.get(node, []) if index.toward_switch[port]]
        return ports[0] if len(ports) == 1 else f"{node_name}: {len(ports)} links to switches; the mapping's port template must name one"
    port = index.number.get((node, port_name))
    return port if port is not None else f"{node_name}:{port_name}: not an end of a link of the fabric"


def _describe(labels: Mapping[str, str]) -> str:
    return "{" + ", ".join(f'{name}="{value}"' for name, value in sorted(labels.items()) if name != "host") + "}"
