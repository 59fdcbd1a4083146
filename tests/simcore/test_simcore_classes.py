"""All-pairs patterns as flow classes (``route_all_pairs``) against the per-flow solution on
small fabrics, regular and not: the same bytes on every link, the same slowest rate, the same
collective times; hashing at its expectation within its measured collision gap; the walk's size
bounded and refused before anything is allocated."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from twin.ingest import parse_fabric
from twin.ingest.completion import complete_fabric
from twin.simcore.compile import all_pairs_entries, all_pairs_walk_size, compile_fabric, route, route_all_pairs
from twin.simcore.congestion import max_min_rates
from twin.simcore.generate import fat_tree, rail_optimised, supernode
from twin.simcore import simulate as simulate_module
from twin.simcore.errors import TwinCoreError
from twin.simcore.model import LinkSpec, NodeSpec
from twin.simcore.simulate import MAX_CLASS_ENTRIES, Simulator


def with_some_links_down(fabric, every: int):
    """An irregular fabric: every ``every``-th switch-to-switch link down (no card cut off)."""
    kinds = {node.id: node.kind for node in fabric.nodes}
    inner = [position for position, link in enumerate(fabric.links) if kinds[link.a] == kinds[link.b] == "switch"]
    return fabric.with_links_down(inner[::every])


def with_private_nics(fabric, *, pcie_gbps=504.0, every=1):
    """Every ``every``-th card behind a NIC of its own (card - PCIe - NIC - the card's network
    link: its scale-out one where it has NVLink too), as an ibnetdiscover upload or a SuperPOD
    has its HCAs; the PCIe hop scale-out, as ingest makes it."""
    kinds = {node.id: node.kind for node in fabric.nodes}
    to_cards = [link for link in fabric.links if (kinds[link.a] == "card") != (kinds[link.b] == "card")]
    domain = "scale-out" if any(link.domain == "scale-out" for link in to_cards) else "scale-up"
    nics, links, behind = [], [], 0
    for link in fabric.links:
        if link not in to_cards or link.domain != domain or behind % every:
            behind += link in to_cards and link.domain == domain
            links.append(link)
            continue
        behind += 1
        card_end = "a" if kinds[link.a] == "card" else "b"
        card = getattr(link, card_end)
        nic = f"nic:{card}"
        nics.append(NodeSpec(nic, "nic", nic))
        links.append(LinkSpec(card, "pcie", nic, "pcie", pcie_gbps, 5.0, domain="scale-out"))
        links.append(dataclasses.replace(link, **{card_end: nic, f"{card_end}_port": "1"}))
    return dataclasses.replace(fabric, nodes=(*fabric.nodes, *nics), links=tuple(links))


FABRICS = {
    "2-tier fat-tree": fat_tree(endpoints=64, radix=16),
    "3-tier fat-tree": fat_tree(endpoints=512, radix=16),
    "3:1 oversubscribed": fat_tree(endpoints=128, radix=16, oversubscription=3.0),
    "rail-optimised with NVLink": rail_optimised(servers=8, servers_per_unit=4, radix=16),
    "leaf-spine, a link in 5 down": with_some_links_down(fat_tree(endpoints=128, radix=16), 5),
    "3-tier, a link in 3 down": with_some_links_down(fat_tree(endpoints=256, radix=16), 3),
    "supernode, uneven leaves": supernode(cards=40, cards_per_host=4, switch_radix=16),
    "private NICs, 3-tier, a link in 3 down": with_private_nics(with_some_links_down(fat_tree(endpoints=256, radix=16), 3)),
    "a card in 3 behind a private NIC with a slow PCIe hop": with_private_nics(
        fat_tree(endpoints=128, radix=16, oversubscription=3.0), every=3, pcie_gbps=200.0
    ),
    "private NICs, rail-optimised with NVLink": with_private_nics(rail_optimised(servers=8, servers_per_unit=4, radix=16)),
}


def per_flow(fabric, ranks, mode):
    compiled = compile_fabric(fabric)
    sources = np.repeat(ranks, len(ranks))
    targets = np.tile(ranks, len(ranks))
    keep = sources != targets
    routes = route(compiled, sources[keep], targets[keep], mode=mode)
    return compiled, routes, max_min_rates(routes.incidence, compiled.arc_capacity)


@pytest.mark.parametrize("mode", ["pinned", "spray"])
@pytest.mark.parametrize("name", FABRICS)
def test_classes_carry_the_per_flow_loads_and_slowest_rate(name, mode):
    fabric = FABRICS[name]
    compiled, flows, rates = per_flow(fabric, np.arange(len(fabric.cards())), mode)
    classes = route_all_pairs(compiled, np.arange(len(compiled.card_ids)), mode=mode, max_entries=10**7)
    # The same flows on every arc (the classes' incidence sums their members'), in all.
    np.testing.assert_allclose(classes.incidence.sum(axis=0), flows.incidence.sum(axis=0), rtol=1e-9, atol=1e-9)
    assert classes.members.sum() == flows.incidence.shape[0]
    np.testing.assert_array_equal(np.sort(classes.scale_out), np.unique(flows.scale_out))
    class_rates = max_min_rates(classes.incidence, compiled.arc_capacity)
    # Max-min's first level, the slowest flows' rate, is exact whatever the fabric.
    assert class_rates.min() == pytest.approx(rates.min(), rel=1e-9)
    # A class's latency is its slowest member's.
    for klass, scale_out in enumerate(classes.scale_out):
        assert classes.latency[klass] == pytest.approx(flows.latency[flows.scale_out == scale_out].max(), rel=1e-9)


@pytest.mark.parametrize("mode", ["pinned", "spray"])
@pytest.mark.parametrize("name", FABRICS)
def test_all_to_all_as_classes_times_as_per_flow(name, mode):
    """The collective's answer, past the per-flow cap, against the same run under it."""
    fabric = FABRICS[name]
    for size in (2**12, 2**28):
        exact = Simulator(fabric, ecmp=mode).run("alltoall", size, "direct")
        classes = Simulator(fabric, ecmp=mode, max_pattern_flows=100).run("alltoall", size, "direct")
        assert classes["time_s"] == pytest.approx(exact["time_s"], rel=1e-6), size
        assert classes["link_bytes"] == pytest.approx(exact["link_bytes"], rel=1e-9, abs=1e-3)
        assert classes["bottleneck"]["link_class"] == exact["bottleneck"]["link_class"]
        assert classes["phases"][0]["flows"] == exact["phases"][0]["flows"]


