"""Validation of the simulation core: each test fails when the physics is wrong (issue 4)."""

import json
import math

import numpy as np
import pytest

from twin.simcore.algorithms import closed_form_time, phases_for
from twin.simcore.compile import compile_fabric, route
from twin.simcore.congestion import max_min_rates
from twin.simcore.errors import TwinCoreError
from twin.simcore.generate import fat_tree, supernode
from twin.simcore.simulate import Simulator, simulate

ALPHA = 2e-6  # s per step: the only latency when cables and switches take no time
LINE = 50e9  # bytes/s: 400 Gb/s
P = 64
N = 64 * 2**20


@pytest.fixture(scope="module")
def ideal_simulator():
    """A non-blocking 64-card fat-tree with latency only in the per-step overhead."""
    fabric = fat_tree(endpoints=P, radix=16, cable_latency_ns=0, switch_latency_ns=0)
    transport = {
        "scale_up": {"step_overhead_ns": ALPHA * 1e9, "message_overhead_ns": 0.0, "chunk_bytes": 2**40},
        "in_switch_latency_ns": 3000.0,
        "in_switch_efficiency": 0.6,
    }
    return Simulator(fabric, transport=transport, ecmp="spray", in_switch_reduction=True)


LOG_P = math.log2(P)
CLOSED_FORMS = {  # MODELLING.md section 5, n = N, beta = 1 / LINE
    ("allreduce", "ring"): 2 * (P - 1) * ALPHA + 2 * (P - 1) / P * N / LINE,
    ("reducescatter", "ring"): (P - 1) * ALPHA + (P - 1) / P * N / LINE,
    ("allgather", "ring"): (P - 1) * ALPHA + (P - 1) / P * N / LINE,
    ("allreduce", "recursive_doubling"): LOG_P * (ALPHA + N / LINE),
    ("allreduce", "rabenseifner"): 2 * LOG_P * ALPHA + 2 * (P - 1) / P * N / LINE,
    ("reducescatter", "rabenseifner"): LOG_P * ALPHA + (P - 1) / P * N / LINE,
    ("allgather", "recursive_doubling"): LOG_P * ALPHA + (P - 1) / P * N / LINE,
    # 8 cards per host, 8 hosts, one bandwidth for both levels.
    ("allreduce", "hierarchical"): 2 * 7 * ALPHA + 2 * 7 * ALPHA + 2 * 7 / 8 * N / LINE + 2 * 7 / 8 * (N / 8) / LINE,
    ("allreduce", "one_shot"): ALPHA + (P - 1) * N / LINE,
    ("allreduce", "two_shot"): 2 * ALPHA + 2 * (P - 1) / P * N / LINE,
    ("allreduce", "in_switch"): 3e-6 + ALPHA + N / (0.6 * LINE),
    ("alltoall", "direct"): (P - 1) * ALPHA + (P - 1) / P * N / LINE,
    ("alltoall", "bruck"): LOG_P * ALPHA + N / 2 * LOG_P / LINE,
    ("broadcast", "ring"): (P - 1) * (ALPHA + N / LINE),  # pipelined chain, one chunk
    ("sendrecv", "direct"): ALPHA + N / LINE,
}


@pytest.mark.parametrize(("collective", "algorithm"), sorted(CLOSED_FORMS), ids="-".join)
def test_non_blocking_fabric_matches_the_closed_form(ideal_simulator, collective, algorithm):
    result = ideal_simulator.run(collective, N, algorithm)
    assert result["time_s"] == pytest.approx(CLOSED_FORMS[collective, algorithm], rel=1e-3)


def test_double_binary_tree_tends_to_its_pipelined_closed_form():
    fabric = fat_tree(endpoints=P, radix=16, cable_latency_ns=0, switch_latency_ns=0)
    tiny_chunks = {"scale_up": {"step_overhead_ns": ALPHA * 1e9, "message_overhead_ns": 0.0, "chunk_bytes": 64}}
    result = Simulator(fabric, transport=tiny_chunks, ecmp="spray").run("allreduce", N, "tree")
    depth = int(LOG_P)  # floor(log2 p) levels, both trees pipelined, each rank sends ~2n
    assert result["time_s"] == pytest.approx(2 * depth * ALPHA + 2 * N / LINE, rel=1e-3)


