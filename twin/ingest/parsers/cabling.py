"""Cabling plans as CSV: NetBox cable imports/exports and a plain point-to-point list.

A plan says which cables *should* exist; the twin compares it with what
discovery found. Both formats give a ``FabricSpec`` with ``attrs["plan"] =
True`` (docs/formats/netbox-cables.md, docs/formats/cabling-csv.md):

- ``netbox-cables``: NetBox's cable bulk-import CSV (``side_a_device,
  side_a_type, side_a_name, side_b_..., type, status, label, color, length,
  length_unit``), or its UI export (``Device A, Termination A, Device B,
  Termination B, Status, Type, Length``...);
- ``cabling-csv``: ``device,port,peer_device,peer_port,speed`` with optional
  ``kind``/``peer_kind`` (or ``role``/``peer_role``) and ``state`` columns.

Devices become nodes by name. Their kind comes from a kind/role column when
the file has one, else from the name (``device_role``): leaf/spine/core/
switch/sw/tor names are switches, ``...gpu3``/``card-0001`` names are cards,
anything else is a host. Every problem is reported with its CSV line, up to
``ParseOptions.max_problems`` at once.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from twin.simcore.translation import LATER, Joined, gettext_noop
from twin.ingest.errors import IngestError, ProblemCollector
from twin.ingest.hostlist import host_node_id
from twin.ingest.options import ParseOptions
from twin.ingest.parsers.infiniband import LANE_GBPS
from twin.ingest.registry import Parser, register_parser
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

__all__ = [
    "CABLING_FORMAT",
    "DEFAULT_LATENCY_NS",
    "DEFAULT_LINK_GBPS",
    "NETBOX_FORMAT",
    "NS_PER_METRE",
    "CablingCsvParser",
    "NetboxCablesParser",
    "device_role",
    "device_node",
    "parse_speed",
]

NETBOX_FORMAT = "netbox-cables"
CABLING_FORMAT = "cabling-csv"
# An NDR InfiniBand / 400GbE port, the usual AI-fabric port today.
DEFAULT_LINK_GBPS = 400.0
# About 2 m of cable, for cables of unknown length.
DEFAULT_LATENCY_NS = 10.0
# Signal propagation in copper twinax and in fibre: about 5 ns per metre.
NS_PER_METRE = 5.0

# InfiniBand rate names, 4 lanes unless a width says otherwise ("1xNDR"), or split-port forms ("NDR200").
_IB_SPEED = re.compile(rf"(?:(\d+)x)?({'|'.join(sorted(LANE_GBPS, key=len, reverse=True))})(\d+)?", re.IGNORECASE)
# A lower-case "b" is bits: "400 GB/s" (bytes) is refused rather than read 8 times too low.
_NUMERIC_SPEED = re.compile(r"(\d+(?:\.\d+)?)\s*(?:([MGTmgt])(?:b/s|bps|bit/s|bE|be|b|E|e)?)?")
_UNIT_GBPS = {"m": 0.001, "g": 1.0, "t": 1000.0}
_SPEED_EXPECTED = LATER.gettext("a speed such as 400G, 400 Gb/s, 400Gbps, 1.6T, 100M, 400 (Gb/s), NDR, 4xHDR or NDR200")

_SWITCH_NAME = re.compile(r"leaf|spine|core|switch|(?<![a-z])(?:sw|tor)(?![a-z])")
_CARD_NAME = re.compile(r"(?:^|[^a-z])(?:gpu|card)[-_]?\d+$")
# Kind/role column values -> (kind, tier); a tier of None for a switch comes from the name.
_ROLES = {
    "leaf": ("switch", "leaf"),
    "spine": ("switch", "spine"),
    "core": ("switch", "core"),
    "switch": ("switch", None),
    "host": ("host", None),
    "server": ("host", None),
    "node": ("host", None),
    "card": ("card", None),
    "gpu": ("card", None),
    "accelerator": ("card", None),
    "nic": ("nic", None),
    "hca": ("nic", None),
}
_ROLE_EXPECTED = LATER.gettext("one of %(names)s") % {"names": Joined(list(_ROLES), ", ")}

# NetBox cable status -> link state: the plan expects only connected cables to carry traffic now.
_NETBOX_STATES = {"connected": "up", "planned": "down", "decommissioning": "down"}
_LINK_STATES = {"up": "up", "down": "down", "degraded": "degraded"} | _NETBOX_STATES
# Twisted-pair categories cap the speed below any AI-fabric default (Gb/s).
_COPPER_GBPS = {"cat5": 1.0, "cat5e": 1.0, "cat6": 10.0, "cat6a": 10.0, "cat7": 10.0, "cat7a": 10.0, "cat8": 40.0}
_DATA_TERMINATIONS = {"dcim.interface", "dcim.frontport", "dcim.rearport"}
# Power and console cables carry no fabric traffic: their rows are skipped.
_OTHER_TERMINATIONS = {
    "dcim.consoleport", "dcim.consoleserverport", "dcim.powerport", "dcim.poweroutlet", "dcim.powerfeed",
}
_METRES_PER_UNIT = {
    "m": 1.0, "meter": 1.0, "meters": 1.0, "metre": 1.0, "metres": 1.0, "cm": 0.01, "centimeters": 0.01,
    "km": 1000.0, "kilometers": 1000.0, "ft": 0.3048, "feet": 0.3048, "foot": 0.3048,
    "in": 0.0254, "inch": 0.0254, "inches": 0.0254, "mi": 1609.344, "miles": 1609.344,
}
_LENGTH = re.compile(r"(\d+(?:\.\d+)?)\s*([A-Za-z]*)")

# NetBox UI export headers -> the import column they stand for.
_NETBOX_DISPLAY_HEADERS = {
    "device a": "side_a_device",
    "termination a": "side_a_name",
    "device b": "side_b_device",
    "termination b": "side_b_name",
    "length unit": "length_unit",
}
_NETBOX_REQUIRED = ("side_a_device", "side_a_name", "side_b_device", "side_b_name")
_CABLING_REQUIRED = ("device", "port", "peer_device", "peer_port")
_DETECT_LINES, _DETECT_CHARACTERS = 5, 10_000
_CABLING_ALIASES = {"role": "kind", "peer_role": "peer_kind", "status": "state"}


def parse_speed(text: str) -> tuple[float, dict[str, str]] | None:
    """Gb/s of a speed as cabling plans write it, with ``speed``/``width`` attrs for InfiniBand names.

    Plain numbers are Gb/s. ``None`` if ``text`` is not a speed.

    >>> parse_speed("400G"), parse_speed("1.6 Tb/s"), parse_speed("200")
    ((400.0, {}), (1600.0, {}), (200.0, {}))
    >>> parse_speed("4xNDR"), parse_speed("NDR200"), parse_speed("fast")
    ((400.0, {'speed': 'NDR', 'width': '4x'}), (200.0, {'speed': 'NDR'}), None)
    """
    text = text.strip()
    if match := _IB_SPEED.fullmatch(text):
        width, rate, split = match.groups()
        name = rate.upper()
        if split:  # NDR200, HDR100: a split port, its rate written out
            return float(split), {"speed": name}
        lanes = int(width) if width else 4
        return LANE_GBPS[name] * lanes, {"speed": name} | ({"width": f"{lanes}x"} if width else {})
    if match := _NUMERIC_SPEED.fullmatch(text):
        number, unit = match.groups()
        return float(number) * _UNIT_GBPS[(unit or "g").lower()], {}
    return None


def device_role(name: str) -> tuple[str, str | None]:
    """Kind and tier of a device known only by name.

    >>> [device_role(name) for name in ("leaf01", "A09-P1-IBSPINE-01", "mgmt-sw-r01", "node01-gpu3", "node07")]
    [('switch', 'leaf'), ('switch', 'spine'), ('switch', 'leaf'), ('card', None), ('host', None)]
    """
    lowered = name.strip().lower()
    if _SWITCH_NAME.search(lowered):
        return "switch", _tier_from_name(lowered)
    if _CARD_NAME.search(lowered):
        return "card", None
    return "host", None


def _tier_from_name(lowered: str) -> str:
    if "core" in lowered or "superspine" in lowered or "super-spine" in lowered:
        return "core"
    return "spine" if "spine" in lowered else "leaf"


def device_node(name: str, kind: str, tier: str | None = None) -> NodeSpec:
    """The node of a device known by name: hosts ``host:<short name>``, others the lower-case name."""
    name = name.strip()
    node_id = host_node_id(name) if kind == "host" else name.lower()
    if kind == "switch" and tier is None:
        tier = _tier_from_name(name.lower())
    return NodeSpec(node_id, kind, name, tier=tier if kind == "switch" else None)


@dataclass(frozen=True)
class _Cable:
    """One row of a plan, read and checked: the two ends and what the plan says about the cable."""

    line: int
    ends: tuple[tuple[str, str], tuple[str, str]]  # (device name, port) twice
    roles: tuple[tuple[str, str | None] | None, tuple[str, str | None] | None]
    bandwidth_gbps: float | None
    latency_ns: float | None
    state: str
    attrs: dict = field(default_factory=dict)


@register_parser
class NetboxCablesParser(Parser):
    """Reads NetBox's cable CSV (bulk import, or UI export with Device A/B columns)."""

    name = NETBOX_FORMAT
    label = gettext_noop("NetBox cables CSV (cabling plan)")
    extensions = (".csv",)

    def detect(self, text: str) -> bool:
        columns = _header_columns(text)
        return {"side_a_device", "side_b_device"} <= columns or {"termination a", "termination b"} <= columns

    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        problems = ProblemCollector(source_name, limit=options.max_problems)
        table = _Table(text, source_name, problems, _NETBOX_REQUIRED, _NETBOX_DISPLAY_HEADERS)
        cables = [cable for row in table.rows() for cable in _netbox_cables(row, problems)]
        return _plan(source_name, cables, problems, options)


