"""LLDP neighbours as ``lldpctl -f json`` or ``lldpctl -f json0`` prints them (lldpd).

Both shapes (docs/formats/lldp-json.md) list, for each local interface, the
neighbour chassis and port seen on it:

- ``json``: ``{"lldp": {"interface": {IFNAME: {...}} | [{IFNAME: {...}}, ...]}}``,
  chassis ``{SYSNAME: {"id": {...}, "descr": ..., "mgmt-ip": str | [...],
  "capability": {...} | [...]}}``; one-element lists collapse to their element;
- ``json0``: everything a list, values as ``[{"value": ...}]``, names in
  ``"name"`` fields (``{"lldp": [{"interface": [{"name": "eno1", ...}]}]}``).

Mapping: the capturing host (named from the file name, as lldpctl does not
print it) gets one scale-out Ethernet link per interface to the neighbour's
port. Neighbours are switches when their name looks like one or they
advertise an enabled Bridge or Router capability, else hosts. Bandwidth
comes from the port's auto-negotiated MAU type (``1000BaseTFD`` -> 1 Gb/s,
``400GbaseCR8`` -> 400 Gb/s) when given, else from ``ParseOptions``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from twin.simcore.translation import LATER, gettext_noop, plain_words
from twin.ingest.errors import IngestError, ProblemCollector
from twin.ingest.hostlist import host_node_id, source_host
from twin.ingest.options import ParseOptions
from twin.ingest.parsers.cabling import DEFAULT_LATENCY_NS, DEFAULT_LINK_GBPS, device_node, device_role
from twin.ingest.registry import Parser, register_parser
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

__all__ = ["FORMAT_NAME", "LldpJsonParser", "mau_gbps"]

FORMAT_NAME = "lldp-json"

_DETECT = re.compile(r'\A\ufeff?\s*\{\s*"lldp"\s*:')
# The speed at the start of an IEEE MAU type name: 1000BaseTFD, 10GigBaseSR, 2.5GbaseT, 400GbaseCR8.
_MAU_SPEED = re.compile(r"(\d+(?:\.\d+)?)(gig|gb|g)?base", re.IGNORECASE)
# Fields of an unnamed chassis (json shape), as opposed to {SYSNAME: {...}}.
_CHASSIS_FIELDS = {"id", "name", "descr", "mgmt-ip", "mgmt-iface", "capability"}
_SWITCH_CAPABILITIES = {"bridge", "router"}


def mau_gbps(mau: str) -> float | None:
    """Gb/s of an IEEE MAU type as lldpd prints it, ``None`` if it names no speed.

    >>> mau_gbps("1000BaseTFD - Four-pair Category 5 UTP, full duplex mode"), mau_gbps("400GbaseCR8")
    (1.0, 400.0)
    >>> mau_gbps("10GigBaseSR"), mau_gbps("unknown")
    (10.0, None)
    """
    match = _MAU_SPEED.match(mau.strip())
    if match is None:
        return None
    number, giga = match.groups()
    return float(number) if giga else float(number) / 1000


class _Object(dict):
    """A JSON object that also keeps its pairs in order, duplicate keys included.

    Old lldpd versions print one key per neighbour, so an interface with two
    neighbours repeats its name; a plain dict would keep only the last.
    """

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


@dataclass(frozen=True)
class _Neighbour:
    """What one interface sees, from either JSON shape; ``path`` locates it for error messages."""

    path: str
    interface: str
    chassis_name: str | None
    chassis_id: str | None
    description: str | None
    mgmt_ips: tuple[str, ...]
    capabilities: tuple[str, ...]
    port: str
    mau: str | None


@register_parser
class LldpJsonParser(Parser):
    """Reads ``lldpctl -f json`` and ``-f json0`` neighbour lists into a host and its Ethernet links."""

    name = FORMAT_NAME
    label = gettext_noop("LLDP neighbours (lldpctl -f json / json0)")
    extensions = (".json",)

    def detect(self, text: str) -> bool:
        return _DETECT.match(text) is not None

    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        document = _load(text, source_name)
        problems = ProblemCollector(source_name, limit=options.max_problems)
        if not isinstance(document, dict) or "lldp" not in document:
            problems.add(LATER.gettext('no top-level "lldp" object'), expected=LATER.gettext('the output of lldpctl -f json: %(example)s') % {"example": '{"lldp": {...}}'})
            problems.raise_if_any()
        neighbours = list(_neighbours(document["lldp"], problems))
        problems.raise_if_any()
        return _fabric(source_name, neighbours, problems, options)


def _load(text: str, source_name: str) -> Any:
    try:
        return json.loads(text.lstrip("\ufeff"), object_pairs_hook=_Object)
    except json.JSONDecodeError as error:
        raise IngestError(
            LATER.gettext("malformed JSON: %(error)s (column %(column)s)") % {"error": error.msg, "column": error.colno},
            source=source_name,
            line=error.lineno,
            expected=LATER.gettext("valid JSON"),
        ) from error
    except RecursionError as error:
        raise IngestError(LATER.gettext("JSON nested too deeply"), source=source_name, expected=LATER.gettext("the output of lldpctl -f json")) from error


def _as_list(value: Any) -> list:
    """lldpctl's json collapses one-element lists: make them lists again."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _first_object(value: Any) -> dict:
    return next((item for item in _as_list(value) if isinstance(item, dict)), {})


