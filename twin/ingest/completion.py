"""Complete an uploaded fabric into one the twin can simulate, and say what is unusable.

The files an operator uploads rarely name everything the simulator needs. An InfiniBand
dump knows HCAs, not GPUs; a cloud NCCL hint file knows GPUs and NICs on PCIe but leaves out
the NVLink fabric that NCCL finds at run time; SHARP engines are separate "CAs" hanging off
their switch. ``complete_fabric`` fills those gaps by stated rules and records in the
``Completion.summary`` what it did, so that the fabric page can say so:

1. **In-switch reduction.** A switch with a SHARP aggregation node on one of its ports
   reduces in-network (``attrs["in_switch_reduction"]``); the engine records its switch
   (``attrs["switch"]``) so the map draws it with that switch.
2. **Scale-up inside a host.** A host whose GPUs an NCCL hint file names only as PCI
   devices (no ``<gpu>`` element: cloud hint files leave the NVLink fabric out) gets the
   NVSwitch of its GPU generation (``SCALE_UP_BY_SM``, told by the GPUs' PCIe generation),
   one link per card with that generation's NVLink bandwidth, unless the options say
   otherwise. Links and switch are marked ``attrs["inferred"] = "scale-up"``. A real dump
   whose GPUs have no NVLink is a PCIe-only server and is left alone.
3. **Who communicates.** Where no file names the GPUs of a host, each of its compute HCAs
   stands for one card (the rail-optimised DGX rule: one GPU per HCA), joined to the HCA by
   a PCIe link. An HCA is compute unless its host name or description matches the
   non-compute pattern (storage, management, UFM...), and, with ``compute_hcas_per_host``,
   only the first N HCAs of a host (in natural name order) are. These cards and links are
   marked ``attrs["inferred"] = "card"``.

4. **Slurm topology.** A ``topology.conf`` uploaded with the fabric is the scheduler's view
   of it: its blocks and switches become attributes of the cards of its hosts (matched by
   host name) instead of nodes of their own.

``usability`` then refuses a fabric nothing can use (no links) and warns, naming what and
where, about isolated nodes, disconnected parts, a fabric without cards, and hosts named
by per-host files that the fabric dump lacks. Summary and warnings are plain data, kept
with the snapshot (not in the fabric's attrs: an exported fabric reads back the same).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from twin.ingest.errors import IngestError
from twin.ingest.options import DEFAULT_NON_COMPUTE_PATTERN, ParseOptions
from twin.ingest.parsers.nccl_xml import DEFAULT_LATENCY_NS, DEFAULT_PCIE_GBPS
from twin.ingest.parsers.nccl_xml import FORMAT_NAME as NCCL_XML_FORMAT
from twin.ingest.parsers.slurm import FORMAT_NAME as SLURM_FORMAT
from twin.simcore.diff import natural_key, normalise_name
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec
from twin.simcore.translation import LATER, Joined, Phrase
from twin.simcore.units import counted_list_phrase, counted_phrase

__all__ = [
    "HCA_CARD_SOURCE",
    "SCALE_UP_BY_SM",
    "Completion",
    "complete_fabric",
    "with_scale_up",
    "usability_warnings",
]

# NVLink per GPU by compute capability x 10: (generation, GPU, NVLinks, Gb/s per direction).
SCALE_UP_BY_SM: tuple[tuple[int, str, int, float], ...] = (
    (100, "B200 (NVLink 5)", 18, 7200.0),
    (90, "H100 (NVLink 4)", 18, 3600.0),
    (80, "A100 (NVLink 3)", 12, 2400.0),
    (70, "V100 (NVLink 2)", 6, 1200.0),
)
# Without an sm, the PCIe generation tells the GPU generation: Gen 5 H100, Gen 4 A100, Gen 3 V100.
_SM_BY_PCIE_GBPS = ((500.0, 90), (250.0, 80), (0.0, 70))
_NVSWITCH_LATENCY_NS = 100.0  # the generators' figure for one NVSwitch hop
_MAX_NAMED = 10  # names listed in one warning; the count says how many more
HCA_CARD_SOURCE = "hca"  # the source of cards that stand for compute HCAs, next to format ids


@dataclass(frozen=True)
class _Graph:
    """Adjacency of a fabric by node position, with the links' positions."""

    spec: FabricSpec
    index: dict[str, int]
    neighbours: list[list[tuple[int, int]]]  # node -> [(peer, link position)]

    @classmethod
    def of(cls, spec: FabricSpec) -> _Graph:
        index = spec.node_index()
        neighbours: list[list[tuple[int, int]]] = [[] for _ in spec.nodes]
        for position, link in enumerate(spec.links):
            a, b = index[link.a], index[link.b]
            neighbours[a].append((b, position))
            neighbours[b].append((a, position))
        return cls(spec, index, neighbours)


