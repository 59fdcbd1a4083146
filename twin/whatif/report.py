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
from twin.simcore.translation import ENGLISH, LATER, Translations, gettext_noop, rendered, words_from_plain

__all__ = [
    "CAUSE_NAMES",
    "ECMP_LOSS_THRESHOLD",
    "REMEDIES",
    "REPORT_SCHEMA",
    "assemble_report",
    "compare_reports",
    "efficiency_note",
    "knee_explanation",
    "knee_facts",
    "knee_index",
    "report_summary",
]

REPORT_SCHEMA = "twin-whatif-report/1"
ECMP_LOSS_THRESHOLD = 0.10
"""Hashing at least this far below spraying counts as ECMP collisions."""
TRAINING_METRIC = "training_step"

REMEDIES: dict[str, dict[str, str]] = {
    "switch-congestion": {
        "symptom": gettext_noop("non-linear scaling after growth"),
        "likely_cause": gettext_noop("switch congestion"),
        "check": gettext_noop("per-port utilisation"),
        "fix": gettext_noop("change topology or add switches"),
    },
    "ecmp-collisions": {
        "symptom": gettext_noop("non-linear scaling after growth"),
        "likely_cause": gettext_noop("switch congestion (ECMP hash collisions)"),
        "check": gettext_noop("per-port utilisation; compare hashing with spraying"),
        "fix": gettext_noop("change topology or add switches; adaptive routing or packet spraying"),
    },
    "card-port": {
        "symptom": gettext_noop("bandwidth only ~half of peak"),
        "likely_cause": gettext_noop("chunk size wrong (each step's share shrinks as ranks grow)"),
        "check": gettext_noop("sweep chunk size in a benchmark"),
        "fix": gettext_noop("chunk ~ bandwidth-delay product; a hierarchical or tree algorithm"),
    },
    "latency": {
        "symptom": gettext_noop("performance collapses at scale"),
        "likely_cause": gettext_noop("no topology-aware placement (more hops and steps per collective)"),
        "check": gettext_noop("check placement against hop distance"),
        "fix": gettext_noop("topology-aware scheduling"),
    },
    # Latency-bound with the same diameter: the hops did not grow, the algorithm's steps did (a
    # ring's 2(p-1)); placement cannot help there, fewer and larger steps can.
    "latency-steps": {
        "symptom": gettext_noop("performance collapses at scale"),
        "likely_cause": gettext_noop("more steps per collective: each step's share shrinks until its latency dominates"),
        "check": gettext_noop("compare the algorithms at this size"),
        "fix": gettext_noop("fewer, larger steps: a hierarchical or in-switch algorithm, or larger messages (gradient buckets)"),
    },
    "protocol-overhead": {
        "symptom": gettext_noop("high small-message latency"),
        "likely_cause": gettext_noop("protocol overhead"),
        "check": gettext_noop("compare memory-semantic vs message-passing latency"),
        "fix": gettext_noop("use memory semantics"),
    },
}
"""Cause code -> the matching row of DOMAIN.md's troubleshooting table (English, translated when shown)."""

CAUSE_NAMES: dict[str, str] = {
    "switch-congestion": gettext_noop("switch congestion"),
    "ecmp-collisions": gettext_noop("ECMP hash collisions"),
    "card-port": gettext_noop("the cards' own ports"),
    "latency": gettext_noop("latency"),
    "latency-steps": gettext_noop("latency (steps)"),
    "protocol-overhead": gettext_noop("protocol overhead"),
}
"""Cause code -> a short name for the plots."""


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
        raise WhatIfError(LATER.gettext("no stage results to report on"))
    if not threshold_points > 0:
        raise WhatIfError(LATER.gettext("threshold %(threshold)s points; expected a positive number") % {"threshold": repr(threshold_points)})
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
            entry["efficiency"][TRAINING_METRIC] = _ratio(_step_bus_time(first["training"]), _step_bus_time(entry["training"]))
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
    ("cards", gettext_noop("cards")),
    ("tiers", gettext_noop("tiers")),
    ("switches_total", gettext_noop("switches")),
    ("power_kw", gettext_noop("power (kW)")),
    ("cost_usd", gettext_noop("cost (USD)")),
    ("bisection_GBps", gettext_noop("bisection (GB/s)")),
    ("diameter_hops", gettext_noop("diameter (hops)")),
    ("mean_hops", gettext_noop("mean hops")),
    ("step_comm_time_s", gettext_noop("step communication (s)")),
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
) -> dict[str, Any] | None:
    """Why ``entry`` cannot be compared with the first stage on ``metric``, if it cannot
    (``algorithm``, ``cards`` of the first stage, ``reason``).

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
    return {"algorithm": first_point["chosen_algorithm"], "cards": first["cards"], "reason": reason}


def efficiency_note(note: Mapping[str, Any] | str, tr: Translations = ENGLISH) -> str:
    """Why a stage's efficiency is missing (``efficiency_notes``), for people."""
    if isinstance(note, str):  # stored before notes were kept as data: English
        return note
    return tr.gettext(
        "not comparable with the first stage: %(algorithm)s (chosen at %(cards)s cards) is not simulated here (%(reason)s)"
    ) % {"algorithm": note["algorithm"], "cards": f"{note['cards']:,}", "reason": rendered(words_from_plain(note["reason"]), tr)}  # English text in older reports


