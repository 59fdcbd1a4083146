"""Deterministic, tier-aware map layout of a fabric, with level-of-detail groups.

``fabric_layout(spec)`` places every node of a ``FabricSpec`` on a plane and
nests them in boxes that a map can draw collapsed (one aggregated marker per
box) or expanded. It is not a physics simulation: the same fabric always gets
the same picture, whatever the order of its nodes and links, and it is cheap
enough (well under a second at 16,384 cards) to compute once per snapshot.

The rules, outermost first:

- **Scale-up domains** (super-nodes) are the connected components of the
  ``scale-up`` links; each becomes a ``domain`` box. Nodes with no scale-up
  link belong to the **outer** (scale-out) network, drawn above the domain
  boxes. Domains whose cards carry a Slurm block (``attrs["slurm_block"]``), or
  else a Slurm tree switch (``attrs["slurm_switch"]``), are drawn in one
  ``block`` box per block or switch; otherwise more than
  ``_MAX_LOOSE_DOMAINS`` domains are packed into ``block`` boxes of consecutive
  domains, so the coarsest view stays small.
- A SHARP aggregation node is drawn with the switch it hangs off (just below it, in
  its group): it is that switch's in-network reduction, not an endpoint.
- Inside a network (one domain, or the outer network), switch tiers are rows:
  core on top, then spine, then leaf; endpoints (cards, NICs, hosts,
  aggregation nodes) sit at the bottom, each under the leaf it hangs from (the
  nearest leaf, directly or through other endpoints, ties to the first leaf in
  natural name order), stacked in columns of ``_STACK`` in natural name order,
  so a leaf of 32 cards on 8-card hosts shows one column per host.
- When a network has core switches and its leaves and spines fall apart into
  several connected components (the pods of a 3-tier fat-tree), each is a
  ``pod`` box: its spines in a row over its leaf groups.
- A leaf with endpoints and those endpoints form a ``leaf`` group box; a row of
  two or more switches that is not inside a leaf group (the cores of a domain,
  the spines of a pod) is a ``tier`` group, so that it too can be collapsed.
- Child boxes are arranged in a grid whose column count brings the parent
  closest to a wide aspect ratio (pods keep their leaf groups in one row where
  they can). Switches of a row are spread evenly over their box's width.

Coordinates are in layout units (an endpoint column is 10 wide), ``y`` grows
downwards (row 0 at the top, as on a screen and in SVG), rounded to one
decimal. The result is plain JSON-ready data with columnar arrays; see
``docs/map.md`` for the contract.

>>> from twin.simcore.generate import fat_tree
>>> layout = fabric_layout(fat_tree(endpoints=64, radix=8))
>>> layout["version"], layout["levels"]
(1, ['domain', 'group', 'node'])
>>> len(layout["nodes"]["id"]), len(layout["links"]["a"])
(104, 192)
>>> sorted(set(layout["groups"]["kind"]))
[0, 1, 2, 3]
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from twin.simcore.model import LINK_DOMAINS, LINK_STATES, NODE_KINDS, FabricSpec

__all__ = [
    "GROUP_KINDS",
    "LAYOUT_VERSION",
    "LEVELS",
    "STATE_SEVERITY",
    "TIER_CODES",
    "fabric_layout",
]

LAYOUT_VERSION = 1
LEVELS = ("domain", "group", "node")
TIER_CODES = (None, "leaf", "spine", "core")
GROUP_KINDS = ("domain", "pod", "leaf", "tier", "block", "unattached")
# Worst first when aggregating: a bundle with one down link is drawn down.
STATE_SEVERITY = {"up": 0, "degraded": 1, "down": 2}

# Geometry, in layout units.
_COLUMN = 10.0  # pitch of endpoint columns
_STACK_PITCH = 10.0  # pitch of endpoints within a column
_STACK = 8  # endpoints per column under a leaf
_SWITCH_PITCH = 10.0  # smallest pitch of switches in a row
_ROW = 60.0  # between switch rows
_LEAF_TO_ENDPOINTS = 40.0
_PAD = 10.0  # inside every box
_GAP = 20.0  # between boxes of a grid
_WIDE = 2.5  # aspect ratio aimed at by domain and top-level grids (a 1280 x 520 map)
_POD_WIDE = 12.0  # pods keep their leaf groups in one row up to about this ratio
_MAX_LOOSE_DOMAINS = 64
_ENGINE_OFFSET = 3.0  # a SHARP engine sits just below and right of its switch
_TIER_ORDER = ("core", "spine", "leaf")

_DIGITS = re.compile(r"(\d+)")


def _natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``leaf-2`` before ``leaf-10``.

    >>> sorted(["leaf-10", "leaf-2", "Leaf-1"], key=_natural_key)
    ['Leaf-1', 'leaf-2', 'leaf-10']
    """
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.lower())
        for part in _DIGITS.split(text)
        if part
    )