@register_parser
class CablingCsvParser(Parser):
    """Reads a point-to-point cabling plan: ``device,port,peer_device,peer_port,speed``."""

    name = CABLING_FORMAT
    label = gettext_noop("Point-to-point cabling plan CSV")
    extensions = (".csv",)

    def detect(self, text: str) -> bool:
        return set(_CABLING_REQUIRED) <= _header_columns(text)

    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        problems = ProblemCollector(source_name, limit=options.max_problems)
        table = _Table(text, source_name, problems, _CABLING_REQUIRED, _CABLING_ALIASES)
        cables = [cable for row in table.rows() if (cable := _point_to_point_cable(row, problems))]
        return _plan(source_name, cables, problems, options)


def _normalise_column(name: str) -> str:
    return name.strip().lstrip("\ufeff").strip().lower()


def _header_columns(text: str) -> set[str]:
    """Column names of the first few non-blank lines (a header may follow a line of junk), for detection."""
    lines = (line for line in text[:_DETECT_CHARACTERS].lstrip("\ufeff").splitlines() if line.strip())
    return {_normalise_column(cell) for _, line in zip(range(_DETECT_LINES), lines) for cell in line.split(",")}


@dataclass(frozen=True)
class _Row:
    line: int
    values: dict[str, str]

    def get(self, column: str) -> str:
        return self.values.get(column, "").strip()


