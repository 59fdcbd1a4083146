"""Calibration against a measured nccl-tests curve, and the fitted parameters reused by later runs."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from twin.simcore.calibrate import calibrate
from twin.simcore.errors import TwinCoreError
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec
from twin.simcore.simulate import simulate

MEASURED = json.loads((Path(__file__).parents[1] / "data/simcore/nd_h100_v5_allreduce.json").read_text())


def eight_h100() -> FabricSpec:
    """One node of 8 H100 joined by NVSwitch (450 GB/s = 3,600 Gb/s per GPU), NVLS capable."""
    gpus = [NodeSpec(f"gpu{index}", "card", f"gpu{index}", host="node") for index in range(8)]
    nvswitch = NodeSpec("nvswitch", "switch", "nvswitch", tier="leaf", attrs={"in_switch_reduction": True})
    links = [LinkSpec(gpu.id, "1", "nvswitch", str(index + 1), 3600, 10) for index, gpu in enumerate(gpus)]
    return FabricSpec("8x-h100", (*gpus, nvswitch), tuple(links))


@pytest.fixture(scope="module")
def fitted():
    points = list(zip(MEASURED["size_bytes"], MEASURED["busbw_GBps"]))
    return calibrate(eight_h100(), points)


def test_fitted_twin_reproduces_the_h100_curve_within_ten_percent(fitted):
    assert len(fitted["points"]) == 6
    for point in fitted["points"]:
        assert abs(point["relative_error"]) < 0.10, point
    assert fitted["max_relative_error"] < 0.10
    # Large messages use in-switch reduction (NVLS), as the measurement did.
    assert fitted["points"][-1]["algorithm"] == "in_switch"
    assert 0.5 < fitted["parameters"]["in_switch_efficiency"] * fitted["parameters"]["scale_up.efficiency"] < 0.75
    json.dumps(fitted)


def test_parameters_stored_with_the_fabric_are_used_by_later_runs(fitted):
    stored = replace(eight_h100(), attrs={"transport": fitted["transport"]})
    for point in fitted["points"]:
        again = simulate(stored, collective="allreduce", size_bytes=point["size_bytes"])
        assert again["busbw_GBps"] == pytest.approx(point["predicted_busbw_GBps"], rel=1e-9)
    default = simulate(eight_h100(), collective="allreduce", size_bytes=2**30)
    assert default["busbw_GBps"] != pytest.approx(fitted["points"][4]["predicted_busbw_GBps"], rel=0.01)


def test_calibration_refuses_what_it_cannot_fit():
    with pytest.raises(TwinCoreError, match="cannot fit"):
        calibrate(eight_h100(), [(2**20, 40.0)] * 4, fit=("scale_up.colour",))
    with pytest.raises(TwinCoreError, match="2 measured points cannot fit 4 parameters"):
        calibrate(eight_h100(), [(2**20, 40.0), (2**24, 200.0)])
