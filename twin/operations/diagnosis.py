"""Diagnosis by DOMAIN.md's troubleshooting table, bottom-up.

``diagnose`` runs every rule whose inputs are given and returns the findings
ordered physical -> topology -> library -> application (the order to fix
things in: a bad cable explains a slow all-reduce, not the other way round),
then by severity. Each finding names its layer, rule id, severity, the
evidence as numbers, the table's fix and the elements affected (link
``link:<index>`` ids, node ids).

Rules (``RULES``):

- physical: ``link-down``, ``link-degraded`` (state degraded, or narrower /
  slower than most links of the fabric), ``error-counters`` (link
  ``attrs["errors"]`` or telemetry counters over ``DEFAULT_ERROR_THRESHOLDS``),
  ``link-flapping`` (state changes in telemetry);
- topology: ``plan-mismatch`` (a ``DiffReport`` against the cabling plan:
  MISSING, MISWIRED, SWAPPED, EXTRA, UNKNOWN_DEVICE, CHANGED, AMBIGUOUS);
- library: ``chunk-size`` (large-message busbw about half the prediction; the
  bandwidth-delay product is shown), ``protocol-overhead`` (small-message
  latency well above the prediction; suggest memory-semantic transport);
- application: ``placement-ignores-topology`` (the job's placement is much
  slower than the topology-aware one on the same cards; the better one is
  shown), ``congested-ports`` (busbw falls as the job grows; the hottest
  ports of the simulated all-reduce are listed).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from twin.operations.exports import compress_hostlist
from twin.operations.placement import Placement, aware_placement, evaluate_placement
from twin.simcore.diff import DEFAULT_ERROR_THRESHOLDS, DiffReport, normalise_counter
from twin.simcore.errors import TwinCoreError
from twin.simcore.hops import hop_statistics
from twin.simcore.model import Attrs, FabricSpec
from twin.simcore.simulate import Simulator
from twin.simcore.translation import ENGLISH, LATER, Phrase, Translations, gettext_noop

__all__ = [
    "LAYERS",
    "DiagnosisError",
    "RULES",
    "SEVERITIES",
    "Finding",
    "MeasurementPoint",
    "ScalingPoint",
    "TelemetrySample",
    "diagnose",
]

LAYERS = (gettext_noop("physical"), gettext_noop("topology"), gettext_noop("library"), gettext_noop("application"))
SEVERITIES = (gettext_noop("critical"), gettext_noop("major"), gettext_noop("minor"))
"""Identifiers in the result, translated where they are shown (marked for makemessages)."""
RULES = {
    "link-down": "physical",
    "link-degraded": "physical",
    "error-counters": "physical",
    "link-flapping": "physical",
    "plan-mismatch": "topology",
    "chunk-size": "library",
    "protocol-overhead": "library",
    "placement-ignores-topology": "application",
    "congested-ports": "application",
}
_FIXES = {
    "link-down": LATER.gettext("check both ends of the link: reseat or replace the cable or transceiver"),
    "link-degraded": LATER.gettext("reseat or replace the cable, check both transceivers and the port's configured speed"),
    "error-counters": LATER.gettext("clear the counters and watch them; reseat or replace the cable if they keep growing"),
    "link-flapping": LATER.gettext("replace the cable or transceiver; check the port's signal quality"),
    "plan-mismatch": LATER.gettext("recable to the plan (or update the plan), then rerun topology discovery"),
    "chunk-size": LATER.gettext("set the chunk size near the bandwidth-delay product; sweep chunk sizes in a benchmark"),
    "protocol-overhead": LATER.gettext("use the memory-semantic transport (remote writes over the scale-up fabric) for small messages"),
    "placement-ignores-topology": LATER.gettext("use topology-aware scheduling: the better placement shown here"),
    "congested-ports": LATER.gettext("change the topology or add switches where the listed ports saturate"),
}
# "About half": measured / predicted busbw in this band for large messages.
HALF_BAND = (0.35, 0.65)
LARGE_MESSAGE_BYTES = 1 << 20
SMALL_MESSAGE_BYTES = 64 << 10
SLOW_SMALL_MESSAGE_FACTOR = 2.0
FLAP_CHANGES = 2
PLACEMENT_SLOWDOWN = 1.2
SCALING_DROP = 0.2
# InfiniBand data rates, slowest first (FORMATS.md section 1).
_IB_SPEEDS = ("sdr", "ddr", "qdr", "fdr10", "fdr", "edr", "hdr", "ndr", "xdr")


class DiagnosisError(TwinCoreError):
    """Diagnosis inputs that do not fit the fabric (telemetry naming a link it lacks)."""


@dataclass(frozen=True)
class Finding:
    """One diagnosis: ``layer``, ``rule``, ``severity``, ``title``, ``evidence`` (numbers), ``fix``, ``elements``.

    ``title``, ``fix`` and the Phrases in ``evidence`` are rendered in a language by ``to_dict``.
    """

    layer: str
    rule: str
    severity: str
    title: Phrase
    evidence: Mapping[str, Any]
    fix: Phrase
    elements: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "elements", tuple(self.elements))

    def to_dict(self, name_of: Callable[[str], str], translations: Translations = ENGLISH) -> dict[str, Any]:
        """JSON-ready, with ``element_names``: the elements as people name them (link ends and
        node names, as the cabling check does; an InfiniBand discovery's ids are GUIDs)."""
        return {
            "layer": self.layer, "rule": self.rule, "severity": self.severity, "title": self.title.render(translations),
            "evidence": _rendered_evidence(self.evidence, translations), "fix": self.fix.render(translations),
            "elements": list(self.elements), "element_names": [name_of(element) for element in self.elements],
        }  # fmt: skip


def _rendered_evidence(value: Any, translations: Translations) -> Any:
    """Evidence with each Phrase in it rendered, lists kept lists."""
    if isinstance(value, Phrase):
        return value.render(translations)
    if isinstance(value, Mapping):
        return {key: _rendered_evidence(item, translations) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rendered_evidence(item, translations) for item in value]
    return value


@dataclass(frozen=True)
class MeasurementPoint:
    """One message size of a measured run next to the twin's prediction (busbw in GB/s, times in s)."""

    size_bytes: float
    measured_busbw_GBps: float
    predicted_busbw_GBps: float
    measured_time_s: float | None = None
    predicted_time_s: float | None = None


@dataclass(frozen=True)
class TelemetrySample:
    """Port counters of one link at time ``t_s``: ``link`` is its index in ``spec.links``."""

    t_s: float
    link: int
    state: str | None = None
    counters: Mapping[str, int] = field(default_factory=Attrs)


@dataclass(frozen=True)
class ScalingPoint:
    """Measured all-reduce busbw (GB/s) at one stage of growth (``cards`` taking part)."""

    cards: int
    busbw_GBps: float


def diagnose(
    spec: FabricSpec,
    *,
    diff: DiffReport | None = None,
    measurements: Sequence[MeasurementPoint] = (),
    telemetry: Sequence[TelemetrySample] = (),
    placement: Placement | None = None,
    scaling: Sequence[ScalingPoint] = (),
    error_thresholds: Mapping[str, int] | None = None,
    translations: Translations = ENGLISH,
) -> dict[str, Any]:
    """Run every rule whose inputs are given; JSON-ready ``{"findings": [...], "counts": {layer: n}, "rules_run": [...]}``,
    its words in the language of ``translations``."""
    thresholds = {normalise_counter(name): limit for name, limit in {**DEFAULT_ERROR_THRESHOLDS, **(error_thresholds or {})}.items()}
    findings: list[Finding] = []
    rules_run = ["link-down", "link-degraded", "error-counters"]
    findings += _links_down(spec) + _links_degraded(spec) + _link_errors(spec, thresholds)
    if telemetry:
        rules_run += ["link-flapping"]
        findings += _flapping(spec, telemetry) + _telemetry_errors(spec, telemetry, thresholds)
    if diff is not None:
        rules_run.append("plan-mismatch")
        findings += _plan_mismatch(diff)
    if measurements:
        rules_run += ["chunk-size", "protocol-overhead"]
        findings += _chunk_size(spec, measurements) + _protocol_overhead(measurements)
    if placement is not None:
        rules_run.append("placement-ignores-topology")
        findings += _placement(spec, placement)
    if scaling:
        rules_run.append("congested-ports")
        findings += _congested(spec, scaling)
    findings.sort(key=lambda finding: (LAYERS.index(finding.layer), SEVERITIES.index(finding.severity)))
    counts = Counter(finding.layer for finding in findings)
    name_of = _element_names(spec)
    return {
        "findings": [finding.to_dict(name_of, translations) for finding in findings],
        "counts": {layer: counts[layer] for layer in LAYERS},
        "rules_run": rules_run,
    }


def _finding(rule: str, severity: str, title: Phrase, evidence: Mapping[str, Any], elements: Sequence[str] = (), fix: Phrase | None = None) -> Finding:
    return Finding(RULES[rule], rule, severity, title, evidence, fix or _FIXES[rule], tuple(elements))


def _link_labels(spec: FabricSpec) -> Callable[[int], str]:
    """``leaf-01:3 - spine-02:1`` for a link position: node names, as the cabling check names
    ends, not ids (an InfiniBand discovery's ids are GUIDs)."""
    names = {node.id: node.name for node in spec.nodes}

    def label(position: int) -> str:
        link = spec.links[position]
        return f"{names.get(link.a, link.a)}:{link.a_port} - {names.get(link.b, link.b)}:{link.b_port}"

    return label


def _element_names(spec: FabricSpec) -> Callable[[str], str]:
    """``link:<index>`` or a node id -> the link's ends or the node's name."""
    link_label = _link_labels(spec)
    names = {node.id: node.name for node in spec.nodes}

    def name_of(element: str) -> str:
        return link_label(int(element.removeprefix("link:"))) if element.startswith("link:") else names.get(element, element)

    return name_of


# -- physical -----------------------------------------------------------------------------------


def _links_down(spec: FabricSpec) -> list[Finding]:
    down = [position for position, link in enumerate(spec.links) if link.state == "down"]
    if not down:
        return []
    label = _link_labels(spec)
    return [
        _finding(
            "link-down", "critical" if len(down) > 1 else "major",
            LATER.ngettext("%(count)s link down: %(example)s", "%(count)s links down, e.g. %(example)s", len(down)) % {"count": len(down), "example": label(down[0])},
            {"links_down": len(down), "links": [label(position) for position in down[:20]]},
            [f"link:{position}" for position in down],
        )
    ]  # fmt: skip


def _links_degraded(spec: FabricSpec) -> list[Finding]:
    widths = Counter(str(link.attrs["width"]).lower() for link in spec.links if "width" in link.attrs)
    speeds = Counter(str(link.attrs["speed"]).lower() for link in spec.links if "speed" in link.attrs)
    usual_width = widths.most_common(1)[0][0] if widths else None
    usual_speed = speeds.most_common(1)[0][0] if speeds else None
    label = _link_labels(spec)
    findings = []
    for position, link in enumerate(spec.links):
        reasons = []
        if link.state == "degraded":
            reasons.append(LATER.gettext("state degraded"))
        width = str(link.attrs.get("width", "")).lower()
        if usual_width and width and width != usual_width and _lanes(width) < _lanes(usual_width):
            reasons.append(LATER.gettext("width %(width)s where most links are %(usual)s") % {"width": width, "usual": usual_width})
        speed = str(link.attrs.get("speed", "")).lower()
        if usual_speed in _IB_SPEEDS and speed in _IB_SPEEDS and _IB_SPEEDS.index(speed) < _IB_SPEEDS.index(usual_speed):
            reasons.append(LATER.gettext("speed %(speed)s where most links are %(usual)s") % {"speed": speed, "usual": usual_speed})
        if reasons:
            findings.append(
                _finding(
                    "link-degraded", "major", LATER.gettext("link %(link)s degraded: %(reasons)s") % {"link": label(position), "reasons": reasons},
                    {"bandwidth_gbps": link.bandwidth_gbps, "width": width or None, "speed": speed or None, "state": link.state},
                    [f"link:{position}"],
                )
            )  # fmt: skip
    return findings


def _lanes(width: str) -> int:
    digits = width.rstrip("x")
    return int(digits) if digits.isdigit() else 0


def _over_threshold(counters: Mapping[str, Any], thresholds: Mapping[str, int | None]) -> dict[str, float]:
    over = {}
    for name, value in counters.items():
        limit = thresholds.get(normalise_counter(name))
        if limit is not None and isinstance(value, (int, float)) and not isinstance(value, bool) and value > limit:
            over[name] = value
    return over


def _link_errors(spec: FabricSpec, thresholds: Mapping[str, int | None]) -> list[Finding]:
    label = _link_labels(spec)
    findings = []
    for position, link in enumerate(spec.links):
        errors = link.attrs.get("errors")
        over = _over_threshold(errors, thresholds) if isinstance(errors, Mapping) else {}
        if over:
            findings.append(
                _finding(
                    "error-counters", "minor",
                    LATER.gettext("link %(link)s: %(counters)s over threshold") % {"link": label(position), "counters": sorted(over)},
                    {"counters": over, "thresholds": {name: thresholds[normalise_counter(name)] for name in over}},
                    [f"link:{position}"],
                )
            )  # fmt: skip
    return findings


def _by_link(spec: FabricSpec, telemetry: Sequence[TelemetrySample]) -> dict[int, list[TelemetrySample]]:
    series: dict[int, list[TelemetrySample]] = defaultdict(list)
    for sample in telemetry:
        if not (isinstance(sample.link, int) and 0 <= sample.link < len(spec.links)):
            unknown = LATER.gettext("telemetry sample at t=%(t)s s names link %(link)s; expected an index 0..%(last)s of %(fabric)s")
            raise DiagnosisError(unknown % {"t": f"{sample.t_s:g}", "link": repr(sample.link), "last": str(len(spec.links) - 1), "fabric": repr(spec.name)})
        series[sample.link].append(sample)
    return {link: sorted(samples, key=lambda sample: sample.t_s) for link, samples in series.items()}


def _flapping(spec: FabricSpec, telemetry: Sequence[TelemetrySample]) -> list[Finding]:
    label = _link_labels(spec)
    findings = []
    for link, samples in sorted(_by_link(spec, telemetry).items()):
        states = [sample.state for sample in samples if sample.state is not None]
        changes = sum(before != after for before, after in zip(states, states[1:]))
        downed = [sample.counters.get("link_downed") for sample in samples if "link_downed" in sample.counters]
        downed_increase = (downed[-1] - downed[0]) if len(downed) > 1 else 0
        if changes >= FLAP_CHANGES or downed_increase >= FLAP_CHANGES:
            findings.append(
                _finding(
                    "link-flapping", "major",
                    LATER.ngettext("link %(link)s flaps: %(count)s state change", "link %(link)s flaps: %(count)s state changes", max(changes, downed_increase))
                    % {"link": label(link), "count": max(changes, downed_increase)},
                    {"state_changes": changes, "link_downed_increase": downed_increase,
                     "window_s": samples[-1].t_s - samples[0].t_s},
                    [f"link:{link}"],
                )
            )  # fmt: skip
    return findings


def _telemetry_errors(spec: FabricSpec, telemetry: Sequence[TelemetrySample], thresholds: Mapping[str, int | None]) -> list[Finding]:
    """Counters that grew by more than their threshold over the telemetry window."""
    label = _link_labels(spec)
    findings = []
    for link, samples in sorted(_by_link(spec, telemetry).items()):
        first, last = samples[0].counters, samples[-1].counters
        growth = {name: last[name] - first.get(name, 0) for name in last if normalise_counter(name) != "linkdowned"}
        over = _over_threshold(growth, thresholds)
        if over:
            findings.append(
                _finding(
                    "error-counters", "major", LATER.gettext("link %(link)s: %(counters)s growing") % {"link": label(link), "counters": sorted(over)},
                    {"growth": over, "window_s": samples[-1].t_s - samples[0].t_s},
                    [f"link:{link}"],
                )
            )  # fmt: skip
    return findings


# -- topology -----------------------------------------------------------------------------------


def _plan_mismatch(report: DiffReport) -> list[Finding]:
    by_class: dict[str, list] = defaultdict(list)
    for finding in report.findings:
        if finding.finding_class != "DEGRADED":  # link quality is the physical rules' business
            by_class[finding.finding_class].append(finding)
    findings = []
    for finding_class, members in by_class.items():
        severity = min((member.severity for member in members), key=SEVERITIES.index)
        findings.append(
            _finding(
                "plan-mismatch", severity,
                LATER.ngettext("%(count)s %(class)s finding against the plan: %(example)s", "%(count)s %(class)s findings against the plan, e.g. %(example)s", len(members))
                % {"count": len(members), "class": finding_class, "example": members[0].message},
                {"class": finding_class, "count": len(members), "examples": [member.message for member in members[:10]]},
                sorted({member.end.node for member in members}),
                fix=LATER.gettext("%(fix)s; first: %(action)s") % {"fix": _FIXES["plan-mismatch"], "action": members[0].action},
            )
        )  # fmt: skip
    return findings


# -- library ------------------------------------------------------------------------------------


def _chunk_size(spec: FabricSpec, points: Sequence[MeasurementPoint]) -> list[Finding]:
    large = [point for point in points if point.size_bytes >= LARGE_MESSAGE_BYTES and point.predicted_busbw_GBps > 0]
    ratios = [point.measured_busbw_GBps / point.predicted_busbw_GBps for point in large]
    halved = [ratio for ratio in ratios if HALF_BAND[0] <= ratio <= HALF_BAND[1]]
    if not large or len(halved) * 2 <= len(large):
        return []
    bandwidth, latency = _bandwidth_and_latency(spec)
    product = bandwidth * latency
    return [
        _finding(
            "chunk-size", "major",
            LATER.gettext("large-message busbw is %(ratio)s of the prediction: chunk size likely wrong") % {"ratio": f"{sum(halved) / len(halved):.0%}"},
            {"sizes_checked": len(large), "sizes_about_half": len(halved),
             "median_ratio": sorted(ratios)[len(ratios) // 2], "link_GBps": bandwidth / 1e9,
             "path_latency_ns": latency * 1e9, "bandwidth_delay_product_bytes": product},
            fix=LATER.gettext("%(fix)s: %(bandwidth)s GB/s x %(latency)s ns = %(product)s KB")
            % {"fix": _FIXES["chunk-size"], "bandwidth": f"{bandwidth / 1e9:.0f}", "latency": f"{latency * 1e9:.0f}", "product": f"{product / 1e3:.1f}"},
        )
    ]  # fmt: skip


def _bandwidth_and_latency(spec: FabricSpec) -> tuple[float, float]:
    """Bytes/s of the usual card link and the mean card-to-card path latency (s)."""
    cards = {node.id for node in spec.cards()}
    card_links = [link for link in spec.links if link.state != "down" and (link.a in cards or link.b in cards)]
    links = card_links or list(spec.links)
    gbps = Counter(link.bandwidth_gbps for link in links).most_common(1)[0][0]
    cable_ns = Counter(link.latency_ns for link in links).most_common(1)[0][0]
    forwarding = [float(node.attrs.get("forwarding_latency_ns", 100.0)) for node in spec.switches()]
    switch_ns = sum(forwarding) / len(forwarding) if forwarding else 0.0
    hops = hop_statistics(spec)["mean_hops"]
    return gbps * 1e9 / 8, (hops * switch_ns + (hops + 1) * cable_ns) * 1e-9


def _protocol_overhead(points: Sequence[MeasurementPoint]) -> list[Finding]:
    small = [
        point for point in points
        if point.size_bytes <= SMALL_MESSAGE_BYTES and point.measured_time_s and point.predicted_time_s
    ]  # fmt: skip
    slow = [point for point in small if point.measured_time_s > SLOW_SMALL_MESSAGE_FACTOR * point.predicted_time_s]
    if not small or len(slow) * 2 <= len(small):
        return []
    worst = max(slow, key=lambda point: point.measured_time_s / point.predicted_time_s)
    return [
        _finding(
            "protocol-overhead", "major",
            LATER.gettext("small messages take %(factor)sx the predicted time: protocol overhead") % {"factor": f"{worst.measured_time_s / worst.predicted_time_s:.1f}"},
            {"sizes_checked": len(small), "sizes_slow": len(slow), "worst_size_bytes": worst.size_bytes,
             "measured_us": worst.measured_time_s * 1e6, "predicted_us": worst.predicted_time_s * 1e6},
        )
    ]  # fmt: skip


# -- application --------------------------------------------------------------------------------


def _placement(spec: FabricSpec, placement: Placement) -> list[Finding]:
    current = evaluate_placement(spec, placement)
    better_placement = aware_placement(spec, placement.job, free=placement.cards)
    better = evaluate_placement(spec, better_placement)
    slowdown = current["communication_time_s"] / better["communication_time_s"]
    if slowdown < PLACEMENT_SLOWDOWN:
        return []
    hosts = [host for host in better_placement.hosts if host]
    return [
        _finding(
            "placement-ignores-topology", "major",
            LATER.gettext("the %(strategy)s placement communicates %(slowdown)sx longer than a topology-aware one on the same cards")
            % {"strategy": placement.strategy, "slowdown": f"{slowdown:.1f}"},
            {"current_s": current["communication_time_s"], "aware_s": better["communication_time_s"], "slowdown": slowdown,
             "current_by_dimension_s": {name: result["time_s"] for name, result in current["dimensions"].items()},
             "aware_by_dimension_s": {name: result["time_s"] for name, result in better["dimensions"].items()},
             "aware_cards": list(better_placement.cards), "aware_hostlist": compress_hostlist(hosts) if hosts else None},
            list(placement.cards),
        )
    ]  # fmt: skip


def _congested(spec: FabricSpec, scaling: Sequence[ScalingPoint]) -> list[Finding]:
    stages = sorted(scaling, key=lambda point: point.cards)
    if len(stages) < 2 or stages[0].busbw_GBps <= 0:
        return []
    drop = 1 - stages[-1].busbw_GBps / stages[0].busbw_GBps
    if drop < SCALING_DROP:
        return []
    # Cards with no live link cannot take part (the physical rules report them).
    live_ends = {end for link in spec.links if link.state != "down" for end in (link.a, link.b)}
    ranks = [card.id for card in spec.cards() if card.id in live_ends]
    result = Simulator(spec, ranks=ranks).run("allreduce", float(1 << 28), "ring", top_links=10)
    hottest = [link for link in result["hottest_links"] if link["utilization"] >= 0.5 * result["max_link_utilization"]]
    return [
        _finding(
            "congested-ports", "major",
            LATER.gettext("busbw falls %(drop)s from %(first)s to %(last)s cards: switch congestion")
            % {"drop": f"{drop:.0%}", "first": stages[0].cards, "last": stages[-1].cards},
            {"scaling": [{"cards": point.cards, "busbw_GBps": point.busbw_GBps} for point in stages], "drop": drop,
             "congested_ports": [{"from": link["from"], "to": link["to"], "class": link["class"],
                                  "utilization": link["utilization"]} for link in hottest]},
            [f"link:{link['link']}" for link in hottest],
        )
    ]  # fmt: skip
