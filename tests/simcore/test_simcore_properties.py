"""Physical consistency as properties, on random small fabrics (hypothesis; issue 13, item 5).

Whatever the fabric, collective, algorithm, protocol or size:

- a time is never below its latency bound (the protocol's base latency plus its per-hop
  latency for every step; path latency only adds to that) nor below the cut bound (no link
  carries more bytes than its capacity allows in that time: utilisation at most 1);
- a busbw never exceeds what the links allow: a ring's busbw is at most the card port's rate, and
  no link carries bytes faster than its data rate times the protocol's efficiency (LL: half);
- more bandwidth (every link faster by the same factor) never makes a collective slower.
"""

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twin.simcore.algorithms import algorithms_for
from twin.simcore.errors import TwinCoreError
from twin.simcore.generate import fat_tree, rail_optimised, supernode_cluster
from twin.simcore.model import FabricSpec
from twin.simcore.transport import PROTOCOLS, Transport

PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
COLLECTIVES = ("allreduce", "reducescatter", "allgather", "broadcast", "alltoall")


@st.composite
def fabrics(draw) -> FabricSpec:
    if draw(st.booleans()):
        return fat_tree(
            endpoints=4 * draw(st.integers(1, 12)),
            radix=draw(st.sampled_from((8, 16))),
            oversubscription=draw(st.sampled_from((1.0, 2.0, 3.0))),
            link_gbps=draw(st.sampled_from((100.0, 400.0, 800.0))),
            cards_per_host=4,
        )
    return supernode_cluster(  # scale-up islands joined by a slower scale-out fabric
        supernodes=draw(st.integers(2, 4)), cards_per_supernode=8, radix=8, scale_out_radix=8,
        scale_out_gbps=draw(st.sampled_from((100.0, 200.0))),
    )  # fmt: skip


@st.composite
def workloads(draw):
    collective = draw(st.sampled_from(COLLECTIVES))
    return {
        "collective": collective,
        "algorithm": draw(st.sampled_from(("auto", *algorithms_for(collective)))),
        "protocol": draw(st.sampled_from(("auto", *PROTOCOLS))),
        "size_bytes": float(2 ** draw(st.integers(3, 30))),
    }


def run(spec: FabricSpec, workload: dict) -> dict | None:
    from twin.simcore.simulate import simulate

    try:
        return simulate(spec, **workload, ecmp="spray", top_links=0)
    except TwinCoreError:
        return None  # not applicable here (rank count, power of two, in-switch support...)


def faster(spec: FabricSpec, factor: float) -> FabricSpec:
    links = tuple(dataclasses.replace(link, bandwidth_gbps=link.bandwidth_gbps * factor) for link in spec.links)
    return dataclasses.replace(spec, links=links)


@PROPERTY_SETTINGS
@given(spec=fabrics(), workload=workloads())
def test_time_is_never_below_the_latency_bound_or_the_cut_bound(spec, workload):
    result = run(spec, workload)
    if result is None:
        return
    transport = Transport()
    cheapest = {
        field: min(getattr(domain.protocol(result["protocol"]), field) for domain in (transport.scale_up, transport.scale_out))
        for field in ("base_latency_ns", "hop_latency_ns")
    }
    steps = sum(phase["steps"] for phase in result["phases"])
    latency_bound = (cheapest["base_latency_ns"] + steps * cheapest["hop_latency_ns"]) * 1e-9
    assert result["time_s"] >= latency_bound * (1 - 1e-12)
    assert result["time_s"] == pytest.approx(result["latency_s"] + result["bandwidth_s"], rel=1e-9)
    assert result["max_link_utilization"] <= 1 + 1e-9  # the cut bound, link by link


@PROPERTY_SETTINGS
@given(spec=fabrics(), protocol=st.sampled_from(("auto", *PROTOCOLS)), exponent=st.integers(10, 32))
def test_a_rings_busbw_never_exceeds_the_card_port(spec, protocol, exponent):
    result = run(spec, {"collective": "allreduce", "algorithm": "ring", "protocol": protocol, "size_bytes": float(2**exponent)})
    port_GBps = max(link.bandwidth_gbps for link in spec.links) / 8
    assert result["busbw_GBps"] <= port_GBps * (1 + 1e-9)


@PROPERTY_SETTINGS
@given(spec=fabrics(), workload=workloads())
def test_no_link_carries_bytes_faster_than_its_protocol_lets_it(spec, workload):
    """Every algorithm, one-shot and two-shot included: a link's bytes over the time are at most
    its rate times its domain's share of it (framing, efficiency) times the protocol's payload
    share, and times the in-switch efficiency for a reduction in the switches."""
    result = run(spec, workload)
    if result is None:
        return
    transport = Transport()
    domains = (transport.scale_up, transport.scale_out)
    allowed = max(domain.link_efficiency * domain.protocol(result["protocol"]).efficiency for domain in domains)
    if result["algorithm"] == "in_switch":
        allowed *= transport.in_switch_efficiency
    assert result["max_link_utilization"] <= allowed * (1 + 1e-9), (result["algorithm"], result["protocol"])


@PROPERTY_SETTINGS
@given(spec=fabrics(), workload=workloads(), factor=st.sampled_from((1.5, 2.0, 4.0)))
def test_more_bandwidth_never_makes_a_collective_slower(spec, workload, factor):
    before, after = run(spec, workload), run(faster(spec, factor), workload)
    if before is None:
        return
    assert after is not None
    assert after["time_s"] <= before["time_s"] * (1 + 1e-9)


@st.composite
def designs(draw) -> FabricSpec:
    """The random fabrics above, or rail-optimised servers (NVLink inside, one NIC a card)."""
    if draw(st.booleans()):
        return draw(fabrics())
    return rail_optimised(servers=draw(st.integers(2, 8)), cards_per_server=4, servers_per_unit=4, radix=16)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=designs(), exponent=st.integers(24, 30))
def test_one_designs_collectives_are_consistent(spec, exponent):
    """AllReduce is a ReduceScatter then an AllGather, moving twice their bytes: the same busbw
    where each runs its best algorithm, an in-switch AllReduce (each byte up and down once)
    at most twice theirs. And neither half is slower than the AllReduce ring's pattern allows."""
    size = float(2**exponent)
    ring = run(spec, {"collective": "allreduce", "algorithm": "ring", "size_bytes": size})
    best = {collective: run(spec, {"collective": collective, "algorithm": "auto", "size_bytes": size})
            for collective in ("allreduce", "allgather", "reducescatter")}  # fmt: skip
    for half in ("allgather", "reducescatter"):
        assert best[half]["busbw_GBps"] >= ring["busbw_GBps"] * 0.95, (half, best[half]["algorithm"])
        assert best["allreduce"]["busbw_GBps"] <= 2 * best[half]["busbw_GBps"] * 1.05, (half, best["allreduce"]["algorithm"])
