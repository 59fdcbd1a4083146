"""Report assembly: efficiency, the knee and its cause, alternatives, comparison; on synthetic cells."""

import json

import pytest

from twin.whatif.errors import WhatIfError
from twin.whatif.report import REMEDIES, assemble_report, compare_reports, efficiency_note, knee_index, report_summary

REFERENCE = 2**30


def cell(collective, ranks, busbw, *, bound="bandwidth", bottleneck="card-leaf (scale-up)", domain="scale-up", loss=None, chosen="ring"):
    point = {
        "size_bytes": REFERENCE, "algorithm": "auto", "chosen_algorithm": chosen, "time_s": REFERENCE / busbw / 1e9,
        "busbw_GBps": busbw, "algbw_GBps": busbw / 2, "latency_s": 0.0, "bandwidth_s": 0.0, "bound": bound,
        "bottleneck_link_class": bottleneck, "bottleneck_domain": domain, "bottleneck_utilization": 1.0,
        "max_link_utilization": 1.0, "reason": "fastest", "error": None,
    }
    small = {**point, "size_bytes": 1024, "busbw_GBps": busbw / 100, "time_s": 1e-5}
    ecmp = None if loss is None else {"size_bytes": REFERENCE, "algorithm": chosen, "hash_busbw_GBps": busbw,
                                       "spray_busbw_GBps": busbw / (1 - loss), "collision_loss": loss, "skipped": None}
    return {"collective": collective, "ranks": ranks, "sizes": [1024, REFERENCE], "algorithms": ["auto"],
            "reference_size": REFERENCE, "points": [small, point], "too_large": {}, "ecmp": ecmp}