def _text(value: Any) -> str | None:
    """A scalar as text, from ``"x"``, ``{"value": "x"}`` or ``[{"value": "x"}]``."""
    if isinstance(value, list):
        return _text(value[0]) if value else None
    if isinstance(value, dict):
        return _text(value.get("value"))
    if isinstance(value, bool) or value is None:
        return None
    return str(value).strip() if isinstance(value, (str, int, float)) else None


def _interfaces(lldp: Any, problems: ProblemCollector) -> Iterator[tuple[str, Any, str]]:
    """(interface name, body, path) for each interface, in either shape."""
    if isinstance(lldp, list):  # json0
        for index, block in enumerate(lldp):
            for position, item in enumerate(_as_list(block.get("interface") if isinstance(block, dict) else None)):
                path = f"lldp[{index}].interface[{position}]"
                name = _text(item.get("name")) if isinstance(item, dict) else None
                if not name:
                    problems.add(LATER.gettext("interface without a name"), path=path, expected='{"name": "<ifname>", ...}')
                    continue
                yield name, item, path
        return
    if not isinstance(lldp, dict):
        problems.add(LATER.gettext('"lldp" is neither an object nor a list'), path="lldp", expected='{"interface": ...}')
        return
    interfaces = lldp.get("interface")
    items = interfaces if isinstance(interfaces, list) else [interfaces] if interfaces is not None else []
    for position, item in enumerate(items):
        where = f"lldp.interface[{position}]" if isinstance(interfaces, list) else "lldp.interface"
        if not isinstance(item, dict):
            problems.add(LATER.gettext("interface entry is not an object"), path=where, expected='{"<ifname>": {...}}')
            continue
        for name, body in getattr(item, "pairs", item.items()):
            yield name, body, f"{where}.{name}"


def _neighbours(lldp: Any, problems: ProblemCollector) -> Iterator[_Neighbour]:
    for interface, body, path in _interfaces(lldp, problems):
        if not isinstance(body, dict):
            problems.add(LATER.gettext("interface is not an object"), path=path, expected=LATER.gettext("an object with chassis and port"))
            continue
        chassis_name, chassis = _chassis(body.get("chassis"))
        if chassis is None:
            problems.add(LATER.gettext("no chassis"), path=f"{path}.chassis", expected=LATER.gettext("the neighbour's chassis (name or id)"))
            continue
        chassis_id = _text(_first_object(chassis.get("id")).get("value"))
        if not (chassis_name or chassis_id):
            problems.add(LATER.gettext("chassis with neither name nor id"), path=f"{path}.chassis", expected=LATER.gettext("a system name or a chassis id"))
            continue
        port = _first_object(body.get("port"))
        port_id = _text(_first_object(port.get("id")).get("value"))
        if not port_id:
            problems.add(LATER.gettext("no port id"), path=f"{path}.port.id", expected='{"type": "ifname", "value": "swp1"}')
            continue
        capabilities = tuple(
            name
            for capability in _as_list(chassis.get("capability"))
            if isinstance(capability, dict) and capability.get("enabled") is True
            and (name := _text(capability.get("type")))
        )
        yield _Neighbour(
            path=path,
            interface=interface,
            chassis_name=chassis_name,
            chassis_id=chassis_id,
            description=_text(chassis.get("descr")),
            mgmt_ips=tuple(ip for ip in map(_text, _as_list(chassis.get("mgmt-ip"))) if ip),
            capabilities=capabilities,
            port=port_id,
            mau=_text(_first_object(port.get("auto-negotiation")).get("current")),
        )


