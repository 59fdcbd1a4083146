"""Fit transport parameters to a measured nccl-tests curve by least squares.

The residual of each measured point is ``log(predicted time / measured
time)``, so every size weighs the same whatever its magnitude; the
prediction is ``Simulator.run`` with the collective, algorithm and protocol
the measurement used (``"auto"`` lets the twin pick per size, as NCCL's tuner
does). Latencies are fitted on a log scale, efficiencies within (0, 1].
The fit is non-smooth where the chosen algorithm changes, so it starts from
a few points and keeps the best.

The result's ``transport`` is the overrides mapping to store in the fabric's
``attrs["transport"]``; later runs on that fabric use it (``transport_for``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy import optimize

from twin.simcore.errors import TwinCoreError
from twin.simcore.model import FabricSpec
from twin.simcore.simulate import Simulator
from twin.simcore.transport import PROTOCOLS, Transport, transport_for

__all__ = ["DEFAULT_FIT", "FITTABLE", "calibrate"]

# parameter -> (kind, lower bound, upper bound); "latency" is fitted on a log scale.
_LATENCY, _FRACTION = ("latency", 1.0, 1e6), ("fraction", 0.05, 1.0)
FITTABLE: dict[str, tuple[str, float, float]] = {
    **{f"{domain}.efficiency": _FRACTION for domain in ("scale_up", "scale_out")},
    **{f"{domain}.peer_issue_ns": _LATENCY for domain in ("scale_up", "scale_out")},
    **{
        f"{domain}.{protocol}.{field}": bounds
        for domain in ("scale_up", "scale_out")
        for protocol in PROTOCOLS
        for field, bounds in (("base_latency_ns", _LATENCY), ("hop_latency_ns", _LATENCY), ("efficiency", _FRACTION))
    },
    "in_switch_latency_ns": _LATENCY,
    "in_switch_efficiency": _FRACTION,
}
DEFAULT_FIT = (
    "scale_up.Simple.hop_latency_ns",
    "scale_up.efficiency",
    "in_switch_latency_ns",
    "in_switch_efficiency",
)


def calibrate(
    spec: FabricSpec,
    measured: Iterable[tuple[float, float]],
    *,
    collective: str = "allreduce",
    algorithm: str = "auto",
    protocol: str = "auto",
    fit: Sequence[str] = DEFAULT_FIT,
    **simulator_options: Any,
) -> dict[str, Any]:
    """Fit ``fit`` parameters so that ``spec`` reproduces ``measured`` busbw.

    ``measured`` holds ``(size_bytes, busbw_GBps)`` points (nccl-tests
    semantics). Returns ``transport`` (overrides to store with the fabric),
    ``parameters`` (fitted values by name), ``points`` (size, measured and
    predicted busbw, relative error, algorithm and protocol used) and the largest and RMS
    relative errors.
    """
    points = sorted((float(size), float(busbw)) for size, busbw in measured)
    if len(points) < len(fit):
        raise TwinCoreError(f"{len(points)} measured points cannot fit {len(fit)} parameters")
    unknown = [name for name in fit if name not in FITTABLE]
    if unknown:
        raise TwinCoreError(f"cannot fit {unknown}; expected some of {sorted(FITTABLE)}")
    base = transport_for(spec)
    sizes = np.array([size for size, _ in points])
    measured_busbw = np.array([busbw for _, busbw in points])

    def predict(vector: np.ndarray) -> list[dict[str, Any]]:
        simulator = Simulator(spec, transport=_with(base, fit, vector), **simulator_options)
        return [simulator.run(collective, size, algorithm, protocol, top_links=0) for size in sizes]

    def residuals(vector: np.ndarray) -> np.ndarray:
        busbw = np.array([result["busbw_GBps"] for result in predict(vector)])
        return np.log(measured_busbw / busbw)  # = log(predicted time / measured time)

    lower = np.array([_encode(name, FITTABLE[name][1]) for name in fit])
    upper = np.array([_encode(name, FITTABLE[name][2]) for name in fit])
    starts = [
        np.array([_encode(name, _value(base, name)) for name in fit]),
        *(
            np.array([_encode(name, scale if FITTABLE[name][0] == "latency" else 0.7) for name in fit])
            for scale in (300.0, 10_000.0)
        ),
    ]
    best = min(
        (
            optimize.least_squares(residuals, np.clip(start, lower, upper), bounds=(lower, upper), diff_step=1e-3)
            for start in starts
        ),
        key=lambda solution: solution.cost,
    )
    results = predict(best.x)
    errors = np.array([result["busbw_GBps"] for result in results]) / measured_busbw - 1
    parameters = {name: _decode(name, value) for name, value in zip(fit, best.x)}
    return {
        "transport": _overrides(parameters),
        "parameters": parameters,
        "points": [
            {
                "size_bytes": size,
                "measured_busbw_GBps": float(busbw),
                "predicted_busbw_GBps": result["busbw_GBps"],
                "relative_error": float(error),
                "algorithm": result["algorithm"],
                "protocol": result["protocol"],
            }
            for size, busbw, result, error in zip(sizes.tolist(), measured_busbw, results, errors)
        ],
        "max_relative_error": float(np.abs(errors).max()),
        "rms_relative_error": float(np.sqrt(np.mean(errors**2))),
    }


def _encode(name: str, value: float) -> float:
    return float(np.log(value)) if FITTABLE[name][0] == "latency" else float(value)


def _decode(name: str, value: float) -> float:
    return float(np.exp(value)) if FITTABLE[name][0] == "latency" else float(value)


def _value(transport: Transport, name: str) -> float:
    value: Any = transport
    for part in name.split("."):
        value = getattr(value, part)
    return float(value)


def _overrides(parameters: Mapping[str, float]) -> dict[str, Any]:
    """``{"scale_up.Simple.efficiency": 0.8}`` -> ``{"scale_up": {"Simple": {"efficiency": 0.8}}}``."""
    overrides: dict[str, Any] = {}
    for name, value in parameters.items():
        *sections, field = name.split(".")
        section = overrides
        for part in sections:
            section = section.setdefault(part, {})
        section[field] = value
    return overrides


def _with(base: Transport, fit: Sequence[str], vector: np.ndarray) -> Transport:
    return base.updated(_overrides({name: _decode(name, value) for name, value in zip(fit, vector)}))
