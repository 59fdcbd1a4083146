"""InfiniBand discovery output: ``ibnetdiscover`` (default form and ``-p``) and ``iblinkinfo``.

Three formats, three parsers: ``ibnetdiscover`` (blocks per node),
``ibnetdiscover-ports`` (``ibnetdiscover -p``, a row per port) and
``iblinkinfo`` (with down ports and "Could be" hints). All show what the
subnet manager sees: switches, channel adapters (HCAs, SHARP aggregation
nodes) and routers, with their ports, and share one assembly step. The
grammar and its pitfalls are in FORMATS.md section 1 (after rdma-core's
``infiniband-diags``); what is read and how it maps to the model is in
docs/formats/infiniband.md. In short:

* node id ``ib:<node GUID as 16 lower-case hex digits>``; attrs ``guid``,
  ``description``, ``lid`` and, from ibnetdiscover, the ids lines;
* switches (and routers, marked ``attrs["node_type"] = "router"``) are kind
  ``switch``, named after their description (``MF0;leaf01:MQM9700/U1`` ->
  ``leaf01``), their tier inferred from the graph (``_infer_tiers``);
* HCAs are kind ``nic``, with ``host`` from a ``"<host> mlx5_N"``
  description; in-switch SHARP engines are kind ``aggregation``; a name
  several nodes would share takes the node's GUID in brackets;
* links are ``scale-out``, bandwidth = lanes x per-lane data rate
  (``LANE_GBPS``), ``degraded`` when narrower than the usual width of either
  end, latency ``ParseOptions.default_latency_ns`` else
  ``DEFAULT_CABLE_LATENCY_NS``.

The parsers walk the text line by line without splitting it into a list (a
dump can have millions of lines), keep raw line numbers for errors, accept
CRLF and skip leading junk such as a pasted shell prompt.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from twin.simcore.translation import LATER, Joined, gettext_noop
from twin.ingest.errors import IngestError, ProblemCollector
from twin.ingest.options import ParseOptions
from twin.ingest.registry import Parser, register_parser
from twin.simcore.model import Attrs, FabricSpec, LinkSpec, NodeSpec

__all__ = [
    "AGGREGATION_DESCRIPTION",
    "AGGREGATION_DEVICE_ID",
    "DEFAULT_CABLE_LATENCY_NS",
    "IBLINKINFO_FORMAT",
    "IBNETDISCOVER_FORMAT",
    "IBNETDISCOVER_PORTS_FORMAT",
    "LANE_GBPS",
    "WIDTH_LANES",
    "IblinkinfoParser",
    "IbnetdiscoverParser",
    "IbnetdiscoverPortsParser",
    "ib_node_id",
    "short_host_name",
    "switch_name",
]

IBNETDISCOVER_FORMAT = "ibnetdiscover"
IBNETDISCOVER_PORTS_FORMAT = "ibnetdiscover-ports"
IBLINKINFO_FORMAT = "iblinkinfo"

# Payload rate per lane in Gb/s: what a link can carry, so that 4xNDR = 400 Gb/s as everyone
# quotes it. SDR, DDR and QDR use 8b/10b coding, so only 8 of their 10 signalled bits carry data
# (4xQDR: 32 of 40 Gb/s; a busbw above that is impossible on the wire); FDR10 and later use
# 64b/66b (FDR: 14.0625 Gb/s signalled, 13.64 carried) or PAM4 with FEC, and their quoted rates
# from FDR10 on are already the carried ones. iblinkinfo prints signalling rates (106.25 Gbps
# for NDR), which the parser maps back to speed names.
LANE_GBPS: Mapping[str, float] = {
    "SDR": 2.5 * 8 / 10,
    "DDR": 5.0 * 8 / 10,
    "QDR": 10.0 * 8 / 10,
    "FDR10": 10.0,
    "FDR": 14.0625 * 64 / 66,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
}
# Active link widths as ibnetdiscover prints them, with their lane counts.
WIDTH_LANES: Mapping[str, int] = {"1x": 1, "2x": 2, "4x": 4, "8x": 8, "12x": 12}
# Neither tool knows cable lengths: ~2 m of copper at ~5 ns/m, as the generators assume.
DEFAULT_CABLE_LATENCY_NS = 10.0

AGGREGATION_DESCRIPTION = "Mellanox Technologies Aggregation Node"
AGGREGATION_DEVICE_ID = "0xcf09"  # devid of the Quantum in-switch SHARP engine
_AGGREGATION_TEXT = re.compile(r"\bAggregation Node\b", re.IGNORECASE)

_UNKNOWN_WIDTH, _UNKNOWN_SPEED = "??", "???"
_WIDTHS_EXPECTED = LATER.gettext("one of %(names)s (%(unknown)s when unknown)") % {"names": Joined(list(WIDTH_LANES), ", "), "unknown": _UNKNOWN_WIDTH}
_SPEEDS_EXPECTED = LATER.gettext("one of %(names)s (%(unknown)s when unknown)") % {"names": Joined(list(LANE_GBPS), ", "), "unknown": _UNKNOWN_SPEED}
_LANE_COUNTS = np.array(sorted(WIDTH_LANES.values()))
_SPEEDS_OR_UNKNOWN = frozenset(LANE_GBPS) | {_UNKNOWN_SPEED}
_HEX_GUID = re.compile(r"[0-9a-fA-F]{1,16}")
_HEX_VALUE = re.compile(r"0x[0-9a-fA-F]{1,16}")
_LINK_TOKEN = re.compile(r"(?P<width>\d+x|\?\?)?(?P<speed>.*)")

# Shell prompts pasted around the output: "[root@n1 ~]# ibnetdiscover", "me@n1:~$ ...", "$ ...".
_PROMPT = re.compile(r"(?:\[[^\]]*@[^\]]*\]\s*|[\w.-]+@[\w.-]+(?::\S*)?\s*)?[$#%>](?:\s|$)")

# The description the HCA driver sets: "<host> <device>" ("node01 mlx5_0", older "n1 HCA-1").
_HOST_DEVICE = re.compile(r"(?P<host>[A-Za-z0-9][\w.-]*)\s+(?P<device>mlx\d+_\d+|HCA-\d+)")
# Managed Mellanox/NVIDIA switches: "MF0;<system name>:<model>/<ASIC path>", where the ASIC path
# is "U1" on a 1U switch and e.g. "L05/U1" for a line ASIC of a director chassis.
_SWITCH_DESCRIPTION = re.compile(r"(?:[^;:]*;)?(?P<system>[^;:]+):(?P<model>[^:/]*)(?P<asic>(?:/[^/:]+)+)?")


def ib_node_id(guid: str) -> str:
    """Node id of an InfiniBand node from its GUID (any case, with or without ``0x``).

    >>> ib_node_id("0xC42A10300860100")
    'ib:0c42a10300860100'
    """
    return f"ib:{int(guid.lower().removeprefix('0x'), 16):016x}"


def switch_name(description: str) -> str:
    """The name people use for a switch, from its node description.

    Managed switches describe themselves as ``MF0;<name>:<model>/<ASIC>``; the
    name is kept, and the ASIC path only when it says more than ``U1`` (an ASIC
    of a director chassis). Other descriptions are kept whole.

    >>> switch_name("MF0;leaf01:MQM9700/U1"), switch_name("MF0;dir-1:CS7500/L05/U1")
    ('leaf01', 'dir-1/L05/U1')
    >>> switch_name("Voltaire 4036 # 4036-8C5C")
    'Voltaire 4036 # 4036-8C5C'
    """
    text = description.strip()
    match = _SWITCH_DESCRIPTION.fullmatch(text)
    if not match:
        return text
    asic = match["asic"] or ""
    return match["system"].strip() + (asic if asic.count("/") > 1 else "")


def short_host_name(name: str) -> str:
    """Host identity: lower case, domain stripped.

    >>> short_host_name("Node01.cluster.example")
    'node01'
    """
    return name.split(".", 1)[0].lower()


def _normalise_guid(text: str) -> str | None:
    """16 lower-case hex digits from ``0x``-prefixed or bare hex, else ``None``."""
    text = text.removeprefix("0x").removeprefix("0X")
    return f"{int(text, 16):016x}" if _HEX_GUID.fullmatch(text) else None


def _padded_guid(text: str) -> str | None:
    """GUID of an ``"S-<guid>"`` node name, which the tool always pads to 16 digits."""
    return text.lower() if len(text) == 16 and _HEX_GUID.fullmatch(text) else None


def _numbered_lines(text: str, chunk_chars: int = 1 << 20) -> Iterator[tuple[int, str]]:
    """``(line number, line)``, a CRLF line keeping its carriage return, splitting the text
    a megabyte at a time: no list of a million strings, and not a slice per line either."""
    number, start, length = 1, 0, len(text)
    while start < length:
        end = text.find("\n", start + chunk_chars)
        end = length if end < 0 else end
        for line in text[start:end].split("\n"):
            yield number, line
            number += 1
        start = end + 1


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _report_link_token(token: str, line: int, problems: ProblemCollector) -> None:
    """Report what is wrong with a width-and-speed token such as ``5xNDR``."""
    match = _LINK_TOKEN.fullmatch(token)
    width, speed = match["width"], match["speed"]
    if width is None:
        problems.add(LATER.gettext("no link width in %(token)s") % {"token": repr(token)}, line=line, expected=_WIDTHS_EXPECTED)
    elif width != _UNKNOWN_WIDTH and width not in WIDTH_LANES:
        problems.add(
            LATER.gettext("unknown link width %(width)s in %(token)s") % {"width": repr(width), "token": repr(token)}, line=line, expected=_WIDTHS_EXPECTED,
        )
    elif speed != _UNKNOWN_SPEED and speed not in LANE_GBPS:
        problems.add(
            LATER.gettext("unknown link speed %(speed)s in %(token)s") % {"speed": repr(speed), "token": repr(token)}, line=line, expected=_SPEEDS_EXPECTED,
        )
    else:
        problems.add(
            LATER.gettext("malformed link width and speed %(token)s") % {"token": repr(token)},
            line=line,
            expected=LATER.gettext("a width (%(widths)s) then a speed") % {"widths": _WIDTHS_EXPECTED},
        )


def _width_text(lanes: int | None) -> str:
    return f"{lanes}x" if lanes else _UNKNOWN_WIDTH


# --------------------------------------------------------------------------------------------
# What both parsers produce, and how it becomes a FabricSpec.


class _Device(NamedTuple):
    """An InfiniBand node as read: id, IB node type and whatever identity the file gave.

    A NamedTuple, like the other records read per line: a big fabric has 10^4 of them.
    """

    id: str
    node_type: str  # "switch", "ca" or "router"
    description: str
    line: int
    radix: int | None = None
    guid: str | None = None
    lid: int | None = None
    extra: Mapping[str, Any] = Attrs()


class _Cable(NamedTuple):
    """One link as read. A NamedTuple: a large fabric has 10^5 of them, and these are cheap."""

    a: str
    a_port: str
    b: str
    b_port: str
    lanes: int | None  # None: the tool printed "??"
    speed: str | None  # None: the tool printed "???"
    line: int
    state: str | None = None  # when the tool says it (iblinkinfo "Could be", an Armed port)
    extra: tuple[tuple[str, Any], ...] = ()  # more link attrs, as items so they can key a cache


class _FabricBuilder:
    """Collects the devices, cables and idle ports of one file, then assembles the fabric."""

    def __init__(self, problems: ProblemCollector, options: ParseOptions) -> None:
        self.problems = problems
        self.options = options
        self.devices: dict[str, _Device] = {}
        self.cables: list[_Cable] = []
        self.idle_ports: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)

    def add_device(self, device: _Device) -> None:
        first = self.devices.setdefault(device.id, device)
        if first is not device:
            self.problems.add(
                LATER.gettext("node %(node)s is described twice (first on line %(line)s)") % {"node": device.id, "line": str(first.line)},
                line=device.line,
                expected=LATER.gettext("one block per node"),
            )

    def add_idle_port(self, node_id: str, port: str, attrs: dict[str, Any]) -> None:
        """A port that exists but is in no link: down, or the end of a loop-back cable."""
        self.idle_ports[node_id][port] = attrs

    def build(self, name: str, attrs: Mapping[str, Any]) -> FabricSpec:
        self.problems.raise_if_any()
        return _assemble(name, attrs, self)


def _assemble(name: str, attrs: Mapping[str, Any], built: _FabricBuilder) -> FabricSpec:
    """Kinds, names, tiers, link states and bandwidths; per-link figures computed on arrays."""
    devices, cables, options = built.devices, built.cables, built.options
    order = list(devices)
    index = {node_id: position for position, node_id in enumerate(order)}
    kinds = [_kind(devices[node_id]) for node_id in order]
    count = len(cables)
    a_index = np.fromiter((index[cable.a] for cable in cables), dtype=np.int64, count=count)
    b_index = np.fromiter((index[cable.b] for cable in cables), dtype=np.int64, count=count)
    lanes = np.fromiter((cable.lanes or 0 for cable in cables), dtype=np.int64, count=count)
    lane_gbps = np.fromiter((LANE_GBPS.get(cable.speed, np.nan) for cable in cables), dtype=float, count=count)

    # A node's usual width is the one most of its links run at (the wider on a tie): 4x on a
    # plain switch, 2x on a split-port one ("Switch 129"). A link narrower than the usual width
    # of either end has lost lanes: degraded. Slower speeds are not: an HDR HCA on an NDR switch
    # runs HDR by design.
    known = lanes > 0
    width_codes = np.searchsorted(_LANE_COUNTS, lanes)
    counts = np.zeros((len(order), len(_LANE_COUNTS)), dtype=np.int64)
    np.add.at(counts, (a_index[known], width_codes[known]), 1)
    np.add.at(counts, (b_index[known], width_codes[known]), 1)
    usual_lanes = _LANE_COUNTS[::-1][counts[:, ::-1].argmax(axis=1)]
    narrow = known & ((lanes < usual_lanes[a_index]) | (lanes < usual_lanes[b_index]))

    bandwidth = lanes * lane_gbps
    unknown = np.flatnonzero(~(bandwidth > 0))  # "??" width or "???" speed
    if unknown.size and options.default_bandwidth_gbps is None:
        for position in unknown:
            cable = cables[position]
            built.problems.add(
                LATER.gettext("link %(link)s has no known width or speed, so no bandwidth") % {"link": f"{cable.a}[{cable.a_port}] - {cable.b}[{cable.b_port}]"},
                line=cable.line,
                expected=LATER.gettext("a width (%(widths)s) and a speed, or a default bandwidth in the upload options") % {"widths": _WIDTHS_EXPECTED},
            )
        built.problems.raise_if_any()
    if unknown.size:
        bandwidth[unknown] = options.default_bandwidth_gbps
    latency = DEFAULT_CABLE_LATENCY_NS if options.default_latency_ns is None else options.default_latency_ns

    shared_attrs: dict[tuple[Any, ...], Attrs] = {}
    links = []
    for position, cable in enumerate(cables):
        key = (cable.lanes, cable.speed, cable.extra)
        link_attrs = shared_attrs.get(key)
        if link_attrs is None:  # most links have the same width, speed and extras: share one
            link_attrs = shared_attrs[key] = Attrs(
                {"medium": "ib", "width": _width_text(cable.lanes), "speed": cable.speed or _UNKNOWN_SPEED}
                | dict(cable.extra)
            )
        state = cable.state or ("degraded" if narrow[position] else "up")
        links.append(
            LinkSpec(
                cable.a, cable.a_port, cable.b, cable.b_port, float(bandwidth[position]), latency,
                state=state, domain="scale-out", attrs=link_attrs,
            )  # fmt: skip
        )

    names_hosts = [_name_and_host(devices[node_id], kind) for node_id, kind in zip(order, kinds)]
    names = _told_apart([name_host[0] for name_host in names_hosts], order)
    kind_array = np.array(kinds)
    for engines, owners in ((a_index, b_index), (b_index, a_index)):
        hosted = (kind_array[engines] == "aggregation") & (kind_array[owners] == "switch")
        for engine, owner in zip(engines[hosted].tolist(), owners[hosted].tolist()):
            names[engine] = f"{names[owner]}/aggregation"  # rather than a thousand identical descriptions
    tiers = _infer_tiers(kind_array, a_index, b_index)
    nodes = tuple(
        _node_spec(devices[node_id], kind, names[position], names_hosts[position][1], tiers[position], built.idle_ports)
        for position, (node_id, kind) in enumerate(zip(order, kinds))
    )
    return FabricSpec(name, nodes, tuple(links), attrs)


def _told_apart(names: list[str], node_ids: list[str]) -> list[str]:
    """Names that several nodes share (89 HCAs all "MT25408 ConnectX Mellanox Technologies", the
    default description of a driver that was never given host names) take the node's GUID, so
    that a link, a finding or a hot spot names one device.

    >>> _told_apart(["leaf01", "MT25408", "MT25408"], ["ib:01", "ib:02", "ib:03"])
    ['leaf01', 'MT25408 (02)', 'MT25408 (03)']
    """
    shared = {name for name, count in Counter(names).items() if count > 1}
    return [f"{name} ({node_id.removeprefix('ib:')})" if name in shared else name for name, node_id in zip(names, node_ids)]


def _kind(device: _Device) -> str:
    if device.node_type != "ca":
        return "switch"
    if device.extra.get("device_id") == AGGREGATION_DEVICE_ID or _AGGREGATION_TEXT.search(device.description):
        return "aggregation"
    return "nic"


def _name_and_host(device: _Device, kind: str) -> tuple[str, str | None]:
    description = device.description.strip()
    if kind == "switch":
        return switch_name(description) or device.id, None
    host_device = _HOST_DEVICE.fullmatch(description)
    if kind == "nic" and host_device:
        host = short_host_name(host_device["host"])
        return f"{host}/{host_device['device']}", host
    return description or device.id, None


def _infer_tiers(kinds: np.ndarray, a_index: np.ndarray, b_index: np.ndarray) -> list[str | None]:
    """Switch tiers from the graph, which InfiniBand does not record.

    A switch with an HCA on it is a leaf; the others are ranked by their
    distance in switch-to-switch hops from the nearest leaf: 1 is a spine,
    2 or more is core. A switch that no path joins to a leaf (a fabric of bare
    switches) counts as a leaf, having nothing to rank it against.
    """
    is_switch, is_nic = kinds == "switch", kinds == "nic"
    leaves = np.concatenate([a_index[is_nic[b_index]], b_index[is_nic[a_index]]])
    distance = np.full(len(kinds), -1, dtype=np.int64)
    distance[leaves[is_switch[leaves]]] = 0
    between_switches = is_switch[a_index] & is_switch[b_index]
    neighbours: dict[int, list[int]] = defaultdict(list)
    for a, b in zip(a_index[between_switches].tolist(), b_index[between_switches].tolist()):
        neighbours[a].append(b)
        neighbours[b].append(a)
    frontier, hops = np.flatnonzero(distance == 0).tolist(), 0
    while frontier:  # breadth-first from all leaves at once
        hops += 1
        following = []
        for switch in frontier:
            for neighbour in neighbours[switch]:
                if distance[neighbour] < 0:
                    distance[neighbour] = hops
                    following.append(neighbour)
        frontier = following
    tier_names = ("leaf", "spine", "core")
    return [
        tier_names[min(max(int(hops), 0), 2)] if switch else None
        for switch, hops in zip(is_switch.tolist(), distance.tolist())
    ]


def _node_spec(
    device: _Device,
    kind: str,
    name: str,
    host: str | None,
    tier: str | None,
    idle_ports: Mapping[str, Mapping[str, Any]],
) -> NodeSpec:
    attrs: dict[str, Any] = {"description": device.description}
    if device.guid is not None:
        attrs["guid"] = device.guid
    if device.lid is not None:
        attrs["lid"] = device.lid
    if device.node_type == "router":
        attrs["node_type"] = "router"
    if device.id in idle_ports:
        attrs["ports"] = idle_ports[device.id]
    attrs.update(device.extra)
    return NodeSpec(device.id, kind, name, tier=tier, radix=device.radix, host=host, attrs=attrs)


# --------------------------------------------------------------------------------------------
# ibnetdiscover


_IDS_LINE = re.compile(
    r"(?P<key>vendid|devid|sysimgguid|switchguid|caguid|rtguid)=(?P<value>[^\s(]*)"
    r"(?:\((?P<port_guid>[^)]*)\))?(?:\s*#.*)?\s*$"
)
_NODE_LINE = re.compile(
    r'(?P<type>Switch|Ca|Rt)\s+(?P<ports>\d{1,9})\s+"(?P<prefix>.)-(?P<guid>[^"]*)"\s*#\s*"(?P<description>.*)"'
    r"(?:\s+(?:enhanced|base) port 0 lid (?P<lid>\d{1,9}) lmc \d{1,9})?(?P<rest>.*)$"
)
_PORT_LINE = re.compile(
    r"\[(?P<port>\d{1,9})\](?:\[ext \d{1,9}\])?(?:\([^)]*\))?\s*"  # local port [, ext, port GUID]
    r'"(?P<prefix>.)-(?P<guid>[^"]*)"\[(?P<remote_port>\d{1,9})\](?:\[ext \d{1,9}\])?(?:\s*\([^)]*\))?\s*'
    r"#\s*(?:lid (?P<lid>\d{1,9}) lmc \d{1,9}\s+)?"  # CA ports: their own LID
    r'"(?P<description>.*)" lid (?P<remote_lid>\d{1,9}) (?P<link>\S+)'
)
# The same with every field valid, which almost every line is: one match and no further checks.
_VALID_PORT_LINE = re.compile(
    _PORT_LINE.pattern.replace("(?P<prefix>.)", "(?P<prefix>[SHR])")
    .replace('(?P<guid>[^"]*)', "(?P<guid>[0-9a-fA-F]{16})")
    .replace(r"(?P<link>\S+)", r"(?P<width>1x|2x|4x|8x|12x|\?\?)(?P<speed>[A-Z0-9]+|\?\?\?)(?:\s|$)")
)
# Headings of "ibnetdiscover -g" (chassis grouping) that carry nothing we model.
_GROUPING_LINE = re.compile(r"Chassis \d+.*|Non-Chassis Nodes|Hostname: .*")
_NODE_TYPES = {"Switch": ("switch", "S"), "Ca": ("ca", "H"), "Rt": ("router", "R")}
_PREFIX_TYPES = {"S": "switch", "H": "ca", "R": "router"}
_GUID_KEYS = ("switchguid", "caguid", "rtguid")
_EXTRA_IDS = {"vendid": "vendor_id", "devid": "device_id", "sysimgguid": "system_guid"}
_DETECT_IBNETDISCOVER = re.compile(
    r"^(?:# Topology file: generated on |(?:switchguid|caguid|rtguid)=0x[0-9a-fA-F]+)", re.MULTILINE
)
_PORT_LINE_EXPECTED = LATER.gettext("a port line such as %(example)s") % {"example": '[1]\t"H-<16 hex digits>"[1](<GUID>) \t\t# "<description>" lid 11 4xNDR'}
_NODE_LINE_EXPECTED = LATER.gettext("a node line such as %(example)s") % {"example": 'Switch\t65 "S-<16 hex digits>"\t\t# "<description>" enhanced port 0 lid 2 lmc 0'}
_GUID_AFTER_PREFIX = LATER.gettext("16 hex digits after the S-, H- or R- prefix")


class _PortEnd(NamedTuple):
    """What one port line says is plugged into a port."""

    remote_guid: str
    remote_port: int
    remote_type: str
    lanes: int | None
    speed: str | None
    line: int


@register_parser
class IbnetdiscoverParser(Parser):
    """Reads the default output of ``ibnetdiscover``, also with ``-f``, ``-g`` or ``-m``."""

    name = IBNETDISCOVER_FORMAT
    label = gettext_noop("InfiniBand ibnetdiscover topology")
    extensions = (".topo", ".topofile", ".txt")

    def detect(self, text: str) -> bool:
        return _DETECT_IBNETDISCOVER.search(text, 0, 1 << 16) is not None

    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        if not text or text.isspace():  # (not strip(): no copy of a big file)
            raise IngestError(LATER.gettext("the file is empty"), source=source_name, expected=LATER.gettext("ibnetdiscover output"))
        problems = ProblemCollector(source_name, limit=options.max_problems)
        reader = _IbnetdiscoverReader(problems)
        for number, line in _numbered_lines(text):
            reader.read(number, line)
        reader.end_block(None)
        if not reader.devices and not problems:
            raise IngestError(
                LATER.gettext("no ibnetdiscover node blocks found"),
                source=source_name,
                expected=LATER.gettext(
                    'ibnetdiscover output: blocks of "vendid=", "devid=", "switchguid=" or "caguid=" lines, a Switch/Ca node line and its port lines'
                ),
            )
        builder = _FabricBuilder(problems, options)
        reader.emit(builder)
        return builder.build(source_name, reader.header)


class _IbnetdiscoverReader:
    """State machine over the lines of one ibnetdiscover dump."""

    def __init__(self, problems: ProblemCollector) -> None:
        self.problems = problems
        self.started = False  # leading junk is skipped up to the first line of the format
        self.header: dict[str, Any] = {"source_format": IBNETDISCOVER_FORMAT}
        self.ids: dict[str, str] = {}  # the vendid=, devid=, ... lines of the block being read
        self.ids_line = 0
        self.node: _Device | None = None  # the node whose port lines are being read
        self.devices: dict[str, _Device] = {}  # by GUID
        self.ends: dict[tuple[str, int], _PortEnd] = {}  # (GUID, port) -> what is plugged in
        self.port_lids: dict[str, int] = {}  # CA GUID -> LID of its first port
        # A bad node line is reported once: its port lines, and the ports leading to it, are not.
        self.skipping_block = False
        self.broken_guids: set[str] = set()

    def read(self, number: int, line: str) -> None:
        if line[:1] == "[" and self.started:  # most lines: skip the strip and the dispatch
            self.read_port(number, line)
            return
        stripped = line.strip()
        if not stripped:
            self.end_block(number)
        elif stripped[0] == "[" and self.started:
            self.read_port(number, stripped)
        elif stripped[0] == "#":
            self.read_comment(stripped)
        elif ids := _IDS_LINE.match(stripped):
            self.read_ids(number, ids)
        elif node := _NODE_LINE.match(stripped):
            self.read_node(number, node)
        elif not self.started or _PROMPT.match(stripped) or _GROUPING_LINE.fullmatch(stripped):
            return  # leading junk, a shell prompt, or a -g chassis heading
        elif stripped.startswith(("Switch", "Ca", "Rt")):
            self.problems.add(LATER.gettext("malformed node line %(line)s") % {"line": repr(_shorten(stripped))}, line=number, expected=_NODE_LINE_EXPECTED)
        else:
            self.problems.add(
                LATER.gettext("unrecognised line %(line)s") % {"line": repr(_shorten(stripped))},
                line=number,
                expected=LATER.gettext(
                    "an ibnetdiscover line: vendid=, devid=, sysimgguid=, switchguid=, caguid=, a Switch/Ca node line, a [port] line, a # comment or a blank line"
                ),
            )

    def read_comment(self, stripped: str) -> None:
        self.started = True
        if stripped.startswith("# Topology file: generated on "):
            self.header["generated_on"] = stripped.removeprefix("# Topology file: generated on ").strip()
        elif found := re.match(r"# Initiated from node ([0-9a-fA-F]{16})", stripped):
            self.header["initiated_from"] = found.group(1).lower()

    def read_ids(self, number: int, ids: re.Match[str]) -> None:
        self.started = True
        key, value = ids["key"], ids["value"]
        if self.node is not None:
            self.problems.add(
                LATER.gettext("%(key)s= line among the port lines of node %(node)s") % {"key": key, "node": self.node.guid},
                line=number,
                expected=LATER.gettext("a blank line before the next block"),
            )
            return
        if _HEX_VALUE.fullmatch(value) is None:
            self.problems.add(
                LATER.gettext("bad %(key)s value %(value)s") % {"key": key, "value": repr(value)}, line=number, expected=LATER.gettext("0x and up to 16 hex digits"),
            )
            return
        if not self.ids:
            self.ids_line = number
        # GUIDs as 16 digits, like the node names print them; vendid and devid as the tool does.
        self.ids[key] = value[2:].lower().zfill(16) if key.endswith("guid") else f"0x{int(value, 16):x}"

    def read_node(self, number: int, node: re.Match[str]) -> None:
        self.started = True
        node_type, prefix = _NODE_TYPES[node["type"]]
        guid = _padded_guid(node["guid"])
        problems_before = len(self.problems)
        if guid is None:
            self.problems.add(
                LATER.gettext("bad node GUID %(guid)s") % {"guid": repr(node["guid"])}, line=number, expected=_GUID_AFTER_PREFIX,
            )
        elif node["prefix"] != prefix:
            self.problems.add(
                LATER.gettext("%(type)s line naming its node %(prefix)s-..., not %(expected_prefix)s-...")
                % {"type": node["type"], "prefix": node["prefix"], "expected_prefix": prefix},
                line=number,
                expected=LATER.gettext('"%(prefix)s-<GUID>" on a %(type)s line') % {"prefix": prefix, "type": node["type"]},
            )
        if node_type == "switch" and node["lid"] is None:
            self.problems.add(LATER.gettext("switch line without its port 0 LID"), line=number, expected=_NODE_LINE_EXPECTED)
        elif node["rest"].strip() not in ("", "(scp)"):
            self.problems.add(
                LATER.gettext("unexpected %(text)s after the node description") % {"text": repr(_shorten(node["rest"].strip()))},
                line=number,
                expected=_NODE_LINE_EXPECTED,
            )
        declared = next((self.ids[key] for key in _GUID_KEYS if key in self.ids), None)
        if guid is not None and declared is not None and declared != guid:
            self.problems.add(
                LATER.gettext("node line GUID %(guid)s differs from the block's %(declared)s (line %(line)s)")
                % {"guid": guid, "declared": declared, "line": str(self.ids_line)},
                line=number,
                expected=LATER.gettext("the GUID of the switchguid= or caguid= line above"),
            )
        ports = int(node["ports"])
        if ports < 1:
            self.problems.add(
                LATER.gettext("%(type)s with %(ports)s ports") % {"type": node["type"], "ports": ports}, line=number, expected=LATER.gettext("a port count of at least 1"),
            )
        if len(self.problems) > problems_before:
            self.ids, self.node, self.skipping_block = {}, None, True
            if guid is not None:
                self.broken_guids.add(guid)
            return
        device = _Device(
            id=ib_node_id(guid),
            node_type=node_type,
            description=node["description"],
            line=number,
            radix=ports,
            guid=guid,
            lid=None if node["lid"] is None else int(node["lid"]),
            extra={_EXTRA_IDS[key]: value for key, value in self.ids.items() if key in _EXTRA_IDS},
        )
        first = self.devices.setdefault(guid, device)
        if first is not device:
            self.problems.add(
                LATER.gettext("node %(node)s is described twice (first on line %(line)s)") % {"node": guid, "line": str(first.line)},
                line=number,
                expected=LATER.gettext("one block per node"),
            )
        self.ids, self.node = {}, device

    def read_port(self, number: int, line: str) -> None:
        if self.skipping_block:
            return
        port_line = _VALID_PORT_LINE.match(line)
        node = self.node
        if port_line is None or node is None or port_line["speed"] not in _SPEEDS_OR_UNKNOWN:
            self.report_bad_port_line(number, line)
            return
        port, prefix, guid, remote_port, lid, _, _, width, speed = port_line.groups()
        here = (node.guid, int(port))
        end = _PortEnd(
            guid.lower(),
            int(remote_port),
            _PREFIX_TYPES[prefix],
            WIDTH_LANES.get(width),
            None if speed == _UNKNOWN_SPEED else speed,
            number,
        )
        first = self.ends.setdefault(here, end)
        if first is not end:
            self.problems.add(
                LATER.gettext("port %(port)s of node %(node)s is listed twice (first on line %(line)s)") % {"port": port, "node": node.guid, "line": str(first.line)},
                line=number,
                expected=LATER.gettext("each port once in its node's block"),
            )
        elif lid is not None:
            self.port_lids.setdefault(node.guid, int(lid))  # a CA's LID is its port's

    def report_bad_port_line(self, number: int, line: str) -> None:
        """Say what is wrong with a line that starts like a port line but is no valid one."""
        stripped = line.strip()
        port_line = _PORT_LINE.match(stripped)
        if port_line is None:
            if not _PROMPT.match(stripped):
                self.problems.add(
                    LATER.gettext("malformed port line %(line)s") % {"line": repr(_shorten(stripped))}, line=number, expected=_PORT_LINE_EXPECTED,
                )
        elif self.node is None:
            self.problems.add(
                LATER.gettext("port line outside a node block"),
                line=number,
                expected=LATER.gettext("port lines right after their Switch/Ca node line, with no blank line between"),
            )
        elif _padded_guid(port_line["guid"]) is None:
            self.problems.add(
                LATER.gettext("bad GUID %(guid)s in the far node's name") % {"guid": repr(port_line["guid"])},
                line=number,
                expected=_GUID_AFTER_PREFIX,
            )
        elif port_line["prefix"] not in _PREFIX_TYPES:
            self.problems.add(
                LATER.gettext("unknown node type prefix %(prefix)s-") % {"prefix": repr(port_line["prefix"])},
                line=number,
                expected=LATER.gettext("S- (switch), H- (channel adapter) or R- (router)"),
            )
        else:
            _report_link_token(port_line["link"], number, self.problems)

    def end_block(self, number: int | None) -> None:
        if self.ids:
            self.problems.add(
                LATER.gettext("node block without its node line (is the file cut short?)"),
                line=self.ids_line,
                expected=LATER.gettext("a Switch, Ca or Rt node line after the block's vendid=, devid=, ... lines, before the blank line %(line)s")
                % {"line": str(number)}
                if number
                else LATER.gettext("a Switch, Ca or Rt node line after the block's vendid=, devid=, ... lines"),
            )
        self.ids, self.node, self.skipping_block = {}, None, False

    def emit(self, builder: _FabricBuilder) -> None:
        """Hand nodes and deduplicated links to ``builder``, checking that both ends agree."""
        devices, ends = self.devices, self.ends
        for guid, device in devices.items():
            port_lid = self.port_lids.get(guid)
            builder.add_device(device if device.lid is not None or port_lid is None else device._replace(lid=port_lid))
        for here, end in ends.items():
            there = end[:2]
            back = ends.get(there)
            if back is None or back[:2] != here or devices[there[0]].node_type != end.remote_type:
                if there[0] not in self.broken_guids:
                    self.report_disagreement(here, end, back)
            elif here < there:  # each cable once, from its lower end, at its first line
                self.add_cable(builder, here, end._replace(line=min(end.line, back.line)))
            elif here == there:
                self.problems.add(
                    LATER.gettext("port %(port)s of node %(node)s is plugged into itself") % {"port": here[1], "node": here[0]},
                    line=end.line,
                    expected=LATER.gettext("a cable between two ports"),
                )

    def report_disagreement(self, here: tuple[str, int], end: _PortEnd, back: _PortEnd | None) -> None:
        """Report a port line whose far end has no block, or does not list the link back."""
        remote = self.devices.get(end.remote_guid)
        port = {"port": here[1], "node": here[0], "remote": end.remote_guid}
        if remote is None:
            message = LATER.gettext("port %(port)s of node %(node)s leads to node %(remote)s, which has no block of its own (is the file cut short?)") % port
            expected = LATER.gettext("a block for every node named at the far end of a port")
        elif remote.node_type != end.remote_type:
            message = LATER.gettext("port %(port)s of node %(node)s calls node %(remote)s a %(said_type)s, but its block (line %(line)s) is a %(type)s") % {
                **port, "said_type": end.remote_type, "line": str(remote.line), "type": remote.node_type,
            }  # fmt: skip
            expected = LATER.gettext("the node type prefix (S-, H-, R-) that matches the node's own block")
        elif back is None:
            message = LATER.gettext("port %(port)s of node %(node)s leads to port %(remote_port)s of node %(remote)s, but that node's block does not list it") % {
                **port, "remote_port": end.remote_port,
            }  # fmt: skip
            expected = LATER.gettext("every link listed from both of its ends")
        else:
            message = LATER.gettext(
                "port %(port)s of node %(node)s leads to port %(remote_port)s of node %(remote)s, but that node's block has it lead to %(back)s (line %(line)s)"
            ) % {**port, "remote_port": end.remote_port, "back": f"{back.remote_guid}[{back.remote_port}]", "line": str(back.line)}
            expected = LATER.gettext("every link listed from both of its ends")
        self.problems.add(message, line=end.line, expected=expected)

    def add_cable(self, builder: _FabricBuilder, here: tuple[str, int], end: _PortEnd) -> None:
        (guid, port), far_port = here, end.remote_port
        if guid == end.remote_guid:
            # A loop-back cable between two ports of one switch (port testing) is real, but the
            # model's links join two different nodes: both ports go into the switch's attrs.
            link = {"width": _width_text(end.lanes), "speed": end.speed or _UNKNOWN_SPEED}
            for near, far in ((port, far_port), (far_port, port)):
                builder.add_idle_port(self.devices[guid].id, str(near), {"state": "up", "loopback_to": str(far), **link})
        else:
            near, far = self.devices[guid].id, self.devices[end.remote_guid].id
            builder.cables.append(_Cable(near, str(port), far, str(far_port), end.lanes, end.speed, end.line))


# --------------------------------------------------------------------------------------------
# ibnetdiscover -p (ports report)


_PORTS_ROW = re.compile(
    r"(?P<type>SW|CA|RT)\s+(?P<lid>\d{1,9})\s+(?P<port>\d{1,9})\s+0x(?P<guid>\S+)\s+(?P<width>\S+)\s+(?P<speed>\S+)"
    r"(?:\s+-\s+(?P<remote_type>SW|CA|RT)\s+(?P<remote_lid>\d{1,9})\s+(?P<remote_port>\d{1,9})\s+0x(?P<remote_guid>\S+)"
    r"\s+\(\s*'(?P<description>.*)'\s+-\s+'(?P<remote_description>.*)'\s*\)|\s+'(?P<idle_description>.*)')"
)
_PORTS_TYPES = {"SW": "switch", "CA": "ca", "RT": "router"}
_DETECT_PORTS = re.compile(r"^\s*(?:SW|CA|RT)\s+\d+\s+\d+\s+0x[0-9a-fA-F]{16} \S+ \S+ (?:- |\s{20,}')", re.MULTILINE)
_PORTS_ROW_EXPECTED = LATER.gettext("a ports report row such as %(example)s") % {
    "example": "\"CA    11  1 0x0c42a10300860100 4x NDR - SW     2  1 0xb8599f0300a01240 ( 'node01 mlx5_0' - 'MF0;leaf01:MQM9700/U1' )\""
}


@register_parser
class IbnetdiscoverPortsParser(Parser):
    """Reads ``ibnetdiscover -p``: one row per port, with its peer if it has one.

    Rows name nodes by port GUID, which for a switch is its node GUID, and for
    an HCA from ConnectX-4 on is too (each port is a node of its own); ports
    without a peer go into the node's ``attrs["ports"]`` as down.
    """

    name = IBNETDISCOVER_PORTS_FORMAT
    label = gettext_noop("InfiniBand ibnetdiscover -p ports report")
    extensions = (".txt",)

    def detect(self, text: str) -> bool:
        return _DETECT_PORTS.search(text, 0, 1 << 16) is not None

    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        if not text or text.isspace():  # (not strip(): no copy of a big file)
            raise IngestError(LATER.gettext("the file is empty"), source=source_name, expected=LATER.gettext("ibnetdiscover -p output"))
        problems = ProblemCollector(source_name, limit=options.max_problems)
        reader = _PortsReportReader(_FabricBuilder(problems, options))
        for number, line in _numbered_lines(text):
            reader.read(number, line)
        if not reader.started:
            raise IngestError(LATER.gettext("no ibnetdiscover -p rows found"), source=source_name, expected=_PORTS_ROW_EXPECTED)
        return reader.builder.build(source_name, {"source_format": IBNETDISCOVER_PORTS_FORMAT})


class _PortsReportReader:
    """Rows of one ``ibnetdiscover -p`` report; every link shows up from both of its ports."""

    def __init__(self, builder: _FabricBuilder) -> None:
        self.builder = builder
        self.problems = builder.problems
        self.started = False
        self.seen: dict[tuple[str, str], tuple[tuple[str, str], int]] = {}  # port -> its peer, line

    def read(self, number: int, line: str) -> None:
        stripped = line.strip()
        if not stripped:
            return
        row = _PORTS_ROW.fullmatch(stripped)
        if row is None:
            if self.started and not _PROMPT.match(stripped):
                self.problems.add(LATER.gettext("unrecognised line %(line)s") % {"line": repr(_shorten(stripped))}, line=number, expected=_PORTS_ROW_EXPECTED)
            return
        self.started = True
        description = row["idle_description"] if row["remote_type"] is None else row["description"]
        near = self.device(row["type"], row["guid"], description, int(row["lid"]), number)
        if near is None:
            return
        port = row["port"]
        if row["remote_type"] is None:
            self.builder.add_idle_port(near.id, port, {"state": "down"})
            return
        far = self.device(row["remote_type"], row["remote_guid"], row["remote_description"], int(row["remote_lid"]), number)
        width, speed = row["width"], row["speed"]
        if width != _UNKNOWN_WIDTH and width not in WIDTH_LANES:
            self.problems.add(LATER.gettext("unknown link width %(width)s") % {"width": repr(width)}, line=number, expected=_WIDTHS_EXPECTED)
            return
        if speed != _UNKNOWN_SPEED and speed not in LANE_GBPS:
            self.problems.add(LATER.gettext("unknown link speed %(speed)s") % {"speed": repr(speed)}, line=number, expected=_SPEEDS_EXPECTED)
            return
        if far is None:
            return
        here, there = (near.id, port), (far.id, row["remote_port"])
        if not _first_sighting(self.seen, here, there, number, self.problems):
            return
        lanes, known_speed = WIDTH_LANES.get(width), (None if speed == _UNKNOWN_SPEED else speed)
        if near.id == far.id:
            link = {"width": width, "speed": speed}
            for one, other in ((here[1], there[1]), (there[1], here[1])):
                self.builder.add_idle_port(near.id, one, {"state": "up", "loopback_to": other, **link})
            return
        self.builder.cables.append(_Cable(near.id, port, far.id, there[1], lanes, known_speed, number))

    def device(self, type_code: str, guid_text: str, description: str, lid: int, number: int) -> _Device | None:
        """The node a row names, added to the builder the first time it is seen."""
        guid = _padded_guid(guid_text)
        if guid is None:
            self.problems.add(LATER.gettext("bad GUID %(guid)s") % {"guid": f"0x{guid_text}"}, line=number, expected=LATER.gettext("0x and 16 hex digits"))
            return None
        node_type = _PORTS_TYPES[type_code]
        known = self.builder.devices.get(ib_node_id(guid))
        if known is None:
            known = _Device(ib_node_id(guid), node_type, description, number, guid=guid, lid=lid or None)
            self.builder.add_device(known)
        elif known.node_type != node_type:
            self.problems.add(
                LATER.gettext("node %(node)s is a %(type)s here but a %(known_type)s on line %(line)s")
                % {"node": guid, "type": node_type, "known_type": known.node_type, "line": str(known.line)},
                line=number,
                expected=LATER.gettext("one node type per GUID"),
            )
            return None
        return known


# --------------------------------------------------------------------------------------------
# iblinkinfo


_LINKINFO_HEADER = re.compile(r"(?P<type>Switch|CA|Router): (?:0x(?P<guid>\S+) )?(?P<description>.*):")
_LINKINFO_PORT = re.compile(
    r"(?:0x(?P<port_guid>\S+)\s+)?(?P<lid>\d{1,9})\s+(?P<port>\d{1,9})\[\s*\d{0,9}\]\s*"
    r"==\((?P<link>.*?)\)==>\s*(?P<remote>.*)"
)
_LINKINFO_ACTIVE = re.compile(
    r"\s*(?P<width>\S+)\s+(?P<speed>\S+ Gbps(?: \(FDR10\))?)\s+(?P<state>\w+)/\s*(?P<physical>\w+)"
    r"(?:\) \(HOQ:\d+ VL_Stall:\d+)?"  # iblinkinfo -p
)
_LINKINFO_INACTIVE = re.compile(r"\s*(?P<state>\w+)/\s*(?P<physical>\w+)")
_LINKINFO_REMOTE = re.compile(
    r'(?P<lid>\d{1,9})\s+(?P<port>\d{1,9})\[\s*\d{0,9}\]\s+"(?P<description>.*)"\s+\((?P<hints>[^()]*)\)'
)
_LINKINFO_NO_REMOTE = re.compile(r'\[\s*\]\s+""\s+\(\s*\)|"Port not available"')
_DETECT_IBLINKINFO = re.compile(r"^(?:Switch: 0x[0-9a-fA-F]+ |CA: |Router: ).*:[ \t\r]*\n.*==\(", re.MULTILINE)
# iblinkinfo prints the signalling rate of a lane; the speed names stand for the data rate.
_SIGNALLING_SPEEDS = {
    "2.5 Gbps": "SDR",
    "5.0 Gbps": "DDR",
    "10.0 Gbps": "QDR",
    "10.0 Gbps (FDR10)": "FDR10",
    "14.0625 Gbps": "FDR",
    "25.78125 Gbps": "EDR",
    "53.125 Gbps": "HDR",
    "106.25 Gbps": "NDR",
    "212.5 Gbps": "XDR",
}
_LINKINFO_WIDTHS = {f"{lanes}X": lanes for lanes in WIDTH_LANES.values()}
_COULD_BE = re.compile(r"Could be (\d+X|\S+ Gbps(?: \(FDR10\))?)")
_LINKINFO_PORT_EXPECTED = LATER.gettext("a port line such as %(example)s") % {
    "example": '"3   34[  ] ==( 4X  106.25 Gbps Active/  LinkUp)==>  1  4[  ] "<description>" ( )"'
}


class _LinkinfoPort(NamedTuple):
    """A port line with a far end, before the far end is resolved to a node id."""

    node_id: str
    port: int
    lanes: int
    speed: str
    state: str
    physical_state: str
    remote_lid: int
    remote_port: int
    remote_description: str
    hints: str
    line: int


@register_parser
class IblinkinfoParser(Parser):
    """Reads ``iblinkinfo`` output: the default form, also with ``-S``, ``-G``, ``-d``, ``-p``.

    It shows what ibnetdiscover leaves out: down ports with their physical
    state, and the "Could be" hints of links running below what both ends
    support. It names the far end of a link by LID and description only, so a
    far node without a block of its own in the file gets the most stable id its
    description allows (``_far_devices``).
    """

    name = IBLINKINFO_FORMAT
    label = gettext_noop("InfiniBand iblinkinfo port listing")
    extensions = (".txt",)

    def detect(self, text: str) -> bool:
        return _DETECT_IBLINKINFO.search(text, 0, 1 << 16) is not None

    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        if not text or text.isspace():  # (not strip(): no copy of a big file)
            raise IngestError(LATER.gettext("the file is empty"), source=source_name, expected=LATER.gettext("iblinkinfo output"))
        problems = ProblemCollector(source_name, limit=options.max_problems)
        builder = _FabricBuilder(problems, options)
        reader = _IblinkinfoReader(builder)
        for number, line in _numbered_lines(text):
            reader.read(number, line)
        if not reader.started:
            raise IngestError(
                LATER.gettext("no iblinkinfo node blocks found"),
                source=source_name,
                expected=LATER.gettext('iblinkinfo output: "Switch: 0x<GUID> <description>:" or "CA: <description>:" lines, each followed by its port lines'),
            )
        reader.emit()
        return builder.build(source_name, {"source_format": IBLINKINFO_FORMAT})


class _IblinkinfoReader:
    """State machine over the lines of one iblinkinfo listing."""

    def __init__(self, builder: _FabricBuilder) -> None:
        self.builder = builder
        self.problems = builder.problems
        self.started = False
        self.node: _Device | None = None  # the node whose port lines are being read
        self.header: re.Match[str] | None = None  # a CA/Router header, until a port line gives its GUID
        self.header_line = 0
        self.ports: list[_LinkinfoPort] = []
        self.lid_owners: dict[int, str] = {}

    def read(self, number: int, line: str) -> None:
        stripped = line.strip()
        if not stripped:
            return
        if header := _LINKINFO_HEADER.fullmatch(stripped):
            self.read_header(number, header)
        elif port_line := _LINKINFO_PORT.fullmatch(stripped):
            self.read_port(number, port_line)
        elif self.started and not _PROMPT.match(stripped):
            self.problems.add(LATER.gettext("unrecognised line %(line)s") % {"line": repr(_shorten(stripped))}, line=number, expected=_LINKINFO_PORT_EXPECTED)

    def read_header(self, number: int, header: re.Match[str]) -> None:
        self.started = True
        self.node, self.header, self.header_line = None, None, number
        if header["type"] != "Switch":
            self.header = header  # CA headers carry no GUID: the port lines do
            return
        guid = _normalise_guid(header["guid"] or "")
        if guid is None:
            self.problems.add(
                LATER.gettext("bad switch GUID %(guid)s") % {"guid": repr(header["guid"])}, line=number, expected=LATER.gettext("Switch: 0x<16 hex digits> <description>:"),
            )
            return
        self.node = _Device(ib_node_id(guid), "switch", header["description"], number, guid=guid)
        self.builder.add_device(self.node)

    def read_port(self, number: int, port_line: re.Match[str]) -> None:
        if not self.started:
            self.started = True
            self.problems.add(
                LATER.gettext("port line before any Switch: or CA: header"),
                line=number,
                expected=LATER.gettext('a "Switch: 0x<GUID> <description>:" or "CA: <description>:" line first'),
            )
            return
        node = self.node or self.claim_channel_adapter(number, port_line)
        if node is None:
            return  # the block's header or first port line was bad, and is reported
        lid, port = int(port_line["lid"]), int(port_line["port"])
        if lid:
            self.lid_owners.setdefault(lid, node.id)
            if node.lid is None:
                node = self.node = self.builder.devices[node.id] = node._replace(lid=lid)
        remote = port_line["remote"].strip()
        if _LINKINFO_NO_REMOTE.fullmatch(remote):
            idle = _LINKINFO_INACTIVE.fullmatch(port_line["link"]) or _LINKINFO_ACTIVE.fullmatch(port_line["link"])
            if idle is None:
                self.problems.add(
                    LATER.gettext("malformed port state %(state)s") % {"state": repr(port_line["link"])},
                    line=number,
                    expected=LATER.gettext("(<state>/<physical state>), such as (Down/ Polling)"),
                )
                return
            idle_attrs = {"state": idle["state"].lower(), "physical_state": idle["physical"]}
            self.builder.add_idle_port(node.id, str(port), idle_attrs)
            return
        active, far = _LINKINFO_ACTIVE.fullmatch(port_line["link"]), _LINKINFO_REMOTE.fullmatch(remote)
        if active is None or far is None:
            self.problems.add(
                LATER.gettext("malformed port line %(line)s") % {"line": repr(_shorten(port_line.group()))}, line=number, expected=_LINKINFO_PORT_EXPECTED,
            )
            return
        lanes, speed = _LINKINFO_WIDTHS.get(active["width"]), _SIGNALLING_SPEEDS.get(active["speed"])
        if lanes is None:
            self.problems.add(
                LATER.gettext("unknown link width %(width)s") % {"width": repr(active["width"])},
                line=number,
                expected=LATER.gettext("one of %(names)s") % {"names": Joined(list(_LINKINFO_WIDTHS), ", ")},
            )
        if speed is None:
            self.problems.add(
                LATER.gettext("unknown link speed %(speed)s") % {"speed": repr(active["speed"])},
                line=number,
                expected=LATER.gettext("one of %(names)s") % {"names": Joined(list(_SIGNALLING_SPEEDS), ", ")},
            )
        if lanes is not None and speed is not None:
            self.ports.append(
                _LinkinfoPort(
                    node.id, port, lanes, speed, active["state"], active["physical"],
                    int(far["lid"]), int(far["port"]), far["description"], far["hints"], number,
                )  # fmt: skip
            )

    def claim_channel_adapter(self, number: int, port_line: re.Match[str]) -> _Device | None:
        """The CA (or router) of the current block, identified by its first port's GUID.

        iblinkinfo prints port GUIDs only; from ConnectX-4 on, every port is a
        node of its own whose node GUID is that port GUID.
        """
        header = self.header
        if header is None:
            return None
        guid = _normalise_guid(port_line["port_guid"] or "")
        if guid is None:
            self.problems.add(
                LATER.gettext("CA port line without a port GUID (%(guid)s)") % {"guid": repr(port_line["port_guid"])},
                line=number,
                expected=LATER.gettext("0x<16 hex digits> before the LID on the port lines of a CA"),
            )
            self.header = None
            return None
        node_type = "router" if header["type"] == "Router" else "ca"
        self.node = _Device(ib_node_id(guid), node_type, header["description"], self.header_line, guid=guid)
        self.builder.add_device(self.node)
        return self.node

    def emit(self) -> None:
        """Resolve far ends by LID, give ids to nodes only seen from afar, dedupe the links."""
        far_ids = _far_devices(self.ports, self.lid_owners, self.builder)
        seen: dict[tuple[str, str], tuple[tuple[str, str], int]] = {}  # port -> its peer, line
        for port in self.ports:
            remote_id = self.lid_owners.get(port.remote_lid) or far_ids[port.remote_lid]
            here, there = (port.node_id, str(port.port)), (remote_id, str(port.remote_port))
            if not _first_sighting(seen, here, there, port.line, self.problems):
                continue
            if port.node_id == remote_id:
                for near, far in ((here[1], there[1]), (there[1], here[1])):
                    self.builder.add_idle_port(port.node_id, near, {"state": "up", "loopback_to": far})
                continue
            self.builder.cables.append(_linkinfo_cable(port, remote_id))


def _first_sighting(
    seen: dict[tuple[str, str], tuple[tuple[str, str], int]],
    here: tuple[str, str],
    there: tuple[str, str],
    line: int,
    problems: ProblemCollector,
) -> bool:
    """Whether this is the first time the cable ``here``-``there`` shows up, recording it if so.

    Both tools print a cable from each of its ports; the second sighting must
    agree with the first, else the problem is reported.
    """
    known = seen.get(here) or seen.get(there)
    if known is None:
        seen[here], seen[there] = (there, line), (here, line)
        return True
    if seen.get(here, (None,))[0] != there:
        port, other = (here, seen[here]) if here in seen else (there, seen[there])
        problems.add(
            LATER.gettext("port %(port)s of %(node)s leads to %(peer)s on line %(line)s, which disagrees with this line's %(link)s") % {
                "port": port[1], "node": port[0], "peer": f"{other[0][0]}[{other[0][1]}]", "line": str(other[1]),
                "link": f"{here[0]}[{here[1]}] - {there[0]}[{there[1]}]",
            },  # fmt: skip
            line=line,
            expected=LATER.gettext("the peer of each port to agree from both of its ends"),
        )
    return False


def _linkinfo_cable(port: _LinkinfoPort, remote_id: str) -> _Cable:
    extra: dict[str, str] = {"physical_state": port.physical_state}
    state = None
    for value in _COULD_BE.findall(port.hints):
        if value in _LINKINFO_WIDTHS:
            extra["possible_width"] = f"{_LINKINFO_WIDTHS[value]}x"
        elif value in _SIGNALLING_SPEEDS:
            extra["possible_speed"] = _SIGNALLING_SPEEDS[value]
    if "possible_width" in extra or "possible_speed" in extra:
        state = "degraded"  # both ends support more than the link runs at
    if port.state != "Active":
        state = "down"  # Initialize or Armed: trained, but carrying no data yet
        extra["port_state"] = port.state
    return _Cable(
        port.node_id, str(port.port), remote_id, str(port.remote_port), port.lanes, port.speed, port.line,
        state, tuple(sorted(extra.items())),
    )  # fmt: skip


def _far_devices(ports: list[_LinkinfoPort], lid_owners: Mapping[int, str], builder: _FabricBuilder) -> dict[int, str]:
    """Devices for far ends that have no block in the file, keyed by LID.

    Kind: "Aggregation Node" in the description makes an aggregation node; a
    switch is a LID reached on two or more ports, on a port above 2 (HCAs have
    at most two), from a CA, or described with the managed-switch ``MF0;``
    prefix; anything else is an HCA. Id: ``<host>/nic:<device>`` for an HCA
    described as "<host> <device>", the lower-case switch name for a switch,
    else ``ib:lid-<LID>``, which holds only within this file (LIDs change when
    the subnet manager restarts).
    """
    references: dict[int, list[_LinkinfoPort]] = defaultdict(list)
    for port in ports:
        if port.remote_lid not in lid_owners:
            references[port.remote_lid].append(port)
    ids: dict[int, str] = {}
    taken = set(builder.devices)
    for lid, seen_from in references.items():
        description = seen_from[0].remote_description
        far_ports = {port.remote_port for port in seen_from}
        from_channel_adapter = any(builder.devices[port.node_id].node_type != "switch" for port in seen_from)
        host_device = _HOST_DEVICE.fullmatch(description.strip())
        node_id = None
        if _AGGREGATION_TEXT.search(description):
            node_type = "ca"
        elif len(far_ports) > 1 or max(far_ports) > 2 or from_channel_adapter or description.startswith("MF0;"):
            node_type, node_id = "switch", switch_name(description).lower()
        else:
            node_type = "ca"
            if host_device:
                node_id = f"{short_host_name(host_device['host'])}/nic:{host_device['device']}"
        if not node_id or node_id in taken:
            node_id = f"ib:lid-{lid}"
        taken.add(node_id)
        ids[lid] = node_id
        builder.add_device(_Device(node_id, node_type, description, seen_from[0].line, lid=lid))
    return ids
