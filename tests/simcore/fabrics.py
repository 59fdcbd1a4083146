"""Fabrics and a brute-force hop oracle shared by the hop, compile and failure tests."""

import dataclasses

import networkx as nx
import numpy as np

from twin.simcore.generate import supernode
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec
from twin.simcore.transport import HOPPER_NVLINK_EFFICIENCY


def brute_force_hops(fabric: FabricSpec) -> tuple[list[str], np.ndarray]:
    """The hop definition spelled out on networkx, one Dijkstra per card.

    Entering a switch costs 1, entering anything else 0; down links do not
    exist; only the source card may have outgoing edges among the cards.
    """
    kinds = {node.id: node.kind for node in fabric.nodes}
    card_ids = [node.id for node in fabric.cards()]
    column = {card_id: position for position, card_id in enumerate(card_ids)}
    matrix = np.full((len(card_ids), len(card_ids)), -1, dtype=np.int16)
    for source in card_ids:
        graph = nx.DiGraph()
        graph.add_nodes_from(kinds)
        for link in fabric.links:
            if link.state == "down":
                continue
            for tail, head in ((link.a, link.b), (link.b, link.a)):
                if kinds[tail] != "card" or tail == source:
                    graph.add_edge(tail, head, weight=int(kinds[head] == "switch"))
        lengths = nx.single_source_dijkstra_path_length(graph, source)
        for target, hops in lengths.items():
            if target in column:
                matrix[column[source], column[target]] = hops
    return card_ids, matrix


def with_link_state(fabric: FabricSpec, position: int, state: str) -> FabricSpec:
    links = list(fabric.links)
    links[position] = dataclasses.replace(links[position], state=state)
    return dataclasses.replace(fabric, links=tuple(links))


def irregular_fabric() -> FabricSpec:
    """A small leaf-spine with every special case of the hop definition bolted on."""
    base = supernode(cards=16, cards_per_host=4, switch_radix=8)  # 4 leaves, 2 spines

    def card(node_id: str) -> NodeSpec:
        return NodeSpec(node_id, "card", node_id)

    def link(a: str, a_port: str, b: str, b_port: str) -> LinkSpec:
        return LinkSpec(a, a_port, b, b_port, 400, 10)

    nodes = base.nodes + (
        NodeSpec("core-1", "switch", "core-1", tier="core"),
        NodeSpec("agg-1", "aggregation", "agg-1"),
        card("far"),  # only under the core switch
        card("dual"),  # one port on leaf-01, one on leaf-04
        card("via-nic"),
        NodeSpec("nic-1", "nic", "nic-1"),
        card("pcie-a"),  # on leaf-03, and through a host to pcie-b
        card("pcie-b"),
        NodeSpec("host-x", "host", "host-x"),
        card("isolated"),
    )
    links = base.links + (
        link("spine-01", "9", "core-1", "1"),
        link("spine-02", "9", "agg-1", "1"),  # spine-02 reaches core-1 through agg-1
        link("agg-1", "2", "core-1", "2"),
        link("far", "1", "core-1", "3"),
        link("dual", "1", "leaf-01", "9"),
        link("dual", "2", "leaf-04", "9"),
        link("via-nic", "1", "nic-1", "1"),
        link("nic-1", "2", "leaf-02", "9"),
        link("pcie-a", "1", "leaf-03", "9"),
        link("pcie-a", "2", "host-x", "1"),
        link("pcie-b", "1", "host-x", "2"),
        link("card-0001", "2", "card-0005", "2"),  # a direct card-to-card cable
    )
    fabric = FabricSpec("irregular", nodes, links)
    fabric = with_link_state(fabric, 15, "down")  # card-0016's only link
    fabric = with_link_state(fabric, 16, "degraded")  # degraded links still carry traffic
    return with_link_state(fabric, len(base.links), "down")  # spine-01 -> core-1


def eight_h100(nccl_version: str | None = None) -> FabricSpec:
    """One node of 8 H100 joined by NVSwitch (450 GB/s = 3,600 Gb/s per GPU, the line rate, of
    which NCCL counts 370.8 as data: ``HOPPER_NVLINK_EFFICIENCY``), NVLS capable; run with
    ``nccl_version`` when given (the transport's default otherwise)."""
    gpus = [NodeSpec(f"gpu{index}", "card", f"gpu{index}", host="node") for index in range(8)]
    nvswitch = NodeSpec("nvswitch", "switch", "nvswitch", tier="leaf", attrs={"in_switch_reduction": True})
    links = [LinkSpec(gpu.id, "1", "nvswitch", str(index + 1), 3600, 10) for index, gpu in enumerate(gpus)]
    transport = {"scale_up": {"efficiency": HOPPER_NVLINK_EFFICIENCY}}
    if nccl_version is not None:
        transport["nccl_version"] = nccl_version
    return FabricSpec("8x-h100", (*gpus, nvswitch), tuple(links), attrs={"transport": transport})