def test_a_subset_of_ranks_and_channels_as_classes():
    fabric = FABRICS["3-tier, a link in 3 down"]
    ranks = [card.id for card in fabric.cards()][3:200:2]
    for mode in ("pinned", "spray"):
        exact = Simulator(fabric, ranks=ranks, ecmp=mode, channels=2).run("alltoall", 2**26, "direct")
        classes = Simulator(fabric, ranks=ranks, ecmp=mode, channels=2, max_pattern_flows=100).run("alltoall", 2**26, "direct")
        assert classes["time_s"] == pytest.approx(exact["time_s"], rel=1e-6)
        assert classes["link_bytes"] == pytest.approx(exact["link_bytes"], rel=1e-9, abs=1e-3)


def test_hash_as_classes_is_its_expectation_a_few_per_cent_above_per_flow():
    """Hashing flow by flow collides (a few flows more on the fullest arc); as classes it is taken
    at its expectation, spraying's answer. The gap shrinks as flows per arc grow: measured here."""
    gaps = []
    for endpoints in (64, 512):
        fabric = fat_tree(endpoints=endpoints, radix=16)
        hashed = Simulator(fabric, ecmp="hash").run("alltoall", 2**28, "direct")
        expected = Simulator(fabric, ecmp="hash", max_pattern_flows=100).run("alltoall", 2**28, "direct")
        sprayed = Simulator(fabric, ecmp="spray").run("alltoall", 2**28, "direct")
        assert expected["time_s"] == pytest.approx(sprayed["time_s"], rel=1e-9)
        gaps.append(hashed["time_s"] / expected["time_s"] - 1)
    assert all(0 <= gap < 0.15 for gap in gaps), gaps


