"""Plain-data model of a fabric: nodes, links and the fabric that holds them.

Everything here is a frozen dataclass, so a ``FabricSpec`` can be shared between
threads, cached and compared. Free-form attributes are stored as ``Attrs``: an
immutable, hashable mapping of JSON-ready values, so that equality works and
``fabric_from_dict(fabric_to_dict(spec)) == spec`` holds.

Construction only normalises representation (tuples, floats, ``Attrs``);
consistency is checked by ``FabricSpec.validate``, which reports every problem
with its path in the plain-dict form so that parsers can map it to a line.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import MISSING, dataclass, fields, replace
from itertools import islice
from typing import Any

import numpy as np

from twin.simcore.errors import FabricError, FabricProblem
from twin.simcore.translation import LATER, Joined, Phrase

__all__ = [
    "LINK_DOMAINS",
    "LINK_STATES",
    "MAX_LINK_GBPS",
    "NODE_KINDS",
    "SWITCH_TIERS",
    "Attrs",
    "FabricSpec",
    "LinkSpec",
    "NodeSpec",
    "fabric_from_dict",
    "fabric_to_dict",
]

NODE_KINDS = ("card", "nic", "switch", "host", "aggregation")
SWITCH_TIERS = ("leaf", "spine", "core")
LINK_STATES = ("up", "down", "degraded")
LINK_DOMAINS = ("scale-up", "scale-out")
# 100 Tb/s: far above any single link made (1.6 Tb/s today); more is a unit mistake (b/s for Gb/s).
MAX_LINK_GBPS = 100_000.0

_JSON_SCALARS = (str, int, float, bool, type(None))


def _freeze(value: Any) -> Any:
    """Return an immutable, hashable copy of a JSON-ready value."""
    if isinstance(value, Mapping):
        return Attrs(value)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, _JSON_SCALARS):
        return value
    raise TypeError(f"attribute values must be JSON-ready, got {type(value).__name__}")


def _thaw(value: Any) -> Any:
    """Inverse of ``_freeze``: plain dicts and lists, ready for ``json.dumps``."""
    if isinstance(value, Attrs):
        return value.to_plain()
    if isinstance(value, tuple):
        return [_thaw(item) for item in value]
    return value


class Attrs(Mapping[str, Any]):
    """Immutable, hashable mapping of JSON-ready values, keys kept sorted.

    Nested mappings become ``Attrs`` and lists become tuples; ``to_plain``
    turns them back into dicts and lists.

    >>> attrs = Attrs({"b": [1, 2], "a": {"x": 1}})
    >>> list(attrs), attrs["b"], attrs == {"a": {"x": 1}, "b": (1, 2)}
    (['a', 'b'], (1, 2), True)
    >>> attrs.to_plain()
    {'a': {'x': 1}, 'b': [1, 2]}
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> None:
        items = dict(data)
        if not all(isinstance(key, str) for key in items):
            raise TypeError("attribute names must be strings")
        self._data = {key: _freeze(items[key]) for key in sorted(items)}

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return f"Attrs({self._data!r})"

    def to_plain(self) -> dict[str, Any]:
        """Return a plain, JSON-ready ``dict`` copy."""
        return {key: _thaw(value) for key, value in self._data.items()}


def _set(instance: object, name: str, value: Any) -> None:
    # Normalising fields of a frozen dataclass in __post_init__.
    object.__setattr__(instance, name, value)


def _attrs(value: Mapping[str, Any]) -> Attrs:
    return value if isinstance(value, Attrs) else Attrs(value)


@dataclass(frozen=True)
class NodeSpec:
    """A node of the fabric: an accelerator card, NIC, switch, host or aggregation node.

    ``id`` is the stable identity (GUID, PCI bus id or normalised name) that links
    refer to; ``name`` is for people. ``tier`` (one of ``SWITCH_TIERS``) is required
    for switches and must be ``None`` otherwise; ``radix`` is the port count.
    ``attrs`` takes any mapping of JSON-ready values and is stored as ``Attrs``
    (``attrs.to_plain()`` gives a plain dict back), as on links and fabrics.
    """

    id: str
    kind: str
    name: str
    tier: str | None = None
    radix: int | None = None
    host: str | None = None
    attrs: Mapping[str, Any] = Attrs()

    def __post_init__(self) -> None:
        if self.radix is not None:
            _set(self, "radix", int(self.radix))
        _set(self, "attrs", _attrs(self.attrs))


