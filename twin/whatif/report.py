"""Assemble the cells of a what-if into one report: scaling efficiency, the knee, alternatives.

Definitions (docs/whatif.md):

- **reference size**: the message size efficiencies are read at (default:
  the largest of the sweep, where collectives are bandwidth-bound).
- **collective efficiency** of a stage: its busbw at the reference size
  (``auto`` if swept, else the first algorithm) over the first stage's, for
  the same alternative. Busbw is normalised per card, so 1.0 is ideal. When
  the first stage's choice is an all-pairs algorithm this stage's sweep had
  to leave out (too many flows to simulate), the efficiency is ``None`` and
  ``efficiency_notes`` says why: the drop would be the simulator's, not the
  fabric's.
- **training-step efficiency**: the first stage's step communication time over
  this stage's (weak scaling: the work per card is fixed, so ideal is 1.0).
- **knee**: the first stage whose efficiency on some metric is more than
  ``threshold_points`` percentage points below the previous stage's (a sudden
  drop, not a slow decline); among metrics the earliest stage wins, then the
  order allreduce, allgather, reducescatter, alltoall, training step.
- **cause** at the knee, from the reference point: bandwidth-bound with a
  hashing loss of at least ``ECMP_LOSS_THRESHOLD`` against ideal spraying:
  ECMP collisions; bandwidth-bound on switch-to-switch links: that tier
  saturates; bandwidth-bound on the card's own port: per-step overhead as
  steps multiply; latency-bound: hops and steps (on scale-out: protocol
  overhead). Each cause maps to its row of DOMAIN.md's troubleshooting table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from twin.whatif.bom import bom_delta
from twin.whatif.errors import WhatIfError

__all__ = [
    "ECMP_LOSS_THRESHOLD",
    "REMEDIES",
    "REPORT_SCHEMA",
    "assemble_report",
    "compare_reports",
    "knee_index",
    "report_summary",
]

REPORT_SCHEMA = "twin-whatif-report/1"
ECMP_LOSS_THRESHOLD = 0.10
"""Hashing at least this far below spraying counts as ECMP collisions."""
TRAINING_METRIC = "training_step"

REMEDIES: dict[str, dict[str, str]] = {
    "switch-congestion": {
        "symptom": "non-linear scaling after growth",
        "likely_cause": "switch congestion",
        "check": "per-port utilisation",
        "fix": "change topology or add switches",
    },
    "ecmp-collisions": {
        "symptom": "non-linear scaling after growth",
        "likely_cause": "switch congestion (ECMP hash collisions)",
        "check": "per-port utilisation; compare hashing with spraying",
        "fix": "change topology or add switches; adaptive routing or packet spraying",
    },
    "card-port": {
        "symptom": "bandwidth only ~half of peak",
        "likely_cause": "chunk size wrong (each step's share shrinks as ranks grow)",
        "check": "sweep chunk size in a benchmark",
        "fix": "chunk ~ bandwidth-delay product; a hierarchical or tree algorithm",
    },
    "latency": {
        "symptom": "performance collapses at scale",
        "likely_cause": "no topology-aware placement (more hops and steps per collective)",
        "check": "check placement against hop distance",
        "fix": "topology-aware scheduling",
    },
    "protocol-overhead": {
        "symptom": "high small-message latency",
        "likely_cause": "protocol overhead",
        "check": "compare memory-semantic vs message-passing latency",
        "fix": "use memory semantics",
    },
}
"""Cause code -> the matching row of DOMAIN.md's troubleshooting table."""


def knee_index(efficiency: Sequence[float | None], threshold_points: float = 10.0) -> int | None:
    """Index of the first value more than ``threshold_points`` points below the one before.

    ``None`` values (missing) are skipped over: the comparison is with the last known one.

    >>> knee_index([1.0, 0.97, 0.95, 0.71, 0.6])
    3
    >>> knee_index([1.0, 0.95, 0.9, 0.85]) is None
    True
    """
    previous = None
    for position, value in enumerate(efficiency):
        if value is None:
            continue
        if previous is not None and (previous - value) * 100 > threshold_points:
            return position
        previous = value
    return None


