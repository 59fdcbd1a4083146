"""Live telemetry from Prometheus: which series to ask for, and their answers turned into frames.

Ops already scrape their fabrics: node_exporter's infiniband collector (one
series per HCA port, labels ``device`` and ``port``, plus the ``instance``
Prometheus adds) and NVIDIA's DCGM exporter (one series per GPU, or per GPU and
NVLink, labels ``Hostname``, ``gpu``, ``pci_bus_id``, ``UUID``, ``device``). A
``PrometheusMapping`` says which metric gives each reading and how a series'
labels name a port of the fabric:

- counters (bytes, ``xmit_wait`` ticks, errors) are asked for as
  ``rate(metric{selector}[window])``, gauges that already are rates (DCGM's
  NVLink bytes per second) as ``metric{selector}``;
- a metric family names its members' link number in the name
  (``DCGM_FI_PROF_NVLINK_L{link}_TX_BYTES``: L0..L17): one query for the family
  (``{__name__=~"DCGM_FI_PROF_NVLINK_L[0-9]+_TX_BYTES"}``), and each series gets
  the label ``link`` from its name. Only gauges and error counters can be
  families: ``rate()`` drops the metric name, and with it the link number;
- ``node`` and ``port`` are templates over the series' labels
  (``"{host}/{device}"``; ``host`` is added: ``instance`` without its
  ``:port`` and domain; ``bus_id`` too: ``pci_bus_id`` written as the NCCL XML
  parser names cards, ``0000:18:00.0``), looked up among the fabric's node ids,
  names and descriptions (case-insensitive) after the ``nodes`` table; ``node``
  may be a list of templates, tried in order (a card by bus id, else by host and
  GPU index). An empty port names the node's only link to a switch (a GPU's
  NVLinks to its NVSwitches, one link of ``lanes`` NVLinks, not its PCIe links);
- ``lane`` (a template, empty by default) names the NVLink of that link a series
  measures (``"{link}"``): the lanes' readings of one port add up, so a GPU's
  18 per-link series give its NVLink's utilisation.

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

from twin.ingest.parsers.nccl_xml import normalise_bus_id
from twin.replay.encoding import Frame
from twin.replay.telemetry import DEFAULT_XMIT_WAIT_BYTES, TelemetryError, TelemetryIndex, measured_frame
from twin.simcore.errors import problem_phrase
from twin.simcore.translation import LATER, Joined, Phrase

__all__ = ["PRESETS", "ErrorCounter", "MetricSpec", "PrometheusMapping", "error_counters", "error_totals", "prometheus_mapping", "rates_frame", "series_ports"]

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
        "node": ["{Hostname}/gpu:{bus_id}", "{Hostname}/gpu{gpu}"],
        "port": "",
    },
    # dcgm-exporter with DCGM's per-link fields (1040-1075: bytes per second of each NVLink,
    # L0..L17) and per-link error counters, each NVLink a lane of the GPU's link to its NVSwitches.
    "dcgm_nvlink_links": {
        "tx_bytes": {"metric": "DCGM_FI_PROF_NVLINK_L{link}_TX_BYTES", "type": "gauge"},
        "rx_bytes": {"metric": "DCGM_FI_PROF_NVLINK_L{link}_RX_BYTES", "type": "gauge"},
        "errors": {
            "nvlink_crc_flit_errors": "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L{link}",
            "nvlink_replay_errors": "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L{link}",
            "nvlink_recovery_errors": "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L{link}",
        },
        "node": ["{Hostname}/gpu:{bus_id}", "{Hostname}/gpu{gpu}"],
        "port": "",
        "lane": "{link}",
    },
}
_KEYS = {*_READINGS, "errors", "node", "port", "lane", "nodes", "selector", "xmit_wait_bytes"}
_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LINK = "{link}"  # where a metric family's name carries the link number
_MATCHER = r'\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(?:=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*"\s*'
_SELECTOR = re.compile(rf"^(?:{_MATCHER}(?:,{_MATCHER})*,?)?$")


@dataclass(frozen=True)
class MetricSpec:
    metric: str  # a name, or a family's: DCGM_FI_PROF_NVLINK_L{link}_TX_BYTES
    type: str = "counter"  # "counter": asked for as rate(); "gauge": already a rate

    @property
    def family(self) -> bool:
        return _LINK in self.metric

    def name_pattern(self) -> str:
        """The PromQL regular expression of the names of the family (the name itself otherwise)."""
        return self.metric.replace(_LINK, "[0-9]+")

    def link_of(self, name: str) -> str | None:
        """The link number a family member's name carries, None if ``name`` is not a member."""
        before, after = self.metric.split(_LINK)
        match = re.fullmatch(f"{re.escape(before)}([0-9]+){re.escape(after)}", name)
        return str(int(match.group(1))) if match else None


