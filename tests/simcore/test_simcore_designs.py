"""Fat-tree, rail-optimised and multi-super-node generators follow MODELLING.md section 7."""

from collections import Counter

import pytest

from twin.simcore.errors import FabricError
from twin.simcore.generate import fat_tree, rail_optimised, supernode_cluster
from twin.simcore.hops import hop_statistics
from twin.simcore.model import FabricSpec


def tier_counts(fabric: FabricSpec) -> dict[str, int]:
    return dict(Counter(switch.tier for switch in fabric.switches()))


def ports_per_node(fabric: FabricSpec) -> Counter:
    used = Counter()
    for link in fabric.links:
        used[link.a] += 1
        used[link.b] += 1
    return used


@pytest.mark.parametrize(
    ("endpoints", "tiers", "expected"),
    [
        # NVIDIA DGX SuperPOD sizes (MODELLING.md section 7).
        (1024, 2, {"leaf": 32, "spine": 16}),
        (2048, 2, {"leaf": 64, "spine": 32}),
        (4096, 3, {"leaf": 128, "spine": 128, "core": 64}),
        (8192, 3, {"leaf": 256, "spine": 256, "core": 128}),
    ],
)
def test_superpod_sizes_and_fewest_tiers(endpoints, tiers, expected):
    fabric = fat_tree(endpoints=endpoints)
    assert (fabric.attrs["tiers"], tier_counts(fabric)) == (tiers, expected)
    assert len(fabric.links) == tiers * endpoints  # one cable per endpoint per tier


def test_sixteen_thousand_endpoints_in_partial_pods():
    fabric = fat_tree(endpoints=16384)
    fabric.validate()
    assert tier_counts(fabric) == {"leaf": 512, "spine": 512, "core": 256}
    assert len(fabric.links) == 49152
    assert (fabric.attrs["pods"], fabric.attrs["leaves_per_pod"]) == (16, 32)
    ids = [node.id for node in fabric.nodes]
    assert {"card-00001", "card-16384", "leaf-001", "spine-512", "core-001", "core-256"} <= set(ids)
    used = ports_per_node(fabric)
    assert all(used[switch.id] == 64 for switch in fabric.switches())
    assert fabric.cards()[-1].host == "host-2048"


def test_full_k4_fat_tree_is_al_fares():
    fabric = fat_tree(endpoints=16, radix=4, cards_per_host=4)
    assert (fabric.attrs["tiers"], tier_counts(fabric)) == (3, {"leaf": 8, "spine": 8, "core": 4})
    stats = hop_statistics(fabric)
    # 2 cards per leaf, 2 leaves per pod: same leaf 1 hop, same pod 3, across pods 5.
    assert stats["histogram"] == {"1": 8, "3": 16, "5": 96}
    # Every core reaches every pod exactly once.
    pods = {switch.id: switch.attrs.get("pod") for switch in fabric.switches()}
    for core in (s.id for s in fabric.switches() if s.tier == "core"):
        reached = sorted(pods[link.a] for link in fabric.links if link.b == core)
        assert reached == [1, 2, 3, 4]


def test_oversubscription_sets_ports_down_and_up():
    fabric = fat_tree(endpoints=3072, oversubscription=3)
    assert (fabric.attrs["leaf_ports_down"], fabric.attrs["leaf_ports_up"]) == (48, 16)
    assert tier_counts(fabric) == {"leaf": 64, "spine": 16}
    assert fabric.attrs["oversubscription"] == 3.0


def test_partial_last_pod_stays_within_radix():
    fabric = fat_tree(endpoints=40, radix=8, cards_per_host=4, tiers=3)
    fabric.validate()
    used = ports_per_node(fabric)
    assert all(used[switch.id] <= 8 for switch in fabric.switches())
    assert hop_statistics(fabric)["unreachable_pairs"] == 0


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"endpoints": 4096, "tiers": 2}, "use tiers=3 or None"),
        ({"endpoints": 70000}, "use a larger radix or more oversubscription"),
        ({"endpoints": 64, "oversubscription": 0.5}, "oversubscription 0.5:1"),
        ({"endpoints": 64, "tiers": 4}, "expected 2, 3 or None"),
        ({"endpoints": 63}, "do not fill hosts of 8 cards"),
        ({"endpoints": 64, "radix": 7}, "even radix"),
    ],
)
def test_impossible_fat_trees_raise_a_clear_error(parameters, message):
    with pytest.raises(FabricError, match=message.replace("(", r"\(")):
        fat_tree(**parameters)


def test_rail_optimised_puts_same_index_cards_on_one_leaf():
    fabric = rail_optimised(servers=64, servers_per_unit=32)
    fabric.validate()
    rail_leaf = {
        link.a: link.b for link in fabric.links if link.domain == "scale-out" and link.a.startswith("card")
    }
    cards = fabric.cards()
    # Card 0 of server 1 and card 0 of server 32 share a rail leaf; card 1 does not.
    assert rail_leaf[cards[0].id] == rail_leaf[cards[31 * 8].id] != rail_leaf[cards[1].id]
    assert rail_leaf[cards[0].id] != rail_leaf[cards[32 * 8].id]  # next unit
    assert tier_counts(fabric) == {"leaf": 16 + 64, "spine": 8}
    nvlinks = [link for link in fabric.links if link.domain == "scale-up"]
    assert len(nvlinks) == 512 and {link.attrs["medium"] for link in nvlinks} == {"nvlink"}


def test_rail_optimised_without_nvlink_and_unit_too_large():
    assert {link.domain for link in rail_optimised(servers=8, nvlink_gbps=None).links} == {"scale-out"}
    with pytest.raises(FabricError, match="40 servers per unit"):
        rail_optimised(servers=80, servers_per_unit=40)


def test_supernode_cluster_joins_scale_up_domains_by_scale_out():
    fabric = supernode_cluster(
        supernodes=2, cards_per_supernode=256, scale_out_gbps=200, scale_out_oversubscription=3
    )
    fabric.validate()
    cards = fabric.cards()
    assert (cards[0].attrs["supernode"], cards[-1].attrs["supernode"]) == (1, 2)
    domains = Counter(link.domain for link in fabric.links)
    assert domains == {"scale-up": 2 * 512, "scale-out": 512 + 11 * 16}
    scale_out = {link.bandwidth_gbps for link in fabric.links if link.domain == "scale-out"}
    assert scale_out == {200.0}
    assert fabric.attrs["scale_out_oversubscription"] == 3.0
    # No scale-up link crosses super-nodes.
    supernode_of = {card.id: card.attrs["supernode"] for card in cards}
    for link in fabric.links:
        if link.domain == "scale-up" and link.a in supernode_of:
            assert link.b.startswith(f"sn{supernode_of[link.a]}-")
