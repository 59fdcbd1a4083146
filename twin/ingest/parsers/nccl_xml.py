"""NCCL topology XML: dumps (``NCCL_TOPO_DUMP_FILE``) and cloud hint files (``NCCL_TOPO_FILE``).

The document (NVIDIA/nccl ``src/graph/xml.cc``; docs/formats/nccl-topo-xml.md)
is a tree ``system > cpu > pci > ... > gpu | nic > net`` of one host, or of
several hosts (``host_hash``) in a multi-node NVLink dump. It is read with
defusedxml, refusing any DTD so that no entity can expand or fetch a file.

Mapping:

- ``gpu`` (or, in hint files, a ``pci`` of class ``0x03....``) -> card
  ``<host>/gpu:<bus id>``;
- ``net`` (or a ``pci`` of class ``0x02....``) -> NIC ``<host>/nic:<name>``
  (``<host>/nic:<bus id>`` when it has no name), with its GUID;
- ``nvlink`` -> a scale-up link of ``count`` lanes to the peer GPU, or to an
  NVSwitch node: one ``<host>/nvswitch`` for NCCL's placeholder bus id (the
  NVSwitches of H100/B200 baseboards are not on PCI), else one
  ``<host>/nvswitch:<bus id>`` per switch;
- a GPU and a NIC behind one PCIe bridge (``PIX``) or several bridges below
  the CPU (``PXB``) -> a PCIe link between them. PCIe switches and CPUs are
  not nodes: the card-NIC pairing is what placement and rail analysis need.

Bandwidths are line rates per direction, as everywhere in the twin: NVLink
lanes by GPU generation (``sm``), PCIe from ``link_speed`` x ``link_width``.
Synthetic links have no ports, so each end's port is the other end's node id.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pyexpat import ErrorString
from xml.etree.ElementTree import Element, ParseError, TreeBuilder

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from twin.simcore.translation import LATER, Phrase, gettext_noop, plain_words
from twin.ingest.errors import IngestError, ProblemCollector, Words
from twin.ingest.hostlist import source_host
from twin.ingest.options import ParseOptions
from twin.ingest.registry import Parser, register_parser
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

__all__ = [
    "DEFAULT_LATENCY_NS",
    "DEFAULT_NVLINK_LANE_GBPS",
    "DEFAULT_PCIE_GBPS",
    "FORMAT_NAME",
    "NcclTopoXmlParser",
    "normalise_bus_id",
    "nvlink_lane_gbps",
    "pcie_gbps",
]

FORMAT_NAME = "nccl-topo-xml"
# A few ns of board trace: NVLink and PCIe paths stay inside one chassis.
DEFAULT_LATENCY_NS = 5.0

# Line rate of one NVLink per direction, Gb/s, by GPU compute capability x 10
# (the first entry whose minimum the GPU's ``sm`` reaches, from the top):
# NVLink 5 (B200, GB200) 50 GB/s; NVLink 4 (H100) and 3 (A100) and 2 (V100)
# 25 GB/s; NVLink 3 on GA10x boards (sm 86) 14.0625 GB/s; NVLink 1 (P100) 20 GB/s.
_NVLINK_LANE_GBPS_BY_SM = ((100, 400.0), (90, 200.0), (86, 112.5), (70, 200.0), (0, 160.0))
DEFAULT_NVLINK_LANE_GBPS = 200.0  # NVLink 2, 3 and 4, when the generation is unknown


def nvlink_lane_gbps(sm: int | None) -> float:
    """Line rate of one NVLink lane per direction in Gb/s for a GPU of capability ``sm`` (x10).

    >>> nvlink_lane_gbps(90), nvlink_lane_gbps(100), nvlink_lane_gbps(None)
    (200.0, 400.0, 200.0)
    """
    if sm is None:
        return DEFAULT_NVLINK_LANE_GBPS
    return next(gbps for minimum, gbps in _NVLINK_LANE_GBPS_BY_SM if sm >= minimum)


def pcie_gbps(transfers_gt_s: float, width: int) -> float:
    """Line rate of a PCIe link per direction in Gb/s: GT/s x lanes x encoding efficiency.

    Gen 1-2 use 8b/10b, Gen 3-5 128b/130b, Gen 6 FLIT mode (242/256).

    >>> round(pcie_gbps(32.0, 16), 1), round(pcie_gbps(16.0, 16), 1)
    (504.1, 252.1)
    """
    efficiency = 0.8 if transfers_gt_s <= 5.0 else 128 / 130 if transfers_gt_s <= 32.0 else 242 / 256
    return transfers_gt_s * width * efficiency


# PCIe Gen 5 x16, the host interface of H100/B200-class GPUs and NDR NICs.
DEFAULT_PCIE_GBPS = pcie_gbps(32.0, 16)

# Bus ids as NCCL, nvidia-smi and sysfs write them: [domain:]bus:device.function.
_BUS_ID = re.compile(r"(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])")
# NCCL's stand-in target for NVSwitches that are not on PCI (H100/B200/GB200 baseboards).
_NVSWITCH_PLACEHOLDER = "fffffff:ff:ff.0"
_GPU_CLASS, _NIC_CLASS, _CPU_CLASS = "0x03", "0x02", "0x068001"
# Below this a "guid" is an index written by a net plugin ("0".."31"), not a GUID.
_SMALLEST_GUID = 0x100
# Limits of NCCL's own XML reader (xml.cc), beyond which it would reject the file.
_NCCL_MAX_ATTRIBUTES, _NCCL_MAX_CHILDREN, _NCCL_MAX_VALUE = 16, 640, 255

_DETECT = re.compile(r"\A\ufeff?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*)*<system[\s/>]", re.DOTALL)


def normalise_bus_id(text: str) -> str | None:
    """A PCI bus id as ``dddd:bb:dd.f`` in lower case, or ``None`` if ``text`` is not one.

    Domains wider than 16 bits (NCCL's ``fffffff`` placeholder) are kept as written.

    >>> normalise_bus_id("00000000:1A:00.0"), normalise_bus_id("18:00.0"), normalise_bus_id("18000")
    ('0000:1a:00.0', '0000:18:00.0', None)
    """
    match = _BUS_ID.fullmatch(text.strip())
    if match is None:
        return None
    domain, bus, device, function = match.groups()
    domain_number = int(domain or "0", 16)
    domain_text = f"{domain_number:04x}" if domain_number <= 0xFFFF else f"{domain_number:x}"
    return f"{domain_text}:{int(bus, 16):02x}:{int(device, 16):02x}.{function}"


@register_parser
class NcclTopoXmlParser(Parser):
    """Reads NCCL topology dumps and hint files into cards, NICs, NVSwitches and their links."""

    name = FORMAT_NAME
    label = gettext_noop("NCCL topology XML (NCCL_TOPO_DUMP_FILE, NCCL_TOPO_FILE)")
    extensions = (".xml",)

    def detect(self, text: str) -> bool:
        return _DETECT.match(text) is not None

    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        root, lines = _load(text, source_name)
        problems = ProblemCollector(source_name, limit=options.max_problems)
        document = _Document(root, lines, problems)
        if root.tag != "system" or root.get("version") != "1":
            problems.add(
                LATER.gettext("root element %(element)s") % {"element": f"<{root.tag}{_shown_version(root)}>"},
                line=lines.get(root),
                path=f"/{root.tag}",
                expected=LATER.gettext('<system version="1"> (an NCCL topology; hwloc and NCCL graph dumps are other formats)'),
            )
            problems.raise_if_any()
        builder = _FabricBuilder(document, source_name, options, _text_warnings(text))
        builder.read()
        problems.raise_if_any()
        return builder.fabric()


def _text_warnings(text: str) -> list[Phrase]:
    """What NCCL's own reader would trip over in the raw text (it is stricter than XML)."""
    warnings = []
    if text.lstrip("\ufeff \t\r\n").startswith("<?xml"):
        warnings.append(LATER.gettext("line 1: NCCL's reader does not accept the <?xml ?> prolog"))
    if "\t" in text:
        line = text.count("\n", 0, text.index("\t")) + 1
        warnings.append(LATER.gettext("line %(line)s: a TAB, which NCCL's reader does not take for white space") % {"line": str(line)})
    return warnings


def _shown_version(root: Element) -> str:
    version = root.get("version")
    return "" if version is None else f' version="{version}"'


class _LineRecorder(TreeBuilder):
    """Tree builder that remembers the line of each start tag (ElementTree forgets it)."""

    def __init__(self) -> None:
        super().__init__()
        self.expat = None
        self.lines: dict[Element, int] = {}

    def start(self, tag: str, attrs: dict[str, str]) -> Element:
        element = super().start(tag, attrs)
        self.lines[element] = self.expat.CurrentLineNumber
        return element


def _load(text: str, source_name: str) -> tuple[Element, dict[Element, int]]:
    recorder = _LineRecorder()
    # forbid_dtd: NCCL never writes a DTD, and refusing it refuses every entity with it.
    parser = DefusedXMLParser(target=recorder, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    recorder.expat = parser.parser
    try:
        parser.feed(text)
        return parser.close(), recorder.lines
    except DefusedXmlException as error:
        raise IngestError(
            LATER.gettext("a document type declaration (<!DOCTYPE ...>), refused: it can define entities that expand or read other files"),
            source=source_name,
            line=parser.parser.CurrentLineNumber,
            expected=LATER.gettext("an NCCL topology XML without DTD or entities"),
        ) from error
    except ParseError as error:
        line, column = error.position
        raise IngestError(
            LATER.gettext("malformed XML: %(error)s (column %(column)s)") % {"error": ErrorString(error.code), "column": column + 1},
            source=source_name,
            line=line,
            expected=LATER.gettext("well-formed XML"),
        ) from error
    except UnicodeError as error:
        raise IngestError(
            LATER.gettext("text that is not valid Unicode: %(reason)s") % {"reason": error.reason},
            source=source_name,
            line=parser.parser.CurrentLineNumber,
            expected=LATER.gettext("UTF-8 text"),
        ) from error


class _Document:
    """The parsed tree with what error messages need: line and element path of every element."""

    def __init__(self, root: Element, lines: dict[Element, int], problems: ProblemCollector) -> None:
        self.root = root
        self.lines = lines
        self.problems = problems
        self.paths: dict[Element, str] = {root: f"/{root.tag}"}
        self.parents: dict[Element, Element] = {}
        for parent in self.walk():
            children = list(parent)
            tags = [child.tag for child in children]
            seen: dict[str, int] = {}
            for child in children:
                seen[child.tag] = seen.get(child.tag, 0) + 1
                index = f"[{seen[child.tag]}]" if tags.count(child.tag) > 1 else ""
                self.paths[child] = f"{self.paths[parent]}/{child.tag}{index}"
                self.parents[child] = parent

    def walk(self) -> Iterator[Element]:
        """Every element in document order, without recursion (files may nest deeply)."""
        stack = [self.root]
        while stack:
            element = stack.pop()
            yield element
            stack.extend(reversed(element))

    def problem(self, element: Element, message: Words, expected: Words) -> None:
        self.problems.add(message, line=self.lines.get(element), path=self.paths.get(element), expected=expected)

    def warning(self, element: Element, message: Phrase) -> Phrase:
        return LATER.gettext("line %(line)s (%(path)s): %(warning)s") % {"line": str(self.lines.get(element)), "path": self.paths.get(element), "warning": message}

    def integer(self, element: Element, name: str, *, hexadecimal: bool = False) -> int | None:
        """An integer attribute, ``None`` when absent; a problem when not a number."""
        value = element.get(name)
        if value is None:
            return None
        try:
            return int(value, 16) if hexadecimal else int(value)
        except ValueError:
            kind = LATER.gettext("a hexadecimal number") if hexadecimal else LATER.gettext("an integer")
            self.problem(element, f'{name}="{value}"', kind)
            return None

    def bus_id(self, element: Element, name: str = "busid") -> str | None:
        value = element.get(name)
        bus_id = None if value is None else normalise_bus_id(value)
        if bus_id is None:
            shown = LATER.gettext("no %(attribute)s") % {"attribute": name} if value is None else f'{name}="{value}"'
            self.problem(element, shown, LATER.gettext("%(example)s, a PCI bus id") % {"example": f'{name}="dddd:bb:dd.f"'})
        return bus_id


@dataclass
class _Device:
    """A card or NIC being built: its node and the chain of <pci> elements from the CPU down."""

    node_id: str
    host: str
    pci_chain: tuple[Element, ...]
    element: Element
    attrs: dict = field(default_factory=dict)


class _FabricBuilder:
    """Walks the document once, then turns what it found into nodes and links."""

    def __init__(self, document: _Document, source_name: str, options: ParseOptions, warnings: list[Phrase]) -> None:
        self.document = document
        self.source_name = source_name
        self.lane_gbps = options.default_bandwidth_gbps
        self.latency = DEFAULT_LATENCY_NS if options.default_latency_ns is None else options.default_latency_ns
        self.file_host, host_warning = source_host(source_name)
        self.warnings = ([host_warning] if host_warning else []) + warnings
        hashes = {cpu.get("host_hash") for cpu in document.root.iter("cpu")} - {None}
        # One host: the file's. Several (multi-node NVLink dumps): one per host hash.
        several = len(hashes) > 1
        self.host_of_hash = {value: f"host-{value.lower().removeprefix('0x')}" for value in hashes if several}
        self.cpus: dict[Element, tuple[str, int | None]] = {}
        self.cards: dict[str, _Device] = {}
        self.nics: dict[str, _Device] = {}
        self.nic_names: dict[str, str] = {}
        self.nvswitches: dict[str, dict] = {}
        self.links: list[LinkSpec] = []
        self.switch_links: set[tuple[str, str]] = set()  # (GPU, NVSwitch) pairs already linked
        self.gpu_pairs: set[frozenset[str]] = set()
        self.owner_of_bus_id: dict[tuple[str, str], Element] = {}

    # Reading ------------------------------------------------------------------------------

    def read(self) -> None:
        document = self.document
        self._check_nccl_limits()
        for element in document.walk():
            if element.tag == "cpu":
                self._read_cpu(element)
            elif element.tag == "pci":
                self._read_pci(element)
            elif element.tag == "gpu":
                self._read_gpu(element)
            elif element.tag == "nic":
                self._read_nic(element)
        for card in self.cards.values():
            for nvlink in card.element.iter("nvlink") if card.element.tag == "gpu" else ():
                self._read_nvlink(card, nvlink)
        self._pair_cards_with_nics()

    def _read_cpu(self, element: Element) -> None:
        host = self.host_of_hash.get(element.get("host_hash"), self.file_host)
        numa = self.document.integer(element, "numaid")
        self.cpus[element] = (host, None if numa is None or numa < 0 else numa)  # NCCL writes -1 for "none"

    def _context(self, element: Element) -> tuple[str, tuple[Element, ...], int | None]:
        """Host, chain of enclosing <pci> (outermost first, the element's own included), NUMA node."""
        chain: list[Element] = []
        node: Element | None = element
        while node is not None and node.tag != "cpu":
            if node.tag == "pci":
                chain.append(node)
            node = self.document.parents.get(node)
        host, numa = self.cpus.get(node, (self.file_host, None))
        return host, tuple(reversed(chain)), numa

    def _owns_bus_id(self, pci: Element, host: str) -> bool:
        """Whether ``pci`` has a valid bus id not already used by another <pci> of its host."""
        bus_id = normalise_bus_id(pci.get("busid", ""))
        return bus_id is not None and self.owner_of_bus_id.get((host, bus_id)) is pci

    def _read_pci(self, element: Element) -> None:
        bus_id = self.document.bus_id(element)
        if bus_id is None:
            return
        host, chain, numa = self._context(element)
        first = self.owner_of_bus_id.setdefault((host, bus_id), element)
        if first is not element:
            self.document.problem(
                element,
                LATER.gettext("bus id %(bus_id)s already used at line %(line)s") % {"bus_id": bus_id, "line": str(self.document.lines.get(first))},
                LATER.gettext("each bus id once a host"),
            )
            return
        device_class = element.get("class", "")
        children = {child.tag for child in element}
        # Hint files describe GPUs and NICs by class alone; dumps add <gpu>/<nic> children.
        if device_class.startswith(_GPU_CLASS) and "gpu" not in children:
            self._add_card(element, host, chain, numa, bus_id)
        elif device_class.startswith(_NIC_CLASS) and "nic" not in children:
            self._add_nic(element, host, chain, numa, bus_id, None, ())

    def _read_gpu(self, element: Element) -> None:
        pci = self.document.parents.get(element)
        if pci is None or pci.tag != "pci":
            self.document.problem(element, LATER.gettext("a <gpu> outside any <pci>"), LATER.gettext("<gpu> inside the <pci> of its bus id"))
            return
        host, chain, numa = self._context(element)
        if not self._owns_bus_id(pci, host):
            return  # reported with the <pci>
        bus_id = normalise_bus_id(pci.get("busid", ""))
        card_id = f"{host}/gpu:{bus_id}"
        if card_id in self.cards:  # several <gpu mlopart=k> under one <pci>: one partitioned GPU
            self.cards[card_id].attrs["partitions"] = self.cards[card_id].attrs.get("partitions", 1) + 1
            return
        self._add_card(element, host, chain, numa, bus_id)

    def _add_card(self, gpu: Element, host: str, chain: tuple[Element, ...], numa: int | None, bus_id: str) -> None:
        """A card from its <gpu> (dumps) or, in hint files, from its <pci>."""
        document = self.document
        attrs: dict = {"busid": bus_id}
        for attribute, key in (("dev", "gpu_index"), ("sm", "sm"), ("rank", "rank")):
            value = document.integer(gpu, attribute) if gpu.tag == "gpu" else None
            if value is not None:
                attrs[key] = value
        if numa is not None:
            attrs["numa_node"] = numa
        c2c = list(gpu.iter("c2c")) if gpu.tag == "gpu" else []
        if c2c:
            # bw is MB/s per link: GB/s = bw x count / 1000, Gb/s = 8 x that.
            rates = [(document.integer(link, "bw"), document.integer(link, "count")) for link in c2c]
            attrs["c2c_gbps"] = sum(8 * bw * count / 1000 for bw, count in rates if bw and count)
        card_id = f"{host}/gpu:{bus_id}"
        self.cards[card_id] = _Device(card_id, host, chain, gpu, attrs)

    def _read_nic(self, element: Element) -> None:
        parent = self.document.parents.get(element)
        host, chain, numa = self._context(element)
        bus_id = None
        if parent is not None and parent.tag == "pci":
            if not self._owns_bus_id(parent, host):
                return  # reported with the <pci>
            bus_id = normalise_bus_id(parent.get("busid", ""))
        nets = [net for net in element if net.tag == "net"]
        by_name: dict[str, list[Element]] = {}
        for net in nets:
            by_name.setdefault(net.get("name") or bus_id or "", []).append(net)
        if not nets:
            if bus_id is None:
                self.document.problem(element, LATER.gettext("a <nic> with no <net> and no bus id"), LATER.gettext('<net name="mlx5_0" .../> children'))
            else:
                self._add_nic(element, host, chain, numa, bus_id, None, ())
        for name, named_nets in by_name.items():
            if not name:
                self.document.problem(named_nets[0], LATER.gettext("a <net> without name outside any <pci>"), 'name="mlx5_0"')
                continue
            self._add_nic(element, host, chain, numa, bus_id, name, named_nets)

    def _add_nic(
        self,
        element: Element,
        host: str,
        chain: tuple[Element, ...],
        numa: int | None,
        bus_id: str | None,
        name: str | None,
        nets: list[Element] | tuple[()],
    ) -> None:
        document = self.document
        local_name = name or bus_id
        nic_id = f"{host}/nic:{local_name}"
        if nic_id in self.nics:
            document.problem(element, LATER.gettext("NIC %(nic)s appears twice") % {"nic": local_name}, LATER.gettext("each NIC once a host"))
            return
        attrs: dict = {}
        if bus_id is not None:
            attrs["busid"] = bus_id
        if numa is not None:
            attrs["numa_node"] = numa
        ports, devs, speeds = [], [], []
        for net in nets:
            guid = document.integer(net, "guid", hexadecimal=True)
            if guid is not None and "guid" not in attrs and _SMALLEST_GUID <= guid < 1 << 64:
                attrs["guid"] = f"{guid:016x}"
            dev, speed = document.integer(net, "dev"), document.integer(net, "speed")
            if dev is not None:
                devs.append(dev)
            if speed is not None and speed > 0:  # Mb/s; NCCL reads <= 0 as "unknown"
                speeds.append(speed / 1000)
            if net.get("port"):
                ports.append(net.get("port"))
        if speeds:
            attrs["speed_gbps"] = max(speeds)
        if devs:
            attrs["net_devs"] = devs
        if ports:
            attrs["hca_ports"] = ports
        self.nics[nic_id] = _Device(nic_id, host, chain, element, attrs)
        self.nic_names[nic_id] = local_name

    def _read_nvlink(self, card: _Device, nvlink: Element) -> None:
        document = self.document
        target = document.bus_id(nvlink, "target")
        if nvlink.get("count") is None:
            document.problem(nvlink, LATER.gettext("no count"), LATER.gettext('count="<number of NVLinks>"'))
            return
        count = document.integer(nvlink, "count")
        if count is not None and count < 1:
            document.problem(nvlink, f'count="{count}"', LATER.gettext("a positive number of NVLinks"))
            return
        if target is None or count is None:
            return
        peer_id = f"{card.host}/gpu:{target}"
        if peer_id in self.cards:
            pair = frozenset((card.node_id, peer_id))
            if pair in self.gpu_pairs or len(pair) == 1:
                return  # each GPU of a pair lists the other; a GPU naming itself is no link
            self.gpu_pairs.add(pair)
        elif nvlink.get("tclass", "").lower() == _CPU_CLASS:
            card.attrs["cpu_nvlinks"] = count  # POWER9-style GPU-CPU NVLink; CPUs are not nodes
            return
        else:
            # NCCL treats every other target as an NVSwitch (topo.cc, ncclTopoAddNvLinks).
            scope = self.file_host if target == _NVSWITCH_PLACEHOLDER else card.host
            peer_id = f"{scope}/nvswitch" if target == _NVSWITCH_PLACEHOLDER else f"{scope}/nvswitch:{target}"
            if (card.node_id, peer_id) in self.switch_links:
                document.problem(
                    nvlink,
                    LATER.gettext("a second nvlink from %(card)s to %(peer)s") % {"card": card.node_id, "peer": peer_id},
                    LATER.gettext("one nvlink element per peer, with the number of NVLinks in count"),
                )
                return
            self.switch_links.add((card.node_id, peer_id))
            on_pci = {} if target == _NVSWITCH_PLACEHOLDER else {"busid": target}
            self.nvswitches.setdefault(peer_id, {"role": "nvswitch"} | on_pci)
        lane = self.lane_gbps if self.lane_gbps is not None else nvlink_lane_gbps(card.attrs.get("sm"))
        self.links.append(
            LinkSpec(
                card.node_id, peer_id, peer_id, card.node_id, count * lane, self.latency,
                attrs={"medium": "nvlink", "lanes": count},
            )
        )

    def _pair_cards_with_nics(self) -> None:
        for card in self.cards.values():
            for nic in self.nics.values():
                if card.host != nic.host or not card.pci_chain or not nic.pci_chain:
                    continue
                shared = 0
                for mine, theirs in zip(card.pci_chain, nic.pci_chain):
                    if mine is not theirs:
                        break
                    shared += 1
                if shared == 0:
                    continue  # only the CPU joins them (PHB, NODE or SYS): no PCIe link of their own
                bridges = len(card.pci_chain) + len(nic.pci_chain) - 2 * shared - 1
                below = card.pci_chain[shared:] + nic.pci_chain[shared:]
                rates = [rate for rate in map(self._pcie_rate, below) if rate is not None]
                self.links.append(
                    LinkSpec(
                        card.node_id, nic.node_id, nic.node_id, card.node_id,
                        min(rates, default=DEFAULT_PCIE_GBPS), self.latency,
                        attrs={"medium": "pcie", "path": "PIX" if bridges <= 1 else "PXB"},
                    )
                )

    @staticmethod
    def _pcie_rate(pci: Element) -> float | None:
        """Line rate of the link above a <pci>; unknown or unreadable speed gives ``None``."""
        speed = re.match(r"\s*(\d+(?:\.\d+)?)\s*GT/s", pci.get("link_speed", ""))
        width = pci.get("link_width", "0")
        if speed is None or not width.isdecimal():
            return None
        # NCCL reads width 0 as x16.
        return pcie_gbps(float(speed.group(1)), int(width) or 16)

    def _check_nccl_limits(self) -> None:
        """Warnings for what NCCL's own reader would reject; the twin reads it anyway."""
        document = self.document
        for element in document.walk():
            limits = (
                (len(element.attrib) > _NCCL_MAX_ATTRIBUTES, LATER.gettext("%(count)s attributes; NCCL's reader takes at most %(limit)s"), len(element.attrib), _NCCL_MAX_ATTRIBUTES),
                (len(element) > _NCCL_MAX_CHILDREN, LATER.gettext("%(count)s children; NCCL's reader takes at most %(limit)s"), len(element), _NCCL_MAX_CHILDREN),
                (
                    any(len(value) > _NCCL_MAX_VALUE for value in element.attrib.values()),
                    LATER.gettext("a long value; NCCL's reader takes at most %(limit)s"), None, _NCCL_MAX_VALUE,
                ),
            )  # fmt: skip
            for exceeded, warning, count, limit in limits:
                if exceeded:
                    self.warnings.append(document.warning(element, warning % {"count": count, "limit": limit}))

    # Building -----------------------------------------------------------------------------

    def fabric(self) -> FabricSpec:
        nodes = [
            NodeSpec(card.node_id, "card", self._card_name(card), host=card.host, attrs=card.attrs)
            for card in self.cards.values()
        ]
        nodes += [
            NodeSpec(nic.node_id, "nic", f"{nic.host}/{self.nic_names[nic.node_id]}", host=nic.host, attrs=nic.attrs)
            for nic in self.nics.values()
        ]
        nodes += [
            NodeSpec(node_id, "switch", node_id, tier="leaf", attrs=attrs) for node_id, attrs in self.nvswitches.items()
        ]
        attrs = {"warnings": [plain_words(warning) for warning in self.warnings]} if self.warnings else {}
        return FabricSpec(self.source_name, tuple(nodes), tuple(self.links), attrs)

    @staticmethod
    def _card_name(card: _Device) -> str:
        index = card.attrs.get("gpu_index")
        return card.node_id if index is None else f"{card.host}/gpu{index}"
