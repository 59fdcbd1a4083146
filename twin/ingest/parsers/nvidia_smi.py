"""``nvidia-smi topo -m``: the GPU/NIC connection matrix of one host.

The output (docs/formats/nvidia-smi-topo.md) is a header of column labels
(``GPU0 .. GPUn``, ``NIC0 .. NICm`` or, on old drivers, ``mlx5_0``...), one
row per label with a path code per column (``X``, ``NV#``, ``PIX``, ``PXB``,
``PHB``, ``NODE``, ``SYS``, old ``SOC``), CPU/NUMA affinity columns (ignored),
the legend and a ``NIC Legend`` naming each NIC's device. It is tokenised on
white space, because pasted copies lose their TABs.

Mapping:

- each GPU row -> card ``<host>/gpu<index>`` (nvidia-smi gives no bus id);
- each NIC -> NIC ``<host>/nic:<device>`` (device from the NIC Legend);
- ``NV#``: ``#`` NVLinks. A GPU whose NVLinks add up to more than any GPU has
  (18) reaches its peers through NVSwitches: one link of its largest ``#``
  lanes to the host's ``<host>/nvswitch``. Other NVLinked pairs (NVLink
  bridges, the DGX-1 mesh) get a direct link. Bandwidth = lanes x the
  per-NVLink rate (``ParseOptions.default_bandwidth_gbps``, else 200 Gb/s);
- ``PIX`` / ``PXB`` between a GPU and a NIC -> a PCIe link (the NIC that GPU
  uses for GPUDirect RDMA); ``PHB``, ``NODE``, ``SYS`` go through the CPU and
  are not links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from twin.simcore.translation import LATER, Joined, gettext_noop, plain_words
from twin.ingest.errors import ProblemCollector
from twin.ingest.hostlist import source_host
from twin.ingest.options import ParseOptions
from twin.ingest.parsers.nccl_xml import DEFAULT_LATENCY_NS, DEFAULT_NVLINK_LANE_GBPS, DEFAULT_PCIE_GBPS
from twin.ingest.registry import Parser, register_parser
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

__all__ = ["FORMAT_NAME", "MAX_NVLINKS_PER_GPU", "NvidiaSmiTopoParser"]

FORMAT_NAME = "nvidia-smi-topo"
# The most NVLinks one GPU has (H100, B200); a GPU whose NV# add up to more is on NVSwitches.
MAX_NVLINKS_PER_GPU = 18

_CELL = re.compile(r"X|SYS|SOC|NODE|PHB|PXB|PIX|NV(\d+)")
_CELL_EXPECTED = LATER.gettext("X, NV<n>, PIX, PXB, PHB, NODE, SYS or SOC")
_GPU_LABEL = re.compile(r"GPU(\d+)")
# GPU<n>, NIC<n>, or an RDMA device name as old drivers print it (mlx5_0, mlx5_bond_0).
_LABEL = re.compile(r"(?:GPU|NIC)\d+|[a-z][\w.-]*\d")
_NIC_LEGEND_ENTRY = re.compile(r"\s*(NIC\d+)\s*:\s*(\S+)\s*")
_DETECT_HEADER = re.compile(r"(?m)^[ \t]*GPU0[ \t]+(?!X(?:[ \t]|$))\S")
_DETECT_ROW = re.compile(r"(?m)^[ \t]*GPU0[ \t]+X(?:[ \t]|\r?$)")


@dataclass(frozen=True)
class _Row:
    label: str
    line: int
    cells: tuple[str, ...]


@register_parser
class NvidiaSmiTopoParser(Parser):
    """Reads the matrix of ``nvidia-smi topo -m`` into cards, NICs and their NVLink and PCIe links."""

    name = FORMAT_NAME
    label = gettext_noop("nvidia-smi topo -m")
    extensions = (".txt",)

    def detect(self, text: str) -> bool:
        return _DETECT_HEADER.search(text) is not None and _DETECT_ROW.search(text) is not None

    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        problems = ProblemCollector(source_name, limit=options.max_problems)
        lines = [line.rstrip("\r") for line in text.split("\n")]
        header_index = next((index for index, line in enumerate(lines) if _is_header(line.split())), None)
        if header_index is None:
            problems.add(
                LATER.gettext("no matrix header"),
                expected=LATER.gettext("a header line of column labels starting with GPU0, as nvidia-smi topo -m prints it"),
            )
            problems.raise_if_any()
        labels = _labels(lines[header_index].split())
        for label in {label for label in labels if labels.count(label) > 1}:
            problems.add(LATER.gettext("column %(label)s appears twice") % {"label": label}, line=header_index + 1, expected=LATER.gettext("each column label once"))
        rows = _rows(lines, header_index, labels, problems)
        _check_matrix(labels, rows, problems)
        nic_devices = _nic_legend(lines, header_index, problems)
        problems.raise_if_any()
        return _fabric(source_name, labels, rows, nic_devices, options)


def _is_header(tokens: list[str]) -> bool:
    return bool(tokens) and _GPU_LABEL.fullmatch(tokens[0]) is not None and (
        len(tokens) == 1 or _CELL.fullmatch(tokens[1]) is None
    )


def _labels(tokens: list[str]) -> tuple[str, ...]:
    """Column labels: the header's tokens up to the affinity columns ("CPU Affinity", ...)."""
    labels = []
    for token in tokens:
        if _LABEL.fullmatch(token) is None:
            break
        labels.append(token)
    return tuple(labels)


