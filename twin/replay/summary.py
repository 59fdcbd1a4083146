"""A finished replay in a few numbers, JSON-ready, to store and show next to the timeline."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np

from twin.replay.costs import FLOW
from twin.replay.engine import Replay
from twin.traces.model import FlowEvent

__all__ = ["replay_summary"]

_STRETCHED = 1 + 1e-6  # an event counts as stretched beyond this factor of its solo time


def replay_summary(replay: Replay, *, top: int = 10) -> dict[str, Any]:
    """Duration, events, time per operation, busiest links, peak congestion, utilisation per link class.

    Keys (shape in docs/replay.md): ``fabric``, ``trace``, ``duration_s``,
    ``events`` (``total``, ``collectives``, ``flows``, ``stretched``,
    ``distinct_operations``, ``cache_hit_rate``), ``operations`` (per
    operation: ``count``, ``bytes``, ``time_s`` as run, ``solo_s`` as if
    alone, ``stretch`` = their ratio, ``algorithms`` and ``protocols`` with their counts), ``busiest_links``
    (by bytes over the whole replay), ``peak_congestion`` and ``link_classes``
    (per class: ``links``, ``bytes``, ``mean_utilization``, ``max_utilization``
    over the whole replay).
    """
    layout = replay.layout
    events = replay.bound.trace.events
    duration = replay.duration_s
    taken = replay.end_s - replay.start_s
    solo = replay.solo_s
    arc_bytes = replay.arc_bytes()
    with np.errstate(invalid="ignore", divide="ignore"):
        arc_utilization = np.nan_to_num(arc_bytes / (layout.arc_capacity * duration)) if duration > 0 else arc_bytes * 0
    link_bytes = arc_bytes[: layout.link_count] + arc_bytes[layout.link_count :]
    link_utilization = layout.link_values(arc_utilization)

    operations: dict[str, dict[str, Any]] = defaultdict(lambda: {"count": 0, "bytes": 0, "time_s": 0.0, "solo_s": 0.0, "algorithms": Counter(), "protocols": Counter()})
    for position, event in enumerate(events):
        name = FLOW if isinstance(event, FlowEvent) else event.op
        entry = operations[name]
        entry["count"] += 1
        entry["bytes"] += event.bytes
        entry["time_s"] += float(taken[position])
        entry["solo_s"] += float(solo[position])
        cost = replay.costs[replay.cost_index[position]]
        entry["algorithms"][cost.algorithm] += 1
        entry["protocols"][cost.protocol] += 1
    for entry in operations.values():
        entry["stretch"] = entry["time_s"] / entry["solo_s"] if entry["solo_s"] > 0 else 1.0
        entry["algorithms"] = dict(entry["algorithms"].most_common())
        entry["protocols"] = dict(entry["protocols"].most_common())

    busiest = np.argsort(-link_bytes, kind="stable")[:top]
    flows = sum(isinstance(event, FlowEvent) for event in events)
    return {
        "fabric": replay.bound.spec.name,
        "trace": replay.bound.trace.name,
        "duration_s": duration,
        "events": {
            "total": len(events),
            "collectives": len(events) - flows,
            "flows": flows,
            "stretched": int(np.count_nonzero(taken > solo * _STRETCHED)),
            "distinct_operations": replay.distinct_costs,
            "cache_hit_rate": 1 - replay.distinct_costs / replay.lookups if replay.lookups else 0.0,
        },
        "operations": dict(sorted(operations.items())),
        "busiest_links": [
            {
                **_link_record(replay, int(link), arc_bytes),
                "bytes": float(link_bytes[link]),
                "utilization": float(link_utilization[link]),
            }
            for link in busiest
            if link_bytes[link] > 0
        ],
        "peak_congestion": {
            "congestion": replay.peak_congestion,
            "t_s": replay.peak_t_s,
            **(layout.arc_record(replay.peak_arc) if replay.peak_arc >= 0 else {"link": None, "from": None, "to": None, "from_name": None, "to_name": None, "class": None}),
        },
        "link_classes": _per_class(replay, link_bytes, link_utilization),
    }


def _link_record(replay: Replay, link: int, arc_bytes: np.ndarray) -> dict[str, Any]:
    """A link named in its busier direction."""
    backwards = arc_bytes[replay.layout.link_count + link] > arc_bytes[link]
    return replay.layout.arc_record(link + replay.layout.link_count * backwards)


def _per_class(replay: Replay, link_bytes: np.ndarray, link_utilization: np.ndarray) -> dict[str, dict[str, Any]]:
    classes = np.array(replay.layout.link_class, dtype=object)
    result = {}
    for name in sorted(set(replay.layout.link_class)):
        members = classes == name
        result[name] = {
            "links": int(members.sum()),
            "bytes": float(link_bytes[members].sum()),
            "mean_utilization": float(link_utilization[members].mean()),
            "max_utilization": float(link_utilization[members].max()),
        }
    return result
