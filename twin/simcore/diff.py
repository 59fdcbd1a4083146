"""Compare two fabrics: a cabling plan (or an earlier snapshot) against what was discovered.

``diff_fabrics(expected, found)`` matches the nodes of the two fabrics, then the
links by their ``(node, port)`` ends, and reports every difference as a
``Finding`` of one class:

- ``MISSING``: a link or node of ``expected`` that ``found`` lacks;
- ``EXTRA``: a link of ``found`` between known nodes that ``expected`` lacks;
- ``MISWIRED``: a port reaches another peer than planned;
- ``SWAPPED``: two ports whose peers are exchanged (one finding for the pair);
- ``DEGRADED``: a link slower, narrower, down or with error counters over thresholds;
- ``UNKNOWN_DEVICE``: a node of ``found`` that ``expected`` does not know, with its links;
- ``AMBIGUOUS``: names (or ports) that cannot be matched without guessing;
- ``CHANGED``: kind, tier, radix or host of a matched node differ.

What the twin inferred at upload (``attrs["inferred"]``: cards standing for HCAs, a
completed scale-up) is left out on both sides: nobody cabled it.

Node matching: by id first; the nodes left over on both sides are matched by
normalised name (``normalise_name``), so a plan written with device names
matches a discovery keyed by GUID. A name shared by several left-over nodes on
one side is reported as ``AMBIGUOUS`` and not matched. Ports compare after
``normalise_port``. docs/formats/diff.md states the rules and thresholds.

Everything is indexed in dicts keyed by ``(node, port)``, so the diff is linear
in the number of links; ``punch_list_csv`` turns a report into a work list
grouped by switch.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from twin.simcore.errors import FabricError
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec
from twin.simcore.translation import ENGLISH, LATER, Joined, Phrase, Translations, gettext_noop, rendered

__all__ = [
    "DEFAULT_ERROR_THRESHOLDS",
    "FINDING_CLASSES",
    "PUNCH_LIST_COLUMNS",
    "SEVERITIES",
    "DiffReport",
    "EndRef",
    "Finding",
    "diff_fabrics",
    "natural_key",
    "normalise_counter",
    "normalise_name",
    "normalise_port",
    "punch_list_csv",
]

FINDING_CLASSES = (
    "MISSING",
    "EXTRA",
    "MISWIRED",
    "SWAPPED",
    "DEGRADED",
    "UNKNOWN_DEVICE",
    "AMBIGUOUS",
    "CHANGED",
)
SEVERITIES = (gettext_noop("critical"), gettext_noop("major"), gettext_noop("minor"))
PUNCH_LIST_COLUMNS = ("switch", "port", "class", "severity", "peer", "expected", "found", "action")

# Error counters (attrs["errors"] of a found link) and the highest value still healthy.
# Values follow the usual ibqueryerrors practice; a link flap (link_downed) always counts.
DEFAULT_ERROR_THRESHOLDS: Mapping[str, int] = {
    "symbol_errors": 10,
    "link_error_recovery": 10,
    "link_downed": 0,
    "port_rcv_errors": 10,
    "local_link_integrity_errors": 10,
    "excessive_buffer_overrun_errors": 10,
    "port_rcv_remote_physical_errors": 100,
    "port_xmit_discards": 100,
    # NVLink, per link from DCGM (twin/replay/prometheus.py's presets): a CRC-failed flit is
    # replayed and a replay costs a retransmission, so a few of each are tolerated; a recovery
    # retrains the link, like a flap, and always counts.
    "nvlink_crc_flit_errors": 100,
    "nvlink_replay_errors": 10,
    "nvlink_recovery_errors": 0,
}

_STATE_RANK = {"up": 0, "degraded": 1, "down": 2}
# InfiniBand data rates, slowest first (FORMATS.md section 1).
_SPEED_RANK = {
    speed: rank
    for rank, speed in enumerate(("sdr", "ddr", "qdr", "fdr10", "fdr", "edr", "hdr", "ndr", "xdr"))
}
_TIER_RANK = {"leaf": 0, "spine": 1, "core": 2}
# Words of the findings, rendered in the reader's language where they are shown.
_STATE_WORDS = {
    "up": LATER.pgettext("link state", "up"),
    "degraded": LATER.pgettext("link state", "degraded"),
    "down": LATER.pgettext("link state", "down"),
}
_KIND_WORDS = {
    "card": LATER.pgettext("node kind", "card"),
    "nic": LATER.pgettext("node kind", "NIC"),
    "switch": LATER.pgettext("node kind", "switch"),
    "host": LATER.pgettext("node kind", "host"),
    "aggregation": LATER.pgettext("node kind", "aggregation node"),
}
_FIELD_WORDS = {
    "kind": LATER.pgettext("node field", "kind"),
    "tier": LATER.pgettext("node field", "tier"),
    "radix": LATER.pgettext("node field", "radix"),
    "host": LATER.pgettext("node field", "host"),
}
_NO_LINK = LATER.gettext("no link")
_NOT_IN_PLAN = LATER.gettext("not in the plan")
_BANDWIDTH_TOLERANCE = 1e-6  # relative: 399.9999996 Gb/s is still 400

_DIGITS = re.compile(r"(\d+)")
_WHITESPACE = re.compile(r"\s+")
_NAME_SEPARATORS = re.compile(r"[\s_\-]+")
# "node01.cluster.local": the domain is dropped; "10.0.0.1" or "gpu:0000:18:00.0" are left alone.
_QUALIFIED_HOST = re.compile(r"[a-z0-9][a-z0-9_-]*(?:\.[a-z][a-z0-9-]*)+")
_ETHERNET_PREFIX = re.compile(r"^(?:ethernet|eth|et)(?=\d)")
_NUMBERED_PORT = re.compile(r"^(?:port|p)?(\d+)$")
_WIDTH = re.compile(r"^(\d+)x$")


def normalise_name(name: str) -> str:
    """Key under which two node names are the same device.

    Lower case, surrounding space removed, the DNS domain of a qualified host
    name dropped, and runs of spaces, ``_`` and ``-`` unified to one ``-``.

    >>> normalise_name("Leaf_01.cluster.local"), normalise_name(" leaf-01 ")
    ('leaf-01', 'leaf-01')
    >>> normalise_name("node01/mlx5_0")
    'node01/mlx5-0'
    """
    text = name.strip().lower()
    if _QUALIFIED_HOST.fullmatch(text):
        text = text.split(".", 1)[0]
    return _NAME_SEPARATORS.sub("-", text).strip("-")


def normalise_port(port: str) -> str:
    """Key under which two port names are the same port.

    Lower case without spaces; ``Ethernet``/``Eth``/``Et`` before a number
    become ``eth``; a bare number, optionally written ``p7`` or ``port 7``,
    becomes the number; leading zeros of numbers are dropped.

    >>> [normalise_port(p) for p in ("01", "p1", "Port 1", "Eth1/01", "ethernet1/1", "swp3")]
    ['1', '1', '1', 'eth1/1', 'eth1/1', 'swp3']
    """
    text = _WHITESPACE.sub("", port.lower())
    text = _ETHERNET_PREFIX.sub("eth", text)
    numbered = _NUMBERED_PORT.match(text)
    if numbered:
        text = numbered.group(1)
    return _DIGITS.sub(lambda number: str(int(number.group(1))), text)


def normalise_counter(name: str) -> str:
    """Key under which two error-counter names are the same counter.

    Lets perfquery's ``SymbolErrorCounter`` meet ``symbol_errors``: lower case,
    only letters and digits, a trailing ``counter`` and plural ``s`` dropped.

    >>> normalise_counter("SymbolErrorCounter") == normalise_counter("symbol_errors")
    True
    >>> normalise_counter("LinkDownedCounter")
    'linkdowned'
    """
    text = re.sub(r"[^a-z0-9]", "", name.lower())
    text = text.removesuffix("counter")
    return text.removesuffix("s")


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key that orders ``leaf-2`` before ``leaf-10`` (numbers as numbers)."""
    # re.split with a group alternates text and digits, so positions always compare alike.
    parts = _DIGITS.split(text)
    return tuple(int(part) if position % 2 else part for position, part in enumerate(parts))


