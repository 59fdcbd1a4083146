"""Structure: hops, bisection (closed form and max-flow agree), oversubscription, fault domain."""

import networkx as nx
import pytest

from twin.simcore.generate import fat_tree, rail_optimised, supernode_cluster
from twin.simcore.model import MAX_LINK_GBPS, FabricSpec
from twin.whatif.structure import bisection_gbps, structure


def networkx_bisection_gbps(fabric: FabricSpec) -> float:
    """Reference: networkx max-flow from the first half of the cards to the second half."""
    graph = nx.DiGraph()
    for link in fabric.links:
        if link.state == "down":
            continue
        for a, b in ((link.a, link.b), (link.b, link.a)):
            previous = graph.get_edge_data(a, b, {"capacity": 0.0})["capacity"]
            graph.add_edge(a, b, capacity=previous + link.bandwidth_gbps)
    cards = [card.id for card in fabric.cards()]
    half = len(cards) // 2
    for card in cards[:half]:
        graph.add_edge("source", card, capacity=sum(data["capacity"] for *_, data in graph.out_edges(card, data=True)))
    for card in cards[half:]:
        graph.add_edge(card, "sink", capacity=sum(data["capacity"] for *_, data in graph.in_edges(card, data=True)))
    return nx.maximum_flow_value(graph, "source", "sink")


@pytest.mark.parametrize(
    ("fabric", "closed_form_gbps"),
    [
        # N/2 cards x B / r: non-blocking 2 tiers, 3:1, 3 tiers (k = 4 Al-Fares), oversubscribed 3 tiers.
        (fat_tree(endpoints=64, radix=16), 32 * 400),
        (fat_tree(endpoints=96, radix=16, oversubscription=3), 48 * 400 / 3),
        (fat_tree(endpoints=16, radix=4, cards_per_host=4), 8 * 400),
        (fat_tree(endpoints=192, radix=8, oversubscription=3), 96 * 400 / 3),
        # K super-nodes: the halves are the super-nodes, joined by the scale-out network only.
        (supernode_cluster(supernodes=2, cards_per_supernode=32, radix=16, scale_out_gbps=100, scale_out_radix=16), 32 * 100),
    ],
    ids=["2-tier", "2-tier 3:1", "3-tier k=4", "3-tier 3:1", "2 super-nodes"],
)
def test_bisection_matches_the_closed_form_and_networkx(fabric, closed_form_gbps):
    assert bisection_gbps(fabric) == pytest.approx(closed_form_gbps)
    assert networkx_bisection_gbps(fabric) == pytest.approx(closed_form_gbps)


def test_structure_of_a_two_tier_fat_tree():
    result = structure(fat_tree(endpoints=64, radix=16))
    assert (result["tiers"], result["diameter_hops"], result["hop_histogram"]) == (2, 3, {"1": 224, "3": 1792})
    assert result["bisection_GBps"] == 32 * 50 and result["bisection_per_card_GBps"] == 50
    assert result["oversubscription"] == {"leaf": 1.0}


def test_losing_a_leaf_cuts_off_exactly_its_cards():
    fabric = fat_tree(endpoints=96, radix=16, oversubscription=3)
    faults = structure(fabric)["fault_domain"]
    leaf = faults["leaf"]["switch"]
    under_leaf = {link.a for link in fabric.links if link.b == leaf} & {card.id for card in fabric.cards()}
    assert faults["leaf"]["cut_off_cards"] == len(under_leaf) == 12
    assert faults["leaf"]["degraded_cards"] == 0
    # A spine: every leaf loses 2 of its 4 uplinks, nobody is cut off.
    assert faults["spine"] == {"switch": "spine-1", "cut_off_cards": 0, "degraded_cards": 96, "worst_capacity_loss": 0.5}


def test_fault_domain_grows_with_the_tiers():
    faults = structure(fat_tree(endpoints=128, radix=8, cards_per_host=4))["fault_domain"]
    # k = 8: pods of 4 leaves x 4 cards; a spine serves its pod, a core every pod.
    assert (faults["leaf"]["cut_off_cards"], faults["spine"]["degraded_cards"], faults["core"]["degraded_cards"]) == (4, 16, 128)


def test_in_server_and_scale_out_losses_degrade_rather_than_cut_off():
    rail = structure(rail_optimised(servers=8, servers_per_unit=4, radix=16, cards_per_server=4))
    # Losing a server's NVSwitch leaves its cards on their rails; losing a rail leaf cuts its cards off.
    assert rail["fault_domain"]["nvswitch"]["cut_off_cards"] == 0
    assert rail["fault_domain"]["nvswitch"]["degraded_cards"] == 4
    assert rail["fault_domain"]["scale-out leaf"]["cut_off_cards"] == 4
    cluster = structure(supernode_cluster(supernodes=2, cards_per_supernode=32, radix=16, scale_out_radix=16))
    # An ICN leaf's cards fall back to the scale-out network: degraded, not cut off.
    assert cluster["fault_domain"]["leaf"]["cut_off_cards"] == 0
    assert cluster["fault_domain"]["leaf"]["degraded_cards"] == 8
    assert cluster["tiers_by_domain"] == {"scale-out": 2, "scale-up": 2}


def test_bisection_of_a_fabric_whose_links_add_up_past_int32():
    # 4,096 arcs of 100 Tb/s add up to 4.1e8 Gb/s, past what int32 holds in 0.1 Gb/s units; the
    # flow itself (512 cards' links) fits, and is 25,600 times that of the same tree at 400 Gb/s.
    fast, slow = fat_tree(endpoints=1024, link_gbps=MAX_LINK_GBPS), fat_tree(endpoints=1024, link_gbps=400.0)
    assert bisection_gbps(fast) == pytest.approx(bisection_gbps(slow) * MAX_LINK_GBPS / 400.0)
