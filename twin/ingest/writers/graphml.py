"""GraphML export of a fabric, for yEd, Gephi, Cytoscape or networkx.

GraphML has no agreed schema for ports and speeds (FORMATS.md section 7), so
this is the twin's own layout, written with networkx:

- the graph is undirected with parallel edges; graph data ``name`` is the fabric's;
- a node's GraphML id is the node id; its data are the ``NodeSpec`` fields
  that are set (``kind``, ``name``, ``tier``, ``radix``, ``host``);
- an edge's GraphML id is ``links[<position>]``; its data are ``a``, ``a_port``,
  ``b``, ``b_port``, ``bandwidth_gbps``, ``latency_ns``, ``state``, ``domain``
  (``a`` and ``b`` repeated because an undirected reader may swap source and target);
- every entry of ``attrs`` (of the fabric, a node or a link) becomes the data
  key ``attrs.<name>``. Strings, booleans, integers and floats stay scalars
  (integers mixed with floats under one key become floats); mappings, lists
  and keys whose values mix other types are written as JSON text, so each
  GraphML key has one type.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx

from twin.simcore.model import Attrs, FabricSpec

__all__ = ["ATTRS_PREFIX", "export_graphml"]

ATTRS_PREFIX = "attrs."
_NODE_FIELDS = ("kind", "name", "tier", "radix", "host")
_LINK_FIELDS = ("a", "a_port", "b", "b_port", "bandwidth_gbps", "latency_ns", "state", "domain")


def export_graphml(spec: FabricSpec) -> str:
    """The fabric as a GraphML document (UTF-8 text, ending with a newline).

    ``networkx.read_graphml`` reads it back into a ``MultiGraph`` with the same
    nodes, edges and data (``attrs`` mappings and lists as JSON text).
    """
    graph = nx.MultiGraph()
    graph.graph.update(name=spec.name, **_flat_attrs([spec.attrs])[0])
    node_attrs = _flat_attrs(node.attrs for node in spec.nodes)
    for node, extra in zip(spec.nodes, node_attrs):
        fields = {name: getattr(node, name) for name in _NODE_FIELDS}
        graph.add_node(node.id, **{k: v for k, v in fields.items() if v is not None}, **extra)
    link_attrs = _flat_attrs(link.attrs for link in spec.links)
    for position, (link, extra) in enumerate(zip(spec.links, link_attrs)):
        fields = {name: getattr(link, name) for name in _LINK_FIELDS}
        graph.add_edge(link.a, link.b, key=f"links[{position}]", **fields, **extra)
    return "\n".join(nx.generate_graphml(graph)) + "\n"


def _flat_attrs(all_attrs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Prefixed GraphML-ready data for each attrs mapping, one type per key across them all."""
    all_attrs = list(all_attrs)
    types_per_key: dict[str, set[type]] = defaultdict(set)
    for attrs in all_attrs:
        for key, value in attrs.items():
            types_per_key[key].add(type(value))
    as_float = {key for key, types in types_per_key.items() if types == {int, float}}
    as_json = {
        key
        for key, types in types_per_key.items()
        if key not in as_float and (len(types) > 1 or not types <= {str, bool, int, float})
    }
    flat = []
    for attrs in all_attrs:
        data = {}
        for key, value in attrs.items():
            if value is None:
                continue  # GraphML has no null: the key is simply absent
            if key in as_json:
                value = json.dumps(value.to_plain() if isinstance(value, Attrs) else _plain(value), sort_keys=True)
            elif key in as_float:
                value = float(value)
            data[ATTRS_PREFIX + key] = value
        flat.append(data)
    return flat


def _plain(value: Any) -> Any:
    if isinstance(value, Attrs):
        return value.to_plain()
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value