@dataclass(frozen=True)
class LinkSpec:
    """A cable between port ``a_port`` of node ``a`` and port ``b_port`` of node ``b``.

    Ports are text (``"17"``, ``"eth0"``). Bandwidth is in Gb/s per direction,
    latency in ns for the cable alone (switch forwarding latency belongs to the
    switch). Links are undirected: ``a`` and ``b`` carry no meaning.
    """

    a: str
    a_port: str
    b: str
    b_port: str
    bandwidth_gbps: float
    latency_ns: float
    state: str = "up"
    domain: str = "scale-up"
    attrs: Mapping[str, Any] = Attrs()

    def __post_init__(self) -> None:
        _set(self, "bandwidth_gbps", float(self.bandwidth_gbps))
        _set(self, "latency_ns", float(self.latency_ns))
        _set(self, "attrs", _attrs(self.attrs))

    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """The two ``(node id, port)`` ends of the link."""
        return (self.a, self.a_port), (self.b, self.b_port)


@dataclass(frozen=True)
class FabricSpec:
    """A whole fabric: nodes and links in a fixed order, plus free-form attributes.

    The order of ``nodes`` and ``links`` is kept (it fixes matrix layouts and
    error paths) but carries no meaning.
    """

    name: str
    nodes: tuple[NodeSpec, ...]
    links: tuple[LinkSpec, ...]
    attrs: Mapping[str, Any] = Attrs()

    def __post_init__(self) -> None:
        _set(self, "nodes", tuple(self.nodes))
        _set(self, "links", tuple(self.links))
        _set(self, "attrs", _attrs(self.attrs))

    def with_links_down(self, positions: Iterable[int], *, name: str | None = None) -> FabricSpec:
        """This fabric with the links at ``positions`` in state ``"down"`` (a failure what-if).

        The nodes are shared, and what is known of them carries over: taking links down
        breaks none of the rules ``validate`` checks, so a fabric found valid stays valid.
        """
        down = set(positions)
        links = tuple(replace(link, state="down") if position in down else link for position, link in enumerate(self.links))
        failed = replace(self, links=links, name=self.name if name is None else name)
        for known in ("_known_valid", "_node_index"):
            if known in self.__dict__:
                failed.__dict__[known] = self.__dict__[known]
        return failed

    def node_name(self, node_id: str) -> str:
        """The name people know the node by (the id itself for a node the spec lacks)."""
        position = self._node_index.get(node_id)
        return node_id if position is None else self.nodes[position].name

    def node_index(self) -> dict[str, int]:
        """Map each node id to its position in ``nodes`` (the first one if duplicated)."""
        return dict(self._node_index)  # a copy: callers may change theirs

    @functools.cached_property
    def _node_index(self) -> dict[str, int]:
        # Kept on the (immutable) spec: compiling and routing ask for it many times.
        index: dict[str, int] = {}
        for position, node in enumerate(self.nodes):
            index.setdefault(node.id, position)
        return index

    def nodes_of_kind(self, kind: str) -> tuple[NodeSpec, ...]:
        """The nodes of one kind, in fabric order."""
        return tuple(node for node in self.nodes if node.kind == kind)

    def cards(self) -> tuple[NodeSpec, ...]:
        """The accelerator cards, in fabric order."""
        return self.nodes_of_kind("card")

    def switches(self) -> tuple[NodeSpec, ...]:
        """The switches of every tier, in fabric order."""
        return self.nodes_of_kind("switch")

    def kind_counts(self) -> dict[str, int]:
        """Number of nodes of each kind in ``NODE_KINDS``, zeros included."""
        counts = Counter(node.kind for node in self.nodes)
        return {kind: counts[kind] for kind in NODE_KINDS}

    def validate(self, *, max_problems: int = 20) -> None:
        """Raise ``FabricError`` listing the first ``max_problems`` inconsistencies.

        Checks: node ids present and unique; known kind, tier, state and domain;
        switches have a tier and only switches have one; positive radix; link
        ends name declared nodes; no ``(node, port)`` used by two links;
        bandwidth positive and latency non-negative, both finite.
        """
        if self.__dict__.get("_known_valid"):
            return  # a spec never changes: checked once is checked for good
        problems = [] if self._looks_valid() else list(islice(self._problems(), max_problems))
        if problems:
            raise FabricError(LATER.gettext("fabric %(fabric)s is inconsistent") % {"fabric": repr(self.name)}, problems)
        self.__dict__["_known_valid"] = True

    def _looks_valid(self) -> bool:
        """The common case fast: True only if ``_problems`` would find nothing. It checks the
        links' rules on whole columns at once; a False sends ``validate`` to the detailed pass,
        which says what is wrong and where."""
        declared: dict[str, int] = {}
        for position, node in enumerate(self.nodes):
            if next(_node_problems(node, ("nodes", position), declared), None) is not None:
                return False
            declared.setdefault(node.id, position)
        links = self.links
        a, b = [link.a for link in links], [link.b for link in links]
        a_ports, b_ports = [link.a_port for link in links], [link.b_port for link in links]
        ends = list(zip(a, a_ports)) + list(zip(b, b_ports))
        bandwidth = np.fromiter((link.bandwidth_gbps for link in links), float, len(links))
        latency = np.fromiter((link.latency_ns for link in links), float, len(links))
        return (
            declared.keys() >= set(a) | set(b)
            and all(a_ports) and all(b_ports)
            and len(set(ends)) == len(ends)
            and not any(x == y for x, y in zip(a, b))
            and bool(np.all(np.isfinite(bandwidth) & (bandwidth > 0) & (bandwidth <= MAX_LINK_GBPS)))
            and bool(np.all(np.isfinite(latency) & (latency >= 0)))
            and {link.state for link in links} <= set(LINK_STATES)
            and {link.domain for link in links} <= set(LINK_DOMAINS)
        )

    def _problems(self) -> Iterator[FabricProblem]:
        declared: dict[str, int] = {}
        for position, node in enumerate(self.nodes):
            yield from _node_problems(node, ("nodes", position), declared)
            declared.setdefault(node.id, position)
        port_users: dict[tuple[str, str], int] = {}
        for position, link in enumerate(self.links):
            yield from _link_problems(link, ("links", position), declared, port_users)


