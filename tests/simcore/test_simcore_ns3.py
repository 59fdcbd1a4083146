"""The twin against ns-3 (bench/validate_ns3.py) on cases small enough for a test: ns-3's TCP
can never beat the twin's flow bound with ns-3's own framing, and on one path it stays close.
Runs where ns-3 is installed (NS3_PYTHON, default /tmp/ns3venv/bin/python; .ci/run installs it
there), and says why it is skipped elsewhere."""

import pytest

from bench.validate_ns3 import MIB, NS3_TRANSPORT, flows_of, leaf_spine, ns3_case, ns3_missing, run_ns3, twin_time
from bench.validate_simgrid import ZERO_OVERHEADS
from twin.simcore.simulate import Simulator

MISSING = ns3_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"ns-3: {MISSING}")


@pytest.mark.parametrize(("case", "mode", "spray", "slack"), [("ring", "one path", False, 1.5), ("permutation", "spray", True, 1.5)])
def test_ns3_takes_at_least_the_framed_flow_bound_and_not_much_more(case, mode, spray, slack):
    spec = leaf_spine(100)
    framed, *_ = twin_time(case, spec, NS3_TRANSPORT, mode, MIB)
    bound, *_ = twin_time(case, spec, ZERO_OVERHEADS, mode, MIB)
    sources, targets, flow_bytes, steps = flows_of(case, MIB)
    peer = run_ns3(ns3_case(Simulator(spec, transport=ZERO_OVERHEADS), sources, targets, flow_bytes, steps, spray))
    assert len(peer["step_times_s"]) == steps and all(time > 0 for time in peer["flow_times_s"])
    assert bound < framed < peer["time_s"] < slack * framed
