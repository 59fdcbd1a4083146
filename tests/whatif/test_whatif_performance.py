"""Performance cells: one collective swept over sizes, and the training step's communication."""

import json

import pytest

from twin.simcore import simulate as simulate_module
from twin.simcore.generate import fat_tree, rail_optimised
from twin.simcore.simulate import Simulator
from twin.whatif.errors import WhatIfError
from twin.whatif.performance import check_sizes, performance_cell, training_step_cell, training_tp

FABRIC = fat_tree(endpoints=32, radix=8, cards_per_host=4)
SIZES = (2**12, 2**20, 2**26)


def test_cell_sweeps_sizes_and_algorithms_like_the_simulator():
    cell = performance_cell(FABRIC, "allreduce", SIZES, ("auto", "ring"))
    assert json.loads(json.dumps(cell)) == cell
    assert (cell["ranks"], cell["sizes"], cell["reference_size"]) == (32, list(SIZES), 2**26)
    assert [(point["algorithm"], point["size_bytes"]) for point in cell["points"]] == [
        (algorithm, size) for algorithm in ("auto", "ring") for size in SIZES
    ]
    simulator = Simulator(FABRIC)
    for point in cell["points"]:
        expected = simulator.run("allreduce", point["size_bytes"], point["algorithm"])
        assert point["busbw_GBps"] == pytest.approx(expected["busbw_GBps"])
        assert point["chosen_algorithm"] == expected["algorithm"]
    auto = [point for point in cell["points"] if point["algorithm"] == "auto"]
    assert all(point["reason"] for point in auto)
    # auto is never slower than ring.
    ring = [point for point in cell["points"] if point["algorithm"] == "ring"]
    assert all(a["time_s"] <= r["time_s"] * (1 + 1e-12) for a, r in zip(auto, ring))


def test_ecmp_check_compares_hashing_with_spraying():
    cell = performance_cell(FABRIC, "alltoall", SIZES)
    ecmp = cell["ecmp"]
    assert ecmp["spray_busbw_GBps"] >= ecmp["hash_busbw_GBps"]
    assert ecmp["collision_loss"] == pytest.approx(1 - ecmp["hash_busbw_GBps"] / ecmp["spray_busbw_GBps"])
    assert performance_cell(FABRIC, "alltoall", SIZES, ecmp="spray")["ecmp"] is None


def test_all_pairs_algorithms_above_the_sweep_limit_run_as_flow_classes():
    cell = performance_cell(FABRIC, "alltoall", (2**20,), ("direct",), max_pattern_flows=100, ecmp="pinned")
    assert cell["too_large"] == {}
    exact = performance_cell(FABRIC, "alltoall", (2**20,), ("direct",), ecmp="pinned")
    assert cell["points"][0]["time_s"] == pytest.approx(exact["points"][0]["time_s"], rel=1e-9)


def test_a_rail_design_with_nvlink_runs_all_to_all_as_flow_classes(monkeypatch):
    """Its cards collapse to rail positions (each server's NVSwitch is an island): 128 cards start
    from 32 x 128 entries, where every card its own group made 128 x 128, over this bound."""
    monkeypatch.setattr(simulate_module, "MAX_CLASS_ENTRIES", 5_000)
    rail = rail_optimised(servers=16, servers_per_unit=4, radix=16)
    cell = performance_cell(rail, "alltoall", (2**20,), ("direct",), max_pattern_flows=100, ecmp="pinned")
    assert cell["too_large"] == {}
    exact = performance_cell(rail, "alltoall", (2**20,), ("direct",), ecmp="pinned")
    assert cell["points"][0]["time_s"] == pytest.approx(exact["points"][0]["time_s"], rel=1e-9)


def test_an_inapplicable_named_algorithm_is_reported_not_raised():
    odd = fat_tree(endpoints=24, radix=8, cards_per_host=4)  # 24 ranks: not a power of two
    (point,) = performance_cell(odd, "allgather", (2**20,), ("recursive_doubling",))["points"]
    assert point["busbw_GBps"] is None and "power-of-two" in point["error"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"collective": "gossip"}, "unknown collective 'gossip'"),
        ({"sizes": [0]}, "size 0: expected a whole number of bytes from 1"),
        ({"sizes": [2**40]}, "size 1099511627776"),
        ({"sizes": [float("nan")]}, "size nan: expected a number of bytes"),
        ({"sizes": []}, "no sizes"),
        ({"algorithms": ["bruck"]}, "expected some of auto, ring"),
    ],
)
def test_bad_cell_parameters_are_refused(arguments, expected):
    arguments = {"collective": "allreduce", "sizes": SIZES, **arguments}
    with pytest.raises(WhatIfError) as raised:
        performance_cell(FABRIC, **arguments)
    assert expected in str(raised.value)


def test_check_sizes_sorts_and_dedupes():
    assert check_sizes([2048, 1024, 2048.0]) == [1024, 2048]


def test_training_step_is_tp_activations_plus_dp_gradients():
    step = training_step_cell(FABRIC, model_params=1e9, tp=4, layers=2, hidden_size=1024, sequence_length=512)
    assert (step["dp"], step["cards_used"]) == (8, 32)
    tp, dp = step["tp_allreduce"], step["dp_allreduce"]
    assert (tp["ranks"], tp["bytes_per_rank"], tp["per_step"]) == (4, 1 * 512 * 1024 * 2, 4 * 2)
    assert (dp["ranks"], dp["bytes_per_rank"], dp["per_step"]) == (8, 1e9 * 2 / 4, 1)
    assert step["step_comm_time_s"] == pytest.approx(tp["time_s"] * 8 + dp["time_s"])
    # The DP group is every tp-th card: the simulator on those ranks gives the same time.
    ranks = [card.id for card in FABRIC.cards()][::4]
    assert dp["time_s"] == pytest.approx(Simulator(FABRIC, ranks=ranks).run("allreduce", 5e8)["time_s"])


def test_the_articles_case_is_tp16_dp64_on_1024_cards():
    step = training_step_cell(fat_tree(endpoints=1024), layers=1)
    assert (step["tp"], step["dp"], step["dp_allreduce"]["bytes_per_rank"]) == (16, 64, 175e9 * 2 / 16)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"tp": 0}, "tp = 0: expected a whole number of at least 1"),
        ({"tp": 8, "dp": 8}, "TP 8 x DP 8 on 32 cards"),
        ({"model_params": -1}, "model_params = -1"),
        ({"bytes_per_param": 0}, "bytes_per_param = 0"),
    ],
)
def test_impossible_training_steps_are_refused(arguments, expected):
    with pytest.raises(WhatIfError) as raised:
        training_step_cell(FABRIC, **arguments)
    assert expected in str(raised.value)


def test_the_training_step_fits_a_lab_fabric_smaller_than_the_articles_tp():
    assert [training_tp(cards) for cards in (1, 8, 12, 16, 32, 1024)] == [1, 4, 4, 8, 16, 16]
    lab = fat_tree(endpoints=8, radix=8, cards_per_host=4)
    step = training_step_cell(lab, tp=training_tp(8))
    assert (step["tp"], step["dp"], step["cards_used"]) == (4, 2, 8) and step["dp_time_s"] > 0
    with pytest.raises(WhatIfError, match="TP 16 x DP 0 on 8 cards"):
        training_step_cell(lab)
