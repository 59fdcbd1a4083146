"""Design rules: read from a generator's attrs, inferred from the graph, overridden, validated."""

import json

import pytest

from twin.simcore.generate import fat_tree, rail_optimised, supernode, supernode_cluster
from twin.simcore.model import FabricSpec, NodeSpec
from twin.whatif.errors import WhatIfError
from twin.whatif.rules import DesignRules, design_rules, tiers_needed


def without_attrs(fabric: FabricSpec) -> FabricSpec:
    return FabricSpec(name=fabric.name, nodes=fabric.nodes, links=fabric.links)


def test_demo_supernode_rules_come_from_its_attrs():
    rules = design_rules(supernode())
    assert (rules.design, rules.cards, rules.switch_radix, rules.tiers) == ("fat-tree", 1024, 64, 2)
    assert (rules.oversubscription, rules.leaf_ports_down, rules.leaf_ports_up) == (1.0, 32, 32)
    assert rules.inferred["switch_radix"] == 'fabric attrs["switch_radix"]'
    assert rules.inferred["tiers"].startswith("graph:")


@pytest.mark.parametrize(
    "fabric",
    [fat_tree(endpoints=96, radix=16, oversubscription=3), fat_tree(endpoints=128, radix=8, cards_per_host=4)],
    ids=["2-tier 3:1", "3-tier"],
)
def test_graph_inference_matches_the_generator_attrs(fabric):
    stored, inferred = design_rules(fabric), design_rules(without_attrs(fabric))
    for name in ("cards", "cards_per_host", "switch_radix", "tiers", "oversubscription", "link_gbps", "cable_latency_ns", "switch_latency_ns"):
        assert getattr(inferred, name) == getattr(stored, name), name
    assert all(source.startswith(("graph:", "default")) for source in inferred.inferred.values())


def test_designs_are_recognised():
    assert design_rules(rail_optimised(servers=8, servers_per_unit=4, radix=16)).design == "rail"
    cluster = supernode_cluster(supernodes=2, cards_per_supernode=32, radix=16, scale_out_gbps=100, scale_out_radix=16)
    rules = design_rules(without_attrs(cluster))
    assert (rules.design, rules.supernodes, rules.scale_out_gbps, rules.scale_out_radix) == ("supernodes", 2, 100.0, 16)
    assert rules.link_gbps == 400.0  # the ICN's card links, not the scale-out ones


def test_overrides_are_applied_and_marked():
    rules = design_rules(fat_tree(endpoints=64, radix=16)).with_overrides(oversubscription=3, switch_radix="32")
    assert (rules.switch_radix, rules.leaf_ports_down, rules.inferred["oversubscription"]) == (32, 24, "override")


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"switch_radix": 3}, "switch_radix = 3: too small or odd for even one tier"),
        ({"switch_radix": 0}, "switch_radix = 0"),
        ({"oversubscription": 0.5}, "oversubscription = 0.5: expected a ratio of at least 1"),
        ({"oversubscription": 63, "switch_radix": 8}, "leaves no uplink on a radix-8 leaf"),
        ({"link_gbps": -1}, "link_gbps = -1.0: expected a positive number of Gb/s"),
        ({"max_tiers": 4}, "max_tiers = 4: expected 2 or 3"),
        ({"tiers": 3, "max_tiers": 2}, "tiers = 3 but max_tiers = 2"),
        ({"radix": 64}, "unknown design rules radix"),
        ({"switch_radix": 64.5}, "switch_radix = 64.5: expected a whole number"),
        ({"cards_per_host": True}, "cards_per_host = True: expected a whole number"),
    ],
)
def test_impossible_overrides_are_refused_with_a_clear_message(overrides, expected):
    rules = design_rules(fat_tree(endpoints=64, radix=16))
    with pytest.raises(WhatIfError) as raised:
        rules.with_overrides(**overrides)
    assert expected in str(raised.value)


def test_a_fabric_without_cards_is_refused():
    switch_only = FabricSpec(name="lonely", nodes=(NodeSpec(id="s", kind="switch", name="s", tier="leaf"),), links=())
    with pytest.raises(WhatIfError, match="fabric 'lonely' has no cards"):
        design_rules(switch_only)


def test_rules_round_trip_through_json():
    rules = design_rules(rail_optimised(servers=8, servers_per_unit=4, radix=16)).with_overrides(max_tiers=2)
    again = DesignRules.from_dict(json.loads(json.dumps(rules.to_dict())))
    assert again == rules and again.inferred == rules.inferred
    with pytest.raises(WhatIfError, match="missing cards"):
        DesignRules.from_dict({key: value for key, value in rules.to_dict().items() if key != "cards"})


def test_tiers_needed_follows_the_fat_tree_capacity():
    # k = 64 non-blocking: 2,048 cards on 2 tiers, 65,536 on 3 (MODELLING.md section 7).
    assert [tiers_needed(cards, 64, 32) for cards in (2048, 2049, 65536, 65537)] == [2, 3, 3, 4]
    # 3:1 at radix 64: 48 down, 3,072 cards on 2 tiers.
    assert [tiers_needed(cards, 64, 48) for cards in (3072, 3073)] == [2, 3]


def test_a_fabric_without_a_switch_network_says_which_rules_it_cannot_give():
    """One host's NCCL XML (its GPUs, NICs and NVSwitch): no fabric to grow, said plainly."""
    from twin.ingest import parse_fabric
    from twin.ingest.writers.superpod import superpod_host_xml

    host = parse_fabric(superpod_host_xml(1), source_name="dgx001.xml", format="nccl-topo-xml")
    with pytest.raises(WhatIfError) as refused:
        design_rules(host)
    assert any(problem.startswith("switch_radix = None (the snapshot has no switch network") for problem in refused.value.problems)
