"""Shortest hop paths between two nodes of a fabric (for the map's "path" view)."""

from __future__ import annotations

import networkx as nx

from twin.simcore.errors import TwinCoreError
from twin.simcore.model import FabricSpec
from twin.simcore.translation import LATER

__all__ = ["NoPath", "hop_path"]


class NoPath(TwinCoreError):
    """The two nodes are not connected by links that are up (or one of them is unknown)."""


def hop_path(spec: FabricSpec, a: str, b: str) -> dict:
    """One shortest path from ``a`` to ``b`` over links that are not down.

    Returns ``{"nodes": [ids], "links": <links on the path>, "hops": <switches traversed>}``;
    hops counts switches as ``hop_statistics`` does (same leaf = 1). Among equal-length paths
    the one through the lowest node ids is returned, so the answer is stable.
    """
    known = spec.node_index()
    for end in (a, b):
        if end not in known:
            raise NoPath(LATER.gettext("unknown node %(node)s") % {"node": repr(end)})
    graph = nx.Graph()
    graph.add_nodes_from(sorted(known))
    graph.add_edges_from((link.a, link.b) for link in spec.links if link.state != "down")
    try:
        nodes = nx.shortest_path(graph, a, b)
    except nx.NetworkXNoPath:
        raise NoPath(LATER.gettext("no path between %(a)s and %(b)s over links that are up") % {"a": repr(a), "b": repr(b)}) from None
    switches = {node.id for node in spec.switches()}
    return {"nodes": nodes, "links": len(nodes) - 1, "hops": sum(node in switches for node in nodes[1:-1])}
