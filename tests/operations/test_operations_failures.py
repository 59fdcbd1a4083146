"""Failure what-ifs (issue 8): each test fails when a failure's cost is reported wrongly."""

import random
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from tests.simcore.fabrics import brute_force_hops, irregular_fabric
from twin.ingest import parse_fabric
from twin.ingest.completion import complete_fabric
from twin.operations.failures import (
    FailureBaseline,
    FailureError,
    Workload,
    evaluate_failure,
    fail_elements,
    failure_candidates,
    link_impact,
    rank_failures,
    worst_failure,
)
from twin.simcore.generate import rail_optimised, supernode

WORKLOAD = Workload(size_bytes=1e8)


@pytest.fixture(scope="module")
def fabric():
    return supernode(cards=256, switch_radix=32)  # 16 leaves of 16 cards, 8 spines


@pytest.fixture(scope="module")
def baseline(fabric):
    return FailureBaseline.of(fabric, WORKLOAD)


def test_candidates_by_kind(fabric):
    assert len(failure_candidates(fabric, "switch")) == 24
    assert failure_candidates(fabric, "leaf")[0] == "leaf-01" and len(failure_candidates(fabric, "leaf")) == 16
    assert failure_candidates(fabric, "link")[0] == "link:0"
    with pytest.raises(FailureError, match="unknown failure kind"):
        failure_candidates(fabric, "rack")


def test_unknown_elements_are_listed(fabric):
    with pytest.raises(FailureError) as raised:
        fail_elements(fabric, ["leaf-99", "card-0001", "link:99999", "spine-01"])
    assert len(raised.value.problems) == 3
    assert "'card-0001' is a card" in str(raised.value)


def test_a_leaf_failure_cuts_off_its_cards(fabric, baseline):
    result = evaluate_failure(fabric, ["leaf-01"], WORKLOAD, baseline=baseline)
    assert result["cards_cut_off_count"] == 16 and result["cards_cut_off"][0] == "card-0001"
    assert result["blast_radius"] == {"leaf-01": {"cards_attached": 16, "cards_cut_off": 16}}
    assert result["disconnected_pairs"] == 16 * 240 + 16 * 15 // 2
    assert result["workload"]["ranks_lost"] == 16 and result["workload"]["after"]["time_s"] > 0


