"""Many equal-size groups of cards running the same collective at the same time.

``Simulator`` (twin.simcore.simulate) runs one collective on one set of ranks.
A training job runs one collective in *every* group of a parallel dimension at
once (all TP groups all-reduce together), and those groups share the fabric's
links. ``run_groups`` evaluates that: each phase's flows of all groups are
routed together (``twin.simcore.compile.route``, same ECMP modes and flow
keys as the simulator), rates come from max-min sharing
(``twin.simcore.congestion.max_min_rates``) and a step lasts as long as its
slowest flow (``twin.simcore.algorithms.step_time``), exactly the simulator's
laws; only the flow set differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from twin.simcore.algorithms import Phase, step_time
from twin.simcore.compile import CompiledFabric, Routes, route
from twin.simcore.congestion import max_min_rates

__all__ = ["GroupRun", "arc_record", "flow_keys", "link_records", "route_phase", "run_groups"]


def flow_keys(sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """ECMP hash keys of flows between card numbers, as ``Simulator`` builds them (one channel)."""
    return (sources.astype(np.uint64) << np.uint64(20)) + targets.astype(np.uint64)


def route_phase(
    compiled: CompiledFabric, groups: np.ndarray, phase: Phase, *, ecmp: str, seed: int
) -> Routes:
    """Route the flows of ``phase`` in every group (rows of ``groups``: card numbers by rank)."""
    sources = groups[:, phase.sources].ravel()
    targets = groups[:, phase.targets].ravel()
    return route(compiled, sources, targets, mode=ecmp, seed=seed, flow_keys=flow_keys(sources, targets))


@dataclass(frozen=True, eq=False)
class GroupRun:
    """Result of ``run_groups``: times in s, bytes per arc, the flows' switch hops.

    ``bottleneck_arc`` is the fullest arc of the phase that spends longest
    moving bytes (-1 when no byte crosses a link).
    """

    time_s: float
    latency_s: float
    bandwidth_s: float
    arc_bytes: np.ndarray
    switch_hops: np.ndarray
    crosses_scale_out: bool
    bottleneck_arc: int


def run_groups(
    compiled: CompiledFabric,
    groups: np.ndarray,
    phases: Sequence[Phase],
    *,
    ecmp: str = "hash",
    seed: int = 0,
) -> GroupRun:
    """Time of ``phases`` run by every row of ``groups`` at once (see the module docstring)."""
    transport = compiled.transport
    up, out = transport.scale_up, transport.scale_out
    total = latency = bandwidth = 0.0
    arc_bytes = np.zeros(len(compiled.arc_tail))
    hops: list[np.ndarray] = []
    scale_out_seen = False
    dominant = (-1.0, -1)
    routed: dict[str, tuple[Routes, np.ndarray]] = {}
    for phase in phases:
        if phase.pattern not in routed:
            routes = route_phase(compiled, groups, phase, ecmp=ecmp, seed=seed)
            routed[phase.pattern] = (routes, max_min_rates(routes.incidence, compiled.arc_capacity))
        routes, rates = routed[phase.pattern]
        scale_out = routes.scale_out
        alpha = np.where(scale_out, out.step_overhead_ns, up.step_overhead_ns) * 1e-9 + routes.latency
        tau = np.where(scale_out, out.message_overhead_ns, up.message_overhead_ns) * 1e-9 + routes.latency
        chunk = np.where(scale_out, out.chunk_bytes, up.chunk_bytes).astype(float)
        times = step_time(
            phase.bytes_per_flow, rates, alpha, tau, chunk, depth=phase.depth, latency_count=phase.latency_count
        )
        slowest = int(np.argmax(times))
        moving = float(phase.bytes_per_flow / rates[slowest]) if np.isfinite(rates[slowest]) else 0.0
        total += phase.steps * float(times[slowest])
        bandwidth += phase.steps * moving
        latency += phase.steps * (float(times[slowest]) - moving)
        moved = routes.incidence.T @ np.full(routes.incidence.shape[0], phase.bytes_per_flow)
        arc_bytes += phase.steps * moved
        hops.append(routes.switch_hops)
        scale_out_seen |= bool(scale_out.any())
        if phase.steps * moving > dominant[0]:
            dominant = (phase.steps * moving, _fullest_arc(routes.incidence, rates, compiled, slowest))
    return GroupRun(
        time_s=total,
        latency_s=latency,
        bandwidth_s=bandwidth,
        arc_bytes=arc_bytes,
        switch_hops=np.concatenate(hops) if hops else np.empty(0),
        crosses_scale_out=scale_out_seen,
        bottleneck_arc=dominant[1],
    )


def _fullest_arc(incidence: sparse.csr_array, rates: np.ndarray, compiled: CompiledFabric, flow: int) -> int:
    """The arc of ``flow`` loaded closest to its capacity (its bottleneck under max-min)."""
    arcs = incidence.indices[incidence.indptr[flow] : incidence.indptr[flow + 1]]
    if not len(arcs):
        return -1
    finite = np.where(np.isfinite(rates), rates, 0.0)
    load = incidence.T @ finite
    return int(arcs[np.argmax(load[arcs] / compiled.arc_capacity[arcs])])


def link_records(
    compiled: CompiledFabric, arc_bytes: np.ndarray, time_s: float, *, top: int = 10
) -> list[dict[str, Any]]:
    """The ``top`` busiest arcs as ``{link, from, to, class, bytes, utilization}`` (hottest first).

    Utilisation is the arc's bytes over what its cable moves in ``time_s``.
    """
    if time_s <= 0 or not arc_bytes.any():
        return []
    utilization = arc_bytes / (compiled.arc_raw_capacity * time_s)
    hottest = np.argsort(-utilization, kind="stable")[:top]
    return [arc_record(compiled, int(arc), float(arc_bytes[arc]), float(utilization[arc])) for arc in hottest if arc_bytes[arc] > 0]


def arc_record(compiled: CompiledFabric, arc: int, bytes_moved: float, utilization: float) -> dict[str, Any]:
    """One arc as plain data: the link's index in the spec, direction, class, load."""
    spec = compiled.spec
    link = spec.links[compiled.arc_link[arc]]
    tail = spec.nodes[compiled.arc_tail[arc]].id
    return {
        "link": int(compiled.arc_link[arc]),
        "from": tail,
        "to": link.b if tail == link.a else link.a,
        "class": compiled.class_names[compiled.arc_class[arc]],
        "bytes": bytes_moved,
        "utilization": utilization,
    }