@dataclass(frozen=True)
class Completion:
    """A completed fabric, what was added (plain data for the snapshot's summary) and the
    warnings about what stays unusable."""

    spec: FabricSpec
    summary: dict[str, Any]
    warnings: tuple[Phrase, ...]


def complete_fabric(
    spec: FabricSpec, *, options: ParseOptions = ParseOptions(), formats: Mapping[str, str] | None = None
) -> Completion:
    """``spec`` completed as the module docstring says.

    ``formats`` maps source names to their format ids, so that the summary can say how many
    cards came from which kind of file. Raises ``IngestError`` for an unusable fabric. A
    fabric with nothing to complete comes back equal to ``spec``.
    """
    formats = formats or {}
    graph = _Graph.of(spec)
    nodes = list(spec.nodes)
    summary: dict[str, Any] = {}
    summary["in_switch_reduction"] = _mark_aggregation(graph, nodes)
    scale_up_nodes, scale_up_links, summary["scale_up"] = _complete_scale_up(graph, options, formats)
    card_nodes, card_links, summary["cards"] = _cards_from_hcas(graph, options, formats)
    completed = replace(
        spec,
        nodes=(*nodes, *scale_up_nodes, *card_nodes),
        links=(*spec.links, *scale_up_links, *card_links),
    )
    completed, summary["slurm"], slurm_warnings = _slurm_on_cards(completed, formats)
    return Completion(completed, summary, (*slurm_warnings, *usability_warnings(completed)))


# -- in-switch reduction ----------------------------------------------------------------


def _mark_aggregation(graph: _Graph, nodes: list[NodeSpec]) -> dict[str, Any]:
    spec = graph.spec
    reducing: list[str] = []
    for position, node in enumerate(spec.nodes):
        if node.kind != "aggregation":
            continue
        switches = [peer for peer, _ in graph.neighbours[position] if spec.nodes[peer].kind == "switch"]
        if not switches:
            continue
        switch = switches[0]
        nodes[position] = replace(node, attrs={**node.attrs, "switch": spec.nodes[switch].id})
        owner = nodes[switch]
        if not owner.attrs.get("in_switch_reduction"):
            nodes[switch] = replace(owner, attrs={**owner.attrs, "in_switch_reduction": True, "sharp_engine": node.id})
            reducing.append(owner.name)
    return {"switches": len(reducing), "examples": sorted(reducing, key=natural_key)[:_MAX_NAMED]}


# -- scale-up inside a host -------------------------------------------------------------


def _complete_scale_up(
    graph: _Graph, options: ParseOptions, formats: Mapping[str, str]
) -> tuple[list[NodeSpec], list[LinkSpec], dict[str, Any]]:
    spec = graph.spec
    if options.scale_up == "none":
        return [], [], {"rule": "none", "hosts": 0}
    # Only hint files leave the NVLink fabric out: their GPUs are bare PCI devices (a PCI
    # class, no <gpu> element, hence no sm). A real dump's GPU without NVLink has none.
    cards_of_host: dict[str, list[int]] = defaultdict(list)
    for position, node in enumerate(spec.nodes):
        if node.kind == "card" and node.host and _source_format(node, formats) == NCCL_XML_FORMAT:
            cards_of_host[node.host].append(position)
    taken_ids = set(graph.index)
    nodes: list[NodeSpec] = []
    links: list[LinkSpec] = []
    completed_hosts: list[str] = []
    generations: Counter[str] = Counter()
    for host in sorted(cards_of_host, key=natural_key):
        cards = cards_of_host[host]
        if len(cards) < 2 or any("sm" in spec.nodes[card].attrs or _has_nvlink(graph, card) for card in cards):
            continue
        generation, lanes, gbps, basis = _generation(graph, cards)
        if options.nvlink_gbps is not None:
            gbps, basis = float(options.nvlink_gbps), "set at upload"
        switch_id = f"{host}/nvswitch"
        while switch_id in taken_ids:
            switch_id += "'"
        taken_ids.add(switch_id)
        nodes.append(
            NodeSpec(
                id=switch_id, kind="switch", name=switch_id, tier="leaf", radix=len(cards), host=host,
                attrs={"role": "nvswitch", "inferred": "scale-up", "forwarding_latency_ns": _NVSWITCH_LATENCY_NS},
            )
        )
        for port, card in enumerate(sorted(cards, key=lambda p: natural_key(spec.nodes[p].id)), start=1):
            links.append(
                LinkSpec(
                    spec.nodes[card].id, "nvlink", switch_id, str(port), gbps, DEFAULT_LATENCY_NS,
                    domain="scale-up",
                    attrs={"medium": "nvlink", "lanes": lanes, "inferred": "scale-up"},
                )
            )
        completed_hosts.append(host)
        generations[f"{generation}, {gbps:,.0f} Gb/s per GPU ({basis})"] += 1
    return nodes, links, {
        "rule": "auto",
        "hosts": len(completed_hosts),
        "examples": completed_hosts[:_MAX_NAMED],
        "generations": dict(generations),
    }