@dataclass(frozen=True)
class EndRef:
    """One end of a link or a whole node: node id, display name, port (``None`` for a node).

    ``node`` is the id in ``expected`` for nodes both fabrics have, else the id
    in ``found``; ``name`` is the name people use for it (the plan's, if known).
    """

    node: str
    name: str
    port: str | None = None
    is_switch: bool = False

    def label(self) -> str:
        """``leaf01:3`` for a port, ``leaf01`` for a node."""
        return self.name if self.port is None else f"{self.name}:{self.port}"

    def as_plain(self) -> dict[str, Any]:
        return {"node": self.node, "name": self.name, "port": self.port}


@dataclass(frozen=True)
class Finding:
    """One difference between the fabrics.

    ``end`` is where to look (a port, or a node for node findings), ``peer``
    what it is or should be cabled to; ``other_end`` is the second port of a
    ``SWAPPED`` pair. ``expected`` and ``found`` state the facts in words,
    ``message`` is a sentence for people and ``action`` a short fix: Phrases (or
    names), rendered in the reader's language where they are shown (``text``).
    """

    finding_class: str
    severity: str
    end: EndRef
    peer: EndRef | None
    expected: Phrase | Joined | str
    found: Phrase | Joined | str
    message: Phrase | str
    action: Phrase | str
    other_end: EndRef | None = None

    def text(self, field_name: str, translations: Translations = ENGLISH) -> str:
        """``expected``, ``found``, ``message`` or ``action`` in the language of ``translations``."""
        return str(rendered(getattr(self, field_name), translations))

    def location(self) -> tuple[EndRef, EndRef | None]:
        """The end to list the finding under (a switch if either end is one) and the other."""
        if self.peer is not None and self.peer.is_switch and not self.end.is_switch:
            return self.peer, self.end
        return self.end, self.peer

    def as_plain(self, translations: Translations = ENGLISH) -> dict[str, Any]:
        plain: dict[str, Any] = {
            "class": self.finding_class,
            "severity": self.severity,
            "end": self.end.as_plain(),
            "peer": None if self.peer is None else self.peer.as_plain(),
            **{name: self.text(name, translations) for name in ("expected", "found", "message", "action")},
        }
        if self.other_end is not None:
            plain["other_end"] = self.other_end.as_plain()
        return plain