def test_the_walk_is_bounded_before_anything_is_allocated(monkeypatch):
    """The walk starts from source groups x destination cards (pinned): refused by that count,
    saying why, before any is built. A lower bound stands in for ``MAX_CLASS_ENTRIES`` here."""
    monkeypatch.setattr(simulate_module, "MAX_CLASS_ENTRIES", 1_000)
    fabric = fat_tree(endpoints=128, radix=16)  # 16 leaves of 8 cards
    simulator = Simulator(fabric, ecmp="pinned", max_pattern_flows=1000)
    entries = all_pairs_entries(simulator.compiled, simulator.ranks, "pinned")
    assert entries == 16 * 128
    refused = simulator.too_large("alltoall")
    assert set(refused) == {"direct"} and f"{entries:,} entries" in str(refused["direct"])
    with pytest.raises(TwinCoreError, match="entries"):
        simulator.run("alltoall", 2**20, "direct")
    assert simulator.run("alltoall", 2**20)["choice"]["skipped"] == {"direct": str(refused["direct"])}  # auto goes on without it


def test_a_hashed_walk_is_bounded_by_its_fan_out_too(monkeypatch):
    """Hashed entries split over the equal-cost next hops at every hop: 16 leaf groups start
    from 256 entries, but each splits 8 ways (radix 16), so the walk handles 2,048 and is
    refused under a bound of 1,000 that its start alone would pass (a 65,536-card fat-tree: 4.2
    million start, 134 million handled, minutes of walking and 5 GB before this)."""
    monkeypatch.setattr(simulate_module, "MAX_CLASS_ENTRIES", 1_000)
    simulator = Simulator(fat_tree(endpoints=128, radix=16), ecmp="hash", max_pattern_flows=1000)
    assert all_pairs_entries(simulator.compiled, simulator.ranks, "hash") == 16 * 16 < 1_000
    assert all_pairs_walk_size(simulator.compiled, simulator.ranks, "hash") == 16 * 16 * 8
    refused = simulator.too_large("alltoall")
    assert set(refused) == {"direct"} and "2,048 entries" in str(refused["direct"])
    assert simulator.run("alltoall", 2**20)["algorithm"] != "direct"


def test_a_fat_tree_of_16384_cards_is_within_the_bound():
    compiled = compile_fabric(fat_tree(endpoints=16384, radix=64))
    ranks = np.arange(len(compiled.card_ids))
    assert all_pairs_entries(compiled, ranks, "pinned") == 512 * 16384 <= MAX_CLASS_ENTRIES
    assert all_pairs_entries(compiled, ranks, "spray") <= MAX_CLASS_ENTRIES
    assert all_pairs_walk_size(compiled, ranks, "hash") == 512 * 512 * 32 <= MAX_CLASS_ENTRIES


def test_a_hop_over_the_bound_is_refused_before_it_is_built():
    """64 groups start from 4,096 sprayed entries; the spines' fan-out would make more."""
    compiled = compile_fabric(FABRICS["3-tier fat-tree"])
    ranks = np.arange(len(compiled.card_ids))
    assert all_pairs_entries(compiled, ranks, "spray") == 64 * 64
    with pytest.raises(TwinCoreError, match="walk entries, more than 5,000"):
        route_all_pairs(compiled, ranks, mode="spray", max_entries=5_000)


RAIL_FABRICS = {
    "3 tiers, 4 cards a server": (rail_optimised(servers=12, servers_per_unit=4, radix=8, cards_per_server=4), slice(None)),
    "3:1 oversubscribed": (rail_optimised(servers=8, servers_per_unit=4, radix=16, oversubscription=3.0), slice(None)),
    "some cards of some servers, a link in 4 down": (
        with_some_links_down(rail_optimised(servers=8, servers_per_unit=4, radix=16), 4),
        [0, 1, 2, 5, 8, 9, 12, 13, 14, 15, 17, 19, 20, 21, 22, 23, 30, 31, 33, 40, 41, 42, 47, 48, 49, 50, 51, 52, 60, 63],
    ),
}


