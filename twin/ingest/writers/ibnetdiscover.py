"""Write a fabric as ``ibnetdiscover`` default output.

This is how tests and benchmarks make large, realistic dumps from generated
fabrics, and how a fabric read from another format can be fed to InfiniBand
tooling. ``IbnetdiscoverParser`` reads the result back into the same topology,
up to the normalisation documented in docs/formats/infiniband.md ("Writing").
"""

from __future__ import annotations

import hashlib
import string
from collections import Counter, defaultdict
from typing import Any

from twin.ingest.parsers.infiniband import (
    AGGREGATION_DESCRIPTION,
    AGGREGATION_DEVICE_ID,
    LANE_GBPS,
    WIDTH_LANES,
)
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec
from twin.simcore.translation import LATER

__all__ = ["export_ibnetdiscover"]

_EPOCH_CTIME = "Thu Jan  1 00:00:00 1970"  # ctime() format, as the tool prints it
_VENDOR_ID = "0x2c9"  # Mellanox
_SWITCH_DEVICE_ID = "0xd2f2"  # Quantum-2
_HCA_DEVICE_ID = "0x1021"  # ConnectX-7
_SWITCH_MODEL = "MQM9700/U1"
_CHANNEL_ADAPTER_KINDS = ("card", "nic", "aggregation")
# Fastest first, so a bandwidth that several speeds can give gets the newest (QDR, not FDR10).
_SPEEDS_FASTEST_FIRST = sorted(LANE_GBPS, key=LANE_GBPS.__getitem__, reverse=True)
_WIDTHS_PREFERRED = ("4x", "12x", "8x", "2x", "1x")  # 4x is what almost every port runs