@dataclass
class _Box:
    """A group box being built: rows of switches on top, child boxes in a grid below."""

    kind: str
    label: str
    rows: list[tuple[str, list[int]]] = field(default_factory=list)  # (tier, node indices)
    children: list[_Box] = field(default_factory=list)
    leaf: int | None = None  # leaf groups: the leaf switch
    endpoints: list[int] = field(default_factory=list)  # leaf / unattached groups
    # Set by _measure and _place.
    w: float = 0.0
    h: float = 0.0
    x: float = 0.0
    y: float = 0.0
    grid: list[list[_Box]] = field(default_factory=list)
    tier_groups: list[_Box] = field(default_factory=list)
    grid_w: float = 0.0
    grid_h: float = 0.0
    index: int = -1


class _Fabric:
    """Index arrays of a spec, computed once."""

    def __init__(self, spec: FabricSpec) -> None:
        self.spec = spec
        self.index = spec.node_index()
        self.nodes = spec.nodes
        self.count = len(spec.nodes)
        self.keys = [(_natural_key(node.name), node.id) for node in spec.nodes]
        self.row = [
            (node.tier or "leaf") if node.kind == "switch" else "endpoint" for node in spec.nodes
        ]
        ends = [(self.index.get(link.a, -1), self.index.get(link.b, -1)) for link in spec.links]
        self.link_ends = ends
        self.link_ok = [a >= 0 and b >= 0 and a != b for a, b in ends]
        # SHARP engines are the reduction capability of the switch they hang off: drawn with it.
        self.engine_switch: dict[int, int] = {}
        for a, b in ends:
            for engine, switch in ((a, b), (b, a)):
                if (
                    min(a, b) >= 0
                    and spec.nodes[engine].kind == "aggregation"
                    and spec.nodes[switch].kind == "switch"
                ):
                    self.engine_switch.setdefault(engine, switch)

    def ordered(self, nodes: Iterable[int]) -> list[int]:
        return sorted(nodes, key=self.keys.__getitem__)


def _components(count: int, pairs: Iterable[tuple[int, int]]) -> list[int]:
    """Union-find: a component representative for each of ``count`` items."""
    parent = list(range(count))

    def find(item: int) -> int:
        root = item
        while parent[root] != root:
            root = parent[root]
        while parent[item] != root:
            parent[item], item = root, parent[item]
        return root

    for a, b in pairs:
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[max(root_a, root_b)] = min(root_a, root_b)
    return [find(item) for item in range(count)]


def _assign_leaves(fabric: _Fabric, members: Sequence[int], links: Sequence[int]) -> dict[int, int]:
    """Endpoint -> its leaf: the nearest leaf-row switch, ties to the first leaf in name order."""
    rank = {node: position for position, node in enumerate(fabric.ordered(
        node for node in members if fabric.row[node] == "leaf"
    ))}
    leaves = fabric.ordered(rank)
    assigned: dict[int, int] = {}
    neighbours: dict[int, list[int]] = {}
    for link in links:
        a, b = fabric.link_ends[link]
        row_a, row_b = fabric.row[a], fabric.row[b]
        if row_a == "endpoint" and row_b == "endpoint":
            neighbours.setdefault(a, []).append(b)
            neighbours.setdefault(b, []).append(a)
        elif row_a == "endpoint" and b in rank:
            assigned[a] = min(rank[b], assigned.get(a, rank[b]))
        elif row_b == "endpoint" and a in rank:
            assigned[b] = min(rank[a], assigned.get(b, rank[a]))
    frontier = list(assigned)
    while frontier:
        reached: dict[int, int] = {}
        for endpoint in frontier:
            leaf = assigned[endpoint]
            for neighbour in neighbours.get(endpoint, ()):
                if neighbour not in assigned:
                    reached[neighbour] = min(leaf, reached.get(neighbour, leaf))
        assigned.update(reached)
        frontier = list(reached)
    return {endpoint: leaves[leaf] for endpoint, leaf in assigned.items()}