@dataclass(frozen=True)
class PrometheusMapping:
    """Checked configuration: what to ask Prometheus, and how its labels name ports."""

    readings: dict[str, MetricSpec]  # of _READINGS present
    errors: dict[str, MetricSpec]
    node: tuple[str, ...]  # tried in order
    port: str
    nodes: dict[str, str] = field(default_factory=dict)  # rendered node -> fabric node id
    selector: str = ""
    xmit_wait_bytes: float = DEFAULT_XMIT_WAIT_BYTES
    lane: str = ""

    def queries(self, window_s: int) -> dict[str, str]:
        """PromQL per reading (``tx_bytes``, ...; an error counter given as a gauge, already a
        rate: ``errors.<name>``). The error counters come in one query, ``errors_query``."""
        specs = self.specs()
        selector = f"{{{self.selector}}}" if self.selector else ""
        return {
            key: f"rate({spec.metric}{selector}[{window_s}s])" if spec.type == "counter"
            else f"{{{','.join(self._matchers([spec.name_pattern()]))}}}" if spec.family else f"{spec.metric}{selector}"
            for key, spec in specs.items()
        }  # fmt: skip

    def specs(self) -> dict[str, MetricSpec]:
        """The metric of each key of ``queries``."""
        return {**self.readings, **{f"errors.{name}": spec for name, spec in self.errors.items() if spec.type == "gauge"}}

    def _matchers(self, patterns: Sequence[str]) -> list[str]:
        return [f'__name__=~"{"|".join(patterns)}"', *([self.selector.rstrip(",")] if self.selector else [])]

    def errors_query(self) -> str | None:
        """One PromQL query for every error counter that is not zero,
        ``{__name__=~"a|b",selector} > 0``: each series keeps its metric name (``rate()`` would
        drop it, and the counters of one port would then clash), and a healthy fabric's zeros
        stay in Prometheus. ``error_counters`` reads the answer."""
        patterns = sorted({spec.name_pattern() for spec in self.errors.values() if spec.type == "counter"})
        if not patterns:
            return None
        return f"{{{','.join(self._matchers(patterns))}}} > 0"