def export_ibnetdiscover(spec: FabricSpec) -> str:
    """The fabric as ``ibnetdiscover`` default output: switches, then channel adapters.

    Switches become ``Switch`` blocks; cards, NICs and aggregation nodes ``Ca``
    blocks. Left out: host nodes, down links (ibnetdiscover prints live ports only),
    links touching a host node, links of another ``medium`` than InfiniBand (PCIe,
    NVLink, Ethernet) and the nodes only those reach (a discovery's inferred cards). GUIDs: the node's own for an
    ``ib:<guid>`` id or a ``guid`` attribute, else derived from the id
    (blake2b, 64 bits), so the same fabric always gives the same dump. Width and
    speed: the link's ``width``/``speed`` attrs when they give its bandwidth,
    else the widest width at the fastest speed that does (a ``degraded`` link
    tries narrow widths at the fabric's usual speed first, so that it reads
    back as degraded). Ports must be numbers, as on InfiniBand.

    Raises ``ValueError`` for a fabric that ibnetdiscover could not have
    printed: a non-numeric port, a bandwidth no width x speed gives, two nodes
    with one GUID.
    """
    # ibnetdiscover sees the InfiniBand fabric only: links of another medium (PCIe, NVLink,
    # Ethernet) are left out, and so are the nodes reached only through them, such as the cards
    # a discovery's HCAs stand for (reading the dump back infers them again).
    ib_links = [link for link in spec.links if link.attrs.get("medium", "ib") == "ib"]
    on_ib = {end for link in ib_links for end in (link.a, link.b)}
    behind = {end for link in spec.links if link.attrs.get("medium", "ib") != "ib" for end in (link.a, link.b)} - on_ib
    nodes = [node for node in spec.nodes if (node.kind == "switch" or node.kind in _CHANNEL_ADAPTER_KINDS) and node.id not in behind]
    by_id = {node.id: node for node in nodes}
    guids = _guids(nodes)
    live = [link for link in ib_links if link.state != "down" and link.a in by_id and link.b in by_id]
    widths_speeds = _widths_and_speeds(live)
    lids = _lids(nodes)
    descriptions = _descriptions(nodes)

    ports: dict[str, list[tuple[int, NodeSpec, int, str]]] = defaultdict(list)
    for position, link in enumerate(live):
        width_speed = widths_speeds[position]
        for (near, near_port), (far, far_port) in ((link.ends()[0], link.ends()[1]), (link.ends()[1], link.ends()[0])):
            ports[near].append((_port_number(near, near_port), by_id[far], _port_number(far, far_port), width_speed))

    first_adapter = next((node for node in nodes if node.kind != "switch"), nodes[0] if nodes else None)
    origin = _hex(spec.attrs.get("initiated_from")) or (guids[first_adapter.id] if first_adapter else 0)
    lines = [
        "#",
        f"# Topology file: generated on {spec.attrs.get('generated_on', _EPOCH_CTIME)}",
        "#",
        f"# Initiated from node {origin:016x} port {origin:016x}",
    ]
    for switches_pass in (True, False):  # the tool prints all switches, then CAs and routers
        for node in nodes:
            prefix = _name_prefix(node)
            if (prefix == "S") != switches_pass:
                continue
            guid = guids[node.id]
            node_ports = sorted(ports.get(node.id, ()), key=lambda entry: entry[0])
            port_count = max([node.radix or 1, *(entry[0] for entry in node_ports)])
            lines += ["", f"vendid={node.attrs.get('vendor_id', _VENDOR_ID)}", f"devid={_device_id(node)}"]
            lines.append(f"sysimgguid=0x{_hex(node.attrs.get('system_guid')) or guid:x}")  # as real devices have
            if prefix == "S":
                lines.append(f"switchguid=0x{guid:x}({guid:x})")
                lines.append(
                    f'Switch\t{port_count} "S-{guid:016x}"\t\t# "{descriptions[node.id]}" enhanced port 0 '
                    f"lid {lids[node.id]} lmc 0"
                )
            else:
                node_type = "Rt" if prefix == "R" else "Ca"
                lines.append(f"{node_type.lower()}guid=0x{guid:x}")
                lines.append(f'{node_type}\t{port_count} "{prefix}-{guid:016x}"\t\t# "{descriptions[node.id]}"')
            for port, far, far_port, width_speed in node_ports:
                far_guid, far_prefix = guids[far.id], _name_prefix(far)
                far_name = f'"{far_prefix}-{far_guid:016x}"[{far_port}]'
                far_tail = f'"{descriptions[far.id]}" lid {lids[far.id]} {width_speed}'
                if prefix == "S":
                    far_guid_text = "" if far_prefix == "S" else f"({far_guid:x}) "
                    lines.append(f"[{port}]\t{far_name}{far_guid_text}\t\t# {far_tail}")
                else:
                    far_guid_text = "" if far_prefix == "S" else f" ({far_guid:x}) "
                    lines.append(f"[{port}]({guid:x}) \t{far_name}{far_guid_text}\t\t# lid {lids[node.id]} lmc 0 {far_tail}")
    return "\n".join(lines) + "\n"


def _name_prefix(node: NodeSpec) -> str:
    """The node type letter of ibnetdiscover's node names: S(witch), R(outer), H (a CA)."""
    if node.kind != "switch":
        return "H"
    return "R" if node.attrs.get("node_type") == "router" else "S"


def _guids(nodes: list[NodeSpec]) -> dict[str, int]:
    guids: dict[str, int] = {}
    owners: dict[int, str] = {}
    for node in nodes:
        own = _hex(node.id.removeprefix("ib:")) if node.id.startswith("ib:") else _hex(node.attrs.get("guid"))
        guid = own if own is not None else int.from_bytes(hashlib.blake2b(node.id.encode(), digest_size=8).digest())
        if guid in owners:
            shared = LATER.gettext("nodes %(first)s and %(second)s would share GUID %(guid)s")
            raise ValueError(shared % {"first": repr(owners[guid]), "second": repr(node.id), "guid": f"{guid:016x}"})
        owners[guid] = node.id
        guids[node.id] = guid
    return guids


def _hex(text: Any) -> int | None:
    """A 64-bit number written as up to 16 hex digits, else ``None``."""
    if isinstance(text, str) and 0 < len(text) <= 16 and all(char in string.hexdigits for char in text):
        return int(text, 16)
    return None


def _device_id(node: NodeSpec) -> str:
    default = {"switch": _SWITCH_DEVICE_ID, "aggregation": AGGREGATION_DEVICE_ID}.get(node.kind, _HCA_DEVICE_ID)
    return str(node.attrs.get("device_id", default))


