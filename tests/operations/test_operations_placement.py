"""Placement: strategies, checks, evaluation, exports (issue 8). Each test fails when the behaviour is wrong."""

import doctest

import numpy as np
import pytest

from twin.ingest.errors import IngestError
from twin.ingest.hostlist import expand_hostlist
from twin.operations import exports
from twin.operations.exports import compress_hostlist, placement_csv, read_rank_mapping, slurm_hostfile, slurm_hostlist
from twin.operations.placement import (
    Job,
    PlacementError,
    aware_placement,
    compare_placements,
    evaluate_placement,
    job_traffic,
    naive_placement,
    place,
    random_placement,
    user_placement,
)
from twin.simcore.generate import rail_optimised, supernode


@pytest.fixture(scope="module")
def article_fabric():
    return supernode(cards=1024)


@pytest.fixture(scope="module")
def article_comparison(article_fabric):
    return compare_placements(article_fabric, Job(tp=16, dp=64))


def test_rank_order_is_megatron_tp_fastest_then_dp_then_pp():
    job = Job(tp=2, pp=2, dp=4, ep=2)
    assert job.groups("tp")[:2].tolist() == [[0, 1], [2, 3]]
    assert job.groups("dp")[0].tolist() == [0, 2, 4, 6]
    assert job.groups("pp")[0].tolist() == [0, 8]
    assert job.groups("ep")[0].tolist() == [0, 2]
    assert job.coordinates(11) == (1, 1, 1)


@pytest.mark.parametrize(
    "arguments, words",
    [({"tp": 0, "dp": 4}, "tp 0"), ({"tp": 2, "dp": 6, "ep": 4}, "ep 4 does not divide dp 6"),
     ({"tp": 2, "dp": 2, "group_bytes": {"xp": 1}}, "'xp'"), ({"tp": 2, "dp": 2, "model_params": -1}, "model_params")],
)
def test_bad_job_is_refused_plainly(arguments, words):
    with pytest.raises(PlacementError, match=words):
        Job(**arguments)


def test_traffic_from_the_model_matches_the_training_step_formulas():
    traffic = job_traffic(Job(tp=16, dp=64, model_params=175e9, hidden_size=12288, seq_len=2048, layers=96))
    assert traffic["dp"].bytes_per_call == 175e9 / 16 * 2 and traffic["dp"].calls == 1
    assert traffic["tp"].calls == 4 * 96 and traffic["tp"].bytes_per_call == 2048 * 12288 * 2
    explicit = job_traffic(Job(tp=2, dp=2, group_bytes={"dp": 1e6}))
    assert explicit["dp"].bytes_per_call == 1e6 and explicit["dp"].calls == 1


def test_aware_beats_naive_and_random_on_the_article_case(article_comparison):
    times = {name: result["communication_time_s"] for name, result in article_comparison["results"].items()}
    assert times["aware"] < times["naive"] and times["aware"] < times["random"], times
    assert article_comparison["best"] == "aware"
    tp = article_comparison["results"]["aware"]["dimensions"]["tp"]
    assert tp["max_switch_hops"] == 1  # every TP group inside one leaf


def test_aware_beats_naive_and_random_on_a_fragmented_fabric(article_fabric):
    cards = [card.id for card in article_fabric.cards()]
    busy = set(np.random.default_rng(7).choice(cards, 200, replace=False).tolist())
    free = [card for card in cards if card not in busy]
    result = compare_placements(article_fabric, Job(tp=16, dp=48), free=free)
    times = {name: value["communication_time_s"] for name, value in result["results"].items()}
    assert times["aware"] < times["naive"] and times["aware"] < times["random"], times
    for name in ("naive", "random", "aware"):
        assert not busy & {rank["card"] for rank in result["results"][name]["ranks"]}


