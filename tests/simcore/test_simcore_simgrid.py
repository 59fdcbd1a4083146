"""The flow model against SimGrid's (bench/validate_simgrid.py) on fabrics small enough for a
test: same routes, same flows, overheads zeroed. Runs where Debian's python3-simgrid is
installed, and says why it is skipped elsewhere."""

import numpy as np
import pytest

from bench.validate_simgrid import ZERO_OVERHEADS, flows_case, run_simgrid, simgrid_available
from twin.simcore.algorithms import phases_for
from twin.simcore.compile import route
from twin.simcore.congestion import max_min_rates
from twin.simcore.generate import fat_tree
from twin.simcore.simulate import Simulator

MISSING = simgrid_available()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"SimGrid: {MISSING}")


@pytest.mark.parametrize(("collective", "algorithm"), [("allreduce", "ring"), ("alltoall", "direct")])
def test_a_collective_takes_as_long_as_simgrid_says(collective, algorithm):
    spec = fat_tree(endpoints=32, radix=8, cards_per_host=4)  # 3 tiers: 2 pods of 16
    simulator = Simulator(spec, transport=ZERO_OVERHEADS, ecmp="pinned")
    twin = simulator.run(collective, 2**26, algorithm, "Simple", top_links=0)
    (phase,) = phases_for(collective, algorithm, 2**26, 32)
    sources, targets = simulator.ranks[phase.sources], simulator.ranks[phase.targets]
    routes = route(simulator.compiled, sources, targets, mode="pinned")
    peer = run_simgrid(flows_case(simulator.compiled, routes, np.full(len(sources), phase.bytes_per_flow), sources, targets, steps=phase.steps))
    assert twin["time_s"] == pytest.approx(peer["time_s"], rel=0.01)


@pytest.mark.parametrize("mode", ["hash", "spray"])
def test_an_oversubscribed_permutation_as_simgrid_shares_it(mode):
    """16 hosts on a 2:1 leaf-spine, host i to host i + 4: every flow crosses the thin uplinks."""
    spec = fat_tree(endpoints=16, radix=6, oversubscription=2, cards_per_host=1)
    compiled = Simulator(spec, transport=ZERO_OVERHEADS).compiled
    sources = np.arange(16)
    targets = (sources + 4) % 16
    sizes = np.full(16, 2.0**26)
    routes = route(compiled, sources, targets, mode=mode)
    twin = float(np.max(routes.latency + sizes / max_min_rates(routes.incidence, compiled.arc_capacity)))
    peer = run_simgrid(flows_case(compiled, routes, sizes, sources, targets))
    assert twin == pytest.approx(peer["time_s"], rel=0.01)
    if mode == "spray":  # two uplinks for four hosts: half of line rate each, exactly
        assert twin == pytest.approx(2**26 / (50e9 / 2), rel=1e-3)
