"""The files a DGX H100 SuperPOD's own tools print: one ``ibnetdiscover`` dump and one NCCL
topology dump per host.

Tests and benchmarks use these to walk the path an operator takes (upload the dump and an
archive of per-host XMLs) on a fabric the size of a real one, with the untidiness real
dumps have:

- HCAs with the descriptions the driver sets (``dgx001 HCA-1``), and some hosts whose HCAs
  kept the firmware default ``MT4129 ConnectX7   Mellanox Technologies`` (no host name);
- switches named ``MF0;<name>:MQM9700/U1``, each with its SHARP ``Mellanox Technologies
  Aggregation Node`` on port 65;
- hosts missing from the dump (down for service), their leaf ports taken by storage and
  UFM HCAs (``stor01 HCA-1``, ``ufm01 HCA-1``) as on a real SuperPOD's spare ports;
- per-host XMLs laid out as NCCL >= 2.21 dumps them (8 GPUs, each behind a PCIe switch with
  its rail HCA, NVLink to the NVSwitches), GUIDs matching the dump.

The fabric itself is ``generate.rail_optimised``: 32 servers a scalable unit, HCA ``i`` of
every server on the unit's rail leaf ``i``, leaves joined by spines (and cores past 2,048
HCAs) of radix 64.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from twin.ingest.parsers.infiniband import AGGREGATION_DESCRIPTION
from twin.ingest.writers.ibnetdiscover import export_ibnetdiscover
from twin.simcore.generate import rail_optimised
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

__all__ = ["DEFAULT_HCA_DESCRIPTION", "hca_guid", "superpod_files", "superpod_host_xml"]

DEFAULT_HCA_DESCRIPTION = "MT4129 ConnectX7   Mellanox Technologies"  # firmware default, 3 spaces
GPUS_PER_HOST = 8
# Bus ids of a DGX H100's GPUs and of the rail HCA beside each (the same on every host).
_GPU_BUSES = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")
_NIC_BUSES = ("19", "29", "39", "5c", "99", "aa", "b9", "da")
_BRIDGE_BUSES = ("16", "28", "38", "5b", "98", "a9", "b8", "d9")
_AGGREGATION_PORT = "65"


def hca_guid(server: int, rail: int) -> str:
    """Node GUID of HCA ``rail`` (0-based) of server ``server`` (1-based), 16 hex digits."""
    return f"{0xB8CEF60300000000 | (server << 8) | rail:016x}"


def host_name(server: int) -> str:
    return f"dgx{server:03d}" if server < 1000 else f"dgx{server:04d}"


def superpod_files(
    *,
    units: int = 2,
    servers_per_unit: int = 32,
    missing: Collection[int] = (),
    nameless: Collection[int] = (),
    storage_hosts: int = 2,
    xml_hosts: Collection[int] | None = None,
) -> dict[str, str]:
    """File name -> text: ``superpod.ibnetdiscover`` and ``<host>.xml`` per host with an XML.

    ``missing``: server numbers (1-based) absent from the dump; their ports carry the
    ``storage_hosts`` storage servers (2 HCAs each) and one UFM server instead, as far as
    they go. ``nameless``: servers whose HCAs kept the firmware default description.
    ``xml_hosts``: the servers that get an NCCL XML (default: every server in the dump).
    """
    servers = units * servers_per_unit
    fabric = rail_optimised(
        servers=servers, servers_per_unit=servers_per_unit, nvlink_gbps=None, name="superpod"
    )
    present = [server for server in range(1, servers + 1) if server not in missing]
    dump = _as_dump(fabric, missing=set(missing), nameless=set(nameless), storage_hosts=storage_hosts)
    files = {"superpod.ibnetdiscover": export_ibnetdiscover(dump)}
    for server in present if xml_hosts is None else sorted(set(xml_hosts) & set(present)):
        files[f"{host_name(server)}.xml"] = superpod_host_xml(server)
    return files


def _as_dump(fabric: FabricSpec, *, missing: set[int], nameless: set[int], storage_hosts: int) -> FabricSpec:
    """The generated fabric as the subnet manager sees it: cards become their HCAs, hosts of
    ``missing`` leave their ports to storage and UFM HCAs, every switch gets its SHARP node."""
    spares = [f"stor{number:02d} HCA-{hca}" for number in range(1, storage_hosts + 1) for hca in (1, 2)]
    spares.append("ufm01 HCA-1")
    renamed: dict[str, NodeSpec | None] = {}
    for card in fabric.cards():
        server = int(card.host.removeprefix("host-"))
        rail = int(card.attrs["index_on_host"])
        if server in missing:
            if not spares:
                renamed[card.id] = None
                continue
            description = spares.pop(0)
            guid = f"{0xE41D2D0300000000 | len(renamed):016x}"
        else:
            guid = hca_guid(server, rail)
            description = DEFAULT_HCA_DESCRIPTION if server in nameless else f"{host_name(server)} HCA-{rail + 1}"
        renamed[card.id] = NodeSpec(id=f"ib:{guid}", kind="nic", name=description, radix=1, attrs={"description": description})
    nodes: list[NodeSpec] = [node for node in renamed.values() if node is not None]
    links: list[LinkSpec] = []
    for link in fabric.links:
        if link.a in renamed or link.b in renamed:
            card_end = link.a if link.a in renamed else link.b
            hca = renamed[card_end]
            if hca is None:
                continue
            other, other_port = (link.b, link.b_port) if card_end == link.a else (link.a, link.a_port)
            links.append(replace(link, a=hca.id, a_port="1", b=other, b_port=other_port))
        else:
            links.append(link)
    for switch in fabric.switches():
        nodes.append(replace(switch, radix=64))
        engine = NodeSpec(
            id=f"{switch.id}/sharp", kind="aggregation", name=AGGREGATION_DESCRIPTION, radix=1,
            attrs={"description": AGGREGATION_DESCRIPTION},
        )
        nodes.append(engine)
        links.append(LinkSpec(switch.id, _AGGREGATION_PORT, engine.id, "1", 400.0, 0.0, domain="scale-out"))
    return FabricSpec(name=fabric.name, nodes=tuple(nodes), links=tuple(links))


def superpod_host_xml(server: int) -> str:
    """NCCL's topology dump of one DGX H100: 2 NUMA nodes of 4 (GPU, rail HCA) pairs."""
    lines = ['<system version="1">']
    for numa in (0, 1):
        lines.append(
            f'  <cpu host_hash="0x{server:016x}" numaid="{numa}" arch="x86_64" vendor="GenuineIntel" '
            'familyid="6" modelid="143">'
        )
        for position in range(numa * 4, numa * 4 + 4):
            pcie = 'link_speed="32.0 GT/s PCIe" link_width="16"'
            lines += [
                f'    <pci busid="0000:{_BRIDGE_BUSES[position]}:00.0" class="0x060400" {pcie}>',
                f'      <pci busid="0000:{_GPU_BUSES[position]}:00.0" class="0x030200" vendor="0x10de" {pcie}>',
                f'        <gpu dev="{position}" sm="90" rank="{position}" gdr="1">',
                '          <nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/>',
                "        </gpu>",
                "      </pci>",
                f'      <pci busid="0000:{_NIC_BUSES[position]}:00.0" class="0x020700" vendor="0x15b3" {pcie}>',
                "        <nic>",
                f'          <net name="mlx5_{position}" dev="{position}" speed="400000" port="1" '
                f'latency="0.000000" guid="0x{int(hca_guid(server, position), 16):x}" maxconn="131072" gdr="1"/>',
                "        </nic>",
                "      </pci>",
                "    </pci>",
            ]
        lines.append("  </cpu>")
    lines.append("</system>")
    return "\n".join(lines) + "\n"