def test_a_leaf_failure_on_a_real_two_leaf_dump_cuts_off_that_leafs_cards():
    """ibnetdiscover of 2 leaves of 4 HCAs and one spine: the dead leaf's 4 cards (each alone)
    and the live leaf's 4 (reaching each other) miss as many cards each; the dead ones leave."""
    text = (Path(__file__).resolve().parents[1] / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt").read_text()
    lab = complete_fabric(parse_fabric(text, source_name="lab.txt")).spec
    baseline = FailureBaseline.of(lab, WORKLOAD)
    leaf02 = next(node.id for node in lab.nodes if "leaf02" in node.name)
    result = evaluate_failure(lab, [leaf02], WORKLOAD, baseline=baseline)
    assert result["cards_cut_off"] == [f"card:ib:0c42a10300860{host}00" for host in (5, 6, 7, 8)]
    assert result["workload"]["ranks_lost"] == 4 and result["workload"]["after"]["time_s"] > 0
    every_switch = [evaluate_failure(lab, [switch], WORKLOAD, baseline=baseline) for switch in failure_candidates(lab, "switch")]
    assert [failure["cards_cut_off_count"] for failure in every_switch] == [4, 4, 4]  # the spine parts the fabric in two
    # Links are named as people know their ends (leaf01, node01/mlx5_0), not by GUID.
    impact = link_impact(lab, WORKLOAD)
    assert {(entry["a_name"], entry["b_name"]) for entry in impact} >= {("leaf01", "spine01"), ("node01/mlx5_0", "leaf01"), ("node01/gpu0", "node01/mlx5_0")}
    hottest = baseline.simulator.run("allreduce", 2**24, "ring")["hottest_links"]
    assert all(link["from"].startswith("ib:") and not link["from_name"].startswith("ib:") for link in hottest)


def test_losing_uplinks_slows_the_workload(fabric):
    # A ring alternating between leaf-01 and leaf-02: all 16 cards of leaf-01 send across.
    ranks = tuple(f"card-{number + offset:04d}" for number in range(1, 17) for offset in (0, 16))
    workload = Workload(size_bytes=1e8, ranks=ranks)
    uplinks = [f"link:{position}" for position, link in enumerate(fabric.links) if link.a == "leaf-01" and link.b.startswith("spine")]
    result = evaluate_failure(fabric, uplinks[:12], workload)
    assert result["cards_cut_off_count"] == 0 and result["degraded_pairs"] == 0
    assert result["workload"]["time_change"] > 1.5 and result["workload"]["busbw_change"] < 0.7


def test_a_spine_failure_reroutes_without_loss(fabric, baseline):
    result = evaluate_failure(fabric, ["spine-01"], WORKLOAD, baseline=baseline)
    assert result["cards_cut_off_count"] == 0 and result["degraded_pairs"] == 0 and result["links_down"] == 32


def test_worst_single_switch_is_a_leaf_and_chunks_rank_alike(fabric, baseline):
    search = worst_failure(fabric, "switch", WORKLOAD, top=3)
    assert search["evaluated"] == 24 and search["worst"]["cards_cut_off_count"] == 16
    chunks = [[evaluate_failure(fabric, [element], WORKLOAD, baseline=baseline) for element in chunk] for chunk in (["spine-02", "leaf-03"], ["spine-05"])]
    merged = rank_failures([result for chunk in chunks for result in chunk])
    assert merged["worst"]["elements"] == ["leaf-03"] and merged["evaluated"] == 3


def test_links_ranked_by_impact(fabric):
    ranking = link_impact(fabric, WORKLOAD)
    assert all(first["impact"] >= second["impact"] for first, second in zip(ranking, ranking[1:]))
    cable = next(entry for entry in ranking if entry["a"].startswith("card-"))  # a card's only cable
    assert (cable["cards_cut_off"], cable["cards_routed"], cable["cards_affected"]) == (1, 0, 1)  # the card, once
    uplink = next(entry for entry in ranking if entry["b"].startswith("spine"))
    assert uplink["cards_cut_off"] == 0 and uplink["cards_affected"] == uplink["cards_routed"] > 1


def dense_pair_figures(fabric, elements):
    """The pair figures from whole card x card hop matrices (the networkx oracle), before and after."""
    card_ids, before_matrix = brute_force_hops(fabric)
    _, after_matrix = brute_force_hops(fail_elements(fabric, elements)[0])
    upper = np.triu_indices(len(card_ids), k=1)
    before, after = before_matrix[upper], after_matrix[upper]
    # Cut off: the cards outside the largest set that can all reach each other (an exact
    # maximum clique of the reachability graph: paths never cross a third card, so
    # reachability is not transitive).
    reachable = nx.Graph(list(zip(*np.nonzero(np.triu(after_matrix >= 0, k=1)))))
    reachable.add_nodes_from(range(len(card_ids)))
    largest = max(len(clique) for clique in nx.find_cliques(reachable))
    return {
        "degraded_pairs": int(((after > before) & (after >= 0) & (before >= 0)).sum()),
        "disconnected_pairs": int(((after < 0) & (before >= 0)).sum()),
        "cards_cut_off_count": len(card_ids) - largest,
    }


@pytest.mark.parametrize(
    "fabric",
    [irregular_fabric(), rail_optimised(servers=8, cards_per_server=4, servers_per_unit=4, radix=8)],
    ids=["irregular", "rail-optimised"],
)
def test_pair_figures_match_whole_hop_matrices(fabric):
    """Pairs are counted by class of alike cards; the card-by-card count must agree."""
    draw = random.Random(fabric.name)
    switches = failure_candidates(fabric, "switch")
    element_sets = [[switch] for switch in switches] + [
        draw.sample(switches, 2) + [f"link:{draw.randrange(len(fabric.links))}"] for _ in range(10)
    ]
    workload = Workload(size_bytes=1e6, ranks=tuple(card.id for card in fabric.cards())[:2])
    for elements in element_sets:
        result = evaluate_failure(fabric, elements, workload)
        figures = {name: result[name] for name in ("degraded_pairs", "disconnected_pairs", "cards_cut_off_count")}
        assert figures == dense_pair_figures(fabric, elements), elements


def test_a_rail_leaf_failure_on_an_uploaded_superpod_leaves_out_its_rail_and_still_runs():
    """A GPU whose rail leaf fails still reaches its host's GPUs over NVLink, and they reach
    everyone, but it reaches nobody beyond its host: it is cut off from a job on the fabric."""
    from twin.ingest import detect_format, parse_fabric
    from twin.ingest.completion import complete_fabric
    from twin.ingest.merge import merge_fabrics
    from twin.ingest.writers.superpod import superpod_files

    files = superpod_files(units=1, missing={32}, storage_hosts=1, xml_hosts=range(1, 9))
    parts = [(name, parse_fabric(text, source_name=name, format=detect_format(text))) for name, text in files.items()]
    formats = {name: detect_format(text) for name, text in files.items()}
    fabric = complete_fabric(merge_fabrics(parts, name="pod"), formats=formats).spec
    leaf = next(node.id for node in fabric.switches() if node.name == "leaf-1")
    result = evaluate_failure(fabric, [leaf], Workload(size_bytes=1e6))
    assert result["cards_cut_off_count"] == 31  # rail 0 of every DGX: 8 XML GPUs, 23 HCA cards
    assert result["workload"]["after"] is not None and result["workload"]["ranks_lost"] == 31
