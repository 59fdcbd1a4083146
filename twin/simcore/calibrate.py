"""Fit chosen transport parameters to a measured nccl-tests curve by least squares.

The residual of each measured point is ``log(predicted time / measured
time)``, so every size weighs the same whatever its magnitude; the
prediction is ``Simulator.run`` with the collective, algorithm and protocol
the measurement used (``"auto"`` lets the twin pick per size, as NCCL's tuner
does). Any subset of ``FITTABLE`` can be fitted, each within its physical
range (latencies from 0 to 1 ms, efficiencies in (0, 1]); the fit is refused,
with the reason, when the measurements ask for a value at the edge of that
range, when a parameter changes no prediction, or when two parameters cannot
be told apart by the points. The standard error of each parameter comes from
the Jacobian at the optimum (the residual variance times ``(J^T J)^-1``).
The fit is non-smooth where the chosen algorithm changes, so it starts from
a few points and keeps the best.

Validation: ``held_out`` sizes are left out of the fit and the error of the
fitted twin at each of them is reported on its own.

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
from twin.simcore.translation import LATER

__all__ = ["DEFAULT_FIT", "FITTABLE", "calibrate"]

# parameter -> (kind, lower bound, upper bound, unit of the fit's scaled variable). Latencies in
# ns, fitted in us; an efficiency is a fraction (0.01 stands for "above 0").
_LATENCY, _FRACTION = ("latency", 0.0, 1e6, 1e3), ("fraction", 0.01, 1.0, 1.0)
FITTABLE: dict[str, tuple[str, float, float, float]] = {
    **{f"{domain}.efficiency": _FRACTION for domain in ("scale_up", "scale_out")},
    **{f"{domain}.peer_issue_ns": _LATENCY for domain in ("scale_up", "scale_out")},
    **{
        f"{domain}.{protocol}.{field}": bounds
        for domain in ("scale_up", "scale_out")
        for protocol in PROTOCOLS
        for field, bounds in (("base_latency_ns", _LATENCY), ("hop_latency_ns", _LATENCY), ("efficiency", _FRACTION))
    },
    "in_switch_latency_ns": _LATENCY,
    "in_switch_step_latency_ns": _LATENCY,
    "in_switch_efficiency": _FRACTION,
}
DEFAULT_FIT = ("scale_up.efficiency", "scale_up.Simple.hop_latency_ns")
# A parameter whose fitted value sits within this share of its range from a bound is "at" it
# (1 ns for a latency), as is one the optimiser reports held by its bound.
_AT_BOUND = 1e-6
# |correlation| above this: the two parameters move together and the points cannot separate them.
_DEGENERATE = 0.9999


def calibrate(
    spec: FabricSpec,
    measured: Iterable[tuple[float, float]],
    *,
    collective: str = "allreduce",
    algorithm: str = "auto",
    protocol: str = "auto",
    fit: Sequence[str] = DEFAULT_FIT,
    held_out: Iterable[float] = (),
    transport: Mapping[str, Any] | None = None,
    **simulator_options: Any,
) -> dict[str, Any]:
    """Fit the ``fit`` parameters so that ``spec`` reproduces ``measured`` busbw.

    ``transport``: the overrides the fabric's runs use on top of ``spec``'s (its stored settings
    and an earlier calibration); the parameters not fitted keep those values.

    ``measured`` holds ``(size_bytes, busbw_GBps)`` points (nccl-tests
    semantics); the points at ``held_out`` sizes are not fitted, only
    predicted (validation). Returns ``transport`` (overrides to store with the
    fabric), ``parameters`` (fitted values by name), ``standard_errors`` (by
    name; ``None`` with as many fitted points as parameters), ``points``
    (size, measured and predicted busbw, relative error, log residual,
    whether it was held out, algorithm and protocol used), the largest and
    RMS relative errors over the fitted points and, with ``held_out``,
    ``validation`` (the same two errors over the held-out points).
    Raises ``TwinCoreError`` with the reason when the fit cannot be trusted.
    """
    fit = list(dict.fromkeys(fit))
    if not fit:
        raise TwinCoreError(LATER.gettext("choose at least one parameter to fit"))
    unknown = [name for name in fit if name not in FITTABLE]
    if unknown:
        raise TwinCoreError(LATER.gettext("cannot fit %(unknown)s; expected some of %(known)s") % {"unknown": unknown, "known": sorted(FITTABLE)})
    points = sorted((float(size), float(busbw)) for size, busbw in measured)
    if not points or any(size <= 0 or not busbw > 0 for size, busbw in points):
        raise TwinCoreError(LATER.gettext("measured points need positive sizes and busbw"))
    sizes = np.array([size for size, _ in points])
    measured_busbw = np.array([busbw for _, busbw in points])
    held_out_sizes = sorted({float(size) for size in held_out})
    absent = [size for size in held_out_sizes if size not in sizes]
    if absent:
        raise TwinCoreError(
            LATER.gettext("held-out sizes %(absent)s are not among the measured sizes %(sizes)s")
            % {"absent": [int(size) for size in absent], "sizes": [int(size) for size in sizes]}
        )
    fitted_mask = ~np.isin(sizes, held_out_sizes)
    fitted_count = int(fitted_mask.sum())
    if fitted_count < len(fit):
        raise TwinCoreError(
            LATER.ngettext(
                "%(points)s fitted point cannot fit %(parameters)s parameters; fit fewer or hold out fewer sizes",
                "%(points)s fitted points cannot fit %(parameters)s parameters; fit fewer or hold out fewer sizes",
                fitted_count,
            )
            % {"points": fitted_count, "parameters": len(fit)}
        )

    base = transport_for(spec, transport)
    scale = np.array([FITTABLE[name][3] for name in fit])
    lower = np.array([FITTABLE[name][1] for name in fit]) / scale
    upper = np.array([FITTABLE[name][2] for name in fit]) / scale

    def predict(vector: np.ndarray, at: np.ndarray) -> list[dict[str, Any]]:
        simulator = Simulator(spec, transport=_with(base, fit, vector * scale), **simulator_options)
        return [simulator.run(collective, size, algorithm, protocol, top_links=0) for size in at]

    def residuals(vector: np.ndarray) -> np.ndarray:
        busbw = np.array([result["busbw_GBps"] for result in predict(vector, sizes[fitted_mask])])
        return np.log(measured_busbw[fitted_mask] / busbw)  # = log(predicted time / measured time)

    starts = [
        np.array([_value(base, name) for name in fit]) / scale,
        *(np.array([start if FITTABLE[name][0] == "latency" else 0.7 for name in fit]) / scale for start in (300.0, 10_000.0)),
    ]
    best = min(
        (
            optimize.least_squares(residuals, np.clip(start, lower, upper), bounds=(lower, upper), diff_step=1e-3)
            for start in starts
        ),
        key=lambda solution: solution.cost,
    )
    jacobian = _jacobian(residuals, best.x, best.fun, lower, upper)
    _refuse_untrustworthy(fit, best.x, best.active_mask, jacobian, lower, upper, scale)
    standard_errors = _standard_errors(fit, best.fun, jacobian, scale)
    _refuse_undetermined(fit, best.x * scale, standard_errors)
    results = predict(best.x, sizes)
    predicted_busbw = np.array([result["busbw_GBps"] for result in results])
    errors = predicted_busbw / measured_busbw - 1
    parameters = {name: float(value) for name, value in zip(fit, best.x * scale)}
    fitted = {
        "transport": _overrides(parameters),
        "parameters": parameters,
        "standard_errors": standard_errors,
        "points": [
            {
                "size_bytes": size,
                "measured_busbw_GBps": float(busbw),
                "predicted_busbw_GBps": result["busbw_GBps"],
                "relative_error": float(error),
                "residual": float(np.log(busbw / result["busbw_GBps"])),
                "held_out": not in_fit,
                "algorithm": result["algorithm"],
                "protocol": result["protocol"],
            }
            for size, busbw, result, error, in_fit in zip(sizes.tolist(), measured_busbw, results, errors, fitted_mask)
        ],
        **_error_summary(errors[fitted_mask]),
    }
    if held_out_sizes:
        fitted["validation"] = {"held_out_sizes": held_out_sizes, **_error_summary(errors[~fitted_mask])}
    return fitted


def _error_summary(errors: np.ndarray) -> dict[str, float]:
    return {"max_relative_error": float(np.abs(errors).max()), "rms_relative_error": float(np.sqrt(np.mean(errors**2)))}


def _jacobian(residuals: Any, x: np.ndarray, at_x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Forward differences of ``residuals`` at ``x``, stepping inwards at a bound, with a step
    of 1e-3 of the value (at least 1e-3 of the fit's unit: 1 ns, or 0.001 of efficiency), so
    a parameter at 0 still gets a step."""
    columns = []
    for index, value in enumerate(x):
        step = 1e-3 * max(abs(value), 1.0)
        if value + step > upper[index]:
            step = -step
        moved = x.copy()
        moved[index] = value + step
        columns.append((residuals(moved) - at_x) / step)
    return np.column_stack(columns)