@dataclass(frozen=True)
class DiffReport:
    """Result of ``diff_fabrics``: the findings, sorted by location, and summary figures.

    ``summary`` holds how the fabrics were matched (nodes by id and by name,
    links compared); ``counts`` the number of findings of each class.
    """

    expected_name: str
    found_name: str
    findings: tuple[Finding, ...]
    summary: Mapping[str, int] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        """Findings per class, every class of ``FINDING_CLASSES`` present."""
        tally = Counter(finding.finding_class for finding in self.findings)
        return {name: tally[name] for name in FINDING_CLASSES}

    @property
    def clean(self) -> bool:
        """Whether the fabrics agree (no finding at all)."""
        return not self.findings

    def as_plain(self, translations: Translations = ENGLISH) -> dict[str, Any]:
        """JSON-ready dict: names, counts, summary and every finding (its words in the language
        of ``translations``)."""
        return {
            "expected": self.expected_name,
            "found": self.found_name,
            "counts": self.counts,
            "summary": dict(self.summary),
            "findings": [finding.as_plain(translations) for finding in self.findings],
        }


def diff_fabrics(
    expected: FabricSpec,
    found: FabricSpec,
    *,
    error_thresholds: Mapping[str, int | None] | None = None,
) -> DiffReport:
    """Compare ``found`` (a discovery) with ``expected`` (a plan or an earlier snapshot).

    ``error_thresholds`` overrides entries of ``DEFAULT_ERROR_THRESHOLDS``
    (counter name -> highest healthy value; ``None`` switches a counter off; new
    names add a check). Counter names compare through ``normalise_counter``.

    Both fabrics must be valid: ``FabricError`` otherwise, saying which one.
    """
    thresholds = _thresholds(error_thresholds)
    for role, spec in (("expected", expected), ("found", found)):
        try:
            spec.validate()
        except FabricError as error:
            inconsistent = (
                LATER.gettext("cannot compare: the expected fabric %(fabric)s is inconsistent") if role == "expected"
                else LATER.gettext("cannot compare: the found fabric %(fabric)s is inconsistent")
            )  # fmt: skip
            raise FabricError(inconsistent % {"fabric": repr(spec.name)}, error.problems) from error
    return _Diff(_cabled_only(expected), _cabled_only(found), thresholds).run()


def _cabled_only(spec: FabricSpec) -> FabricSpec:
    """``spec`` without what the twin inferred at upload (cards standing for HCAs, a scale-up a
    hint file left out: ``attrs["inferred"]``): nobody cabled those, so no plan lists them."""
    if not any("inferred" in node.attrs for node in spec.nodes):
        return spec
    inferred = {node.id for node in spec.nodes if "inferred" in node.attrs}
    return replace(
        spec,
        nodes=tuple(node for node in spec.nodes if node.id not in inferred),
        links=tuple(link for link in spec.links if "inferred" not in link.attrs and link.a not in inferred and link.b not in inferred),
    )


def punch_list_csv(report: DiffReport, translations: Translations = ENGLISH) -> str:
    """The findings as a CSV work list, one row each, grouped by switch.

    Rows are sorted by switch name, then port (numbers in numeric order);
    findings that touch no switch are listed under their node after the
    switches. Columns: ``PUNCH_LIST_COLUMNS``; the words (severity, expected,
    found, action) in the language of ``translations``, the class as an identifier.
    """
    rows = []
    for finding in report.findings:
        where, peer = finding.location()
        port = where.port or ""
        if finding.other_end is not None:
            port = f"{port} <-> {finding.other_end.port}"
        rows.append(
            (
                _location_key(where, finding),
                (
                    where.name,
                    port,
                    finding.finding_class,
                    translations.gettext(finding.severity),
                    "" if peer is None else peer.label(),
                    finding.text("expected", translations),
                    finding.text("found", translations),
                    finding.text("action", translations),
                ),
            )
        )
    rows.sort(key=lambda row: row[0])
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(PUNCH_LIST_COLUMNS)
    writer.writerows(row for _, row in rows)
    return buffer.getvalue()


def _location_key(where: EndRef, finding: Finding) -> tuple[Any, ...]:
    return (
        not where.is_switch,
        natural_key(where.name),
        natural_key(where.port or ""),
        FINDING_CLASSES.index(finding.finding_class),
        natural_key(finding.peer.label() if finding.peer else ""),
    )