def _has_nvlink(graph: _Graph, card: int) -> bool:
    return any(graph.spec.links[link].attrs.get("medium") == "nvlink" for _, link in graph.neighbours[card])


def _generation(graph: _Graph, cards: list[int]) -> tuple[str, int, float, str]:
    """(GPU and NVLink generation, NVLinks, Gb/s per GPU, what told it) of GPUs that a hint
    file names by PCI class only: their PCIe generation tells."""
    spec = graph.spec
    pcie = [
        spec.links[link].bandwidth_gbps
        for card in cards
        for _, link in graph.neighbours[card]
        if spec.links[link].attrs.get("medium") == "pcie"
    ]
    fastest = max(pcie, default=DEFAULT_PCIE_GBPS)
    sm = next(sm for minimum, sm in _SM_BY_PCIE_GBPS if fastest >= minimum)
    basis = f"PCIe at {fastest:,.0f} Gb/s" if pcie else "no PCIe rate given: assumed"
    _, name, lanes, gbps = next(entry for entry in SCALE_UP_BY_SM if sm >= entry[0])
    return name, lanes, gbps, basis


def with_scale_up(spec: FabricSpec, nvlink_gbps: float | None) -> FabricSpec:
    """``spec`` with the scale-up the twin completed corrected: each inferred NVLink at
    ``nvlink_gbps`` per GPU, or, with None, left out (its NVSwitches too). Raises
    ``IngestError`` when nothing in ``spec`` was completed."""
    inferred = {node.id for node in spec.nodes if node.attrs.get("inferred") == "scale-up"}
    if not inferred:
        raise IngestError(
            LATER.gettext("this snapshot has no scale-up the twin completed"), expected=LATER.gettext("a snapshot whose hint files left the NVLink fabric out"),
        )
    if nvlink_gbps is None:
        return replace(
            spec,
            nodes=tuple(node for node in spec.nodes if node.id not in inferred),
            links=tuple(link for link in spec.links if link.attrs.get("inferred") != "scale-up"),
        )
    return replace(spec, links=tuple(
        replace(link, bandwidth_gbps=float(nvlink_gbps)) if link.attrs.get("inferred") == "scale-up" else link
        for link in spec.links
    ))


# -- cards from HCAs ----------------------------------------------------------------------


