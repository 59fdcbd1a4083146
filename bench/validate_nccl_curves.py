"""The twin calibrated on one measured nccl-tests curve, predicting another it was not fitted on.

Run from the repository root: ``.venv/bin/python bench/validate_nccl_curves.py``.

Issue 13, item 6: calibrated on MODELLING.md's 8x H100 NVLS AllReduce curve (Azure ND H100 v5,
NCCL 2.18.5), the twin should predict the 8x H200 curve (ND H200 v5, NCCL 2.20.5, the same NVLink
and NVSwitch) within 10 % at every size >= 1 MiB. Both curves are in ``tests/data/simcore``. The
runs used NVLS, so the twin runs in-switch reduction, each fabric with the NCCL release its run
used (``transport.nccl_version``: 2.18 leaves NVLS channels idle on a buffer smaller than one
loop, 1 MiB here, 2.20 spreads it over all of them, ``Transport.in_switch_share``); nothing is
fitted to the H200 curve. Three fits are printed:

- start-up, loop latency and efficiency (the model: NCCL's NVLS chunking, a synchronisation per
  loop, ``transport.in_switch_chunking``);
- start-up and efficiency, the loop latency at its default;
- start-up and efficiency with no loop cost (the affine law the twin had before), for comparison.

Each prints the fitted values with their standard errors, then per size the measured H100 and
H200 busbw, the prediction and its errors, what ``auto`` picks on the calibrated fabric (NCCL's
algorithms: ``transport.TUNER_ALGORITHMS``) and the worst H200 error at >= 1 MiB.

Then the same check on the result pages' whole curves (``*_full.json``: 24 sizes from 1 KiB to
8 GiB, of which MODELLING.md took six): the first fit on the 14 H100 sizes from 1 MiB up, the
H200 predicted at the same sizes, and both measured times below 1 MiB, where the wire carries
the buffer in under 1.5 us and what is left is each run's start-up latency. Figures are printed,
not asserted (``tests/simcore/test_simcore_calibrate.py`` asserts them).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twin.simcore.calibrate import calibrate  # noqa: E402
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec  # noqa: E402
from twin.simcore.simulate import Simulator  # noqa: E402
from twin.simcore.transport import HOPPER_NVLINK_EFFICIENCY  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tests/data/simcore"
FITS = {
    "start-up, loop latency, efficiency": (("in_switch_latency_ns", "in_switch_step_latency_ns", "in_switch_efficiency"), {}),
    "start-up, efficiency (loop latency at its default)": (("in_switch_latency_ns", "in_switch_efficiency"), {}),
    "start-up, efficiency, no loop cost (affine)": (("in_switch_latency_ns", "in_switch_efficiency"), {"in_switch_step_latency_ns": 0.0}),
}
KIB, MIB = 2**10, 2**20
H100_NCCL, H200_NCCL = "2.18.5", "2.20.5"


def curve(name: str) -> list[tuple[int, float]]:
    measured = json.loads((DATA / name).read_text())
    return list(zip(measured["size_bytes"], measured["busbw_GBps"]))


def eight_gpus(name: str, transport: dict | None = None, nccl_version: str = H100_NCCL) -> FabricSpec:
    """8 GPUs behind one NVSwitch at 450 GB/s (3,600 Gb/s) a GPU, NVLS capable: H100 and H200 alike
    (the same NVLink 4, so the same share of its line rate moves data: NCCL's 20.6 of 25 GB/s a link),
    run with ``nccl_version``."""
    gpus = [NodeSpec(f"gpu{index}", "card", f"gpu{index}", host="node") for index in range(8)]
    nvswitch = NodeSpec("nvswitch", "switch", "nvswitch", tier="leaf", attrs={"in_switch_reduction": True})
    links = [LinkSpec(gpu.id, "1", "nvswitch", str(index + 1), 3600, 10) for index, gpu in enumerate(gpus)]
    stored = {"scale_up": {"efficiency": HOPPER_NVLINK_EFFICIENCY}, "nccl_version": nccl_version, **(transport or {})}
    return FabricSpec(name, (*gpus, nvswitch), tuple(links), attrs={"transport": stored})


def main() -> None:
    h100, h200 = curve("nd_h100_v5_allreduce.json"), curve("nd_h200_v5_allreduce.json")
    at_1mib = {}
    for label, (fit, fixed) in FITS.items():
        started = time.process_time()
        fitted = calibrate(eight_gpus("8x-h100", fixed), h100, algorithm="in_switch", fit=fit)
        cpu = time.process_time() - started
        values = ", ".join(f"{name} {value:.4g} +- {fitted['standard_errors'][name]:.2g}" for name, value in fitted["parameters"].items())
        print(f"== fitted on 8x H100, NCCL {H100_NCCL} ({label}; {len(h100)} sizes, {cpu:.2f} s CPU): {values}; H200 run as NCCL {H200_NCCL}")
        predictor = Simulator(eight_gpus("8x-h200", fixed, H200_NCCL), transport=fitted["transport"])
        worst = {MIB: 0.0, 16 * MIB: 0.0}
        for (size, h100_busbw), (h200_size, h200_busbw), point in zip(h100, h200, fitted["points"]):
            assert size == h200_size, "the two curves must share their sizes"
            result = predictor.run("allreduce", size, "in_switch", top_links=0)
            chosen = predictor.run("allreduce", size, top_links=0)
            error = result["busbw_GBps"] / h200_busbw - 1
            if size == MIB:
                at_1mib.setdefault("fitted", point["predicted_busbw_GBps"])
                at_1mib.setdefault("predicted", result["busbw_GBps"])
            for smallest in worst:
                if size >= smallest:
                    worst[smallest] = max(worst[smallest], abs(error))
            print(f"  {size / MIB:7.0f} MiB   H100 {h100_busbw:7.2f} fitted {point['predicted_busbw_GBps']:7.2f} ({100 * point['relative_error']:+5.1f} %)   "
                  f"H200 {h200_busbw:7.2f} predicted {result['busbw_GBps']:7.2f} ({100 * error:+5.1f} %)   {result['time_s'] * 1e6:9.1f} us   "
                  f"auto {chosen['algorithm']} ({chosen['protocol']}) {chosen['busbw_GBps']:6.1f}")
        print(f"  worst H200 error at >= 1 MiB: {100 * worst[MIB]:.1f} % (target 10 %: {'met' if worst[MIB] < 0.10 else 'missed'}); "
              f"at >= 16 MiB: {100 * worst[16 * MIB]:.1f} %")
    h100_1mib, h200_1mib = h100[0][1], h200[0][1]
    print(f"At 1 MiB the measured curves differ by {100 * (h200_1mib / h100_1mib - 1):.1f} % on the same fabric; the NCCL releases' use of the NVLS "
          f"channels accounts for {100 * (at_1mib['predicted'] / at_1mib['fitted'] - 1):.1f} % in the twin (first fit: {at_1mib['fitted']:.2f} GB/s as "
          f"{H100_NCCL}, {at_1mib['predicted']:.2f} as {H200_NCCL}); within 10 % of the H200 point needs >= {0.9 * h200_1mib:.2f} GB/s.")
    whole_curves()


def whole_curves() -> None:
    """The first fit on every H100 size of the result page from 1 MiB up, the H200 page predicted
    at each, and the start-up latency of both runs below 1 MiB."""
    h100, h200 = curve("nd_h100_v5_allreduce_full.json"), curve("nd_h200_v5_allreduce_full.json")
    fit, fixed = next(iter(FITS.values()))
    fitted_on = [(size, busbw) for size, busbw in h100 if size >= MIB]
    fitted = calibrate(eight_gpus("8x-h100", fixed), fitted_on, algorithm="in_switch", fit=fit)
    values = ", ".join(f"{name} {value:.4g} +- {fitted['standard_errors'][name]:.2g}" for name, value in fitted["parameters"].items())
    print(f"== the result pages' whole curves: fitted on the {len(fitted_on)} H100 sizes from 1 MiB up ({values}); H200 run as NCCL {H200_NCCL}")
    predictor = Simulator(eight_gpus("8x-h200", fixed, H200_NCCL), transport=fitted["transport"])
    fitted_busbw = {point["size_bytes"]: point["predicted_busbw_GBps"] for point in fitted["points"]}
    outside, worst = [], 0.0
    for (size, h100_busbw), (_, h200_busbw) in zip(h100, h200):
        h100_us, h200_us = (size / (busbw * 1e9 / 1.75) * 1e6 for busbw in (h100_busbw, h200_busbw))  # busbw = algbw x 2 (8 - 1) / 8
        measured = f"H100 {h100_us:7.1f} us   H200 {h200_us:7.1f} us   H100 - H200 {h100_us - h200_us:+5.1f} us"
        if size < MIB:
            print(f"  {size / KIB:7.0f} KiB   {measured}")
            continue
        error = predictor.run("allreduce", size, "in_switch", top_links=0)["busbw_GBps"] / h200_busbw - 1
        worst = max(worst, abs(error))
        if abs(error) >= 0.10:
            outside.append(f"{size / MIB:.0f} MiB")
        print(f"  {size / MIB:7.0f} MiB   {measured}   H100 fitted {100 * (fitted_busbw[size] / h100_busbw - 1):+5.1f} %   H200 predicted {100 * error:+5.1f} %")
    print(f"  worst H200 error from 1 MiB up: {100 * worst:.1f} %; outside 10 %: {', '.join(outside) or 'none'}")


if __name__ == "__main__":
    main()