def _network_boxes(
    fabric: _Fabric, members: Sequence[int], links: Sequence[int]
) -> tuple[list[tuple[str, list[int]]], list[_Box]]:
    """Rows and child boxes of one network (a domain, or the outer network)."""
    leaf_of = _assign_leaves(fabric, members, links)
    endpoints_of: dict[int, list[int]] = {}
    unattached: list[int] = []
    for node in members:
        if fabric.row[node] != "endpoint" or node in fabric.engine_switch:
            continue
        leaf = leaf_of.get(node)
        if leaf is None:
            unattached.append(node)
        else:
            endpoints_of.setdefault(leaf, []).append(node)
    by_tier: dict[str, list[int]] = {tier: [] for tier in _TIER_ORDER}
    for node in members:
        if fabric.row[node] != "endpoint":
            by_tier[fabric.row[node]].append(node)

    def leaf_box(leaf: int) -> _Box:
        return _Box(
            "leaf",
            fabric.nodes[leaf].name,
            leaf=leaf,
            endpoints=fabric.ordered(endpoints_of[leaf]),
        )

    # Pods: leaf/spine components, when cores sit above several of them.
    pod_of: dict[int, int] = {}
    if by_tier["core"]:
        local = {node: position for position, node in enumerate(by_tier["leaf"] + by_tier["spine"])}
        pairs = []
        for link in links:
            a, b = fabric.link_ends[link]
            if a in local and b in local:
                pairs.append((local[a], local[b]))
        roots = _components(len(local), pairs)
        nodes_of_root: dict[int, list[int]] = {}
        for node, position in local.items():
            nodes_of_root.setdefault(roots[position], []).append(node)
        pods = [
            group
            for group in nodes_of_root.values()
            if any(fabric.row[n] == "leaf" for n in group) and any(fabric.row[n] == "spine" for n in group)
        ]
        if len(pods) >= 2:
            for number, group in enumerate(sorted(pods, key=lambda g: min(fabric.keys[n] for n in g))):
                for node in group:
                    pod_of[node] = number

    children: list[_Box] = []
    if pod_of:
        pods_boxes = [_Box("pod", f"pod-{number + 1}") for number in range(max(pod_of.values()) + 1)]
        bare: list[list[int]] = [[] for _ in pods_boxes]
        spines: list[list[int]] = [[] for _ in pods_boxes]
        for leaf in fabric.ordered(node for node in by_tier["leaf"] if node in pod_of):
            if leaf in endpoints_of:
                pods_boxes[pod_of[leaf]].children.append(leaf_box(leaf))
            else:
                bare[pod_of[leaf]].append(leaf)
        for spine in fabric.ordered(node for node in by_tier["spine"] if node in pod_of):
            spines[pod_of[spine]].append(spine)
        for box, pod_spines, pod_bare in zip(pods_boxes, spines, bare):
            box.rows = [(tier, row) for tier, row in (("spine", pod_spines), ("leaf", pod_bare)) if row]
        children.extend(pods_boxes)

    rows: list[tuple[str, list[int]]] = [("core", fabric.ordered(by_tier["core"]))]
    rows.append(("spine", fabric.ordered(n for n in by_tier["spine"] if n not in pod_of)))
    bare_leaves = []
    for leaf in fabric.ordered(n for n in by_tier["leaf"] if n not in pod_of):
        if leaf in endpoints_of:
            children.append(leaf_box(leaf))
        else:
            bare_leaves.append(leaf)
    rows.append(("leaf", bare_leaves))
    if unattached:
        children.append(_Box("unattached", "unattached", endpoints=fabric.ordered(unattached)))
    return [(tier, row) for tier, row in rows if row], children