def _cards_from_hcas(
    graph: _Graph, options: ParseOptions, formats: Mapping[str, str]
) -> tuple[list[NodeSpec], list[LinkSpec], dict[str, Any]]:
    spec = graph.spec
    pattern = re.compile(options.non_compute_hca_pattern) if options.non_compute_hca_pattern else None
    hosts_with_cards = {node.host for node in spec.nodes if node.kind == "card" and node.host}
    candidates: dict[str | None, list[int]] = defaultdict(list)
    non_compute: list[str] = []
    for position, node in enumerate(spec.nodes):
        if node.kind != "nic" or not _on_switch(graph, position):
            continue
        if any(spec.nodes[peer].kind == "card" for peer, _ in graph.neighbours[position]):
            continue  # a file named the GPU behind this HCA
        if node.host and node.host in hosts_with_cards:
            continue  # a file named this host's GPUs: its other HCAs are not GPUs
        description = str(node.attrs.get("description", node.name))
        if pattern and (pattern.search(node.host or "") or pattern.search(description)):
            non_compute.append(node.name)
            continue
        candidates[node.host].append(position)
    nodes: list[NodeSpec] = []
    links: list[LinkSpec] = []
    beyond_count: list[str] = []
    for host in sorted(candidates, key=lambda host: natural_key(host or "")):
        # A host's HCAs by name (mlx5_0, mlx5_1...); HCAs naming no host stay in file order, the
        # order discovery walked the fabric in, which keeps a leaf's HCAs together for the ring.
        hcas = candidates[host] if host is None else sorted(candidates[host], key=lambda p: natural_key(spec.nodes[p].name))
        if host is not None and options.compute_hcas_per_host is not None:
            beyond_count += [spec.nodes[p].name for p in hcas[options.compute_hcas_per_host :]]
            hcas = hcas[: options.compute_hcas_per_host]
        for number, position in enumerate(hcas):
            hca = spec.nodes[position]
            card_id = f"card:{hca.id}"
            name = f"{host}/gpu{number}" if host else f"gpu@{hca.attrs.get('guid', hca.id)}"
            nodes.append(
                NodeSpec(
                    id=card_id, kind="card", name=name, host=host,
                    attrs={"inferred": "card", "hca": hca.id, "index_on_host": number},
                )
            )
            links.append(
                LinkSpec(
                    card_id, "pcie", hca.id, "pcie", DEFAULT_PCIE_GBPS, DEFAULT_LATENCY_NS,
                    domain="scale-out",  # the card is an endpoint of the HCA, not a scale-up domain
                    attrs={"medium": "pcie", "inferred": "card"},
                )
            )
    sources = _card_sources(spec, formats)
    if nodes:
        sources[HCA_CARD_SOURCE] = len(nodes)
    rule = {
        "non_compute_hca_pattern": options.non_compute_hca_pattern,
        "compute_hcas_per_host": options.compute_hcas_per_host,
    }
    return nodes, links, {
        "total": sum(sources.values()),
        "sources": sources,
        "rule": rule,
        "non_compute_hcas": len(non_compute),
        "non_compute_examples": sorted(non_compute, key=natural_key)[:_MAX_NAMED],
        "beyond_count": len(beyond_count),
        "beyond_count_examples": beyond_count[:_MAX_NAMED],
    }


def _card_sources(spec: FabricSpec, formats: Mapping[str, str]) -> dict[str, int]:
    """Cards the files named, counted by the format of the file (``"file"`` when unknown)."""
    counts: Counter[str] = Counter()
    for node in spec.nodes:
        if node.kind == "card":
            counts[HCA_CARD_SOURCE if node.attrs.get("inferred") == "card" else _source_format(node, formats) or "file"] += 1
    return dict(counts)


def _source_format(node: NodeSpec, formats: Mapping[str, str]) -> str | None:
    """The format of the (first) file that named ``node``: from its ``merged_from`` after a
    merge, else the upload's only format."""
    sources = node.attrs.get("merged_from") or ()
    found = next((formats[source] for source in sources if source in formats), None)
    if found is None and len(set(formats.values())) == 1:
        found = next(iter(formats.values()))
    return found


def _on_switch(graph: _Graph, position: int) -> bool:
    spec = graph.spec
    return any(
        spec.nodes[peer].kind == "switch" and spec.nodes[peer].attrs.get("role") != "nvswitch"
        for peer, _ in graph.neighbours[position]
    )


# -- Slurm topology ---------------------------------------------------------------------