class _Table:
    """A CSV with a header row holding ``required`` columns; lines before the header are skipped."""

    def __init__(
        self, text: str, source_name: str, problems: ProblemCollector, required: tuple[str, ...], aliases: dict[str, str]
    ) -> None:
        self.source_name = source_name
        self.problems = problems
        self.required = required
        self.aliases = aliases
        self.reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))

    def _next(self, line: int) -> list[str] | None:
        try:
            return next(self.reader, None)
        except csv.Error as error:
            raise IngestError(
                LATER.gettext("malformed CSV: %(error)s") % {"error": str(error)}, source=self.source_name, line=line, expected=LATER.gettext("CSV text"),
            ) from error

    def rows(self) -> Iterator[_Row]:
        columns = self._header()
        while True:
            line = self.reader.line_num + 1
            cells = self._next(line)
            if cells is None:
                return
            if not any(cell.strip() for cell in cells) or cells[0].lstrip().startswith("#"):
                continue
            if len(cells) > len(columns):
                self.problems.add(
                    LATER.ngettext("%(count)s cell", "%(count)s cells", len(cells)) % {"count": len(cells)},
                    line=line,
                    expected=LATER.gettext("at most %(count)s, one for each header column") % {"count": len(columns)},
                )
                continue
            yield _Row(line, dict(zip(columns, cells)))

    def _header(self) -> list[str]:
        while True:
            cells = self._next(self.reader.line_num + 1)
            if cells is None:
                raise IngestError(
                    LATER.gettext("no header row"),
                    source=self.source_name,
                    expected=LATER.gettext("a header row with the columns %(columns)s") % {"columns": Joined(list(self.required), ", ")},
                )
            columns = [_normalise_column(cell) for cell in cells]
            columns = [self.aliases.get(column, column) for column in columns]
            if set(self.required) <= set(columns):
                for column in {column for column in columns if column and columns.count(column) > 1}:
                    self.problems.add(
                        LATER.gettext("column %(column)s appears twice") % {"column": repr(column)}, line=self.reader.line_num, expected=LATER.gettext("each column once"),
                    )
                return columns