def _domains(fabric: _Fabric) -> tuple[list[list[int]], list[int], list[list[int]], list[int]]:
    """Scale-up domains (members and internal links) and the outer network's nodes and links."""
    scale_up = [
        fabric.link_ends[link]
        for link, spec in enumerate(fabric.spec.links)
        if fabric.link_ok[link] and spec.domain == "scale-up"
    ]
    roots = _components(fabric.count, scale_up)
    touched = {node for pair in scale_up for node in pair}
    members_of: dict[int, list[int]] = {}
    outer: list[int] = []
    for node in range(fabric.count):
        if node in touched:
            members_of.setdefault(roots[node], []).append(node)
        else:
            outer.append(node)
    ordered = sorted(members_of.values(), key=lambda group: min(fabric.keys[n] for n in group))
    domain_of = {}
    for number, group in enumerate(ordered):
        for node in group:
            domain_of[node] = number
    domain_links: list[list[int]] = [[] for _ in ordered]
    outer_links: list[int] = []
    for link, (a, b) in enumerate(fabric.link_ends):
        if not fabric.link_ok[link]:
            continue
        da, db = domain_of.get(a, -1), domain_of.get(b, -1)
        if da >= 0 and da == db and fabric.spec.links[link].domain == "scale-up":
            domain_links[da].append(link)
        elif da < 0 and db < 0:
            outer_links.append(link)
    return ordered, outer, domain_links, outer_links


def _domain_label(fabric: _Fabric, members: Sequence[int], number: int) -> str:
    """The common prefix of the domain's switch names (``sn01``), else ``domain-<n>``."""
    names = [fabric.nodes[n].name for n in members if fabric.row[n] != "endpoint"]
    if len(names) >= 2:
        prefix = names[0]
        for name in names[1:]:
            while not name.startswith(prefix):
                prefix = prefix[:-1]
        prefix = prefix.rstrip("-_./: ")
        if len(prefix) >= 2:
            return prefix
    return f"domain-{number + 1}"


# ---- geometry ------------------------------------------------------------


def _grid(children: Sequence[_Box], wide: float, extra_h: float, min_w: float) -> list[list[_Box]]:
    """Split children into grid rows, choosing the column count whose box is closest to ``wide``."""
    count = len(children)
    if count == 0:
        return []
    candidates = sorted({math.ceil(count / rows) for rows in range(1, count + 1)})
    best: tuple[float, int] | None = None
    for columns in candidates:
        width, height = _grid_size(children, columns)
        aspect = max(width, min_w) / max(height + extra_h, 1.0)
        score = abs(math.log(aspect / wide))
        if best is None or score < best[0] - 1e-9:
            best = (score, columns)
    assert best is not None
    columns = best[1]
    return [list(children[start : start + columns]) for start in range(0, count, columns)]


def _grid_size(children: Sequence[_Box], columns: int) -> tuple[float, float]:
    width = height = 0.0
    for start in range(0, len(children), columns):
        row = children[start : start + columns]
        width = max(width, sum(child.w for child in row) + _GAP * (len(row) - 1))
        height += max(child.h for child in row) + (_GAP if start else 0.0)
    return width, height


def _measure(box: _Box) -> None:
    for child in box.children:
        _measure(child)
    if box.kind in ("leaf", "unattached"):
        columns = max(1, math.ceil(len(box.endpoints) / _STACK))
        stack = min(_STACK, len(box.endpoints))
        box.w = columns * _COLUMN + 2 * _PAD
        top = _LEAF_TO_ENDPOINTS if box.leaf is not None else 0.0
        box.h = 2 * _PAD + top + max(0, stack - 1) * _STACK_PITCH
        return
    rows_w = max((len(row) * _SWITCH_PITCH for _, row in box.rows), default=0.0)
    rows_h = len(box.rows) * _ROW
    wide = _POD_WIDE if box.kind == "pod" else _WIDE
    box.grid = _grid(box.children, wide, rows_h + 2 * _PAD, rows_w)
    box.grid_w, box.grid_h = _grid_size(box.children, len(box.grid[0])) if box.grid else (0.0, 0.0)
    box.w = max(box.grid_w, rows_w, _SWITCH_PITCH) + 2 * _PAD
    if box.grid:
        box.h = 2 * _PAD + rows_h + box.grid_h
    else:
        box.h = 2 * _PAD + max(0.0, rows_h - _ROW)