def _node_problems(
    node: NodeSpec, path: tuple[str, int], declared: Mapping[str, int]
) -> Iterator[FabricProblem]:
    if not node.id:
        yield FabricProblem((*path, "id"), LATER.gettext("empty node id"), LATER.gettext("a GUID, bus id or normalised name"))
    elif node.id in declared:
        yield FabricProblem(
            (*path, "id"),
            LATER.gettext("duplicate node id %(node)s, already declared at %(path)s") % {"node": repr(node.id), "path": f"nodes[{declared[node.id]}]"},
            LATER.gettext("node ids unique within the fabric"),
        )
    if node.kind not in NODE_KINDS:
        yield FabricProblem((*path, "kind"), LATER.gettext("unknown kind %(kind)s") % {"kind": repr(node.kind)}, _one_of(NODE_KINDS))
    if node.kind == "switch" and node.tier is None:
        yield FabricProblem((*path, "tier"), LATER.gettext("switch without tier"), _one_of(SWITCH_TIERS))
    elif node.tier is not None and node.tier not in SWITCH_TIERS:
        yield FabricProblem((*path, "tier"), LATER.gettext("unknown tier %(tier)s") % {"tier": repr(node.tier)}, _one_of(SWITCH_TIERS))
    elif node.tier is not None and node.kind != "switch":
        yield FabricProblem((*path, "tier"), LATER.gettext("a %(kind)s has no tier") % {"kind": node.kind}, LATER.gettext("no tier (null)"))
    if node.radix is not None and node.radix < 1:
        yield FabricProblem((*path, "radix"), LATER.gettext("radix %(radix)s") % {"radix": str(node.radix)}, LATER.gettext("a port count of at least 1"))