def prometheus_mapping(plain: Any, *, preset: str | None = None) -> PrometheusMapping:
    """The mapping of ``plain`` (JSON), over the preset's fields; ``TelemetryError`` lists what is
    wrong with it (unknown keys, metric names, templates, selector)."""
    problems: list[Phrase] = []
    if preset is not None and preset not in PRESETS:
        problems.append(problem_phrase(f"preset {preset!r}", "", LATER.gettext("one of %(names)s") % {"names": Joined(list(PRESETS))}))
    if plain is None:
        plain = {}
    if not isinstance(plain, Mapping):
        such = LATER.gettext("an object such as %(example)s") % {"example": '{"node": "{host}/{device}"}'}
        raise TelemetryError(LATER.gettext("the label mapping must be a JSON object"), [problem_phrase("", type(plain).__name__, such)])
    merged = {**PRESETS.get(preset or "", {}), **plain}
    for key in sorted(set(merged) - _KEYS):
        problems.append(problem_phrase(key, LATER.gettext("unknown key"), LATER.gettext("one of %(names)s") % {"names": Joined(sorted(_KEYS))}))
    readings = {name: spec for name in _READINGS if merged.get(name) is not None and (spec := _metric(merged[name], name, problems))}
    for name, spec in readings.items():
        if spec.family and spec.type == "counter":
            family = LATER.gettext('%(metric)s is a family of counters; rate() drops the metric name, and with it the link number: give a gauge family ("type": "gauge") or one counter per port')
            problems.append(problem_phrase(name, family % {"metric": repr(spec.metric)}))
    if not {"tx_bytes", "rx_bytes"} & readings.keys():
        problems.append(problem_phrase("tx_bytes/rx_bytes", LATER.gettext("neither is given"), LATER.gettext("the metric of at least one byte counter")))
    errors = {}
    raw_errors = merged.get("errors") or {}
    if isinstance(raw_errors, Mapping):
        errors = {str(name): spec for name, value in raw_errors.items() if (spec := _metric(value, f"errors.{name}", problems))}
    else:
        problems.append(problem_phrase("errors", "", LATER.gettext("an object of counter name -> metric")))
    given_node = merged.get("node")
    node = tuple(_template(value, "node", problems, required=True) for value in (given_node if isinstance(given_node, list) and given_node else [given_node]))
    port = _template(merged.get("port", ""), "port", problems, required=False)
    lane = _template(merged.get("lane", ""), "lane", problems, required=False)
    nodes = merged.get("nodes") or {}
    if not (isinstance(nodes, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in nodes.items())):
        problems.append(problem_phrase("nodes", "", LATER.gettext("an object of rendered node name -> node id of the fabric")))
        nodes = {}
    selector = merged.get("selector") or ""
    if not (isinstance(selector, str) and _SELECTOR.match(selector)):
        matchers = LATER.gettext("label matchers such as %(example)s") % {"example": 'job="infiniband", cluster=~"a|b"'}
        problems.append(problem_phrase("selector", repr(selector), matchers))
        selector = ""
    wait_bytes = merged.get("xmit_wait_bytes", DEFAULT_XMIT_WAIT_BYTES)
    if not (isinstance(wait_bytes, (int, float)) and not isinstance(wait_bytes, bool) and wait_bytes > 0):
        problems.append(problem_phrase("xmit_wait_bytes", repr(wait_bytes), LATER.gettext("a positive number of bytes per tick")))
        wait_bytes = DEFAULT_XMIT_WAIT_BYTES
    if problems:
        found = LATER.ngettext("%(count)s problem in the label mapping", "%(count)s problems in the label mapping", len(problems))
        raise TelemetryError(found % {"count": len(problems)}, problems)
    return PrometheusMapping(readings, errors, node, port, dict(nodes), selector.strip(), float(wait_bytes), lane)


def _metric(given: Any, where: str, problems: list[Phrase]) -> MetricSpec | None:
    value = {"metric": given} if isinstance(given, str) else given
    metric = value.get("metric") if isinstance(value, Mapping) else None
    # A family: one {link} where the name carries the link number.
    if not isinstance(metric, str) or metric.count(_LINK) > 1 or not _METRIC_NAME.match(metric.replace(_LINK, "0")):
        expected = LATER.gettext("a metric name (with %(link)s where a family names the link: %(family)s), or %(object)s")
        problems.append(problem_phrase(where, repr(given), expected % {"link": _LINK, "family": f"X_L{_LINK}_BYTES", "object": '{"metric": "<name>", "type": "counter" | "gauge"}'}))
        return None
    kind = value.get("type", "counter")
    if kind not in ("counter", "gauge"):
        problems.append(problem_phrase(f"{where}.type", repr(kind), LATER.gettext('"counter" (asked for as rate()) or "gauge" (already per second)')))
        return None
    return MetricSpec(value["metric"], kind)


def _template(value: Any, where: str, problems: list[Phrase], *, required: bool) -> str:
    if not isinstance(value, str) or (required and not value.strip()):
        problems.append(problem_phrase(where, repr(value), LATER.gettext("a template over the series' labels, such as %(example)s") % {"example": '"{host}/{device}"'}))
        return ""
    try:
        parts = list(string.Formatter().parse(value))
    except ValueError as error:
        # Python's own reason for a template it cannot read stays as it says it (English).
        unreadable = LATER.gettext("%(where)s: %(problem)s") % {"where": repr(value), "problem": str(error)}
        problems.append(problem_phrase(where, unreadable, LATER.gettext("labels in braces, such as %(example)s") % {"example": "{device}"}))
        return ""
    for _, name, spec, conversion in parts:
        if name is not None and (not name.isidentifier() or spec or conversion):
            problems.append(problem_phrase(where, repr(value), LATER.gettext("label names in braces, such as %(example)s") % {"example": "{device}"}))
    return value


# -- answers into frames --------------------------------------------------------------------------