def _netbox_cables(row: _Row, problems: ProblemCollector) -> list[_Cable]:
    """The cables of one NetBox row: one, or one per pair of a multi-termination cell."""
    sides = []
    for side in ("a", "b"):
        kind = row.get(f"side_{side}_type").lower() or "dcim.interface"
        if kind in _OTHER_TERMINATIONS:
            return []
        if kind not in _DATA_TERMINATIONS:
            problems.add(
                f"side_{side}_type {kind!r}",
                line=row.line,
                expected=LATER.gettext("%(kinds)s (power and console cables are skipped)") % {"kinds": Joined(sorted(_DATA_TERMINATIONS), ", ")},
            )
            return []
        device = row.get(f"side_{side}_device")
        # The UI export joins several terminations of one cable in one cell: "p1, p2".
        ports = [port.strip() for port in row.get(f"side_{side}_name").split(",")]
        if not device or not all(ports):
            problems.add(
                (LATER.gettext("side %(side)s has no device") if not device else LATER.gettext("side %(side)s has no port")) % {"side": side.upper()},
                line=row.line,
                expected=LATER.gettext("%(device)s and %(name)s (%(device_label)s, %(name_label)s)") % {
                    "device": f"side_{side}_device", "name": f"side_{side}_name", "device_label": f"Device {side.upper()}", "name_label": f"Termination {side.upper()}",
                },  # fmt: skip
            )
            return []
        sides.append((device, ports))
    (device_a, ports_a), (device_b, ports_b) = sides
    if len(ports_a) != len(ports_b):
        problems.add(
            LATER.gettext("%(a)s terminations on side A and %(b)s on side B") % {"a": len(ports_a), "b": len(ports_b)},
            line=row.line,
            expected=LATER.gettext("as many terminations on each side (one cable per pair)"),
        )
        return []
    status = row.get("status").lower() or "connected"  # NetBox's default
    if status not in _NETBOX_STATES:
        problems.add(LATER.gettext("status %(status)s") % {"status": repr(row.get("status"))}, line=row.line, expected=Joined(list(_NETBOX_STATES), ", "))
        return []
    cable_type = row.get("type").lower()
    attrs = {"status": status}
    if row.get("label"):
        attrs["label"] = row.get("label")
    if cable_type:
        attrs["cable_type"] = cable_type
    length_m = _length_m(row, problems)
    if length_m is not None:
        attrs["length_m"] = length_m
    return [
        _Cable(
            row.line,
            ((device_a, port_a), (device_b, port_b)),
            (None, None),
            _COPPER_GBPS.get(cable_type),
            None if length_m is None else length_m * NS_PER_METRE,
            _NETBOX_STATES[status],
            attrs,
        )
        for port_a, port_b in zip(ports_a, ports_b)
    ]


def _length_m(row: _Row, problems: ProblemCollector) -> float | None:
    """Cable length in metres from ``length`` (+ ``length_unit``), or ``"3 m"`` in one cell."""
    text = row.get("length")
    if not text:
        return None
    match = _LENGTH.fullmatch(text)
    unit = (row.get("length_unit") or (match.group(2) if match else "") or "m").lower()
    if match is None or unit not in _METRES_PER_UNIT:
        problems.add(
            LATER.gettext("length %(length)s") % {"length": f"{text!r} {row.get('length_unit')}".rstrip()},
            line=row.line,
            expected=LATER.gettext("a number, with length_unit m, cm, ft or in (metres if none)"),
        )
        return None
    return float(match.group(1)) * _METRES_PER_UNIT[unit]


def _point_to_point_cable(row: _Row, problems: ProblemCollector) -> _Cable | None:
    missing = [column for column in _CABLING_REQUIRED if not row.get(column)]
    if missing:
        problems.add(
            LATER.gettext("empty %(columns)s") % {"columns": Joined(missing, ", ")}, line=row.line, expected=LATER.gettext("device, port, peer_device and peer_port"),
        )
        return None
    bandwidth, attrs = None, {}
    if row.get("speed"):
        speed = parse_speed(row.get("speed"))
        if speed is None or speed[0] <= 0:
            problems.add(LATER.gettext("speed %(speed)s") % {"speed": repr(row.get("speed"))}, line=row.line, expected=_SPEED_EXPECTED)
            return None
        bandwidth, attrs = speed
    roles = []
    for column in ("kind", "peer_kind"):
        role = row.get(column).lower()
        if role and role not in _ROLES:
            problems.add(f"{column} {row.get(column)!r}", line=row.line, expected=_ROLE_EXPECTED)
            return None
        roles.append(_ROLES.get(role))
    state = row.get("state").lower() or "up"
    if state not in _LINK_STATES:
        problems.add(LATER.gettext("state %(state)s") % {"state": repr(row.get("state"))}, line=row.line, expected=Joined(list(_LINK_STATES), ", "))
        return None
    if state in _NETBOX_STATES:
        attrs = attrs | {"status": state}
    return _Cable(
        row.line,
        ((row.get("device"), row.get("port")), (row.get("peer_device"), row.get("peer_port"))),
        (roles[0], roles[1]),
        bandwidth,
        None,
        _LINK_STATES[state],
        attrs,
    )