def test_evaluation_is_json_ready_with_ranks_for_the_map(article_comparison):
    result = article_comparison["results"]["naive"]
    assert {"tp", "dp"} == set(result["dimensions"])
    assert result["ranks"][17] == {"rank": 17, "card": "card-0018", "host": "host-003", "stage": 0, "dp_index": 1, "tp_index": 1, "tp_group": 1}
    assert result["dimensions"]["dp"]["bottleneck"]["link"] >= 0 and result["bottleneck_links"]


def test_job_larger_than_the_free_cards_is_refused(article_fabric):
    with pytest.raises(PlacementError, match="needs 2048 cards .* only 1024"):
        naive_placement(article_fabric, Job(tp=16, dp=128))
    with pytest.raises(PlacementError, match="1 free card is not a card of"):
        naive_placement(article_fabric, Job(tp=1, dp=2), free=["card-0001", "leaf-01"])


def test_tp_larger_than_any_domain_falls_back_to_the_fewest_domains():
    fabric = rail_optimised(servers=8, servers_per_unit=8)  # NVLink domains of 8 cards per host
    placement = aware_placement(fabric, Job(tp=16, dp=4))
    assert "larger than any switch domain (the largest has 8 free cards)" in str(placement.warnings[0])
    for group in np.array(placement.hosts).reshape(-1, 16):
        assert len(set(group)) == 2  # two hosts, never more


def test_random_is_seeded_and_naive_is_id_order(article_fabric):
    job = Job(tp=4, dp=4)
    assert random_placement(article_fabric, job, seed=3).cards == random_placement(article_fabric, job, seed=3).cards
    assert random_placement(article_fabric, job, seed=3).cards != random_placement(article_fabric, job, seed=4).cards
    assert naive_placement(article_fabric, job).cards[:2] == ("card-0001", "card-0002")


def test_user_mapping_checks_every_problem(article_fabric):
    job = Job(tp=2, dp=2)
    good = {0: "card-0004", 1: "card-0003", 2: "card-0002", 3: "card-0001"}
    assert user_placement(article_fabric, job, good).cards[0] == "card-0004"
    bad = {0: "card-9999", 1: "leaf-01", 2: "card-0002", 5: "card-0002"}
    with pytest.raises(PlacementError) as raised:
        user_placement(article_fabric, job, bad, free=["card-0001"])
    text = str(raised.value)
    for words in ("1 rank has no card: 3", "'card-9999' is not in the fabric", "a switch, not a card", "card 'card-0002' is busy", "rank 5 is outside"):
        assert words in text, words
    with pytest.raises(PlacementError, match="unknown strategy"):
        place(article_fabric, job, "clever")


def test_rank_mapping_csv_round_trips_and_reports_lines(article_fabric):
    placement = naive_placement(article_fabric, Job(tp=2, dp=2))
    assert read_rank_mapping(placement_csv(placement), source_name="map.csv") == dict(enumerate(placement.cards))
    with pytest.raises(IngestError) as raised:
        read_rank_mapping("rank,card\n0,card-0001\nx,card-0002\n0,card-0003\n", source_name="map.csv")
    assert "map.csv line 3" in str(raised.value) and len(raised.value.problems) == 2
    assert raised.value.problems[1].line == 4


def test_slurm_exports(article_fabric):
    placement = naive_placement(article_fabric, Job(tp=8, dp=3))
    assert slurm_hostlist(placement) == "host-[001-003]"
    assert slurm_hostfile(placement).splitlines()[8] == "host-002"


@pytest.mark.parametrize(
    "hosts",
    [["node001", "node002", "node004"], ["n9", "n10", "n08", "n09"], ["gpu-r04-n01", "gpu-r04-n02", "login", "rack1_n01"], ["a1", "a01", "a2"]],
)
def test_compressed_hostlist_expands_back_to_the_same_hosts(hosts):
    assert sorted(expand_hostlist(compress_hostlist(hosts))) == sorted(set(hosts))


def test_compressed_hostlist_refuses_names_slurm_cannot_hold():
    with pytest.raises(ValueError, match="cannot go into a hostlist"):
        compress_hostlist(["node[1]"])


def test_exports_doctests():
    assert doctest.testmod(exports).failed == 0