def assemble_report(
    stage_results: Sequence[Mapping[str, Any]],
    *,
    rules: Mapping[str, Any] | None = None,
    threshold_points: float = 10.0,
    reference_size: int | None = None,
    title: str = "Staged scale-out what-if",
) -> dict[str, Any]:
    """One JSON-ready report from every stage's cells.

    ``stage_results``: one mapping per (stage, alternative), in any order, with
    ``stage`` (``StageSpec.to_dict()``), ``bom``, ``structure``,
    ``performance`` (a list of ``performance_cell`` results) and ``training``
    (``training_step_cell`` result or ``None``). ``rules``:
    ``DesignRules.to_dict()``, shown in the report. Shape of the result in
    docs/whatif.md.
    """
    if not stage_results:
        raise WhatIfError("no stage results to report on")
    if not threshold_points > 0:
        raise WhatIfError(f"threshold {threshold_points!r} points; expected a positive number")
    alternatives: list[str] = []
    for result in stage_results:
        if result["stage"]["alternative"] not in alternatives:
            alternatives.append(result["stage"]["alternative"])
    collectives = []
    sizes: list[int] = []
    for result in stage_results:
        for cell in result["performance"]:
            if cell["collective"] not in collectives:
                collectives.append(cell["collective"])
            sizes = sorted(set(sizes) | set(cell["sizes"]))
    reference = reference_size if reference_size is not None else (sizes[-1] if sizes else None)
    metrics = [*collectives, TRAINING_METRIC]

    stages: list[dict[str, Any]] = []
    knees: dict[str, dict[str, Any] | None] = {}
    for alternative in alternatives:
        ordered = sorted(
            (result for result in stage_results if result["stage"]["alternative"] == alternative),
            key=lambda result: result["stage"]["factor"],
        )
        entries = [_entry(result, reference) for result in ordered]
        for position, entry in enumerate(entries):
            first = entries[0]
            entry["bom_delta"] = bom_delta(entries[position - 1]["bom"], entry["bom"]) if position else None
            entry["efficiency"], entry["efficiency_notes"] = {}, {}
            for metric in collectives:
                unavailable = _unavailable_reference_algorithm(first, entry, metric, reference)
                if unavailable:
                    entry["efficiency"][metric] = None
                    entry["efficiency_notes"][metric] = unavailable
                else:
                    entry["efficiency"][metric] = _ratio(
                        entry["reference_busbw_GBps"].get(metric), first["reference_busbw_GBps"].get(metric)
                    )
            entry["efficiency"][TRAINING_METRIC] = _ratio(first["step_comm_time_s"], entry["step_comm_time_s"])
        knees[alternative] = _knee(entries, metrics, threshold_points)
        stages += entries
    return {
        "schema": REPORT_SCHEMA,
        "title": title,
        "rules": dict(rules) if rules is not None else None,
        "threshold_points": float(threshold_points),
        "reference_size": reference,
        "primary": alternatives[0],
        "alternatives": alternatives,
        "collectives": collectives,
        "sizes": sizes,
        "stages": stages,
        "knees": knees,
        "knee": knees[alternatives[0]],
        "side_by_side": _side_by_side(stages, alternatives),
    }


def report_summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """The short form for ``manage.py whatif --json``: one entry per stage, and the knee."""
    keys = ("alternative", "factor", "cards", "switches", "tiers", "diameter_hops", "bisection_GBps", "power_kw", "busbw_GBps")
    return {
        "stages": [{key: stage[key] for key in keys} for stage in report["stages"]],
        "knee": report["knee"],
    }


_COMPARED = (
    ("cards", "cards"),
    ("tiers", "tiers"),
    ("switches_total", "switches"),
    ("power_kw", "power (kW)"),
    ("cost_usd", "cost (USD)"),
    ("bisection_GBps", "bisection (GB/s)"),
    ("diameter_hops", "diameter (hops)"),
    ("mean_hops", "mean hops"),
    ("step_comm_time_s", "step communication (s)"),
)