def _slurm_on_cards(spec: FabricSpec, formats: Mapping[str, str]) -> tuple[FabricSpec, dict[str, Any] | None, list[str]]:
    """A Slurm topology.conf merged with a fabric that has cards is the scheduler's view of it,
    not more cabling: its hosts' cards get ``attrs["slurm_block"]`` (topology/block) and
    ``attrs["slurm_switch"]`` (the tree's switch the host hangs from), and its host and
    switch nodes leave the fabric. Alone, a topology.conf stays the only topology there is."""
    sources = {name for name, fmt in formats.items() if fmt == SLURM_FORMAT}
    if not sources:
        return spec, None, []
    from_slurm = [
        position for position, node in enumerate(spec.nodes)
        if (merged_from := set(node.attrs.get("merged_from") or ())) and merged_from <= sources
    ]
    cards_of_host: dict[str, list[int]] = defaultdict(list)
    for position, node in enumerate(spec.nodes):
        if node.kind == "card" and node.host:
            cards_of_host[normalise_name(node.host)].append(position)
    if not from_slurm or not cards_of_host:
        return spec, None, []
    graph = _Graph.of(spec)
    dropped = set(from_slurm)
    nodes = list(spec.nodes)
    blocks: Counter[str] = Counter()
    switches: set[str] = set()
    placed_hosts: set[str] = set()
    unknown: list[str] = []
    for position in from_slurm:
        host = spec.nodes[position]
        if host.kind != "host":
            continue
        placed: dict[str, str] = {}
        if isinstance(host.attrs.get("block"), str):
            placed["slurm_block"] = host.attrs["block"]
        tree_switches = [spec.nodes[peer] for peer, _ in graph.neighbours[position] if spec.nodes[peer].kind == "switch"]
        if tree_switches:
            placed["slurm_switch"] = min(tree_switches, key=lambda switch: (switch.attrs.get("level", 0), natural_key(switch.name))).name
        cards = cards_of_host.get(normalise_name(host.name))
        if not cards:
            unknown.append(host.name)
            continue
        for card in cards:
            nodes[card] = replace(nodes[card], attrs={**nodes[card].attrs, **placed})
        if placed:
            placed_hosts.add(normalise_name(host.name))
        if "slurm_block" in placed:
            blocks[placed["slurm_block"]] += 1
        if "slurm_switch" in placed:
            switches.add(placed["slurm_switch"])
    kept_positions = [position for position in range(len(nodes)) if position not in dropped]
    kept_ids = {nodes[position].id for position in kept_positions}
    result = replace(
        spec,
        nodes=tuple(nodes[position] for position in kept_positions),
        links=tuple(link for link in spec.links if link.a in kept_ids and link.b in kept_ids),
    )
    unplaced = sorted((host for host in cards_of_host if host not in placed_hosts), key=natural_key)
    warnings = []
    if unknown:
        warnings.append(LATER.ngettext(
            "%(count)s host of the Slurm topology is not in the fabric: %(hosts)s", "%(count)s hosts of the Slurm topology are not in the fabric: %(hosts)s", len(unknown),
        ) % {"count": len(unknown), "hosts": _names(unknown)})  # fmt: skip
    if unplaced:
        warnings.append(LATER.ngettext(
            "%(count)s host of the fabric is in no Slurm block or switch: %(hosts)s", "%(count)s hosts of the fabric are in no Slurm block or switch: %(hosts)s", len(unplaced),
        ) % {"count": len(unplaced), "hosts": _names(unplaced)})  # fmt: skip
    summary = {
        "hosts": len(placed_hosts),
        "blocks": dict(sorted(blocks.items(), key=lambda item: natural_key(item[0]))),
        "switches": len(switches),
        "unknown_hosts": len(unknown),
    }
    return result, summary, warnings


# -- usability ----------------------------------------------------------------------------