def _refuse_untrustworthy(
    fit: Sequence[str], x: np.ndarray, held_by_bound: np.ndarray, jacobian: np.ndarray, lower: np.ndarray, upper: np.ndarray, scale: np.ndarray
) -> None:
    """Raise when a parameter moves no prediction, a value is pinned at its physical bound (the
    points ask for one beyond it), or two parameters move the predictions alike."""
    idle = [name for index, name in enumerate(fit) if not np.any(jacobian[:, index])]
    if idle:
        raise TwinCoreError(
            LATER.gettext("%(names)s changes no prediction of these runs (not used by their algorithm or protocol); leave it out of the fit") % {"names": idle}
        )
    margin = _AT_BOUND * (upper - lower)
    for index, name in enumerate(fit):
        if not held_by_bound[index] and lower[index] + margin[index] < x[index] < upper[index] - margin[index]:
            continue
        raise TwinCoreError(
            LATER.gettext(
                "the measurements ask for %(name)s beyond its physical range (%(range)s): the fit stops at %(value)s, so the "
                "other costs of the model do not match these runs; fit other parameters or check the fabric's link speeds "
                "and the runs' algorithm"
            )
            % {"name": name, "range": _range(name), "value": _shown(name, x[index] * scale[index])}
        )
    norms = np.linalg.norm(jacobian, axis=0)
    correlation = (jacobian.T @ jacobian) / np.outer(norms, norms)
    for first in range(len(fit)):
        for second in range(first + 1, len(fit)):
            if abs(correlation[first, second]) > _DEGENERATE:
                raise TwinCoreError(
                    LATER.gettext("%(first)s and %(second)s change the predictions of these runs alike, so the points cannot tell them apart; fit one of them")
                    % {"first": fit[first], "second": fit[second]}
                )