def compare_reports(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Two reports side by side, stage by stage (matched on alternative and factor).

    Returns ``a`` and ``b`` (title, primary, reference size, knee), ``metrics``
    (key -> label) and ``rows``: ``alternative``, ``factor`` and, per metric,
    ``{"a", "b", "change"}`` (relative change b / a - 1, ``None`` when either is
    missing or a is 0). Collectives add ``busbw <collective>`` at each
    report's reference size.
    """
    metrics = dict(_COMPARED)
    for collective in [*a["collectives"], *(name for name in b["collectives"] if name not in a["collectives"])]:
        metrics[f"busbw {collective}"] = f"{collective} busbw (GB/s)"
    by_key_a = {(stage["alternative"], stage["factor"]): stage for stage in a["stages"]}
    by_key_b = {(stage["alternative"], stage["factor"]): stage for stage in b["stages"]}
    keys = list(by_key_a) + [key for key in by_key_b if key not in by_key_a]
    rows = []
    for alternative, factor in keys:
        row: dict[str, Any] = {"alternative": alternative, "factor": factor}
        for metric in metrics:
            x, y = _metric(by_key_a.get((alternative, factor)), metric), _metric(by_key_b.get((alternative, factor)), metric)
            ratio = _ratio(y, x)
            row[metric] = {"a": x, "b": y, "change": None if ratio is None else ratio - 1}
        rows.append(row)
    return {
        **{
            side: {
                "title": report["title"],
                "primary": report["primary"],
                "reference_size": report["reference_size"],
                "knee": report["knee"],
            }
            for side, report in (("a", a), ("b", b))
        },
        "metrics": metrics,
        "rows": rows,
    }


# -- stage entries -----------------------------------------------------------------------------


def _entry(result: Mapping[str, Any], reference: int | None) -> dict[str, Any]:
    stage, bom, structure = result["stage"], result["bom"], result["structure"]
    training = result.get("training")
    performance = {cell["collective"]: cell for cell in result["performance"]}
    return {
        "alternative": stage["alternative"],
        "factor": stage["factor"],
        "cards": stage["cards"],
        "label": stage["label"],
        "tiers": structure["tiers"],
        "scale_out_tiers": stage.get("scale_out_tiers"),
        "switches": bom["switches"],
        "switches_total": bom["switches_total"],
        "power_kw": bom["power_kw"]["total"],
        "cost_usd": bom["cost_usd"]["total"],
        "diameter_hops": structure["diameter_hops"],
        "mean_hops": structure["mean_hops"],
        "bisection_GBps": structure["bisection_GBps"],
        "busbw_GBps": {
            collective: {str(point["size_bytes"]): point["busbw_GBps"] for point in _headline_points(cell)}
            for collective, cell in performance.items()
        },
        "reference_busbw_GBps": {
            collective: _reference_point(cell, reference)["busbw_GBps"] if _reference_point(cell, reference) else None
            for collective, cell in performance.items()
        },
        "step_comm_time_s": training["step_comm_time_s"] if training else None,
        "stage": dict(stage),
        "bom": bom,
        "structure": structure,
        "performance": performance,
        "training": training,
    }


def _headline_points(cell: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The points of ``auto`` if swept, else of the first algorithm."""
    algorithm = "auto" if "auto" in cell["algorithms"] else cell["algorithms"][0]
    return [point for point in cell["points"] if point["algorithm"] == algorithm]


def _reference_point(cell: Mapping[str, Any], reference: int | None) -> Mapping[str, Any] | None:
    return next(
        (point for point in _headline_points(cell) if point["size_bytes"] == reference and point["busbw_GBps"] is not None),
        None,
    )


def _unavailable_reference_algorithm(
    first: Mapping[str, Any], entry: Mapping[str, Any], metric: str, reference: int | None
) -> str | None:
    """Why ``entry`` cannot be compared with the first stage on ``metric``, if it cannot.

    When the first stage's choice is an all-pairs algorithm left out of this
    stage's sweep (``performance_cell``'s ``too_large``), a drop would only
    show the simulator's limit, not the fabric: not comparable.
    """
    cell, first_cell = entry["performance"].get(metric), first["performance"].get(metric)
    first_point = _reference_point(first_cell, reference) if first_cell else None
    if cell is None or first_point is None:
        return None
    reason = cell.get("too_large", {}).get(first_point["chosen_algorithm"])
    if reason is None:
        return None
    return (
        f"not comparable with the first stage: {first_point['chosen_algorithm']} (chosen at "
        f"{first['cards']:,} cards) is not simulated here ({reason})"
    )


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


# -- the knee ----------------------------------------------------------------------------------


def _knee(entries: list[dict[str, Any]], metrics: list[str], threshold_points: float) -> dict[str, Any] | None:
    found = [
        (position, metric)
        for metric in metrics
        for position in [knee_index([entry["efficiency"][metric] for entry in entries], threshold_points)]
        if position is not None
    ]
    if not found:
        return None
    position, metric = min(found, key=lambda item: (item[0], metrics.index(item[1])))
    entry = entries[position]
    previous = next(
        candidate for candidate in reversed(entries[:position]) if candidate["efficiency"][metric] is not None
    )
    return _diagnose(previous, entry, metric)


def _diagnose(previous: dict[str, Any], entry: dict[str, Any], metric: str) -> dict[str, Any]:
    if metric == TRAINING_METRIC:
        point, before = _training_part(previous, entry)
        ecmp = None
    else:
        reference = entry["performance"][metric]["reference_size"]
        point = _reference_point(entry["performance"][metric], reference)
        before = _reference_point(previous["performance"][metric], reference)
        ecmp = entry["performance"][metric].get("ecmp")
    loss = ecmp.get("collision_loss") if ecmp else None
    bottleneck = point.get("bottleneck_link_class") or "unknown"
    if point["bound"] == "bandwidth":
        if loss is not None and loss >= ECMP_LOSS_THRESHOLD:
            cause = "ecmp-collisions"
            sentence = (
                f"bandwidth-bound on the {bottleneck} links, where per-flow ECMP hashing delivers "
                f"{loss:.0%} less than ideal spraying (hash collisions)"
            )
        elif not bottleneck.startswith("card-"):
            cause = "switch-congestion"
            sentence = f"bandwidth-bound: the {bottleneck} tier saturates"
        else:
            cause = "card-port"
            sentence = f"bandwidth-bound on the cards' own ports ({bottleneck}), with more, smaller steps per collective"
    elif point.get("bottleneck_domain") == "scale-out":
        cause = "protocol-overhead"
        sentence = "latency-bound on the scale-out network: message-passing overhead per step"
    else:
        cause = "latency"
        sentence = "latency-bound: more steps and more hops per step"
    facts = []
    if entry["tiers"] > previous["tiers"]:
        facts.append(
            f"a switch tier was added ({previous['tiers']} -> {entry['tiers']} tiers; diameter "
            f"{previous['diameter_hops']} -> {entry['diameter_hops']} hops)"
        )
    algorithm = point.get("chosen_algorithm") or point.get("algorithm")
    algorithm_before = before and (before.get("chosen_algorithm") or before.get("algorithm"))
    if algorithm_before and algorithm != algorithm_before:
        facts.append(f"the best algorithm changed from {algorithm_before} to {algorithm}")
    value, value_before = entry["efficiency"][metric], previous["efficiency"][metric]
    drop = (value_before - value) * 100
    remedy = REMEDIES[cause]
    what = "training-step communication" if metric == TRAINING_METRIC else f"{metric} busbw"
    explanation = (
        f"At {entry['cards']:,} cards ({entry['factor']:g}x, {entry['alternative']}) {what} efficiency drops "
        f"from {value_before:.0%} to {value:.0%} ({drop:.0f} points): {sentence}"
        + (f"; {'; '.join(facts)}" if facts else "")
        + f". Fix: {remedy['fix']}."
    )
    return {
        "alternative": entry["alternative"],
        "factor": entry["factor"],
        "cards": entry["cards"],
        "previous_factor": previous["factor"],
        "metric": metric,
        "efficiency": value,
        "previous_efficiency": value_before,
        "drop_points": drop,
        "cause": cause,
        "bound": point["bound"],
        "bottleneck_link_class": point.get("bottleneck_link_class"),
        "ecmp_collision_loss": loss,
        "facts": facts,
        "remedy": remedy,
        "explanation": explanation,
    }


def _training_part(previous: dict[str, Any], entry: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The all-reduce (TP or DP) whose share of the step grew most, now and before."""
    def part_time(training: Mapping[str, Any], part: str) -> float:
        data = training[f"{part}_allreduce"]
        return data["time_s"] * data["per_step"] if data else 0.0

    part = max(("tp", "dp"), key=lambda name: part_time(entry["training"], name) - part_time(previous["training"], name))
    return entry["training"][f"{part}_allreduce"], previous["training"][f"{part}_allreduce"]


def _side_by_side(stages: list[dict[str, Any]], alternatives: list[str]) -> list[dict[str, Any]]:
    factors = sorted({stage["factor"] for stage in stages})
    keys = ("cards", "tiers", "switches_total", "power_kw", "cost_usd", "bisection_GBps", "diameter_hops",
            "mean_hops", "reference_busbw_GBps", "step_comm_time_s", "efficiency")
    return [
        {
            "factor": factor,
            "alternatives": {
                stage["alternative"]: {key: stage[key] for key in keys}
                for alternative in alternatives
                for stage in stages
                if stage["factor"] == factor and stage["alternative"] == alternative
            },
        }
        for factor in factors
    ]


def _metric(stage: Mapping[str, Any] | None, metric: str) -> float | None:
    if stage is None:
        return None
    if metric.startswith("busbw "):
        return stage["reference_busbw_GBps"].get(metric.removeprefix("busbw "))
    return stage[metric]