def _chassis(value: Any) -> tuple[str | None, dict | None]:
    """(system name, chassis fields) in either shape; ``(None, None)`` when missing."""
    if isinstance(value, list):  # json0: [{"id": [...], "name": [{"value": ...}], ...}]
        chassis = _first_object(value)
        return _text(chassis.get("name")), chassis or None
    if not isinstance(value, dict) or not value:
        return None, None
    if set(value) & _CHASSIS_FIELDS:  # json, chassis without a system name
        return _text(value.get("name")), value
    name, fields = next(iter(value.items()))  # json: {SYSNAME: {...}}
    return (name.strip() or None, fields) if isinstance(fields, dict) else (None, None)


def _fabric(source_name: str, neighbours: list[_Neighbour], problems: ProblemCollector, options: ParseOptions) -> FabricSpec:
    default_gbps = DEFAULT_LINK_GBPS if options.default_bandwidth_gbps is None else options.default_bandwidth_gbps
    latency = DEFAULT_LATENCY_NS if options.default_latency_ns is None else options.default_latency_ns
    host, host_warning = source_host(source_name)
    local = NodeSpec(host_node_id(host), "host", host)
    nodes: dict[str, NodeSpec] = {local.id: local}
    ends_used: dict[tuple[str, str], str] = {}  # (node, port) -> path of the interface that cabled it
    links = []
    for neighbour in neighbours:
        name = neighbour.chassis_name or neighbour.chassis_id
        kind, tier = device_role(name)
        if kind != "switch" and _SWITCH_CAPABILITIES & {capability.lower() for capability in neighbour.capabilities}:
            kind, tier = "switch", None
        node = device_node(name, kind, tier)
        node = nodes.setdefault(node.id, replace(node, attrs=_chassis_attrs(neighbour)))
        ends = ((local.id, neighbour.interface), (node.id, neighbour.port))
        if node.id == local.id:
            problems.add(
                LATER.gettext("%(interface)s sees this host itself") % {"interface": neighbour.interface},
                path=neighbour.path,
                expected=LATER.gettext("a neighbour on another device"),
            )
            continue
        reused = next((end for end in ends if end in ends_used), None)
        if reused is not None:
            problems.add(
                LATER.gettext("port %(port)s of %(device)s already has a neighbour at %(path)s") % {"port": repr(reused[1]), "device": repr(reused[0]), "path": ends_used[reused]},
                path=neighbour.path,
                expected=LATER.gettext("one neighbour for each interface and port"),
            )
            continue
        ends_used.update(dict.fromkeys(ends, neighbour.path))
        bandwidth = mau_gbps(neighbour.mau) if neighbour.mau else None
        links.append(
            LinkSpec(
                local.id, neighbour.interface, node.id, neighbour.port,
                bandwidth if bandwidth else default_gbps, latency,
                domain="scale-out", attrs={"medium": "ethernet"},
            )
        )
    problems.raise_if_any()
    attrs = {"warnings": [plain_words(host_warning)]} if host_warning else {}
    return FabricSpec(source_name, tuple(nodes.values()), tuple(links), attrs)


def _chassis_attrs(neighbour: _Neighbour) -> dict:
    attrs: dict = {}
    if neighbour.chassis_id:
        attrs["chassis_id"] = neighbour.chassis_id
    if neighbour.description:
        attrs["description"] = neighbour.description
    if neighbour.mgmt_ips:
        attrs["mgmt_ips"] = list(neighbour.mgmt_ips)
    if neighbour.capabilities:
        attrs["capabilities"] = list(neighbour.capabilities)
    return attrs