@pytest.mark.parametrize("mode", ["pinned", "spray"])
@pytest.mark.parametrize("name", RAIL_FABRICS)
def test_rail_cards_collapse_and_keep_the_per_flow_answer(name, mode):
    """Rail-optimised servers with NVLink: a card's NVSwitch is an island only its server's cards
    reach, so their pairs are routed flow by flow and the cards at one rail position of a unit
    share a group whatever their servers. Error bound: none measurable. Link bytes, the slowest
    rate and the collective's time are the per-flow ones (each group has one attachment outside
    the islands), also for a subset of cards, where cards receive unequal numbers of flows."""
    fabric, chosen = RAIL_FABRICS[name]
    ranks = np.arange(len(fabric.cards()))[chosen]
    compiled, flows, rates = per_flow(fabric, ranks, mode)
    assert all_pairs_entries(compiled, ranks, "pinned") <= len(ranks) * len(ranks) // 2
    classes = route_all_pairs(compiled, ranks, mode=mode, max_entries=10**7)
    np.testing.assert_allclose(classes.incidence.sum(axis=0), flows.incidence.sum(axis=0), rtol=1e-9, atol=1e-9)
    assert classes.members.sum() == flows.incidence.shape[0]
    assert max_min_rates(classes.incidence, compiled.arc_capacity).min() == pytest.approx(rates.min(), rel=1e-9)
    card_ids = [compiled.card_ids[rank] for rank in ranks]
    for size in (2**12, 2**28):
        exact = Simulator(fabric, ranks=card_ids, ecmp=mode).run("alltoall", size, "direct")
        collapsed = Simulator(fabric, ranks=card_ids, ecmp=mode, max_pattern_flows=100).run("alltoall", size, "direct")
        assert collapsed["time_s"] == pytest.approx(exact["time_s"], rel=1e-6), size
        assert collapsed["link_bytes"] == pytest.approx(exact["link_bytes"], rel=1e-9, abs=1e-3)


def test_rail_groups_are_rail_positions_of_a_unit():
    fabric = rail_optimised(servers=16, servers_per_unit=4, radix=16)  # 4 units x 8 rails
    compiled = compile_fabric(fabric)
    ranks = np.arange(len(compiled.card_ids))
    assert all_pairs_entries(compiled, ranks, "pinned") == 32 * 128
    assert all_pairs_entries(compiled, ranks, "spray") == 32 * 32 * 2  # two uplinks a card


def test_rail_optimised_with_nvlink_at_16384_cards_is_within_the_bound():
    fabric = rail_optimised(servers=2048)
    simulator = Simulator(fabric)
    assert all_pairs_entries(simulator.compiled, simulator.ranks, "pinned") == 512 * 16384 <= MAX_CLASS_ENTRIES
    assert simulator.too_large("alltoall") == {}
    assert Simulator(fabric, ecmp="pinned").too_large("alltoall") == {}


def test_cards_behind_private_nics_collapse_as_cards_cabled_to_their_switch():
    plain = fat_tree(endpoints=1024, radix=16)
    behind = with_private_nics(plain)
    ranks = np.arange(1024)
    for mode in ("pinned", "spray"):
        assert all_pairs_entries(compile_fabric(behind), ranks, mode) == all_pairs_entries(compile_fabric(plain), ranks, mode)
    # A group a leaf of 8 cards, not 1,024 groups of one.
    assert all_pairs_entries(compile_fabric(behind), ranks, "spray") == 128**2


def test_a_real_ibnetdiscover_upload_collapses_and_keeps_the_per_flow_answer():
    text = (Path(__file__).resolve().parents[1] / "data" / "ib" / "X5.topofile").read_text()
    fabric = complete_fabric(parse_fabric(text, source_name="X5.topofile", format="ibnetdiscover"), formats={"X5.topofile": "ibnetdiscover"}).spec
    compiled = compile_fabric(fabric)
    ranks = np.arange(len(compiled.card_ids))
    assert len(ranks) == 89 and sum(node.kind == "nic" for node in fabric.nodes) == 89  # card - HCA - switch
    assert all_pairs_entries(compiled, ranks, "spray") < 89**2 / 4
    for mode in ("pinned", "spray"):
        for size in (2**12, 2**28):
            exact = Simulator(fabric, ecmp=mode).run("alltoall", size, "direct")
            classes = Simulator(fabric, ecmp=mode, max_pattern_flows=100).run("alltoall", size, "direct")
            assert classes["time_s"] == pytest.approx(exact["time_s"], rel=1e-9), (mode, size)
            assert classes["link_bytes"] == pytest.approx(exact["link_bytes"], rel=1e-9, abs=1e-3)