def rates_frame(
    index: TelemetryIndex, mapping: PrometheusMapping, answers: Mapping[str, Any], *, window_s: int,
    ports_of: dict[tuple, tuple[int, str] | str] | None = None, error_counters: Sequence[ErrorCounter] = (),
) -> Frame:  # fmt: skip
    """One frame from Prometheus' answers (``{"tx_bytes": <data of /api/v1/query>, ...}``, the
    keys of ``mapping.queries``) and the ``error_counters`` of the answer to ``errors_query``
    (those that grew since the previous poll are listed).

    ``ports_of`` caches which port (and lane) each label set names (or why none): pass the
    same dict for every poll of one snapshot and the labels are resolved once. A series that
    names no port of the fabric is counted and listed, not dropped silently. The lanes of a
    port add up; a lane given twice counts once (the last).
    """
    ports_of = {} if ports_of is None else ports_of
    values: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    unknown: dict[tuple, str] = {}
    t_end = -math.inf
    series = 0
    for key, spec in mapping.specs().items():
        labels, t, readings = _vector(answers.get(key), key)
        series += len(labels)
        resolved = [ports_of.get(label_set) for label_set in labels]
        for position in [i for i, found in enumerate(resolved) if found is None]:
            resolved[position] = ports_of[labels[position]] = _resolve(index, mapping, dict(_series_key(spec, labels[position])))
        named = np.array([type(found) is tuple for found in resolved], dtype=bool)
        for position in np.flatnonzero(~named):  # counted once per series, not per reading (a lane's tx and rx)
            unknown.setdefault(_series_key(spec, labels[position]), resolved[position])
        keep = named & np.isfinite(readings) & (readings >= 0)
        kept = [resolved[position] for position in np.flatnonzero(keep)]
        ports, lanes = np.fromiter((found[0] for found in kept), dtype=np.int64, count=len(kept)), [found[1] for found in kept]
        values[key] = _lanes_summed(ports, lanes, readings[keep]) if any(lanes) else (ports, readings[keep])
        if keep.any():
            t_end = max(t_end, float(t[keep].max()))

    measured = np.unique(np.concatenate([ports for ports, _ in values.values()] or [np.zeros(0, dtype=np.int64)]))
    capacity = index.layout.arc_capacity[measured]

    def per_port(key: str) -> np.ndarray:
        column = np.full(len(measured), np.nan)
        if key in values:
            ports, readings = values[key]
            column[np.searchsorted(measured, ports)] = readings  # one per port (lanes summed; else the last)
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
        "unknown": list(dict.fromkeys(unknown.values()))[:_LISTED],  # each reason once: a GPU's 18 lanes share theirs
        "counter_wraps": 0,
        "counter_resets": 0,
        "ports_with_errors": error_ports,
        "errors": errors,
    }
    return measured_frame(
        index, measured, tx, rx, tx_congestion, t_s=t_start, t_end_s=t_end, carried_bytes=carried,
        report=lambda links_measured: {**report, "links_measured": links_measured},
    )  # fmt: skip


def series_ports(index: TelemetryIndex, mapping: PrometheusMapping, key: str, data: Any, *, limit: int = 3) -> list[dict[str, str]]:
    """How the first ``limit`` series of the answer for ``key`` (of ``mapping.queries``) that
    name a port name it: ``{"series": '{Hostname="node01", pci_bus_id="00000000:18:00.0", gpu="0",
    link="3"}', "node", "port", "lane"}`` (the labels the templates read, a family member's
    ``link`` among them), to show an operator what the mapping does with the exporter's labels."""
    spec = mapping.specs()[key]
    read = []
    for template in (*mapping.node, mapping.port, mapping.lane):
        for _, name, _, _ in string.Formatter().parse(template):
            name = {"host": "instance", "bus_id": "pci_bus_id"}.get(name, name)  # the labels they come from
            if name and name not in read:
                read.append(name)
    labels, _, _ = _vector(data, key)
    shown = []
    for label_set in labels:
        series_key = dict(_series_key(spec, label_set))
        resolved = _resolve(index, mapping, series_key)
        if isinstance(resolved, tuple):
            node, port = index.port_names[resolved[0]]
            series = ", ".join(f'{name}="{series_key[name]}"' for name in read if name in series_key)
            shown.append({"series": "{" + series + "}", "node": node, "port": port, "lane": resolved[1]})
            if len(shown) == limit:
                break
    return shown