def test_library_closed_forms_agree_with_the_flow_model(ideal_simulator):
    for collective, algorithm in (("allreduce", "ring"), ("allreduce", "one_shot"), ("alltoall", "bruck")):
        phases = phases_for(collective, algorithm, N, P)
        baseline = closed_form_time(phases, bandwidth=LINE, alpha=ALPHA, tau=0.0, chunk_bytes=2**40)
        assert ideal_simulator.run(collective, N, algorithm)["time_s"] == pytest.approx(baseline, rel=1e-6)


@pytest.fixture(scope="module")
def worked_case():
    return Simulator(supernode())  # 1,024 cards, 400 Gb/s = 50 GB/s links


def test_domain_worked_case_ring_allreduce(worked_case):
    result = worked_case.run("allreduce", 342e6, "ring")
    # card-0001's link to its leaf carries what the card sends plus what it receives.
    sent = result["link_bytes"][0] / 2
    assert sent == pytest.approx(2 * 1023 / 1024 * 342e6, rel=1e-9)
    assert sent == pytest.approx(684e6, rel=0.002)  # each card moves ~684 MB
    assert result["bandwidth_s"] == pytest.approx(13.67e-3, rel=0.002)
    assert result["bound"] == "bandwidth"
    json.dumps(result)  # plain data all the way down


def test_only_in_switch_reduction_brings_the_worked_case_under_10_ms(worked_case):
    # One 50 GB/s port per card: ring and direct two-shot each push 2(p-1)/p n through it,
    # and more channels share the same port, so none of them can beat 13.7 ms.
    for algorithm in ("ring", "two_shot", "hierarchical"):
        assert worked_case.run("allreduce", 342e6, algorithm)["bandwidth_s"] >= 13.6e-3
    four_channels = Simulator(supernode(), channels=4).run("allreduce", 342e6, "ring")
    assert four_channels["time_s"] >= 13.6e-3
    # In-switch reduction sends n once up and once down: 342 MB / (0.85 x 50 GB/s) = 8 ms.
    what_if = Simulator(supernode(), in_switch_reduction=True).run("allreduce", 342e6)
    assert what_if["algorithm"] == "in_switch" and what_if["time_s"] < 10e-3
    assert what_if["choice"]["reason"].startswith("in_switch is the fastest")
    # Without switch support the automatic choice says why it was skipped.
    plain = worked_case.run("allreduce", 342e6)
    assert plain["time_s"] > 13.6e-3 and "in_switch" in plain["choice"]["skipped"]


def test_two_to_one_oversubscribed_leaf_halves_cross_leaf_ring_bandwidth():
    def ring_busbw(oversubscription, ranks):
        """The bandwidth of the ring's slowest flow (latency left out)."""
        fabric = fat_tree(endpoints=16, radix=6, cards_per_host=4, oversubscription=oversubscription)
        ranks = [f"card-{number:02d}" for number in ranks]
        result = simulate(fabric, collective="allreduce", size_bytes=256 * 2**20, algorithm="ring",
                          ranks=ranks, ecmp="spray")
        return result["phases"][0]["slowest_rate_GBps"]

    # 4 cards per leaf; interleaving the leaves makes every ring hop cross leaves.
    cross_leaf = [leaf * 4 + card + 1 for card in range(4) for leaf in range(4)]
    same_leaf = [1, 2, 3, 4]
    assert ring_busbw(2, cross_leaf) / ring_busbw(1, cross_leaf) == pytest.approx(0.5, rel=1e-6)
    assert ring_busbw(2, same_leaf) == pytest.approx(ring_busbw(1, same_leaf), rel=1e-9)


def permutation_rates(mode):
    fabric = fat_tree(endpoints=1024, radix=16, cards_per_host=8)  # 3 tiers, 8 pods
    compiled = compile_fabric(fabric)
    permutation = np.random.default_rng(7).permutation(1024)
    moving = permutation != np.arange(1024)
    routes = route(compiled, np.arange(1024)[moving], permutation[moving], mode=mode, seed=3)
    return max_min_rates(routes.incidence, compiled.arc_capacity) / LINE


def test_random_permutation_with_ecmp_hashing_loses_about_half():
    assert 0.35 <= permutation_rates("hash").mean() <= 0.6


def test_random_permutation_with_ideal_spray_gets_line_rate():
    assert permutation_rates("spray").min() == pytest.approx(1.0, rel=1e-6)