def _link_problems(
    link: LinkSpec,
    path: tuple[str, int],
    declared: Mapping[str, int],
    port_users: dict[tuple[str, str], int],
) -> Iterator[FabricProblem]:
    position = path[1]
    for end, (node_id, port) in zip(("a", "b"), link.ends()):
        if node_id not in declared:
            yield FabricProblem(
                (*path, end), LATER.gettext("unknown node %(node)s") % {"node": repr(node_id)}, LATER.gettext('the id of a node declared in "nodes"')
            )
            continue
        if not port:
            yield FabricProblem((*path, f"{end}_port"), LATER.gettext("empty port"), LATER.gettext("the port name, as text"))
            continue
        user = port_users.setdefault((node_id, port), position)
        plugged_into_itself = end == "b" and link.ends()[0] == (node_id, port)
        if user != position or plugged_into_itself:
            yield FabricProblem(
                (*path, f"{end}_port"),
                LATER.gettext("port %(port)s of node %(node)s is already used by %(path)s") % {"port": repr(port), "node": repr(node_id), "path": f"links[{user}]"},
                LATER.gettext("each (node, port) in at most one link"),
            )
    if link.a == link.b:
        yield FabricProblem((*path, "b"), LATER.gettext("link joins node %(node)s to itself") % {"node": repr(link.a)}, LATER.gettext("two different nodes"))
    if not (math.isfinite(link.bandwidth_gbps) and 0 < link.bandwidth_gbps <= MAX_LINK_GBPS):
        yield FabricProblem(
            (*path, "bandwidth_gbps"),
            LATER.gettext("bandwidth %(gbps)s Gb/s") % {"gbps": str(link.bandwidth_gbps)},
            LATER.gettext("a positive number of Gb/s, at most %(most)s (is the unit right?)") % {"most": f"{MAX_LINK_GBPS:,.0f}"},
        )
    if not (math.isfinite(link.latency_ns) and link.latency_ns >= 0):
        yield FabricProblem(
            (*path, "latency_ns"),
            LATER.gettext("latency %(ns)s ns") % {"ns": str(link.latency_ns)},
            LATER.gettext("a non-negative, finite number of ns"),
        )
    if link.state not in LINK_STATES:
        yield FabricProblem((*path, "state"), LATER.gettext("unknown state %(state)s") % {"state": repr(link.state)}, _one_of(LINK_STATES))
    if link.domain not in LINK_DOMAINS:
        yield FabricProblem(
            (*path, "domain"), LATER.gettext("unknown domain %(domain)s") % {"domain": repr(link.domain)}, _one_of(LINK_DOMAINS)
        )


def _one_of(values: Iterable[str]) -> Phrase:
    return LATER.gettext("one of %(names)s") % {"names": Joined([f'"{value}"' for value in values], ", ")}


def _to_plain(spec: NodeSpec | LinkSpec) -> dict[str, Any]:
    """Plain dict of a node or link, leaving out fields equal to their default."""
    plain: dict[str, Any] = {}
    for spec_field in fields(spec):
        value = getattr(spec, spec_field.name)
        if spec_field.default is not MISSING and value == spec_field.default:
            continue
        plain[spec_field.name] = value.to_plain() if isinstance(value, Attrs) else value
    return plain


def fabric_to_dict(spec: FabricSpec) -> dict[str, Any]:
    """JSON-ready dict of a fabric; optional fields equal to their default are left out.

    Keys come in a stable order: ``name``, ``attrs`` (if any), ``nodes``, ``links``.
    """
    plain: dict[str, Any] = {"name": spec.name}
    if spec.attrs:
        plain["attrs"] = spec.attrs.to_plain()
    plain["nodes"] = [_to_plain(node) for node in spec.nodes]
    plain["links"] = [_to_plain(link) for link in spec.links]
    return plain


def fabric_from_dict(plain: Mapping[str, Any]) -> FabricSpec:
    """Inverse of ``fabric_to_dict``; optional fields may be missing or ``None``.

    The dict must have the shape ``fabric_to_dict`` produces (parsers check it
    against the schema first); the result is not validated.
    """
    return FabricSpec(
        name=plain["name"],
        attrs=plain.get("attrs") or {},
        nodes=tuple(NodeSpec(**_without_nulls(node)) for node in plain["nodes"]),
        links=tuple(LinkSpec(**_without_nulls(link)) for link in plain["links"]),
    )


def _without_nulls(plain: Mapping[str, Any]) -> dict[str, Any]:
    # An explicit null means "the default", as when the field is left out.
    return {key: value for key, value in plain.items() if value is not None}
