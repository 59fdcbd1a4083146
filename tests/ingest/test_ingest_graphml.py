"""GraphML export: networkx reads back the same nodes, edges and attributes."""

import io
import json

import networkx as nx

from twin.ingest.writers.graphml import ATTRS_PREFIX, export_graphml
from twin.simcore.generate import supernode
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec


def read_back(spec):
    text = export_graphml(spec)
    assert text.endswith("\n")
    return nx.read_graphml(io.StringIO(text), force_multigraph=True)


def test_generated_fabric_reads_back_with_the_same_counts_and_fields():
    fabric = supernode(cards=64, switch_radix=16)
    graph = read_back(fabric)
    assert not graph.is_directed() and graph.is_multigraph()
    assert graph.number_of_nodes() == len(fabric.nodes)
    assert graph.number_of_edges() == len(fabric.links)  # parallel leaf-spine links kept
    assert graph.graph["name"] == fabric.name
    assert graph.graph[ATTRS_PREFIX + "switch_radix"] == 16
    for node in fabric.nodes:
        data = graph.nodes[node.id]
        assert (data["kind"], data["name"]) == (node.kind, node.name)
        assert data.get("tier") == node.tier and data.get("radix") == node.radix and data.get("host") == node.host
    edges = {key: data for _, _, key, data in graph.edges(keys=True, data=True)}
    for position, link in enumerate(fabric.links):
        data = edges[f"links[{position}]"]
        assert (data["a"], data["a_port"], data["b"], data["b_port"]) == (link.a, link.a_port, link.b, link.b_port)
        assert data["bandwidth_gbps"] == link.bandwidth_gbps and data["latency_ns"] == link.latency_ns
        assert (data["state"], data["domain"]) == (link.state, link.domain)


def test_attrs_are_flattened_to_scalars_or_json_text():
    fabric = FabricSpec(
        "attrs",
        (
            NodeSpec("ib:01", "switch", "leaf01", tier="leaf", attrs={
                "guid": "01", "lid": 2, "managed": True, "weight": 1,
                "ports": {"7": {"state": "down", "physical_state": "Polling"}},
            }),
            NodeSpec("ib:02", "nic", "node01/mlx5_0", host="node01", attrs={"lid": "unknown", "weight": 2.5}),
        ),
        (
            LinkSpec("ib:01", "1", "ib:02", "1", 100.0, 0.0, state="degraded", domain="scale-out",
                     attrs={"width": "1x", "errors": {"symbol_errors": 12}, "lanes": [1, 2]}),
        ),
    )
    graph = read_back(fabric)
    leaf, nic = graph.nodes["ib:01"], graph.nodes["ib:02"]
    assert leaf[ATTRS_PREFIX + "guid"] == "01" and leaf[ATTRS_PREFIX + "managed"] is True
    assert json.loads(leaf[ATTRS_PREFIX + "ports"]) == {"7": {"state": "down", "physical_state": "Polling"}}
    # One type per key: an int mixed with a float becomes a float, a number mixed with text becomes JSON.
    assert leaf[ATTRS_PREFIX + "weight"] == 1.0 and nic[ATTRS_PREFIX + "weight"] == 2.5
    assert json.loads(leaf[ATTRS_PREFIX + "lid"]) == 2 and json.loads(nic[ATTRS_PREFIX + "lid"]) == "unknown"
    assert "tier" not in nic and "radix" not in nic  # no null in GraphML: unset fields are absent
    ((_, _, data),) = graph.edges(data=True)
    assert data[ATTRS_PREFIX + "width"] == "1x" and data["state"] == "degraded"
    assert json.loads(data[ATTRS_PREFIX + "errors"]) == {"symbol_errors": 12}
    assert json.loads(data[ATTRS_PREFIX + "lanes"]) == [1, 2]


def test_empty_fabric_exports():
    graph = read_back(FabricSpec("empty", (), ()))
    assert graph.number_of_nodes() == 0 and graph.graph["name"] == "empty"
