"""The leaf-spine generator follows the design rules of MODELLING.md section 7."""

from collections import Counter, defaultdict

import pytest

from twin.simcore.errors import FabricError
from twin.simcore.generate import supernode
from twin.simcore.model import FabricSpec


def ports_by_node(fabric: FabricSpec) -> dict[str, list[str]]:
    ports = defaultdict(list)
    for link in fabric.links:
        for node_id, port in link.ends():
            ports[node_id].append(port)
    return ports


def test_demo_supernode_has_the_documented_counts():
    fabric = supernode()
    fabric.validate()
    leaves = [node for node in fabric.switches() if node.tier == "leaf"]
    spines = [node for node in fabric.switches() if node.tier == "spine"]
    assert (len(fabric.cards()), len(leaves), len(spines)) == (1024, 32, 16)
    assert fabric.kind_counts() == {
        "card": 1024,
        "nic": 0,
        "switch": 48,
        "host": 0,
        "aggregation": 0,
    }
    assert len(fabric.links) == 2048
    kinds = {node.id: node.kind for node in fabric.nodes}
    link_kinds = Counter(tuple(sorted((kinds[link.a], kinds[link.b]))) for link in fabric.links)
    assert link_kinds == {("card", "switch"): 1024, ("switch", "switch"): 1024}
    assert {link.domain for link in fabric.links} == {"scale-up"}
    assert {(link.bandwidth_gbps, link.latency_ns) for link in fabric.links} == {(400.0, 10.0)}


def test_every_switch_port_is_used_exactly_once():
    fabric = supernode()
    ports = ports_by_node(fabric)
    all_ports = sorted(str(port) for port in range(1, 65))
    for switch in fabric.switches():
        assert sorted(ports[switch.id]) == all_ports, switch.id
        assert switch.radix == 64
    for card in fabric.cards():
        assert ports[card.id] == ["1"], card.id


def test_uplinks_are_spread_evenly_over_the_spines():
    fabric = supernode()
    pairs = Counter((link.a, link.b) for link in fabric.links if link.a.startswith("leaf"))
    assert len(pairs) == 32 * 16
    assert set(pairs.values()) == {2}  # 32 uplinks over 16 spines


def test_cards_are_grouped_into_hosts_and_leaves_in_order():
    fabric = supernode()
    cards = fabric.cards()
    assert [card.id for card in cards[:2]] == ["card-0001", "card-0002"]
    assert cards[-1].id == "card-1024"
    hosts = Counter(card.host for card in cards)
    assert len(hosts) == 128 and set(hosts.values()) == {8}
    assert (cards[8].host, cards[8].attrs["index_on_host"]) == ("host-002", 0)
    assert [card.attrs["index_on_host"] for card in cards[:8]] == list(range(8))
    leaf_of = {link.a: link.b for link in fabric.links if link.a.startswith("card")}
    assert (leaf_of["card-0032"], leaf_of["card-0033"]) == ("leaf-01", "leaf-02")
    assert [node.id for node in fabric.switches()][-1] == "spine-16"


def test_switches_and_fabric_record_the_design():
    fabric = supernode(switch_latency_ns=120.0)
    assert {switch.attrs["forwarding_latency_ns"] for switch in fabric.switches()} == {120.0}
    assert fabric.attrs["switch_radix"] == 64
    assert (fabric.attrs["leaf_ports_down"], fabric.attrs["leaf_ports_up"]) == (32, 32)
    assert fabric.attrs["cards_per_host"] == 8
    assert fabric.name == "demo-supernode"


def test_partial_last_leaf_and_uneven_spines_stay_within_radix():
    fabric = supernode(cards=36, cards_per_host=4, switch_radix=16)
    fabric.validate()
    leaves = [node.id for node in fabric.switches() if node.tier == "leaf"]
    spines = [node.id for node in fabric.switches() if node.tier == "spine"]
    assert (len(leaves), len(spines)) == (5, 3)  # ceil(36 / 8), ceil(5 * 8 / 16)
    ports = ports_by_node(fabric)
    assert len(ports[leaves[-1]]) == 4 + 8  # 4 cards, all 8 uplinks
    assert all(len(ports[spine]) <= 16 for spine in spines)
    reached = {(link.a, link.b) for link in fabric.links if link.a in leaves}
    assert reached == {(leaf, spine) for leaf in leaves for spine in spines}


def test_ids_widen_for_large_counts():
    fabric = supernode(cards=16384, cards_per_host=8, switch_radix=256)
    assert fabric.cards()[-1].id == "card-16384"
    assert fabric.cards()[-1].host == "host-2048"
    assert fabric.switches()[-1].id == "spine-64"
    assert len(fabric.links) == 2 * 16384


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"cards": 1001}, "1001 cards do not fill hosts of 8 cards"),
        ({"cards": 0}, "at least one card"),
        ({"switch_radix": 63}, "even radix"),
        ({"cards": 4096}, "at most 64 leaves (2048 cards); use radix >= 92"),
    ],
)
def test_impossible_designs_raise_a_clear_fabric_error(parameters, message):
    with pytest.raises(FabricError) as raised:
        supernode(**parameters)
    assert message in str(raised.value)