def _errors(
    index: TelemetryIndex, mapping: PrometheusMapping, values: Mapping[str, tuple[np.ndarray, np.ndarray]], window_s: int, counters: Sequence[ErrorCounter]
) -> tuple[list[dict[str, Any]], int]:
    """Error counters that grew, per port: counters by their growth since the previous poll,
    gauges (already rates) by rate x window."""
    grown: dict[int, dict[str, int]] = {}
    lanes: dict[int, set[str]] = {}
    for counter in counters:
        if counter.growth > 0:
            counts = grown.setdefault(counter.port, {})
            counts[counter.name] = counts.get(counter.name, 0) + max(1, round(counter.growth))  # over the port's lanes
            if counter.lane:
                lanes.setdefault(counter.port, set()).add(counter.lane)
    for name, spec in mapping.errors.items():
        if spec.type != "gauge":
            continue
        ports, rates = values.get(f"errors.{name}", (np.zeros(0, dtype=np.int64), np.zeros(0)))
        for port, rate in zip(ports[rates > 0].tolist(), rates[rates > 0].tolist()):
            grown.setdefault(port, {})[name] = max(1, round(rate * window_s))
    listed = []
    for port in sorted(grown)[:_LISTED]:
        node, name = index.port_names[port]
        listed.append({"node": node, "port": name, "link": index.link(port), "counters": grown[port], **({"lanes": sorted(lanes[port], key=_lane_order)} if port in lanes else {})})
    return listed, len(grown)


@dataclass(frozen=True)
class ErrorCounter:
    """One error counter of one port, from the answer to ``errors_query``."""

    name: str  # the mapping's name of the counter (symbol_errors)
    port: int
    t: float
    value: float  # the count so far
    growth: float  # since the previous poll (0 at the first); a lower count is a reset, counted from zero
    lane: str = ""  # the NVLink of the port's link it counts, if the mapping names lanes


def error_counters(
    index: TelemetryIndex, mapping: PrometheusMapping, data: Any, *, previous: dict[tuple[int, str, str], float], ports_of: dict[tuple, tuple[int, str] | str] | None = None
) -> list[ErrorCounter]:
    """The error counters of the answer to ``errors_query`` (an instant vector: ``data`` of
    /api/v1/query) on the ports their series name, with their growth since the counts in
    ``previous`` ((port, lane, name) -> count: pass the same dict every poll; it is updated). A counter
    absent from the answer is zero. Series that name no port are left out (``rates_frame``
    reports them); ``ports_of`` is the cache ``rates_frame`` takes."""
    ports_of = {} if ports_of is None else ports_of
    names: dict[str, list[str]] = {}
    families: list[tuple[MetricSpec, str]] = []
    for name, spec in mapping.errors.items():
        if spec.type == "counter" and spec.family:
            families.append((spec, name))
        elif spec.type == "counter":
            names.setdefault(spec.metric, []).append(name)
    labels, t, values = _vector(data, "errors")
    counters = []
    for label_set, moment, value in zip(labels, t.tolist(), values.tolist()):
        metric = dict(label_set).get("__name__", "")
        members = [(spec, name) for spec, name in families if spec.link_of(metric) is not None]
        # A family member's name carries its link: its own entry. Else as rate()'s answers: one cache.
        cached = label_set if members else tuple(pair for pair in label_set if pair[0] != "__name__")
        resolved = ports_of.get(cached)
        if resolved is None:
            resolved = ports_of[cached] = _resolve(index, mapping, dict(_series_key(members[0][0] if members else None, label_set)))
        if not (isinstance(resolved, tuple) and 0 <= value < math.inf):
            continue
        port, lane = resolved
        for name in [*names.get(metric, ()), *(name for _, name in members)]:
            before = previous.get((port, lane, name))
            growth = 0.0 if before is None else value - before if value >= before else value
            previous[(port, lane, name)] = value
            counters.append(ErrorCounter(name, port, moment, value, growth, lane))
    seen = {(counter.port, counter.lane, counter.name) for counter in counters}
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
        not_vector = LATER.gettext("Prometheus' answer for %(key)s is not an instant vector") % {"key": key}
        raise TelemetryError(not_vector, [problem_phrase(key, "", '{"resultType": "vector", "result": [...]}')])
    result = data["result"]
    try:
        labels = [tuple(item["metric"].items()) for item in result]
        t = np.array([item["value"][0] for item in result], dtype=float)
        readings = np.array([item["value"][1] for item in result], dtype=float)  # "NaN", "+Inf" included
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        malformed = LATER.gettext("Prometheus' answer for %(key)s has a malformed series") % {"key": key}
        raise TelemetryError(malformed, [problem_phrase(key, str(error), '{"metric": {...}, "value": [<time>, "<number>"]}')]) from error
    return labels, t, readings


