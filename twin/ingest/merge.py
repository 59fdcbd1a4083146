"""Merge several parsed files that describe one fabric into one ``FabricSpec``.

Each tool sees a part of the fabric: ibnetdiscover the switches and HCAs by
GUID, NCCL's topology dump the GPUs by PCI bus id and the NICs by GUID,
nvidia-smi the GPUs by index, a cabling plan the devices by name.
``merge_fabrics`` joins the nodes that are the same thing under the identity
conventions (FORMATS.md section 9):

- the same node id in two files;
- the same GUID: ``ib:<guid>`` ids and ``attrs["guid"]`` (an IB HCA and the NIC
  that NCCL reports with that GUID);
- the same GPU bus id on the same host (``<host>/gpu:<dddd:bb:dd.f>``);
- the same host name (host nodes, ``host:<short name>``);
- and, only when it joins nothing that a GUID or bus id tells apart, the same
  NIC device on a host (``<host>/nic:mlx5_0`` = an HCA named ``<host>/mlx5_0``)
  and the same GPU index on a host (nvidia-smi's ``<host>/gpu<N>`` = the GPU
  whose ``attrs["gpu_index"]`` is N).

Links from different files between the same two ports (compared with
``normalise_port``) are one link. When files disagree about a fact the more
specific record wins (see ``_specificity``; ties go to the file listed first)
and the disagreement is kept in ``attrs["merge_conflicts"]`` of the result.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from twin.ingest.errors import IngestError, IngestProblem
from twin.simcore.translation import LATER, plain_words, words_from_plain
from twin.simcore.diff import normalise_name, normalise_port
from twin.simcore.errors import FabricError, format_path
from twin.simcore.model import Attrs, FabricSpec, LinkSpec, NodeSpec

__all__ = ["merge_fabrics"]

_GUID_ID = re.compile(r"^ib:([0-9a-fA-F]{1,16})$")
_GPU_BUS_ID = re.compile(r"^(?P<host>[^/]+)/gpu:(?P<bus>.+)$")
_NIC_ID = re.compile(r"^(?P<host>[^/]+)/nic:(?P<device>.+)$")
_DEVICE_NAME = re.compile(r"^(?P<host>[^/\s]+)/(?P<device>[^/\s]+)$")
_BUS = re.compile(
    r"^(?:(?P<domain>[0-9a-f]{1,8}):)?(?P<bus>[0-9a-f]{1,2}):(?P<device>[0-9a-f]{1,2})"
    r"(?:\.(?P<function>[0-7]))?$"
)
# Which id a merged node keeps, most stable first: a GUID, a bus id, a host name, a device name.
_ID_PREFERENCE = (_GUID_ID, _GPU_BUS_ID, re.compile(r"^host:"), _NIC_ID)
_NODE_FIELDS = ("kind", "tier", "radix", "host")
_LINK_FIELDS = ("bandwidth_gbps", "latency_ns", "state", "domain")
# Facts a discovery tool measures on the cable itself: their presence makes a link record specific.
_MEASURED_LINK_ATTRS = ("width", "speed", "physical_state", "errors")


def merge_fabrics(parts: Sequence[tuple[str, FabricSpec]], *, name: str) -> FabricSpec:
    """One fabric named ``name`` from ``(source name, parsed fabric)`` parts.

    List the most trusted file first: it wins ties. Nodes, links and fabric
    attributes are merged as the module docstring says; the result's attrs
    hold ``merged_from`` (the source names) and, if files disagreed,
    ``merge_conflicts``: plain dicts ``{"subject", "id", "field", "kept",
    "dropped"}`` whose ``kept``/``dropped`` name the source of each value.
    Every merged node and link records its sources in ``attrs["merged_from"]``.

    Raises ``IngestError`` naming the source files when a part is not a valid
    fabric or the merged result is inconsistent.
    """
    _check_parts(parts)
    merger = _Merger(parts)
    nodes = merger.nodes()
    links = merger.links()
    attrs = merger.fabric_attrs()
    spec = FabricSpec(name=name, nodes=tuple(nodes), links=tuple(links), attrs=attrs)
    try:
        spec.validate()
    except FabricError as error:
        problems = _ingest_problems(error)
        raise IngestError(
            LATER.gettext("the merged fabric is inconsistent: %(problem)s") % {"problem": problems[0].message},
            source=" + ".join(source for source, _ in parts),
            problems=problems,
        ) from error
    return spec


def _check_parts(parts: Sequence[tuple[str, FabricSpec]]) -> None:
    if not parts:
        raise IngestError(LATER.gettext("nothing to merge"), expected=LATER.gettext("at least one (source name, fabric) pair"))
    for position, part in enumerate(parts):
        is_pair = isinstance(part, tuple) and len(part) == 2
        if not (is_pair and isinstance(part[0], str) and isinstance(part[1], FabricSpec)):
            raise IngestError(
                LATER.gettext("part %(position)s is a %(type)s") % {"position": str(position), "type": type(part).__name__},
                path=f"parts[{position}]",
                expected=LATER.gettext("a (source name, FabricSpec) pair"),
            )
        source, spec = part
        try:
            spec.validate()
        except FabricError as error:
            problems = _ingest_problems(error)
            raise IngestError(problems[0].message, source=source, problems=problems) from error


def _ingest_problems(error: FabricError) -> list[IngestProblem]:
    return [IngestProblem(p.message, None, format_path(p.path), p.expected) for p in error.problems]


@dataclass(frozen=True)
class _Record:
    """A node or link as one source gave it, with what decides between sources."""

    source: str
    order: int  # position of the source in the parts: earlier wins ties
    item: NodeSpec | LinkSpec

    def rank(self) -> tuple[int, ...]:
        return (*_specificity(self.item), -self.order)


def _specificity(item: NodeSpec | LinkSpec) -> tuple[int, ...]:
    """How much a record says about its thing; the higher, the more it is trusted.

    A link measured by a discovery tool (width, speed, physical state or error
    counters in attrs) beats one from a plan or a tool that only knows the
    pairing; a node keyed by a stable identity (GUID, bus id) beats a name.
    After that, the number of facts it gives.
    """
    facts = len(item.attrs)
    if isinstance(item, LinkSpec):
        measured = sum(key in item.attrs for key in _MEASURED_LINK_ATTRS)
        return (measured, facts)
    known = sum(getattr(item, name) is not None for name in ("tier", "radix", "host"))
    return (-_id_rank(item.id), known + facts)


def _id_rank(node_id: str) -> int:
    return next(
        (rank for rank, pattern in enumerate(_ID_PREFERENCE) if pattern.search(node_id)),
        len(_ID_PREFERENCE),
    )


def _guid(text: Any) -> str | None:
    """16 lower-case hex digits, from ``0xC42A...``, ``c42a...`` or a padded form; else None."""
    if not isinstance(text, str):
        return None
    digits = text.strip().lower().removeprefix("0x")
    if not digits or len(digits) > 16 or any(c not in "0123456789abcdef" for c in digits):
        return None
    return digits.zfill(16)


def _bus_id(text: str) -> str | None:
    """``dddd:bb:dd.f`` from the spellings tools print (8-digit domain, no function)."""
    match = _BUS.match(text.strip().lower())
    if match is None:
        return None
    domain = int(match["domain"] or "0", 16)
    bus, device, function = int(match["bus"], 16), int(match["device"], 16), match["function"] or "0"
    return f"{domain:04x}:{bus:02x}:{device:02x}.{function}"


def _host_of(node: NodeSpec) -> str | None:
    if node.host:
        return normalise_name(node.host)
    for pattern in (_GPU_BUS_ID, _NIC_ID):
        match = pattern.match(node.id)
        if match:
            return normalise_name(match["host"])
    return None


def _strong_keys(node: NodeSpec) -> Iterator[tuple[str, ...]]:
    """Identities that name one thing whatever the file: equal keys mean the same node."""
    yield ("id", node.id)
    guid_id = _GUID_ID.match(node.id)
    for guid in (_guid(guid_id[1]) if guid_id else None, _guid(node.attrs.get("guid"))):
        if guid:
            yield ("guid", guid)
    bus_match = _GPU_BUS_ID.match(node.id)
    if bus_match and (bus := _bus_id(bus_match["bus"])):
        yield ("gpu-bus", normalise_name(bus_match["host"]), bus)
    if node.kind == "host":
        yield ("host", normalise_name(node.id.removeprefix("host:")))


def _weak_keys(node: NodeSpec) -> Iterator[tuple[str, ...]]:
    """Identities that hold only if no GUID or bus id says otherwise."""
    host = _host_of(node)
    if host is None:
        return
    nic = _NIC_ID.match(node.id)
    if nic:
        yield ("nic", host, nic["device"].lower())
    elif node.kind == "nic":
        named = _DEVICE_NAME.match(node.name)  # an HCA named "<host>/mlx5_0" from its description
        if named and normalise_name(named["host"]) == host:
            yield ("nic", host, named["device"].lower())
    index = node.attrs.get("gpu_index")
    if node.kind == "card" and isinstance(index, int) and not isinstance(index, bool):
        yield ("gpu-index", host, str(index))


class _UnionFind:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, first: int, second: int) -> None:
        first, second = self.find(first), self.find(second)
        if first != second:
            self.parent[max(first, second)] = min(first, second)


class _Merger:
    """One merge: node records grouped into merged nodes, then nodes, links and attrs built."""

    def __init__(self, parts: Sequence[tuple[str, FabricSpec]]) -> None:
        self.parts = parts
        # The first part of each name: a dict, as thousands of per-host files are merged at once.
        self.order_of_source: dict[str, int] = {}
        for order, (source, _) in enumerate(parts):
            self.order_of_source.setdefault(source, order)
        self.conflicts: list[dict[str, Any]] = []
        self.records = [
            _Record(source, order, node)
            for order, (source, spec) in enumerate(parts)
            for node in spec.nodes
        ]
        self.groups = self._group_nodes()
        # The id each merged node keeps: the most stable one, the first source's on a tie.
        self.merged_id: dict[tuple[int, str], str] = {}  # (part order, node id) -> merged id
        for group in self.groups:
            records = [self.records[position] for position in group]
            node_id = min(records, key=lambda record: (_id_rank(record.item.id), record.order)).item.id
            for record in records:
                self.merged_id[(record.order, record.item.id)] = node_id

    # -- nodes ---------------------------------------------------------------

    def _group_nodes(self) -> list[list[int]]:
        """Record positions per merged node, in order of first appearance."""
        joined = _UnionFind(len(self.records))
        first_with: dict[tuple[str, ...], int] = {}
        for position, record in enumerate(self.records):
            for key in _strong_keys(record.item):
                joined.union(first_with.setdefault(key, position), position)

        # GUIDs and bus ids of each group so far: a weak join must not fuse two of them.
        identities: dict[int, dict[str, set[tuple[str, ...]]]] = defaultdict(lambda: defaultdict(set))
        for position, record in enumerate(self.records):
            for key in _strong_keys(record.item):
                if key[0] in ("guid", "gpu-bus"):
                    identities[joined.find(position)][key[0]].add(key[1:])
        weak: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for position, record in enumerate(self.records):
            for key in _weak_keys(record.item):
                weak[key].append(position)
        for key, positions in weak.items():
            for position in positions[1:]:
                first, second = joined.find(positions[0]), joined.find(position)
                if first == second:
                    continue
                known, other = identities[first], identities[second]
                if any(
                    known[kind] and other[kind] and not known[kind] & other[kind]
                    for kind in ("guid", "gpu-bus")
                ):
                    self._weak_join_refused(key, positions[0], position)
                    continue
                combined = defaultdict(set, {kind: known[kind] | other[kind] for kind in ("guid", "gpu-bus")})
                del identities[first], identities[second]
                joined.union(first, second)
                identities[joined.find(first)] = combined

        groups: dict[int, list[int]] = defaultdict(list)
        for position in range(len(self.records)):
            groups[joined.find(position)].append(position)
        return sorted(groups.values(), key=lambda group: group[0])

    def _weak_join_refused(self, key: tuple[str, ...], first: int, second: int) -> None:
        one, other = self.records[first], self.records[second]
        self.conflicts.append(
            {
                "subject": "node",
                "id": one.item.id,
                "field": "identity",
                "kept": {"source": one.source, "value": one.item.id},
                "dropped": [{"source": other.source, "value": other.item.id}],
                "reason": f"same {key[0]} {'/'.join(key[1:])!r} but different GUID or bus id: not joined",
            }
        )

    def nodes(self) -> list[NodeSpec]:
        nodes = []
        for group in self.groups:
            records = [self.records[position] for position in group]
            best = max(records, key=_Record.rank)
            node_id = self.merged_id[(best.order, best.item.id)]
            fields = {name: self._agreed("node", node_id, name, records, best) for name in _NODE_FIELDS}
            if fields["kind"] != "switch":
                fields["tier"] = None  # a tier from a record of another kind (already a kind conflict)
            attrs = self._merged_attrs("node", node_id, records, best)
            names = sorted({record.item.name for record in records} - {best.item.name})
            if names:
                attrs["also_known_as"] = names
            attrs["merged_from"] = sorted({record.source for record in records}, key=self._source_order)
            nodes.append(NodeSpec(id=node_id, name=best.item.name, attrs=attrs, **fields))
        return nodes

    # -- links ---------------------------------------------------------------

    def links(self) -> list[LinkSpec]:
        by_pair: dict[tuple[tuple[str, str], ...], list[_Record]] = {}
        for order, (source, spec) in enumerate(self.parts):
            for link in spec.links:
                ends = tuple(
                    sorted(
                        (self.merged_id[(order, node)], normalise_port(port))
                        for node, port in link.ends()
                    )
                )
                by_pair.setdefault(ends, []).append(_Record(source, order, link))
        links: list[LinkSpec] = []
        port_owner: dict[tuple[str, str], int] = {}
        for ends, records in by_pair.items():
            best = max(records, key=_Record.rank)
            link_id = f"{ends[0][0]}:{ends[0][1]} - {ends[1][0]}:{ends[1][1]}"
            if ends[0][0] == ends[1][0]:
                self._dropped_link(link_id, records, "both ends are one node once the files are joined")
                continue
            taken = [port_owner[end] for end in ends if end in port_owner]
            if taken:
                rival = links[taken[0]]
                self._dropped_link(
                    link_id,
                    records,
                    "port already cabled to another peer by "
                    f"{rival.a}:{rival.a_port} - {rival.b}:{rival.b_port}",
                )
                continue
            fields = {name: self._agreed("link", link_id, name, records, best) for name in _LINK_FIELDS}
            attrs = self._merged_attrs("link", link_id, records, best)
            attrs["merged_from"] = sorted({record.source for record in records}, key=self._source_order)
            link = best.item
            a_id = self.merged_id[(best.order, link.a)]
            b_id = self.merged_id[(best.order, link.b)]
            for end in ends:
                port_owner[end] = len(links)
            links.append(LinkSpec(a_id, link.a_port, b_id, link.b_port, attrs=attrs, **fields))
        return links

    def _dropped_link(self, link_id: str, records: list[_Record], reason: str) -> None:
        self.conflicts.append(
            {
                "subject": "link",
                "id": link_id,
                "field": "link",
                "kept": None,
                "dropped": [{"source": record.source, "value": None} for record in records],
                "reason": reason,
            }
        )

    # -- facts ---------------------------------------------------------------

    def _source_order(self, source: str) -> int:
        return self.order_of_source[source]

    def _agreed(self, subject: str, item_id: str, name: str, records: list[_Record], best: _Record) -> Any:
        """The best record's value of a field; other non-null values that differ are conflicts."""
        values = [(record.source, getattr(record.item, name)) for record in records]
        kept = getattr(best.item, name)
        if kept is None:
            kept = next((value for _, value in values if value is not None), None)
        dropped = [
            {"source": source, "value": value}
            for source, value in values
            if value is not None and value != kept
        ]
        if dropped:
            source = next(source for source, value in values if value == kept)
            self._conflict(subject, item_id, name, {"source": source, "value": kept}, dropped)
        return kept

    def _merged_attrs(
        self, subject: str, item_id: str, records: list[_Record], best: _Record
    ) -> dict[str, Any]:
        """Union of the records' attrs, nested mappings merged key by key, the best record first."""
        ordered = [best, *(record for record in records if record is not best)]
        merged: dict[str, Any] = {}
        origin: dict[tuple[str, ...], str] = {}
        for record in ordered:
            attrs = {key: value for key, value in record.item.attrs.items() if key != "merged_from"}
            if _guid(attrs.get("guid")):
                attrs["guid"] = _guid(attrs["guid"])  # "0xc42a..." and "0c42a..." are one GUID
            self._merge_into(merged, attrs, (), record.source, origin, subject, item_id)
        return merged

    def _merge_into(
        self,
        target: dict[str, Any],
        values: Mapping[str, Any],
        path: tuple[str, ...],
        source: str,
        origin: dict[tuple[str, ...], str],
        subject: str,
        item_id: str,
    ) -> None:
        for key, value in values.items():
            key_path = (*path, key)
            plain = value.to_plain() if isinstance(value, Attrs) else value
            if key not in target:
                target[key] = plain
                origin[key_path] = source
            elif isinstance(target[key], dict) and isinstance(plain, dict):
                self._merge_into(target[key], plain, key_path, source, origin, subject, item_id)
            elif target[key] != plain:
                kept = {"source": origin.get(key_path, source), "value": target[key]}
                dropped = [{"source": source, "value": plain}]
                self._conflict(subject, item_id, "attrs." + ".".join(key_path), kept, dropped)

    def _conflict(
        self, subject: str, item_id: str, name: str, kept: dict[str, Any], dropped: list[dict[str, Any]]
    ) -> None:
        self.conflicts.append(
            {"subject": subject, "id": item_id, "field": name, "kept": kept, "dropped": dropped}
        )

    def fabric_attrs(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        origin: dict[tuple[str, ...], str] = {}
        warnings: list[Any] = []  # stored words (plain_words), as the parsers keep them
        for source, spec in self.parts:
            attrs = {
                key: value
                for key, value in spec.attrs.items()
                if key not in ("merged_from", "merge_conflicts", "warnings")  # a merge of merges: recomputed
            }
            self._merge_into(merged, attrs, (), source, origin, "fabric", "")
            # Each file's warnings are its own: kept all, each saying which file it is about.
            warnings += [
                plain_words(LATER.gettext("%(source)s: %(warning)s") % {"source": source, "warning": words_from_plain(warning)})
                for warning in spec.attrs.get("warnings", ())
            ]
        merged["merged_from"] = [source for source, _ in self.parts]
        if warnings:
            merged["warnings"] = warnings
        if self.conflicts:
            merged["merge_conflicts"] = self.conflicts
        return merged
