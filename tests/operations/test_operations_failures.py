"""Failure what-ifs (issue 8): each test fails when a failure's cost is reported wrongly."""

import pytest

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
from twin.simcore.generate import supernode

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
    top = ranking[0]
    assert top["cards_cut_off"] == 1 and top["a"].startswith("card-")  # a card's only cable
    assert all(first["impact"] >= second["impact"] for first, second in zip(ranking, ranking[1:]))
    uplink = next(entry for entry in ranking if entry["b"].startswith("spine"))
    assert uplink["cards_cut_off"] == 0