def usability_warnings(spec: FabricSpec) -> list[Phrase]:
    """What makes parts of ``spec`` unusable, each naming what and where (Phrases, stored with
    ``plain_words`` and rendered in the reader's language).

    Raises ``IngestError`` when nothing is usable: no links at all.
    """
    if not spec.links:
        counts = {kind: count for kind, count in spec.kind_counts().items() if count}
        raise IngestError(
            LATER.gettext("the files describe %(nodes)s but no link between any two: nothing can be drawn as a fabric or simulated")
            % {"nodes": counted_list_phrase(counts) if counts else LATER.gettext("no nodes")},
            expected=LATER.gettext(
                "a topology with links (an ibnetdiscover dump of the fabric, a cabling plan, or per-host files together with the fabric dump)"
            ),
        )
    graph = _Graph.of(spec)
    warnings: list[Phrase] = []
    isolated = [node.name for position, node in enumerate(spec.nodes) if not graph.neighbours[position]]
    if isolated:
        warnings.append(LATER.ngettext("%(count)s node with no link: %(nodes)s", "%(count)s nodes with no link: %(nodes)s", len(isolated)) % {
            "count": len(isolated), "nodes": _names(isolated),
        })  # fmt: skip
    parts = _parts(graph)
    linked_parts = [part for part in parts if len(part) > 1]
    if len(linked_parts) > 1:
        described = Joined([
            LATER.gettext("%(nodes)s (%(cards)s) around %(landmark)s") % {
                "nodes": LATER.ngettext("%(count)s node", "%(count)s nodes", len(part)) % {"count": len(part)}, "cards": counted_phrase(sum(spec.nodes[p].kind == "card" for p in part), "card"),
                "landmark": _landmark(spec, part),
            }
            for part in linked_parts[:_MAX_NAMED]
        ], "; ")  # fmt: skip
        parts_text = {"count": len(linked_parts), "parts": described, "more": len(linked_parts) - _MAX_NAMED}
        if len(linked_parts) > _MAX_NAMED:
            warnings.append(LATER.gettext("the fabric falls apart into %(count)s parts that cannot reach each other: %(parts)s and %(more)s more") % parts_text)
        else:
            warnings.append(LATER.gettext("the fabric falls apart into %(count)s parts that cannot reach each other: %(parts)s") % parts_text)
    if not spec.cards():
        warnings.append(LATER.gettext(
            "no cards: neither a file nor a compute HCA names an accelerator, so simulation, placement, failure what-ifs and replays cannot run on this fabric"
        ))
    warnings += _hosts_off_fabric(graph)
    return warnings


def _hosts_off_fabric(graph: _Graph) -> list[Phrase]:
    """Hosts whose cards a per-host file named but that reach no fabric switch, when the
    upload has a fabric (a switch that is not a host's NVSwitch)."""
    spec = graph.spec
    has_fabric = any(node.kind == "switch" and not node.host and node.attrs.get("role") != "nvswitch" for node in spec.nodes)
    if not has_fabric:
        return []
    reaching: set[str] = set()
    hosts: set[str] = set()
    for position, node in enumerate(spec.nodes):
        if node.kind != "card" or not node.host:
            continue
        hosts.add(node.host)
        if _on_switch(graph, position) or any(
            spec.nodes[peer].kind == "nic" and _on_switch(graph, peer) for peer, _ in graph.neighbours[position]
        ):
            reaching.add(node.host)
    lacking = sorted(hosts - reaching, key=natural_key)
    if not lacking:
        return []
    return [
        LATER.ngettext(
            "%(count)s host named by per-host files is not in the fabric (no HCA of theirs matched the fabric's by GUID or device name): %(hosts)s",
            "%(count)s hosts named by per-host files are not in the fabric (no HCA of theirs matched the fabric's by GUID or device name): %(hosts)s",
            len(lacking),
        ) % {"count": len(lacking), "hosts": _names(lacking)}
    ]


def _parts(graph: _Graph) -> list[list[int]]:
    """Connected parts over links that are not down, largest first."""
    spec = graph.spec
    seen = [False] * len(spec.nodes)
    parts: list[list[int]] = []
    for start in range(len(spec.nodes)):
        if seen[start]:
            continue
        seen[start] = True
        part, stack = [], [start]
        while stack:
            node = stack.pop()
            part.append(node)
            for peer, link in graph.neighbours[node]:
                if not seen[peer] and spec.links[link].state != "down":
                    seen[peer] = True
                    stack.append(peer)
        parts.append(part)
    return sorted(parts, key=len, reverse=True)


def _landmark(spec: FabricSpec, part: Iterable[int]) -> Phrase | str:
    """A name that tells a part apart: its first switch, else its first host, else its first node."""
    members = sorted(part, key=lambda p: natural_key(spec.nodes[p].name))
    for test in (lambda n: n.kind == "switch" and not n.host, lambda n: bool(n.host), lambda n: True):
        found = next((spec.nodes[p] for p in members if test(spec.nodes[p])), None)
        if found is not None:
            return LATER.gettext("host %(host)s") % {"host": found.host} if found.host and found.kind != "switch" else found.name
    return "?"


def _names(names: list[str]) -> Joined | Phrase:
    shown = Joined(sorted(names, key=natural_key)[:_MAX_NAMED], ", ")
    if len(names) > _MAX_NAMED:
        return LATER.gettext("%(names)s and %(count)s more") % {"names": shown, "count": len(names) - _MAX_NAMED}
    return shown