def _series_key(spec: MetricSpec | None, label_set: tuple) -> tuple:
    """A series' labels without its metric name (the readings of one port share it), with the
    link number of a family member as the label ``link``."""
    key = tuple(pair for pair in label_set if pair[0] != "__name__")
    if spec is not None and spec.family and not any(name == "link" for name, _ in key):
        link = spec.link_of(dict(label_set).get("__name__", ""))
        if link is not None:
            key += (("link", link),)
    return key


def _lanes_summed(ports: np.ndarray, lanes: list[str], readings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One reading per port (sorted): the sum over its lanes, the last of a lane given twice."""
    lane_names, lane_numbers = np.unique(np.array(lanes, dtype=object).astype(str), return_inverse=True)
    pair = ports * len(lane_names) + lane_numbers
    _, last_from_end = np.unique(pair[::-1], return_index=True)
    kept = len(pair) - 1 - last_from_end
    summed_ports, position = np.unique(ports[kept], return_inverse=True)
    summed = np.zeros(len(summed_ports))
    np.add.at(summed, position, readings[kept])
    return summed_ports, summed


def _lane_order(lane: str) -> tuple:
    return (0, int(lane), "") if lane.isdigit() else (1, 0, lane)


def _resolve(index: TelemetryIndex, mapping: PrometheusMapping, labels: dict[str, str]) -> tuple[int, str] | str:
    """The port a series names and the lane of it (empty: the whole link), or why it names none."""
    instance = labels.get("instance", "")
    host = instance.rsplit(":", 1)[0] if instance.count(":") == 1 else instance
    if not re.fullmatch(r"[\d.]+", host):
        host = host.split(".", 1)[0]
    bus_id = normalise_bus_id(labels.get("pci_bus_id", ""))
    labels = {"host": host, **({"bus_id": bus_id} if bus_id else {}), **labels}
    try:
        port_name = mapping.port.format_map(labels)
        lane = mapping.lane.format_map(labels)
    except KeyError as missing:
        return f"{_describe(labels)}: no label {missing}"
    tried = []
    for template in mapping.node:  # the first that names a node of the fabric
        try:
            node_name = template.format_map(labels)
        except KeyError as missing:
            if len(mapping.node) == 1:
                return f"{_describe(labels)}: no label {missing}"
            tried.append(f"{template} (no label {missing})")
            continue
        node = mapping.nodes.get(node_name) or index.node_by_name.get(node_name.strip().lower())
        if node is not None:
            break
        tried.append(node_name)
    else:
        return f"{' / '.join(tried)}: no node of the fabric has this id, name or description"
    if port_name == "":  # a GPU's NVLink counters: its one link to a switch (the others are PCIe, to NICs)
        ports = [port for port in index.ports_of_node.get(node, []) if index.toward_switch[port]]
        if not ports:  # NCCL_TOPO_FILE hint files (Azure's ND v5) list no NVLinks: NCCL asks NVML
            return f"{node_name}: no link to a switch in the fabric (are its NVLinks in the uploaded topology?)"
        if len(ports) > 1:
            return f"{node_name}: {len(ports)} links to switches; the mapping's port template must name one"
        port = ports[0]
    else:
        port = index.number.get((node, port_name))
        if port is None:
            return f"{node_name}:{port_name}: not an end of a link of the fabric"
    lanes = int(index.lanes[index.link(port)])
    if lane.isdigit() and lanes and int(lane) >= lanes:  # the model's link has fewer NVLinks than the GPU reports
        return f"{node_name}: NVLink {lane}, but its link to {index.port_names[port][1]} has {lanes} NVLinks (0..{lanes - 1})"
    return port, lane


def _describe(labels: Mapping[str, str]) -> str:
    return "{" + ", ".join(f'{name}="{value}"' for name, value in sorted(labels.items()) if name != "host") + "}"