def _rows(lines: list[str], header_index: int, labels: tuple[str, ...], problems: ProblemCollector) -> dict[str, _Row]:
    """The matrix rows after the header, up to the first blank line or the legend."""
    rows: dict[str, _Row] = {}
    for index in range(header_index + 1, len(lines)):
        tokens, line = lines[index].split(), index + 1
        if not tokens or tokens[0] == "Legend:":
            break
        label = tokens[0]
        if label not in labels:
            problems.add(
                LATER.gettext("row %(label)s is not a column of the header") % {"label": repr(label)},
                line=line,
                expected=LATER.gettext("a row of %(labels)s") % {"labels": Joined(list(labels), ", ")},
            )
            continue
        if label in rows:
            problems.add(
                LATER.gettext("second row for %(label)s") % {"label": label},
                line=line,
                expected=LATER.gettext("one row for %(label)s, at line %(line)s") % {"label": label, "line": str(rows[label].line)},
            )
            continue
        cells = tuple(tokens[1 : 1 + len(labels)])
        if len(cells) < len(labels):
            problems.add(
                LATER.ngettext("row %(label)s has %(count)s cell", "row %(label)s has %(count)s cells", len(cells)) % {"label": label, "count": len(cells)},
                line=line,
                expected=LATER.gettext("%(count)s cells, one for each of %(labels)s") % {"count": len(labels), "labels": Joined(list(labels), ", ")},
            )
            continue
        for column, cell in zip(labels, cells):
            if _CELL.fullmatch(cell) is None:
                problems.add(LATER.gettext("%(cell)s is %(value)s") % {"cell": f"{label}/{column}", "value": repr(cell)}, line=line, expected=_CELL_EXPECTED)
        rows[label] = _Row(label, line, cells)
    for label in labels:
        if label not in rows:
            problems.add(LATER.gettext("no row for %(label)s") % {"label": label}, expected=LATER.gettext("one row for each column of the header"))
    return rows


def _check_matrix(labels: tuple[str, ...], rows: dict[str, _Row], problems: ProblemCollector) -> None:
    """X exactly on the diagonal, and the matrix symmetric: anything else is a garbled copy."""
    position = {label: index for index, label in enumerate(labels)}
    for label, row in rows.items():
        for column, cell in zip(labels, row.cells):
            if (cell == "X") != (column == label):
                expected = LATER.gettext("X on the diagonal") if column == label else LATER.gettext("X only on the diagonal")
                problems.add(LATER.gettext("%(cell)s is %(value)s") % {"cell": f"{label}/{column}", "value": repr(cell)}, line=row.line, expected=expected)
            elif column in rows and position[column] < position[label]:
                mirrored = rows[column].cells[position[label]]
                if _CELL.fullmatch(cell) and _CELL.fullmatch(mirrored) and mirrored != cell:
                    problems.add(
                        LATER.gettext("%(cell)s is %(value)s but %(mirror)s (line %(line)s) is %(mirrored)s")
                        % {"cell": f"{label}/{column}", "value": cell, "mirror": f"{column}/{label}", "line": str(rows[column].line), "mirrored": mirrored},
                        line=row.line,
                        expected=LATER.gettext("a symmetric matrix"),
                    )


