"""Numbers of one design that must agree (issue 13): the rail design's AllGather against its
AllReduce, and an in-switch result that names its bottleneck."""

import pytest

from tests.simcore.fabrics import eight_h100
from twin.simcore.generate import rail_optimised
from twin.simcore.simulate import Simulator


@pytest.mark.parametrize("ecmp", ["hash", "pinned"])
def test_the_rail_designs_allgather_keeps_up_with_its_allreduce(ecmp):
    """The what-if once showed AllReduce 185.9 GB/s (hierarchical: NVLink inside, each rail across)
    next to AllGather 11.2 GB/s (one ring through one NIC a host) on the same 400 Gb/s rail design.
    AllGather and ReduceScatter have the hierarchical schedule too: the same busbw, within 5%."""
    simulator = Simulator(rail_optimised(servers=32), ecmp=ecmp)
    allreduce = simulator.run("allreduce", 2**30)
    assert allreduce["algorithm"] == "hierarchical"
    for half in ("allgather", "reducescatter"):
        result = simulator.run(half, 2**30)
        assert result["algorithm"] == "hierarchical"
        assert result["busbw_GBps"] == pytest.approx(allreduce["busbw_GBps"], rel=0.05), half


def test_an_in_switch_result_names_its_bottleneck():
    result = Simulator(eight_h100()).run("allreduce", 2**30, "in_switch")
    assert result["bottleneck"]["link_class"] is not None
    assert result["bottleneck"]["domain"] == "scale-up"