def _thresholds(overrides: Mapping[str, int | None] | None) -> dict[str, float]:
    """Normalised counter name -> highest healthy value."""
    merged: dict[str, float] = {
        normalise_counter(name): float(limit) for name, limit in DEFAULT_ERROR_THRESHOLDS.items()
    }
    for name, limit in (overrides or {}).items():
        key = normalise_counter(name)
        if limit is None:
            merged.pop(key, None)
            continue
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit >= 0:
            raise ValueError(
                f"error threshold {name!r} is {limit!r}; expected a non-negative number "
                "(the highest healthy count) or None to switch the counter off"
            )
        merged[key] = float(limit)
    return merged


@dataclass(frozen=True)
class _Shortfall:
    """One way a found link is worse than planned; ``check`` names the test that failed."""

    check: str  # state, bandwidth, width, speed or counter
    severity: str
    expected: Phrase | str
    found: Phrase | str
    reason: Phrase


_End = tuple[str, str]  # (canonical node id, normalised port)
_Pair = tuple[_End, _End]


def _pair(first: _End, second: _End) -> _Pair:
    return (first, second) if first <= second else (second, first)


class _Side:
    """One fabric's links indexed by canonical ``(node, port)`` end and by end pair."""

    def __init__(self, spec: FabricSpec, canonical: Mapping[str, str], role: str) -> None:
        self.spec = spec
        self.role = role
        self.ends: list[_Pair] = []
        self.link_at: dict[_End, int] = {}
        self.link_of_pair: dict[_Pair, int] = {}
        self.port_clashes: list[tuple[int, _End, int]] = []
        # Port names repeat on every switch ("1".."64"): normalise each spelling once.
        port_keys: dict[str, str] = {}

        def port_key(port: str) -> str:
            key = port_keys.get(port)
            if key is None:
                key = port_keys[port] = normalise_port(port)
            return key

        for position, link in enumerate(spec.links):
            first = (canonical[link.a], port_key(link.a_port))
            second = (canonical[link.b], port_key(link.b_port))
            self.ends.append((first, second))
            clash = self.link_at.get(first, self.link_at.get(second))
            if clash is not None:
                self.port_clashes.append((position, first if first in self.link_at else second, clash))
                continue
            self.link_at[first] = self.link_at[second] = position
            self.link_of_pair[_pair(first, second)] = position

    def peer(self, link: int, end: _End) -> _End:
        first, second = self.ends[link]
        return second if end == first else first

    def port_text(self, link: int, end: _End) -> str:
        spec_link = self.spec.links[link]
        return spec_link.a_port if self.ends[link][0] == end else spec_link.b_port