def _step_bus_time(training: Mapping[str, Any] | None) -> float | None:
    """The training step's communication with each all-reduce's time divided by its ring factor
    2(n-1)/n, as busbw divides it out: a DP group grown from 2 to 4 cards moves 1.5x the bytes per
    card by the algorithm's nature, not because the fabric got worse. Constant on an ideal fabric."""
    if not training:
        return None
    parts = [part for part in (training["tp_allreduce"], training["dp_allreduce"]) if part]
    return sum(part["time_s"] * part["per_step"] * part["ranks"] / (2 * (part["ranks"] - 1)) for part in parts)


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
        elif not bottleneck.startswith("card-"):
            cause = "switch-congestion"
        else:
            cause = "card-port"
    elif point.get("bottleneck_domain") == "scale-out":
        cause = "protocol-overhead"
    elif entry["diameter_hops"] > previous["diameter_hops"]:
        cause = "latency"
    else:
        cause = "latency-steps"
    algorithm = point.get("chosen_algorithm") or point.get("algorithm")
    algorithm_before = before and (before.get("chosen_algorithm") or before.get("algorithm"))
    value, value_before = entry["efficiency"][metric], previous["efficiency"][metric]
    knee = {
        "alternative": entry["alternative"],
        "factor": entry["factor"],
        "cards": entry["cards"],
        "previous_factor": previous["factor"],
        "metric": metric,
        "efficiency": value,
        "previous_efficiency": value_before,
        "drop_points": (value_before - value) * 100,
        "cause": cause,
        "bound": point["bound"],
        "bottleneck_link_class": point.get("bottleneck_link_class"),
        "ecmp_collision_loss": loss,
        "tiers": entry["tiers"],
        "previous_tiers": previous["tiers"],
        "diameter_hops": entry["diameter_hops"],
        "previous_diameter_hops": previous["diameter_hops"],
        "algorithm": algorithm,
        "previous_algorithm": algorithm_before or None,
        "remedy": REMEDIES[cause],
    }
    return {**knee, "facts": knee_facts(knee), "explanation": knee_explanation(knee)}


def knee_facts(knee: Mapping[str, Any], tr: Translations = ENGLISH) -> list[str]:
    """What changed at the knee besides the size: a new switch tier, another best algorithm."""
    if "previous_tiers" not in knee:  # stored before the knee kept what changed: its English facts
        return list(knee["facts"])
    facts = []
    if knee["tiers"] > knee["previous_tiers"]:
        facts.append(
            tr.gettext("a switch tier was added (%(before)s -> %(after)s tiers; diameter %(diameter_before)s -> %(diameter)s hops)")
            % {"before": knee["previous_tiers"], "after": knee["tiers"],
               "diameter_before": knee["previous_diameter_hops"], "diameter": knee["diameter_hops"]}
        )
    if knee["previous_algorithm"] and knee["algorithm"] != knee["previous_algorithm"]:
        facts.append(
            tr.gettext("the best algorithm changed from %(before)s to %(after)s")
            % {"before": knee["previous_algorithm"], "after": knee["algorithm"]}
        )
    return facts


def knee_explanation(knee: Mapping[str, Any], tr: Translations = ENGLISH) -> str:
    """The knee in one paragraph: where, how far efficiency drops, why, and the fix."""
    bottleneck = knee["bottleneck_link_class"] or "unknown"
    sentences = {
        "ecmp-collisions": tr.gettext(
            "bandwidth-bound on the %(links)s links, where per-flow ECMP hashing delivers %(loss)s less than ideal "
            "spraying (hash collisions)"
        ),
        "switch-congestion": tr.gettext("bandwidth-bound: the %(links)s tier saturates"),
        "card-port": tr.gettext("bandwidth-bound on the cards' own ports (%(links)s), with more, smaller steps per collective"),
        "protocol-overhead": tr.gettext("latency-bound on the scale-out network: message-passing overhead per step"),
        "latency": tr.gettext("latency-bound: more steps and more hops per step"),
        "latency-steps": tr.gettext("latency-bound: more steps per collective, over as many hops as before"),
    }
    loss = knee["ecmp_collision_loss"]
    sentence = sentences[knee["cause"]] % {"links": bottleneck, "loss": f"{loss:.0%}" if loss is not None else "?"}
    metric = knee["metric"]
    if metric == TRAINING_METRIC:
        what = tr.gettext("training-step communication")
    else:
        what = tr.gettext("%(collective)s busbw") % {"collective": metric}
    facts = knee_facts(knee, tr)
    return tr.gettext(
        "At %(cards)s cards (%(factor)sx, %(alternative)s) %(what)s efficiency drops from %(before)s to %(after)s "
        "(%(points)s points): %(cause)s%(facts)s. Fix: %(fix)s."
    ) % {
        "cards": f"{knee['cards']:,}",
        "factor": f"{knee['factor']:g}",
        "alternative": knee["alternative"],
        "what": what,
        "before": f"{knee['previous_efficiency']:.0%}",
        "after": f"{knee['efficiency']:.0%}",
        "points": f"{knee['drop_points']:.0f}",
        "cause": sentence,
        "facts": "".join(tr.gettext("; %(fact)s") % {"fact": fact} for fact in facts),
        "fix": tr.gettext(knee["remedy"]["fix"]),
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