def _refuse_undetermined(fit: Sequence[str], values: np.ndarray, standard_errors: Mapping[str, float | None]) -> None:
    """Raise when a fitted value is smaller than its standard error: the points leave it anywhere
    from about nothing to twice its value, so storing it would mean nothing (the model misses
    these runs elsewhere and this parameter soaks up the misfit, or the sizes do not reach it)."""
    for name, value in zip(fit, values):
        error = standard_errors[name]
        if error is not None and error > abs(value):
            raise TwinCoreError(
                LATER.gettext(
                    "the points do not determine %(name)s: %(value)s +- %(error)s; fit fewer parameters, measure the sizes "
                    "where it matters or check the runs' algorithm"
                )
                % {"name": name, "value": _shown(name, value), "error": _shown(name, error)}
            )


def _standard_errors(fit: Sequence[str], at_x: np.ndarray, jacobian: np.ndarray, scale: np.ndarray) -> dict[str, float | None]:
    """sqrt(diag(s^2 (J^T J)^-1)), s^2 = sum of squared residuals / (points - parameters), back
    in the parameter's own unit; ``None`` without a spare point to estimate s^2 from."""
    freedom = len(at_x) - len(fit)
    if freedom < 1:
        return {name: None for name in fit}
    variance = float(at_x @ at_x) / freedom
    covariance = variance * np.linalg.inv(jacobian.T @ jacobian)
    return {name: float(np.sqrt(covariance[index, index]) * scale[index]) for index, name in enumerate(fit)}


def _range(name: str) -> Any:
    kind, lower, upper, _ = FITTABLE[name]
    if kind == "latency":
        return LATER.gettext("0 to %(upper)s ms") % {"upper": f"{upper / 1e6:g}"}
    return LATER.gettext("above 0, at most %(upper)s") % {"upper": f"{upper:g}"}


def _shown(name: str, value: float) -> str:
    return f"{value / 1e3:.4g} us" if FITTABLE[name][0] == "latency" else f"{value:.4g}"


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


def _with(base: Transport, fit: Sequence[str], values: np.ndarray) -> Transport:
    return base.updated(_overrides(dict(zip(fit, values.tolist()))))