class _Diff:
    """One comparison; holds the indexes shared by the finding passes."""

    def __init__(
        self, expected: FabricSpec, found: FabricSpec, thresholds: Mapping[str, float]
    ) -> None:
        self.expected = expected
        self.found = found
        self.thresholds = thresholds
        self.findings: list[Finding] = []
        self.summary: dict[str, int] = {}

        self.matched = self._match_nodes()  # found id -> expected id
        expected_ids = {node.id for node in expected.nodes}
        self.missing_nodes = expected_ids - set(self.matched.values())
        self.unknown_nodes = {node.id for node in found.nodes} - self.matched.keys()
        # Canonical ids: the expected id for matched nodes, the found id for unknown ones
        # (an unknown id never equals an expected id: it would have matched by id).
        self.display: dict[str, NodeSpec] = {node.id: node for node in expected.nodes}
        self.display.update((node.id, node) for node in found.nodes if node.id in self.unknown_nodes)
        found_canonical = {node.id: self.matched.get(node.id, node.id) for node in found.nodes}
        self.plan = _Side(expected, {node_id: node_id for node_id in expected_ids}, "expected")
        self.seen = _Side(found, found_canonical, "found")
        # Filled by _links: planned links and found links not yet explained by a finding.
        self.open_planned: list[int] = []
        self.open_found: set[int] = set()
        self.explained_planned: set[int] = set()

    def run(self) -> DiffReport:
        self._changed_nodes()
        self._port_clashes()
        self._links()
        self._node_findings()
        self.findings.sort(key=lambda finding: _location_key(finding.location()[0], finding))
        return DiffReport(self.expected.name, self.found.name, tuple(self.findings), self.summary)

    # -- nodes ---------------------------------------------------------------

    def _match_nodes(self) -> dict[str, str]:
        """Found id -> expected id, by id, then by unambiguous normalised name."""
        expected_ids = {node.id for node in self.expected.nodes}
        matched = {node.id: node.id for node in self.found.nodes if node.id in expected_ids}
        self.summary["nodes_matched_by_id"] = len(matched)

        by_name: dict[str, tuple[list[NodeSpec], list[NodeSpec]]] = defaultdict(lambda: ([], []))
        for node in self.expected.nodes:
            if node.id not in matched:
                by_name[normalise_name(node.name)][0].append(node)
        for node in self.found.nodes:
            if node.id not in matched:
                by_name[normalise_name(node.name)][1].append(node)
        by_name_count = 0
        for key, (planned, discovered) in by_name.items():
            if not (key and planned and discovered):
                continue  # an empty name says nothing about identity
            if len(planned) == 1 and len(discovered) == 1:
                matched[discovered[0].id] = planned[0].id
                by_name_count += 1
            else:
                self._ambiguous_name(key, planned, discovered)
        self.summary["nodes_matched_by_name"] = by_name_count
        return matched

    def _ambiguous_name(self, key: str, planned: list[NodeSpec], discovered: list[NodeSpec]) -> None:
        def listing(nodes: list[NodeSpec]) -> str:
            return ", ".join(f"{node.name!r} ({node.id})" for node in nodes)

        node = planned[0]
        self.findings.append(
            Finding(
                "AMBIGUOUS",
                "major",
                EndRef(node.id, node.name, None, node.kind == "switch"),
                None,
                _shared_name(key, planned, listing(planned)),
                _shared_name(key, discovered, listing(discovered)),
                LATER.gettext(
                    "name %(name)s is shared by several nodes, so they were not matched by name; "
                    "their links are reported as missing and unknown"
                ) % {"name": repr(key)},
                LATER.gettext("give the devices unique names (or the plan their GUIDs) and compare again"),
            )
        )

    def _ref(self, node_id: str, port: str | None = None) -> EndRef:
        node = self.display[node_id]
        return EndRef(node_id, node.name or node_id, port, node.kind == "switch")

    def _changed_nodes(self) -> None:
        found_nodes = {node.id: node for node in self.found.nodes}
        for found_id, expected_id in self.matched.items():
            planned, discovered = self.display[expected_id], found_nodes[found_id]
            if (planned.kind, planned.tier, planned.radix, planned.host) == (
                discovered.kind,
                discovered.tier,
                discovered.radix,
                discovered.host,
            ):
                continue  # the common case, decided without the field-by-field look
            differences = []
            for field_name in ("kind", "tier", "radix", "host"):
                before, after = getattr(planned, field_name), getattr(discovered, field_name)
                if before is None or after is None:
                    continue  # a plan may not know the radix or host: not a difference
                if field_name == "host" and normalise_name(before) == normalise_name(after):
                    continue
                if before != after:
                    differences.append((field_name, before, after))
            if not differences:
                continue
            self.findings.append(
                Finding(
                    "CHANGED",
                    "minor",
                    self._ref(expected_id),
                    None,
                    Joined([_FIELD_VALUE % {"field": _FIELD_WORDS[name], "value": before} for name, before, _ in differences]),
                    Joined([_FIELD_VALUE % {"field": _FIELD_WORDS[name], "value": after} for name, _, after in differences]),
                    LATER.gettext("%(node)s changed: %(changes)s") % {
                        "node": planned.name or expected_id,
                        "changes": [
                            LATER.gettext("%(field)s %(before)s -> %(after)s") % {"field": _FIELD_WORDS[name], "before": repr(before), "after": repr(after)}
                            for name, before, after in differences
                        ],
                    },
                    LATER.gettext("check the device model or update the plan"),
                )
            )

    def _port_clashes(self) -> None:
        for side in (self.plan, self.seen):
            for position, end, other in side.port_clashes:
                node_id, _ = end
                link = side.spec.links[position]
                self.findings.append(
                    Finding(
                        "AMBIGUOUS",
                        "major",
                        self._ref(node_id, side.port_text(other, end)),
                        None,
                        LATER.gettext("one link per port"),
                        _SAME_PORT[side.role] % {"other": str(other), "position": str(position), "link": f"{link.a}:{link.a_port} - {link.b}:{link.b_port}"},
                        _PORT_LEFT_OUT[side.role] % {"port": repr(end[1]), "node": self._ref(node_id).name, "position": str(position)},
                        LATER.gettext("correct the port names in the source file"),
                    )
                )

    # -- links ---------------------------------------------------------------

    def _links(self) -> None:
        plan, seen = self.plan, self.seen
        shared = plan.link_of_pair.keys() & seen.link_of_pair.keys()
        self.summary["links_expected"] = len(self.expected.links)
        self.summary["links_found"] = len(self.found.links)
        self.summary["links_matched"] = len(shared)
        self._degraded(sorted(shared))

        # Links touching a missing or unknown node are reported with that node.
        self.open_planned = sorted(
            position
            for pair, position in plan.link_of_pair.items()
            if pair not in shared and not self._touches(pair, self.missing_nodes)
        )
        self.open_found = {
            position
            for pair, position in seen.link_of_pair.items()
            if pair not in shared and not self._touches(pair, self.unknown_nodes)
        }
        self._swaps()
        self._miswired()
        for position in self.open_planned:
            if position not in self.explained_planned:
                self._link_finding("MISSING", plan, position)
        for position in sorted(self.open_found):
            self._link_finding("EXTRA", seen, position)

    @staticmethod
    def _touches(pair: _Pair, nodes: set[str]) -> bool:
        return pair[0][0] in nodes or pair[1][0] in nodes

    def _open_found_at(self, end: _End) -> int | None:
        position = self.seen.link_at.get(end)
        return position if position in self.open_found else None

    def _swaps(self) -> None:
        """Two planned links whose far ends were exchanged: A-X, B-Y planned; A-Y, B-X found."""
        plan, seen = self.plan, self.seen
        open_planned = set(self.open_planned)
        for planned in self.open_planned:
            if planned in self.explained_planned:
                continue
            candidates = []
            for end in plan.ends[planned]:
                far = plan.peer(planned, end)
                found_here = self._open_found_at(end)
                if found_here is None:
                    continue
                other_far = seen.peer(found_here, end)
                other_planned = plan.link_at.get(other_far)
                if other_planned in (None, planned) or other_planned not in open_planned:
                    continue
                if other_planned in self.explained_planned:
                    continue
                other_end = plan.peer(other_planned, other_far)
                found_there = self._open_found_at(other_end)
                if found_there in (None, found_here) or seen.peer(found_there, other_end) != far:
                    continue
                candidates.append((end, other_end, far, other_far, other_planned, found_here, found_there))
            if not candidates:
                continue
            # Describe the swap where both ports are on one device, a switch if possible.
            end, other_end, far, other_far, other_planned, found_here, found_there = min(
                candidates,
                key=lambda c: (c[0][0] != c[1][0], not self._ref(c[0][0]).is_switch),
            )
            self.explained_planned.update((planned, other_planned))
            self.open_found.difference_update((found_here, found_there))
            self._swap_finding(planned, end, far, other_planned, other_end, other_far)

    def _swap_finding(
        self, planned: int, end: _End, far: _End, other_planned: int, other_end: _End, other_far: _End
    ) -> None:
        plan = self.plan
        here = self._ref(end[0], plan.port_text(planned, end))
        there = self._ref(other_end[0], plan.port_text(other_planned, other_end))
        peer_here = self._ref(far[0], plan.port_text(planned, far))
        peer_there = self._ref(other_far[0], plan.port_text(other_planned, other_far))
        self.findings.append(
            Finding(
                "SWAPPED",
                "major",
                here,
                peer_there,
                f"{here.label()} - {peer_here.label()}, {there.label()} - {peer_there.label()}",
                f"{here.label()} - {peer_there.label()}, {there.label()} - {peer_here.label()}",
                LATER.gettext("the cables at %(here)s and %(there)s are swapped") % {"here": here.label(), "there": there.label()},
                LATER.gettext("swap the cables at %(here)s and %(there)s") % {"here": here.label(), "there": there.label()},
                other_end=there,
            )
        )

    def _miswired(self) -> None:
        """A planned link one of whose ends holds a cable to another peer.

        The first pass takes only cables that landed on the right device but the
        wrong port (the usual mistake), so that they are not blamed on a
        neighbour's planned link; the second pass takes the rest.
        """
        plan, seen = self.plan, self.seen
        for same_device_only in (True, False):
            for planned in self.open_planned:
                if planned in self.explained_planned:
                    continue
                for end in plan.ends[planned]:
                    found_here = self._open_found_at(end)
                    if found_here is None:
                        continue
                    far, found_far = plan.peer(planned, end), seen.peer(found_here, end)
                    if same_device_only and far[0] != found_far[0]:
                        continue
                    self.open_found.discard(found_here)
                    self.explained_planned.add(planned)
                    self._miswired_finding(planned, end, far, found_here, found_far)

    def _miswired_finding(
        self, planned: int, end: _End, far: _End, found_here: int, found_far: _End
    ) -> None:
        anchor = self._ref(end[0], self.plan.port_text(planned, end))
        should = self._ref(far[0], self.plan.port_text(planned, far))
        actual = self._ref(found_far[0], self.seen.port_text(found_here, found_far))
        if far in self.seen.link_at:
            action = LATER.gettext("move cable from %(actual)s to %(planned)s (%(planned)s is in use: see its row)")
        else:
            action = LATER.gettext("move cable from %(actual)s to %(planned)s")
        self.findings.append(
            Finding(
                "MISWIRED",
                "major",
                anchor,
                actual,
                should.label(),
                actual.label(),
                LATER.gettext("%(end)s reaches %(actual)s instead of %(planned)s") % {"end": anchor.label(), "actual": actual.label(), "planned": should.label()},
                action % {"actual": actual.label(), "planned": should.label()},
            )
        )

    def _link_finding(self, finding_class: str, side: _Side, position: int) -> None:
        link = side.spec.links[position]
        first, second = self._oriented(side, position)
        ends = {"a": first.label(), "b": second.label()}
        if finding_class == "MISSING":
            severity, expected, found = "major", _describe_link(link), _NO_LINK
            message = LATER.gettext("planned link %(a)s - %(b)s is missing") % ends
            action = LATER.gettext("connect %(a)s to %(b)s") % ends
        else:
            severity, expected, found = "minor", _NO_LINK, _describe_link(link)
            message = LATER.gettext("link %(a)s - %(b)s is not in the plan") % ends
            action = LATER.gettext("remove the cable %(a)s - %(b)s or add it to the plan") % ends
        self.findings.append(Finding(finding_class, severity, first, second, expected, found, message, action))

    def _oriented(self, side: _Side, position: int) -> tuple[EndRef, EndRef]:
        """The link's ends, the one to list it under first (a switch, the lower tier)."""
        refs = [self._ref(end[0], side.port_text(position, end)) for end in side.ends[position]]

        def rank(ref: EndRef) -> tuple[Any, ...]:
            tier = self.display[ref.node].tier
            return (not ref.is_switch, _TIER_RANK.get(tier or "", 3), natural_key(ref.name))

        refs.sort(key=rank)
        return refs[0], refs[1]

    # -- link quality --------------------------------------------------------

    def _degraded(self, shared: list[_Pair]) -> None:
        if not shared:
            return
        planned = [self.expected.links[self.plan.link_of_pair[pair]] for pair in shared]
        seen_positions = [self.seen.link_of_pair[pair] for pair in shared]
        discovered = [self.found.links[position] for position in seen_positions]
        planned_gbps = np.fromiter((link.bandwidth_gbps for link in planned), float, len(planned))
        found_gbps = np.fromiter((link.bandwidth_gbps for link in discovered), float, len(planned))
        planned_state = np.fromiter((_STATE_RANK[link.state] for link in planned), np.int8, len(planned))
        found_state = np.fromiter((_STATE_RANK[link.state] for link in discovered), np.int8, len(planned))
        suspect = (found_gbps < planned_gbps * (1 - _BANDWIDTH_TOLERANCE)) | (found_state > planned_state)
        # Width, speed and counters live in attrs: only links that carry attrs need a look.
        with_attrs = np.fromiter((bool(link.attrs) for link in discovered), bool, len(planned))
        for index in np.flatnonzero(suspect | with_attrs):
            shortfalls = list(self._degradations(planned[index], discovered[index]))
            if shortfalls:
                self._degraded_finding(seen_positions[index], shortfalls)

    def _degradations(self, planned: LinkSpec, discovered: LinkSpec) -> Iterator[_Shortfall]:
        """Each way in which the found link falls short of the planned one."""
        if _STATE_RANK[discovered.state] > _STATE_RANK[planned.state]:
            yield _Shortfall(
                "state",
                "critical" if discovered.state == "down" else "major",
                LATER.gettext("state %(state)s") % {"state": _STATE_WORDS[planned.state]},
                LATER.gettext("state %(state)s") % {"state": _STATE_WORDS[discovered.state]},
                LATER.gettext("link is %(state)s") % {"state": _STATE_WORDS[discovered.state]},
            )
        if discovered.bandwidth_gbps < planned.bandwidth_gbps * (1 - _BANDWIDTH_TOLERANCE):
            yield _Shortfall(
                "bandwidth",
                "major",
                f"{planned.bandwidth_gbps:g} Gb/s",
                f"{discovered.bandwidth_gbps:g} Gb/s",
                LATER.gettext("bandwidth below plan"),
            )
        planned_width, found_width = _width(planned), _width(discovered)
        if planned_width and found_width and found_width < planned_width:
            yield _Shortfall(
                "width",
                "major",
                LATER.gettext("width %(width)s") % {"width": planned.attrs["width"]},
                LATER.gettext("width %(width)s") % {"width": discovered.attrs["width"]},
                LATER.gettext("narrower link"),
            )
        planned_speed, found_speed = _speed(planned), _speed(discovered)
        if planned_speed is not None and found_speed is not None and found_speed < planned_speed:
            yield _Shortfall(
                "speed",
                "major",
                LATER.gettext("speed %(speed)s") % {"speed": planned.attrs["speed"]},
                LATER.gettext("speed %(speed)s") % {"speed": discovered.attrs["speed"]},
                LATER.gettext("slower link"),
            )
        errors = discovered.attrs.get("errors")
        if isinstance(errors, Mapping):
            for counter, value in sorted(errors.items()):
                limit = self.thresholds.get(normalise_counter(counter))
                if limit is None or isinstance(value, bool) or not isinstance(value, (int, float)):
                    continue
                if value > limit:
                    yield _Shortfall(
                        "counter",
                        "minor",
                        f"{counter} <= {limit:g}",
                        f"{counter} {value:g}",
                        LATER.gettext("%(counter)s over threshold") % {"counter": counter},
                    )

    def _degraded_finding(self, position: int, shortfalls: list[_Shortfall]) -> None:
        first, second = self._oriented(self.seen, position)
        cable = {"cable": f"{first.label()} - {second.label()}"}
        checks = {shortfall.check for shortfall in shortfalls}
        if "state" in checks:
            action = LATER.gettext("check both ends of %(cable)s: reseat or replace the cable") % cable
        elif checks == {"counter"}:
            action = LATER.gettext("clear counters and watch %(cable)s; reseat or replace the cable if they grow") % cable
        else:
            action = LATER.gettext("reseat or replace the cable %(cable)s, check both transceivers") % cable
        self.findings.append(
            Finding(
                "DEGRADED",
                min((shortfall.severity for shortfall in shortfalls), key=SEVERITIES.index),
                first,
                second,
                Joined([shortfall.expected for shortfall in shortfalls], "; "),
                Joined([shortfall.found for shortfall in shortfalls], "; "),
                LATER.gettext("link %(cable)s: %(reasons)s") % {**cable, "reasons": [shortfall.reason for shortfall in shortfalls]},
                action,
            )
        )

    # -- whole nodes ---------------------------------------------------------

    def _node_findings(self) -> None:
        for side, nodes, finding_class in (
            (self.plan, self.missing_nodes, "MISSING"),
            (self.seen, self.unknown_nodes, "UNKNOWN_DEVICE"),
        ):
            cabling: dict[str, list[tuple[str, EndRef]]] = defaultdict(list)
            for position, (first, second) in enumerate(side.ends):
                for end, far in ((first, second), (second, first)):
                    if end[0] in nodes:
                        peer = self._ref(far[0], side.port_text(position, far))
                        cabling[end[0]].append((side.port_text(position, end), peer))
            for node_id in nodes:
                links = sorted(cabling.get(node_id, []), key=lambda item: natural_key(item[0]))
                self._node_finding(finding_class, node_id, links)

    def _node_finding(self, finding_class: str, node_id: str, links: list[tuple[str, EndRef]]) -> None:
        node = self.display[node_id]
        ref = self._ref(node_id)
        # A card or NIC is listed under the first switch port it is (to be) cabled to.
        peer = None if ref.is_switch else next((far for _, far in links if far.is_switch), None)
        kind = _KIND_WORDS.get(node.kind, node.kind)
        if node_id != ref.name:
            described = LATER.gettext("%(kind)s %(name)s (%(id)s)") % {"kind": kind, "name": ref.name, "id": node_id}
        else:
            described = LATER.gettext("%(kind)s %(name)s") % {"kind": kind, "name": ref.name}
        cabling = LATER.ngettext("%(count)s link", "%(count)s links", len(links)) % {"count": len(links)}
        if links:
            cabling = LATER.ngettext("%(count)s link: %(ports)s", "%(count)s links: %(ports)s", len(links)) % {
                "count": len(links), "ports": [LATER.gettext("%(port)s to %(peer)s") % {"port": port, "peer": far.label()} for port, far in links],
            }  # fmt: skip
        words = {"node": described, "cabling": cabling, "name": ref.name}
        if finding_class == "MISSING":
            severity = "critical" if node.kind == "switch" else "major"
            self.findings.append(
                Finding(
                    "MISSING",
                    severity,
                    ref,
                    peer,
                    LATER.gettext("%(node)s, %(cabling)s") % words,
                    LATER.gettext("not discovered"),
                    LATER.gettext("%(node)s was not discovered; missing with it: %(cabling)s") % words,
                    LATER.gettext("check power and cabling of %(name)s") % words,
                )
            )
        else:
            self.findings.append(
                Finding(
                    "UNKNOWN_DEVICE",
                    "minor",
                    ref,
                    peer,
                    _NOT_IN_PLAN,
                    LATER.gettext("%(node)s, %(cabling)s") % words,
                    LATER.gettext("%(node)s is not in the plan; it has %(cabling)s") % words,
                    LATER.gettext("identify %(name)s: add it to the plan or remove it") % words,
                )
            )