def _place(box: _Box, x: float, y: float, xs: list[float], ys: list[float]) -> None:
    box.x, box.y = x, y
    if box.kind in ("leaf", "unattached"):
        top = y + _PAD
        if box.leaf is not None:
            xs[box.leaf] = x + box.w / 2
            ys[box.leaf] = top
            top += _LEAF_TO_ENDPOINTS
        for position, node in enumerate(box.endpoints):
            column, level = divmod(position, _STACK)
            xs[node] = x + _PAD + (column + 0.5) * _COLUMN
            ys[node] = top + level * _STACK_PITCH
        return
    inner = box.w - 2 * _PAD
    for number, (_, row) in enumerate(box.rows):
        for position, node in enumerate(row):
            xs[node] = x + _PAD + (position + 0.5) * inner / len(row)
            ys[node] = y + _PAD + number * _ROW
    top = y + _PAD + len(box.rows) * _ROW
    for grid_row in box.grid:
        row_w = sum(child.w for child in grid_row) + _GAP * (len(grid_row) - 1)
        left = x + _PAD + (inner - row_w) / 2
        for child in grid_row:
            _place(child, left, top, xs, ys)
            left += child.w + _GAP
        top += max(child.h for child in grid_row) + _GAP


# ---- output ----------------------------------------------------------------


def _codes(defaults: Sequence[Any], values: Iterable[Any]) -> list[Any]:
    """Code table: the model's values first, unknown ones appended in order of appearance."""
    table = list(defaults)
    known = set(table)
    for value in values:
        if value not in known:
            known.add(value)
            table.append(value)
    return table


def _number(value: float) -> float | int:
    """Bandwidths as compact JSON: ``400`` rather than ``400.0``."""
    return int(value) if float(value).is_integer() else round(value, 3)