def _plan(source_name: str, cables: list[_Cable], problems: ProblemCollector, options: ParseOptions) -> FabricSpec:
    """Nodes and links of the plan, checking that no port is cabled twice."""
    default_gbps = DEFAULT_LINK_GBPS if options.default_bandwidth_gbps is None else options.default_bandwidth_gbps
    default_latency = DEFAULT_LATENCY_NS if options.default_latency_ns is None else options.default_latency_ns
    roles = _explicit_roles(cables, problems)
    nodes: dict[str, NodeSpec] = {}
    port_users: dict[tuple[str, str], tuple[int, tuple[str, str]]] = {}  # (node, port) -> (line, far end)
    links: list[LinkSpec] = []
    for cable in cables:
        ends = []
        for device, port in cable.ends:
            role = roles[device.strip().lower()][0] if device.strip().lower() in roles else device_role(device)
            node = nodes.setdefault((candidate := device_node(device, *role)).id, candidate)
            ends.append((node.id, port))
        (a, a_port), (b, b_port) = ends
        if a == b:
            problems.add(
                LATER.gettext("a cable from %(device)s to itself") % {"device": repr(cable.ends[0][0])}, line=cable.line, expected=LATER.gettext("two different devices"),
            )
            continue
        if port_users.get((b, b_port), (0, None))[1] == (a, a_port):
            continue  # the same cable, listed again (from either end)
        reused = next((end for end in ends if end in port_users), None)
        if reused is not None:
            problems.add(
                LATER.gettext("port %(port)s of %(device)s is already cabled on line %(line)s") % {"port": repr(reused[1]), "device": repr(reused[0]), "line": str(port_users[reused][0])},
                line=cable.line,
                expected=LATER.gettext("each port in at most one cable"),
            )
            continue
        port_users[(a, a_port)] = (cable.line, (b, b_port))
        port_users[(b, b_port)] = (cable.line, (a, a_port))
        kinds = {nodes[a].kind, nodes[b].kind}
        links.append(
            LinkSpec(
                a, a_port, b, b_port,
                default_gbps if cable.bandwidth_gbps is None else cable.bandwidth_gbps,
                default_latency if cable.latency_ns is None else cable.latency_ns,
                state=cable.state,
                domain="scale-up" if "card" in kinds else "scale-out",
                attrs=cable.attrs,
            )
        )
    if not cables and not len(problems):
        problems.add(LATER.gettext("no cables"), expected=LATER.gettext("at least one row below the header"))
    problems.raise_if_any()
    return FabricSpec(source_name, tuple(nodes.values()), tuple(links), {"plan": True})


def _explicit_roles(
    cables: list[_Cable], problems: ProblemCollector
) -> dict[str, tuple[tuple[str, str | None], int]]:
    """Device (lower-case name) -> (kind, tier) from kind/role columns, and the line that first said so."""
    roles: dict[str, tuple[tuple[str, str | None], int]] = {}
    for cable in cables:
        for (device, _), role in zip(cable.ends, cable.roles):
            if role is None:
                continue
            key = device.strip().lower()
            earlier, line = roles.setdefault(key, (role, cable.line))
            if earlier[0] != role[0] or None not in (earlier[1], role[1]) and earlier[1] != role[1]:
                problems.add(
                    LATER.gettext("%(device)s is a %(role)s here but a %(earlier)s on line %(line)s")
                    % {"device": repr(device), "role": _role_text(role), "earlier": _role_text(earlier), "line": str(line)},
                    line=cable.line,
                    expected=LATER.gettext("one kind for each device"),
                )
            elif earlier[1] is None and role[1] is not None:
                roles[key] = (role, line)  # "switch" then "spine": the spine it is
    return roles


def _role_text(role: tuple[str, str | None]) -> str:
    kind, tier = role
    return f"{tier} switch" if kind == "switch" and tier else kind