def _describe_link(link: LinkSpec) -> Phrase | str:
    """``400 Gb/s 4x NDR``, and its state unless up."""
    described = " ".join([f"{link.bandwidth_gbps:g} Gb/s", *(str(link.attrs[key]) for key in ("width", "speed") if key in link.attrs)])
    if link.state == "up":
        return described
    return LATER.gettext("%(link)s, %(state)s") % {"link": described, "state": _STATE_WORDS[link.state]}


def _shared_name(key: str, nodes: list[NodeSpec], listing: str) -> Phrase:
    return LATER.ngettext("name %(name)s for %(count)s node: %(nodes)s", "name %(name)s for %(count)s nodes: %(nodes)s", len(nodes)) % {
        "name": repr(key), "count": len(nodes), "nodes": listing,
    }  # fmt: skip


_FIELD_VALUE = LATER.gettext("%(field)s %(value)s")
_SAME_PORT = {
    "expected": LATER.gettext("links[%(other)s] and links[%(position)s] (%(link)s) of the expected fabric use the same port"),
    "found": LATER.gettext("links[%(other)s] and links[%(position)s] (%(link)s) of the found fabric use the same port"),
}
_PORT_LEFT_OUT = {
    "expected": LATER.gettext(
        "two links of the expected fabric use port %(port)s of %(node)s once port names are normalised; "
        "links[%(position)s] was left out of the comparison"
    ),
    "found": LATER.gettext(
        "two links of the found fabric use port %(port)s of %(node)s once port names are normalised; "
        "links[%(position)s] was left out of the comparison"
    ),
}


def _width(link: LinkSpec) -> int | None:
    match = _WIDTH.match(str(link.attrs.get("width", "")).strip().lower())
    return int(match.group(1)) if match else None


def _speed(link: LinkSpec) -> int | None:
    return _SPEED_RANK.get(str(link.attrs.get("speed", "")).strip().lower())