def fabric_layout(spec: FabricSpec) -> dict[str, Any]:
    """Tier-aware positions and level-of-detail groups of a fabric, as JSON-ready columns.

    Nodes and links keep the spec's order (``links.a``/``links.b`` are node
    indices; links naming unknown nodes, or a node to itself, are left out).
    Groups are listed parents first; ``groups.parent`` is a group index or -1,
    ``nodes.group`` the innermost group holding the node (its leaf group for
    leaves and endpoints) or -1. ``group_links`` aggregates the links between
    the innermost groups of their two ends (links whose ends share a group, or
    touch a node outside every group, are not in it). ``snapshot`` is left
    ``None`` for the caller to fill in.
    """
    fabric = _Fabric(spec)
    domains, outer, domain_links, outer_links = _domains(fabric)

    domain_boxes: list[_Box] = []
    for number, (members, links) in enumerate(zip(domains, domain_links)):
        rows, children = _network_boxes(fabric, members, links)
        domain_boxes.append(_Box("domain", _domain_label(fabric, members, number), rows, children))
    domain_blocks = [_slurm_block(fabric, members) for members in domains]
    if any(block is not None for block in domain_blocks):
        domain_boxes = _boxes_by_block(domain_boxes, domain_blocks)
    elif len(domain_boxes) > _MAX_LOOSE_DOMAINS:
        size = math.ceil(math.sqrt(len(domain_boxes)))
        domain_boxes = [
            _Box("block", f"{chunk[0].label} … {chunk[-1].label}", children=chunk)
            for chunk in (domain_boxes[start : start + size] for start in range(0, len(domain_boxes), size))
        ]
    top_rows, outer_children = _network_boxes(fabric, outer, outer_links)
    # The scale-out network first, so that its pods come above the domain boxes.
    root = _Box("root", "", top_rows, outer_children + domain_boxes)
    # Rows of two or more switches outside leaf groups collapse as "tier" groups.
    _add_tier_groups(root, fabric)

    _measure(root)
    xs = [0.0] * fabric.count
    ys = [0.0] * fabric.count
    _place(root, 0.0, 0.0, xs, ys)
    for engine, switch in fabric.engine_switch.items():
        xs[engine], ys[engine] = xs[switch] + _ENGINE_OFFSET, ys[switch] + _ENGINE_OFFSET

    groups = _flatten(root)
    group_of = [-1] * fabric.count
    for box in groups:
        for node in _direct_nodes(box):
            group_of[node] = box.index
    for engine, switch in fabric.engine_switch.items():
        group_of[engine] = group_of[switch]
    parents = _parents(root)
    cards_below = [0] * len(groups)
    nodes_below = [0] * len(groups)
    for node, group in enumerate(group_of):
        is_card = fabric.nodes[node].kind == "card"
        while group >= 0:
            nodes_below[group] += 1
            cards_below[group] += is_card
            group = parents[group]

    kind_codes = _codes(NODE_KINDS, (node.kind for node in spec.nodes))
    tier_codes = _codes(TIER_CODES, (node.tier for node in spec.nodes))
    state_codes = _codes(LINK_STATES, (link.state for link in spec.links))
    domain_codes = _codes(LINK_DOMAINS, (link.domain for link in spec.links))
    kind_index = {value: code for code, value in enumerate(kind_codes)}
    tier_index = {value: code for code, value in enumerate(tier_codes)}
    state_index = {value: code for code, value in enumerate(state_codes)}
    domain_index = {value: code for code, value in enumerate(domain_codes)}

    kept = [link for link, ok in enumerate(fabric.link_ok) if ok]
    link_a = [fabric.link_ends[link][0] for link in kept]
    link_b = [fabric.link_ends[link][1] for link in kept]
    link_state = [state_index[spec.links[link].state] for link in kept]
    link_gbps = [spec.links[link].bandwidth_gbps for link in kept]

    return {
        "version": LAYOUT_VERSION,
        "snapshot": None,
        "bounds": {"x0": 0.0, "y0": 0.0, "x1": round(root.w, 1), "y1": round(root.h, 1)},
        "levels": list(LEVELS),
        "groups": {
            "id": [f"g{box.index}" for box in groups],
            "label": [box.label for box in groups],
            "kind": [GROUP_KINDS.index(box.kind) for box in groups],
            "level": [0 if box.kind in ("domain", "block") else 1 for box in groups],
            "parent": parents,
            "tier": [tier_index.get(_box_tier(box, fabric)) or 0 for box in groups],
            "x": _rounded(box.x for box in groups),
            "y": _rounded(box.y for box in groups),
            "w": _rounded(box.w for box in groups),
            "h": _rounded(box.h for box in groups),
            "members": cards_below,
            "nodes": nodes_below,
        },
        "nodes": {
            "id": [node.id for node in spec.nodes],
            "name": [node.name for node in spec.nodes],
            "kind": [kind_index[node.kind] for node in spec.nodes],
            "tier": [tier_index[node.tier] for node in spec.nodes],
            "x": _rounded(xs),
            "y": _rounded(ys),
            "group": group_of,
        },
        "codes": {
            "kind": kind_codes,
            "tier": tier_codes,
            "state": state_codes,
            "domain": domain_codes,
            "group_kind": list(GROUP_KINDS),
        },
        "links": {
            "a": link_a,
            "b": link_b,
            "state": link_state,
            "domain": [domain_index[spec.links[link].domain] for link in kept],
            "bandwidth_gbps": [_number(value) for value in link_gbps],
        },
        "group_links": _group_links(group_of, link_a, link_b, link_state, link_gbps, state_codes),
    }


def _slurm_block(fabric: _Fabric, members: Sequence[int]) -> str | None:
    """The Slurm group of a scale-up domain: the block (topology/block) of its first card that
    has one, else the switch it hangs from (topology/tree)."""
    for key in ("slurm_block", "slurm_switch"):
        found = next(
            (group for node in members if fabric.nodes[node].kind == "card" and (group := fabric.nodes[node].attrs.get(key)) is not None),
            None,
        )
        if found is not None:
            return found
    return None


def _boxes_by_block(domain_boxes: list[_Box], blocks: list[str | None]) -> list[_Box]:
    """Domains of one Slurm block in one ``block`` box named after it (blocks in natural name
    order); domains in no block stay loose after them."""
    by_block: dict[str, list[_Box]] = {}
    loose: list[_Box] = []
    for box, block in zip(domain_boxes, blocks):
        (by_block.setdefault(block, []) if block is not None else loose).append(box)
    return [_Box("block", block, children=by_block[block]) for block in sorted(by_block, key=_natural_key)] + loose