def _nic_legend(lines: list[str], header_index: int, problems: ProblemCollector) -> dict[str, str]:
    """NIC label -> RDMA device, from the "NIC Legend:" block (absent on old drivers)."""
    devices: dict[str, str] = {}
    in_legend = False
    for index in range(header_index, len(lines)):
        if lines[index].strip() == "NIC Legend:":
            in_legend = True
        elif in_legend and (entry := _NIC_LEGEND_ENTRY.fullmatch(lines[index])):
            label, device = entry.groups()
            if device in devices.values() or label in devices:
                problems.add(
                    LATER.gettext("%(label)s: %(device)s repeats a NIC or a device") % {"label": label, "device": device},
                    line=index + 1,
                    expected=LATER.gettext("each NIC and device once"),
                )
            else:
                devices[label] = device
    return devices


def _fabric(
    source_name: str,
    labels: tuple[str, ...],
    rows: dict[str, _Row],
    nic_devices: dict[str, str],
    options: ParseOptions,
) -> FabricSpec:
    host, host_warning = source_host(source_name)
    lane_gbps = DEFAULT_NVLINK_LANE_GBPS if options.default_bandwidth_gbps is None else options.default_bandwidth_gbps
    latency = DEFAULT_LATENCY_NS if options.default_latency_ns is None else options.default_latency_ns
    cell = {(label, column): value for label, row in rows.items() for column, value in zip(labels, row.cells)}
    gpus = [label for label in labels if _GPU_LABEL.fullmatch(label)]
    nics = [label for label in labels if not _GPU_LABEL.fullmatch(label)]
    node_id = {gpu: f"{host}/gpu{_GPU_LABEL.fullmatch(gpu).group(1)}" for gpu in gpus}
    node_id |= {nic: f"{host}/nic:{nic_devices.get(nic, nic)}" for nic in nics}

    nodes = [
        NodeSpec(node_id[gpu], "card", node_id[gpu], host=host, attrs={"gpu_index": int(_GPU_LABEL.fullmatch(gpu).group(1))})
        for gpu in gpus
    ]
    nodes += [NodeSpec(node_id[nic], "nic", f"{host}/{nic_devices.get(nic, nic)}", host=host) for nic in nics]

    def nvlinks(first: str, second: str) -> int:
        match = _CELL.fullmatch(cell[first, second])
        return int(match.group(1)) if match.group(1) else 0

    def link(a: str, b: str, bandwidth: float, attrs: dict) -> LinkSpec:
        return LinkSpec(a, b, b, a, bandwidth, latency, attrs=attrs)

    links = []
    on_nvswitch = [gpu for gpu in gpus if sum(nvlinks(gpu, peer) for peer in gpus) > MAX_NVLINKS_PER_GPU]
    if on_nvswitch:
        switch_id = f"{host}/nvswitch"
        nodes.append(NodeSpec(switch_id, "switch", switch_id, tier="leaf", attrs={"role": "nvswitch"}))
        for gpu in on_nvswitch:
            lanes = max(nvlinks(gpu, peer) for peer in gpus)
            links.append(link(node_id[gpu], switch_id, lanes * lane_gbps, {"medium": "nvlink", "lanes": lanes}))
    direct = [gpu for gpu in gpus if gpu not in on_nvswitch]
    for index, gpu in enumerate(direct):
        for peer in direct[index + 1 :]:
            if lanes := nvlinks(gpu, peer):
                links.append(link(node_id[gpu], node_id[peer], lanes * lane_gbps, {"medium": "nvlink", "lanes": lanes}))
    for gpu in gpus:
        for nic in nics:
            if cell[gpu, nic] in ("PIX", "PXB"):
                links.append(link(node_id[gpu], node_id[nic], DEFAULT_PCIE_GBPS, {"medium": "pcie", "path": cell[gpu, nic]}))
    attrs = {"warnings": [plain_words(host_warning)]} if host_warning else {}
    return FabricSpec(source_name, tuple(nodes), tuple(links), attrs)
