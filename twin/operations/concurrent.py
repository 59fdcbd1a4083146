"""Many equal-size groups of cards running the same collective at the same time.

``Simulator`` (twin.simcore.simulate) runs one collective on one set of ranks.
A training job runs one collective in *every* group of a parallel dimension at
once (all TP groups all-reduce together), and those groups share the fabric's
links. ``run_groups`` evaluates that: each phase's flows of all groups are
routed together (``twin.simcore.compile.route``, same ECMP modes and flow
keys as the simulator), rates come from max-min sharing
(``twin.simcore.congestion.max_min_rates``) and a step lasts as long as its
slowest flow (``twin.simcore.simulate.phase_step_times``: per-peer posting, in-switch
start-up and NVLS loops included), exactly the simulator's laws; only the flow set differs.
In-switch reduction runs each group up and down its own tree (``simulate.reduction_tree``);
trees that share an arc share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from twin.simcore.algorithms import Phase
from twin.simcore.compile import CompiledFabric, Routes, arc_record, flow_keys, route
from twin.simcore.congestion import max_min_rates
from twin.simcore.simulate import phase_step_times, reduction_tree
from twin.simcore.transport import protocols_to_try

__all__ = ["GroupRun", "link_records", "route_phase", "run_groups"]


def route_phase(
    compiled: CompiledFabric, groups: np.ndarray, phase: Phase, *, ecmp: str, seed: int
) -> Routes:
    """Route the flows of ``phase`` in every group (rows of ``groups``: card numbers by rank)."""
    sources = groups[:, phase.sources].ravel()
    targets = groups[:, phase.targets].ravel()
    return route(compiled, sources, targets, mode=ecmp, seed=seed, flow_keys=flow_keys(compiled, sources, targets))


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
    protocol: str


def run_groups(
    compiled: CompiledFabric,
    groups: np.ndarray,
    phases: Sequence[Phase],
    *,
    ecmp: str = "hash",
    seed: int = 0,
) -> GroupRun:
    """Time of ``phases`` run by every row of ``groups`` at once (see the module docstring), with
    the fastest protocol, as the simulator's automatic choice."""
    arc_bytes = np.zeros(len(compiled.arc_tail))
    routed: dict[str, tuple[Routes, np.ndarray]] = {}
    for phase in phases:
        if phase.pattern not in routed and phase.in_switch:
            routed[phase.pattern] = _reduction_trees(compiled, groups, phase)
        elif phase.pattern not in routed:
            routes = route_phase(compiled, groups, phase, ecmp=ecmp, seed=seed)
            routed[phase.pattern] = (routes, max_min_rates(routes.incidence, compiled.arc_capacity))
        routes = routed[phase.pattern][0]
        arc_bytes += phase.steps * (routes.incidence.T @ np.full(routes.incidence.shape[0], phase.bytes_per_flow))
    in_switch = any(phase.in_switch for phase in phases)
    timed = [_timed(compiled, phases, routed, protocol) for protocol in protocols_to_try("auto", in_switch=in_switch)]
    total, latency, bandwidth, bottleneck, protocol = min(timed, key=lambda times: times[0])
    return GroupRun(
        time_s=total,
        latency_s=latency,
        bandwidth_s=bandwidth,
        arc_bytes=arc_bytes,
        switch_hops=np.concatenate([routed[phase.pattern][0].switch_hops for phase in phases]) if phases else np.empty(0),
        crosses_scale_out=any(bool(routes.scale_out.any()) for routes, _ in routed.values()),
        bottleneck_arc=bottleneck,
        protocol=protocol,
    )


def _reduction_trees(compiled: CompiledFabric, groups: np.ndarray, phase: Phase) -> tuple[Routes, np.ndarray]:
    """Each group's in-switch reduction tree (``simulate.reduction_tree``), its rows one after
    the other, and their rates: a tree's streams share an arc with the other groups' trees
    (max-min over one row per tree, each at most its slowest arc times the in-switch
    efficiency: alone, the simulator's rate)."""
    trees = [reduction_tree(compiled, group[phase.sources]) for group in groups]
    incidence = sparse.vstack([tree.incidence for tree, _ in trees], format="csr")
    first_rows = np.arange(len(groups)) * len(phase.sources)
    efficiency = compiled.transport.in_switch_efficiency
    shared = max_min_rates(incidence[first_rows], compiled.arc_capacity * efficiency)
    rates = np.minimum(shared, [slowest for _, slowest in trees])
    routes = Routes(
        incidence=incidence,
        latency=np.concatenate([tree.latency for tree, _ in trees]),
        switch_hops=np.concatenate([tree.switch_hops for tree, _ in trees]),
        scale_out=np.concatenate([tree.scale_out for tree, _ in trees]),
    )
    return routes, np.repeat(rates, len(phase.sources))


def _timed(
    compiled: CompiledFabric, phases: Sequence[Phase], routed: dict[str, tuple[Routes, np.ndarray]], protocol: str
) -> tuple[float, float, float, int, str]:
    """Total, latency and bandwidth time, bottleneck arc, protocol of ``phases`` with ``protocol``."""
    costs = {
        pattern: compiled.transport.flow_costs(protocol, routes.scale_out, routes.latency)
        for pattern, (routes, _) in routed.items()
    }
    base = max((float(cost.base.max()) for cost in costs.values()), default=0.0)
    total = latency = base
    bandwidth = 0.0
    dominant = (-1.0, -1)
    for phase in phases:
        routes, wire_rates = routed[phase.pattern]
        cost = costs[phase.pattern]
        rates = wire_rates * cost.efficiency
        times = phase_step_times(phase, phase.bytes_per_flow, rates, cost, compiled.transport)
        slowest = int(np.argmax(times))
        moving = float(phase.bytes_per_flow / rates[slowest]) if np.isfinite(rates[slowest]) else 0.0
        total += phase.steps * float(times[slowest])
        bandwidth += phase.steps * moving
        latency += phase.steps * (float(times[slowest]) - moving)
        if phase.steps * moving > dominant[0]:
            # An in-switch tree's arcs are all on its group's first row.
            carrying = slowest - slowest % len(phase.sources) if phase.in_switch else slowest
            dominant = (phase.steps * moving, _fullest_arc(routes.incidence, wire_rates, compiled, carrying))
    return total, latency, bandwidth, dominant[1], protocol


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
    """The ``top`` busiest arcs as ``{link, from, to, from_name, to_name, class, bytes, utilization}`` (hottest first).

    Utilisation is the arc's bytes over what its cable moves in ``time_s``.
    """
    if time_s <= 0 or not arc_bytes.any():
        return []
    utilization = arc_bytes / (compiled.arc_raw_capacity * time_s)
    hottest = np.argsort(-utilization, kind="stable")[:top]
    return [arc_record(compiled, int(arc), float(arc_bytes[arc]), float(utilization[arc])) for arc in hottest if arc_bytes[arc] > 0]