def _add_tier_groups(box: _Box, fabric: _Fabric) -> None:
    """Turn rows of two or more switches into ``tier`` child boxes (placed by their parent)."""
    for child in box.children:
        _add_tier_groups(child, fabric)
    box.tier_groups = [
        _Box("tier", tier, endpoints=row) for tier, row in box.rows if len(row) >= 2
    ]


def _box_tier(box: _Box, fabric: _Fabric) -> str | None:
    if box.kind == "tier":
        return box.label
    if box.kind == "leaf":
        return "leaf"
    return None


def _flatten(root: _Box) -> list[_Box]:
    """Groups parents first (breadth-first), numbering them; the root is not a group."""
    order: list[_Box] = []
    queue = deque([root])
    while queue:
        box = queue.popleft()
        if box is not root:
            box.index = len(order)
            order.append(box)
        queue.extend(_subgroups(box))
    return order


def _subgroups(box: _Box) -> list[_Box]:
    tiers = box.tier_groups
    for tier_box in tiers:
        if not tier_box.w:
            _tier_geometry(tier_box, box)
    return [*tiers, *box.children]


def _tier_geometry(tier_box: _Box, parent: _Box) -> None:
    number = next(i for i, (tier, _) in enumerate(parent.rows) if tier == tier_box.label)
    tier_box.x = parent.x + _PAD / 2
    tier_box.w = parent.w - _PAD
    tier_box.y = parent.y + _PAD / 2 + number * _ROW
    tier_box.h = _PAD


def _direct_nodes(box: _Box) -> list[int]:
    """Nodes whose innermost group is ``box``."""
    if box.kind == "tier":
        return list(box.endpoints)
    if box.kind in ("leaf", "unattached"):
        return ([box.leaf] if box.leaf is not None else []) + list(box.endpoints)
    in_tiers = {tier for tier, row in box.rows if len(row) >= 2}
    return [node for tier, row in box.rows if tier not in in_tiers for node in row]


def _parents(root: _Box) -> list[int]:
    parents: dict[int, int] = {}
    stack = [(root, -1)]
    while stack:
        box, parent = stack.pop()
        for child in _subgroups(box):
            parents[child.index] = box.index if box is not root else -1
            stack.append((child, child.index))
    return [parents[index] for index in range(len(parents))]


def _rounded(values: Iterable[float]) -> list[float]:
    return np.round(np.fromiter(values, dtype=np.float64), 1).tolist()


def _group_links(
    group_of: Sequence[int],
    link_a: Sequence[int],
    link_b: Sequence[int],
    link_state: Sequence[int],
    link_gbps: Sequence[float],
    state_codes: Sequence[str],
) -> dict[str, list[Any]]:
    """Links aggregated between the innermost groups of their ends, pairs in (a, b) order."""
    groups = np.asarray(group_of, dtype=np.int64)
    if len(link_a) == 0 or len(groups) == 0:
        return {"a": [], "b": [], "links": [], "bandwidth_gbps": [], "worst_state": []}
    ga = groups[np.asarray(link_a, dtype=np.int64)]
    gb = groups[np.asarray(link_b, dtype=np.int64)]
    keep = (ga >= 0) & (gb >= 0) & (ga != gb)
    low = np.minimum(ga, gb)[keep]
    high = np.maximum(ga, gb)[keep]
    severity = np.array([STATE_SEVERITY.get(state, 1) for state in state_codes], dtype=np.int64)
    states = np.asarray(link_state, dtype=np.int64)[keep]
    gbps = np.asarray(link_gbps, dtype=np.float64)[keep]
    span = int(groups.max()) + 1
    pairs, inverse = np.unique(low * span + high, return_inverse=True)
    counts = np.bincount(inverse, minlength=len(pairs))
    sums = np.bincount(inverse, weights=gbps, minlength=len(pairs))
    worst = np.zeros(len(pairs), dtype=np.int64)
    np.maximum.at(worst, inverse, severity[states])
    # Back from severity to a state code: the first code with that severity.
    code_of_severity = {}
    for code, state in enumerate(state_codes):
        code_of_severity.setdefault(STATE_SEVERITY.get(state, 1), code)
    return {
        "a": (pairs // span).tolist(),
        "b": (pairs % span).tolist(),
        "links": counts.tolist(),
        "bandwidth_gbps": [_number(value) for value in sums.tolist()],
        "worst_state": [code_of_severity[int(value)] for value in worst],
    }