def _lids(nodes: list[NodeSpec]) -> dict[str, int]:
    """LIDs: the node's ``lid`` attribute where it is free, else the next free one from 1."""
    lids: dict[str, int] = {}
    used: set[int] = set()
    for node in nodes:
        lid = node.attrs.get("lid")
        if isinstance(lid, int) and 0 < lid < 0xC000 and lid not in used:
            lids[node.id] = lid
            used.add(lid)
    next_lid = 1
    for node in nodes:
        if node.id not in lids:
            while next_lid in used:
                next_lid += 1
            lids[node.id] = next_lid
            used.add(next_lid)
    return lids


def _descriptions(nodes: list[NodeSpec]) -> dict[str, str]:
    """Node descriptions: the ``description`` attribute, else one in the style of the hardware.

    Switches ``MF0;<name>:MQM9700/U1``; adapters on a host ``<host> mlx5_<index on host>``
    (the name's device part for a ``<host>/<device>`` name); aggregation nodes the SHARP text.
    """
    descriptions: dict[str, str] = {}
    adapters_on_host: Counter[str] = Counter()
    for node in nodes:
        description = node.attrs.get("description")
        if not isinstance(description, str):
            if node.kind == "switch":
                description = f"MF0;{node.name}:{_SWITCH_MODEL}"
            elif node.kind == "aggregation":
                description = AGGREGATION_DESCRIPTION
            elif node.host:
                device = node.name.removeprefix(f"{node.host}/") if node.name.startswith(f"{node.host}/") else None
                index = node.attrs.get("index_on_host", adapters_on_host[node.host])
                description = f"{node.host} {device or f'mlx5_{index}'}"
                adapters_on_host[node.host] += 1
            else:
                description = node.name
        # The tool prints the description between quotes on one line.
        descriptions[node.id] = "".join(" " if not char.isprintable() else char for char in description)
    return descriptions


def _widths_and_speeds(links: list[LinkSpec]) -> list[str]:
    """``4xNDR``-style width and speed of each link, giving its bandwidth."""
    chosen = [_attrs_width_speed(link) for link in links]
    # The usual speed is that of most links at full (4x) width; degraded links are written
    # narrower at that speed, so that they read back as degraded.
    full_width = Counter(
        found[1] for link, given in zip(links, chosen) if given is None and (found := _find(link.bandwidth_gbps, ("4x",)))
    )
    usual_speed = tuple(speed for speed, _ in full_width.most_common(1))
    for position, link in enumerate(links):
        if chosen[position] is not None:
            continue
        found = (link.state == "degraded" and _find(link.bandwidth_gbps, ("1x", "2x"), usual_speed)) or _find(
            link.bandwidth_gbps, _WIDTHS_PREFERRED
        )
        if not found:
            raise ValueError(
                f"link {link.a}[{link.a_port}] - {link.b}[{link.b_port}] runs at {link.bandwidth_gbps:g} Gb/s, "
                "which no InfiniBand width x speed gives (4xNDR is 400 Gb/s)"
            )
        chosen[position] = "".join(found)
    return chosen  # type: ignore[return-value]  # no None is left


def _attrs_width_speed(link: LinkSpec) -> str | None:
    width, speed = link.attrs.get("width"), link.attrs.get("speed")
    if width in WIDTH_LANES and speed in LANE_GBPS and WIDTH_LANES[width] * LANE_GBPS[speed] == link.bandwidth_gbps:
        return f"{width}{speed}"
    return None


def _find(bandwidth: float, widths: tuple[str, ...], speeds: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """The first width (in the order given) and fastest speed whose product is ``bandwidth``."""
    for width in widths:
        for speed in speeds or _SPEEDS_FASTEST_FIRST:
            if WIDTH_LANES[width] * LANE_GBPS[speed] == bandwidth:
                return width, speed
    return None


def _port_number(node_id: str, port: str) -> int:
    if not port.isdecimal() or int(port) < 1:  # isdigit would let "²" through to int()
        not_number = LATER.gettext("port %(port)s of node %(node)s is not a port number, which InfiniBand ports are")
        raise ValueError(not_number % {"port": repr(port), "node": repr(node_id)})
    return int(port)