def stage_result(factor, busbw, *, tiers=2, alternative="one-supernode", step=1.0, **cell_options):
    cards = 1024 * factor
    return {
        "stage": {"alternative": alternative, "factor": float(factor), "cards": cards, "label": f"{factor}x {alternative}",
                  "generator": "fat_tree", "parameters": {}, "tiers": tiers, "scale_out_tiers": None},
        "bom": {"cards": cards, "switches": {"leaf": cards // 32, "spine": cards // 64}, "switches_total": cards * 3 // 64,
                "power_kw": {"total": cards * 0.8}, "cost_usd": {"total": cards * 3e4}},
        "structure": {"tiers": tiers, "diameter_hops": 2 * tiers - 1, "mean_hops": 2.9, "bisection_GBps": cards * 25.0},
        "performance": [cell("allreduce", cards, busbw, **cell_options)],
        "training": {"step_comm_time_s": step,
                     "tp_allreduce": {"ranks": 16, "time_s": 0.5, "per_step": 1, "bound": "bandwidth", "algorithm": "ring",
                                      "bottleneck_link_class": "card-leaf (scale-up)", "bottleneck_domain": "scale-up"},
                     "dp_allreduce": {"ranks": cards // 16, "time_s": step - 0.5, "per_step": 1, "bound": "latency", "algorithm": "ring",
                                      "bottleneck_link_class": "leaf-spine (scale-up)", "bottleneck_domain": "scale-up"}},
    }


def test_knee_index_on_synthetic_curves():
    assert knee_index([1.0, 0.98, 0.96, 0.80, 0.70]) == 3
    assert knee_index([1.0, 1.0, 1.0, 1.0]) is None  # flat
    assert knee_index([1.0, 0.92, 0.84, 0.76, 0.68]) is None  # steady decline, never sudden
    assert knee_index([1.0, 0.92, 0.84], threshold_points=5) == 1
    assert knee_index([1.0, None, 0.85]) == 2


def test_efficiency_and_no_knee_when_flat():
    report = assemble_report([stage_result(factor, 47.0) for factor in (1, 2, 4, 8)])
    assert [stage["efficiency"]["allreduce"] for stage in report["stages"]] == [1.0] * 4
    assert report["knee"] is None and report["knees"] == {"one-supernode": None}
    assert report["reference_size"] == REFERENCE


def test_knee_named_switch_congestion_when_a_tier_saturates():
    results = [
        stage_result(1, 47.0),
        stage_result(2, 46.0),
        stage_result(4, 34.0, tiers=3, bottleneck="leaf-spine (scale-up)"),
        stage_result(8, 30.0, tiers=3, bottleneck="spine-core (scale-up)"),
    ]
    knee = assemble_report(results)["knee"]
    assert (knee["factor"], knee["cards"], knee["metric"], knee["cause"]) == (4.0, 4096, "allreduce", "switch-congestion")
    assert knee["drop_points"] == pytest.approx((46 - 34) / 47 * 100)
    assert knee["remedy"] == REMEDIES["switch-congestion"]
    assert knee["remedy"]["fix"] == "change topology or add switches"
    assert "leaf-spine (scale-up) tier saturates" in knee["explanation"]
    assert "a switch tier was added (2 -> 3 tiers; diameter 3 -> 5 hops)" in knee["explanation"]


@pytest.mark.parametrize(
    ("options", "cause"),
    [
        ({"bottleneck": "leaf-spine (scale-up)", "loss": 0.3}, "ecmp-collisions"),
        ({"bottleneck": "leaf-spine (scale-up)", "loss": 0.01}, "switch-congestion"),
        ({"bottleneck": "card-leaf (scale-up)"}, "card-port"),
        ({"bound": "latency", "tiers": 3}, "latency"),  # a tier more: more hops
        ({"bound": "latency"}, "latency-steps"),  # as many hops: only more steps
        ({"bound": "latency", "bottleneck": "leaf-spine (scale-out)", "domain": "scale-out"}, "protocol-overhead"),
    ],
)
def test_cause_naming(options, cause):
    knee = assemble_report([stage_result(1, 47.0), stage_result(2, 30.0, **options)])["knee"]
    assert knee["cause"] == cause
    assert knee["remedy"] == REMEDIES[cause]


def test_a_latency_knee_blames_hops_only_when_there_are_more():
    same_diameter = assemble_report([stage_result(1, 47.0), stage_result(2, 30.0, bound="latency")])["knee"]
    assert "as many hops as before" in same_diameter["explanation"]
    assert "placement" not in same_diameter["remedy"]["likely_cause"] + same_diameter["remedy"]["fix"]
    more_hops = assemble_report([stage_result(1, 47.0), stage_result(2, 30.0, bound="latency", tiers=3)])["knee"]
    assert "more hops per step" in more_hops["explanation"] and "diameter 3 -> 5 hops" in more_hops["explanation"]


def test_no_knee_from_an_algorithm_the_simulator_cannot_run_at_scale():
    small = stage_result(1, 45.0, chosen="direct")
    large = stage_result(2, 2.0, chosen="bruck")
    large["performance"][0]["too_large"] = {"direct": "all-pairs pattern of 4,192,256 flows"}
    report = assemble_report([small, large])
    assert report["knee"] is None
    assert report["stages"][1]["efficiency"]["allreduce"] is None
    note = report["stages"][1]["efficiency_notes"]["allreduce"]
    assert note == {"algorithm": "direct", "cards": 1024, "reason": "all-pairs pattern of 4,192,256 flows"}
    assert "direct (chosen at 1,024 cards) is not simulated here" in efficiency_note(note)


def test_training_step_knee_and_alternatives_side_by_side():
    results = [stage_result(factor, 47.0, step=step) for factor, step in ((1, 1.0), (2, 1.05), (4, 1.6))]
    results += [stage_result(factor, 40.0, alternative="k-supernodes") for factor in (1, 2, 4)]
    report = assemble_report(results, threshold_points=10)
    assert report["alternatives"] == ["one-supernode", "k-supernodes"]
    knee = report["knee"]
    # The DP all-reduce grew (TP stayed): its latency-bound point names the cause.
    assert (knee["metric"], knee["factor"], knee["cause"]) == ("training_step", 4.0, "latency-steps")
    assert report["knees"]["k-supernodes"] is None
    group = report["side_by_side"][2]
    assert group["factor"] == 4.0 and set(group["alternatives"]) == {"one-supernode", "k-supernodes"}
    assert report["stages"][1]["bom_delta"]["switches"] == {"leaf": 32, "spine": 16}


def test_report_is_plain_json_and_summarised():
    report = assemble_report([stage_result(1, 47.0), stage_result(2, 30.0, bottleneck="leaf-spine (scale-up)")], rules={"cards": 1024})
    assert json.loads(json.dumps(report, allow_nan=False)) == report
    summary = report_summary(report)
    assert summary["stages"][1]["busbw_GBps"] == {"allreduce": {"1024": 0.3, str(REFERENCE): 30.0}}
    assert set(summary["stages"][0]) >= {"factor", "cards", "switches", "tiers", "diameter_hops", "bisection_GBps", "power_kw"}
    assert summary["knee"]["factor"] == 2.0


def test_compare_reports_matches_stages():
    before = assemble_report([stage_result(1, 47.0), stage_result(2, 30.0)], title="before")
    after = assemble_report([stage_result(1, 47.0), stage_result(2, 45.0)], title="after")
    comparison = compare_reports(before, after)
    assert (comparison["a"]["title"], comparison["b"]["title"]) == ("before", "after")
    assert comparison["a"]["knee"] is not None and comparison["b"]["knee"] is None
    second = comparison["rows"][1]
    assert second["busbw allreduce"] == {"a": 30.0, "b": 45.0, "change": pytest.approx(0.5)}
    assert second["cards"]["change"] == 0


def test_bad_report_input_is_refused():
    with pytest.raises(WhatIfError, match="no stage results"):
        assemble_report([])
    with pytest.raises(WhatIfError, match="threshold 0 points"):
        assemble_report([stage_result(1, 47.0)], threshold_points=0)


def test_a_dp_ring_growing_on_an_ideal_fabric_keeps_the_training_step_efficient():
    """Weak scaling on a lab fabric: DP 2 -> 4 -> 8 on an ideal fabric, each ring moving 2(n-1)/n
    of the gradients per card (1, 1.5, 1.75 times): the step's efficiency stays 1, no knee."""
    results = []
    for factor, dp in ((1, 2), (2, 4), (4, 8)):
        result = stage_result(factor, 47.0)
        result["training"]["tp_allreduce"] = None
        result["training"]["dp_allreduce"] = {**result["training"]["dp_allreduce"], "ranks": dp, "time_s": 2 * (dp - 1) / dp}
        results.append(result)
    report = assemble_report(results)
    assert [stage["efficiency"]["training_step"] for stage in report["stages"]] == pytest.approx([1.0, 1.0, 1.0])
    assert report["knee"] is None