def test_chunk_sweep_knee_sits_at_the_bandwidth_delay_product():
    # Cross-leaf path: 3 switches x 100 ns = 300 ns; 50 GB/s x 300 ns = 15 KB.
    fabric = fat_tree(endpoints=32, radix=8, cards_per_host=4, cable_latency_ns=0)
    ranks = ["card-01", "card-05"]  # different leaves

    def efficiency(chunk):
        transport = {"scale_up": {"message_overhead_ns": 0.0, "step_overhead_ns": 0.0, "chunk_bytes": chunk}}
        result = simulate(fabric, collective="sendrecv", size_bytes=64 * 2**20, algorithm="direct",
                          ranks=ranks, transport=transport)
        return result["algbw_GBps"] * 1e9 / LINE

    chunks = 2.0 ** np.arange(10, 21)
    efficiencies = np.array([efficiency(int(chunk)) for chunk in chunks])
    knee = np.interp(0.5, efficiencies, chunks)
    assert 10e3 < knee < 20e3
    assert efficiencies[-1] > 0.98  # large chunks: the link is nearly always busy


def test_results_name_the_bottleneck_tier_and_hottest_links():
    fabric = fat_tree(endpoints=64, radix=8, cards_per_host=4, oversubscription=3)
    result = simulate(fabric, collective="alltoall", size_bytes=64 * 2**20, algorithm="direct")
    assert result["bottleneck"]["link_class"] == "leaf-spine (scale-up)"
    assert result["bottleneck"]["bound"] == "bandwidth"
    assert result["hottest_links"][0]["class"] == "leaf-spine (scale-up)"
    assert 0.9 < result["max_link_utilization"] <= 1.0 + 1e-9


def test_rates_are_computed_once_per_pattern(worked_case):
    before = len(worked_case._patterns)
    worked_case.run("allreduce", 1e6, "ring")
    worked_case.run("allreduce", 1e9, "ring")
    assert len(worked_case._patterns) - before <= 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.run("allsum", 1e6, "ring"), "unknown collective 'allsum'"),
        (lambda s: s.run("alltoall", 1e6, "ring"), "no algorithm 'ring' for alltoall"),
        (lambda s: s.run("allreduce", -1, "ring"), "expected a positive number"),
        (lambda s: Simulator(s.compiled.spec, ecmp="random").run("allreduce", 1e6, "ring"), "ECMP mode 'random'"),
        (lambda s: Simulator(s.compiled.spec, ranks=["card-9999"]), "unknown cards"),
        (lambda s: Simulator(s.compiled.spec, transport={"scale_up": {"efficiency": 2}}), "efficiency 2"),
    ],
)
def test_bad_requests_raise_clear_errors(worked_case, call, message):
    with pytest.raises(TwinCoreError, match=message.replace("(", r"\(")):
        call(worked_case)


def test_a_card_cut_off_by_a_failed_leaf_compiles_and_is_unreachable():
    """Failure what-ifs remove a leaf: its cards keep no live link and must not break compiling."""
    from twin.simcore.compile import compile_fabric
    from twin.simcore.generate import supernode
    from twin.simcore.model import FabricSpec, LinkSpec

    demo = supernode(cards=64, switch_radix=16)
    down = tuple(
        LinkSpec(l.a, l.a_port, l.b, l.b_port, l.bandwidth_gbps, l.latency_ns, state="down" if "leaf-01" in (l.a, l.b) else l.state, domain=l.domain)
        for l in demo.links
    )
    compiled = compile_fabric(FabricSpec(demo.name, demo.nodes, down, demo.attrs))
    assert compiled is not None


def test_all_pairs_patterns_over_the_limit_are_refused_before_any_pair_is_built(monkeypatch):
    import twin.simcore.simulate as simulate_module

    built = []
    monkeypatch.setattr(simulate_module, "phases_for", lambda collective, algorithm, *args: built.append(algorithm) or phases_for(collective, algorithm, *args))
    simulator = Simulator(supernode(cards=64, cards_per_host=8, switch_radix=16), max_pattern_flows=1000)  # 64 x 63 pairs
    assert set(simulator.too_large("allreduce")) == {"one_shot", "two_shot"}
    with pytest.raises(TwinCoreError, match="all-pairs pattern of 4,032 flows, more than 1,000"):
        simulator.run("alltoall", 1e6, "direct")
    chosen = simulator.run("alltoall", 1e6, "auto")
    assert chosen["algorithm"] == "bruck" and "4,032 flows" in chosen["choice"]["skipped"]["direct"]
    assert "direct" not in built and "bruck" in built
    assert Simulator(supernode(cards=64, cards_per_host=8, switch_radix=16)).too_large("alltoall") == {}
