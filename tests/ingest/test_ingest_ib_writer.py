"""export_ibnetdiscover: what it writes reads back into the same topology."""

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from twin.ingest import parse_fabric
from twin.ingest.writers import export_ibnetdiscover
from twin.simcore.generate import fat_tree, supernode
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

SAMPLE = (Path(__file__).resolve().parents[1] / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt").read_text()


def read_back(fabric: FabricSpec) -> FabricSpec:
    return parse_fabric(export_ibnetdiscover(fabric), source_name="export.topo")


def expected_name(node: NodeSpec) -> str:
    """The name a generated node has after the trip: cards become "<host>/mlx5_<index>" HCAs."""
    return node.name if node.kind == "switch" else f"{node.host}/mlx5_{node.attrs['index_on_host']}"


def topology(fabric: FabricSpec, name_of) -> Counter:
    """Links as unordered pairs of (node name, port), with bandwidth and state."""
    by_id = {node.id: node for node in fabric.nodes}
    return Counter(
        (frozenset({(name_of(by_id[link.a]), link.a_port), (name_of(by_id[link.b]), link.b_port)}), link.bandwidth_gbps, link.state)
        for link in fabric.links
    )


def test_parsed_dump_round_trips_exactly():
    fabric = parse_fabric(SAMPLE, source_name="export.topo")
    assert read_back(fabric) == fabric


def test_router_round_trips_as_a_router():
    router = "0002c90000000abc"
    text = SAMPLE.replace(
        '[65]\t"H-b8599f0300fc6d50"', f'[40]\t"R-{router}"[1] ({router.lstrip("0")}) \t\t# "gw01" lid 30 4xNDR\n[65]\t"H-b8599f0300fc6d50"'
    ) + f'\nvendid=0x2c9\ndevid=0x1\nsysimgguid=0x{router.lstrip("0")}\nrtguid=0x{router.lstrip("0")}\nRt\t1 "R-{router}"\t\t# "gw01"\n' + (
        f'[1]({router.lstrip("0")}) \t"S-b8599f0300fc6d40"[40]\t\t# lid 30 lmc 0 "MF0;spine01:MQM9700/U1" lid 1 4xNDR\n'
    )
    fabric = parse_fabric(text, source_name="export.topo")
    assert next(node for node in fabric.nodes if node.name == "gw01").attrs["node_type"] == "router"
    assert read_back(fabric) == fabric


@pytest.mark.parametrize(
    "fabric",
    [supernode(cards=64, switch_radix=16), fat_tree(endpoints=128, radix=8), fat_tree(endpoints=96, radix=8, oversubscription=3)],
    ids=["supernode-2-tier", "fat-tree-3-tier", "fat-tree-oversubscribed"],
)
def test_generated_fabric_reads_back_as_the_same_topology(fabric):
    back = read_back(fabric)
    assert back.kind_counts()["nic"] == fabric.kind_counts()["card"]
    assert back.kind_counts()["switch"] == fabric.kind_counts()["switch"]
    assert topology(back, lambda node: node.name) == topology(fabric, expected_name)
    assert {node.name: node.tier for node in back.switches()} == {node.name: node.tier for node in fabric.switches()}
    hosts = {expected_name(node): node.host for node in fabric.cards()}
    assert {node.name: node.host for node in back.nodes if node.kind == "nic"} == hosts
    assert {link.latency_ns for link in back.links} == {10.0}
    assert {link.domain for link in back.links} == {"scale-out"}


def test_degraded_link_is_written_narrow_and_reads_back_degraded():
    fabric = supernode(cards=16, switch_radix=8)
    links = list(fabric.links)
    links[0] = replace(links[0], bandwidth_gbps=100.0, state="degraded")
    back = read_back(replace(fabric, links=tuple(links)))
    assert Counter(link.state for link in back.links) == {"up": len(links) - 1, "degraded": 1}
    degraded = next(link for link in back.links if link.state == "degraded")
    assert (degraded.attrs["width"], degraded.attrs["speed"]) == ("1x", "NDR")


def test_down_links_and_host_nodes_are_left_out():
    fabric = supernode(cards=16, switch_radix=8)
    down = replace(fabric.links[0], state="down")
    host = NodeSpec("host:h1", "host", "h1")
    edited = replace(fabric, nodes=(*fabric.nodes, host), links=(down, *fabric.links[1:], LinkSpec("host:h1", "p", "leaf-01", "99", 400, 10)))
    back = read_back(edited)
    assert len(back.links) == len(fabric.links) - 1
    assert back.kind_counts()["host"] == 0


def test_export_is_deterministic_and_guids_come_from_ids():
    fabric = supernode(cards=16, switch_radix=8)
    assert export_ibnetdiscover(fabric) == export_ibnetdiscover(fabric)
    renamed = replace(fabric, nodes=tuple(replace(node, name=f"x{node.name}") for node in fabric.nodes))
    guids = {node.attrs["guid"] for node in read_back(fabric).nodes}
    assert {node.attrs["guid"] for node in read_back(renamed).nodes} == guids


def test_bandwidth_is_written_as_width_and_speed():
    fabric = supernode(cards=16, switch_radix=8, link_gbps=200.0)
    text = export_ibnetdiscover(fabric)
    assert "4xHDR" in text and "NDR" not in text


def test_what_ibnetdiscover_cannot_print_is_refused():
    fabric = supernode(cards=16, switch_radix=8)
    odd_bandwidth = replace(fabric, links=(replace(fabric.links[0], bandwidth_gbps=123.0), *fabric.links[1:]))
    with pytest.raises(ValueError, match="123 Gb/s"):
        export_ibnetdiscover(odd_bandwidth)
    named_port = replace(fabric, links=(replace(fabric.links[0], a_port="eth0"), *fabric.links[1:]))
    with pytest.raises(ValueError, match="'eth0'"):
        export_ibnetdiscover(named_port)


def test_links_of_another_medium_and_the_cards_behind_them_are_left_out():
    """A discovery completed with a card behind each HCA (a PCIe link) writes as the dump it was."""
    fabric = parse_fabric(SAMPLE, source_name="export.topo")
    hcas = [node for node in fabric.nodes if node.kind == "nic"]
    cards = tuple(NodeSpec(f"card:{hca.id}", "card", f"gpu@{hca.id}", attrs={"inferred": "card"}) for hca in hcas)
    pcie = tuple(LinkSpec(card.id, "pcie", hca.id, "pcie", 504.1, 5.0, attrs={"medium": "pcie"}) for card, hca in zip(cards, hcas))
    completed = replace(fabric, nodes=(*fabric.nodes, *cards), links=(*fabric.links, *pcie))
    assert export_ibnetdiscover(completed) == export_ibnetdiscover(fabric)
