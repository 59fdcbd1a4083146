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
BASE = 5e-6  # s once per collective
PEER = 50e-9  # s per peer a direct step posts to
LINE = 50e9  # bytes/s: 400 Gb/s
P = 64
N = 64 * 2**20


@pytest.fixture(scope="module")
def ideal_simulator():
    """A non-blocking 64-card fat-tree with latency only in Simple's per-step and base latencies."""
    fabric = fat_tree(endpoints=P, radix=16, cable_latency_ns=0, switch_latency_ns=0)
    transport = {
        "scale_up": {
            "peer_issue_ns": PEER * 1e9,
            "Simple": {"base_latency_ns": BASE * 1e9, "hop_latency_ns": ALPHA * 1e9, "chunk_bytes": 2**40},
        },
        "in_switch_latency_ns": 3000.0,
        "in_switch_step_latency_ns": 1000.0,
        "in_switch_efficiency": 0.6,
        "direct_max_ranks": P,
    }
    return Simulator(fabric, transport=transport, ecmp="spray", in_switch_reduction=True)


LOG_P = math.log2(P)
CLOSED_FORMS = {  # MODELLING.md section 5 (corrected rows for direct algorithms), n = N, beta = 1 / LINE
    ("allreduce", "ring"): 2 * (P - 1) * ALPHA + 2 * (P - 1) / P * N / LINE,
    ("reducescatter", "ring"): (P - 1) * ALPHA + (P - 1) / P * N / LINE,
    ("allgather", "ring"): (P - 1) * ALPHA + (P - 1) / P * N / LINE,
    ("allreduce", "recursive_doubling"): LOG_P * (ALPHA + N / LINE),
    ("allreduce", "rabenseifner"): 2 * LOG_P * ALPHA + 2 * (P - 1) / P * N / LINE,
    ("reducescatter", "rabenseifner"): LOG_P * ALPHA + (P - 1) / P * N / LINE,
    ("allgather", "recursive_doubling"): LOG_P * ALPHA + (P - 1) / P * N / LINE,
    # 8 cards per host, 8 hosts, one bandwidth for both levels.
    ("allreduce", "hierarchical"): 2 * 7 * ALPHA + 2 * 7 * ALPHA + 2 * 7 / 8 * N / LINE + 2 * 7 / 8 * (N / 8) / LINE,
    # p - 1 writes and p - 1 flags (the barrier) posted per direct step.
    ("allreduce", "one_shot"): ALPHA + 2 * (P - 1) * PEER + (P - 1) * N / LINE,
    ("allreduce", "two_shot"): 2 * (ALPHA + 2 * (P - 1) * PEER) + 2 * (P - 1) / P * N / LINE,
    # NCCL's NVLS chunking at 64 MiB over hosts of 8 cards: 8 loops of 16 channels x 8 x 64 KiB.
    ("allreduce", "in_switch"): 3e-6 + 8 * 1e-6 + ALPHA + N / (0.6 * LINE),
    # Posted at once, each message on the wire as soon as posted: the posting hides behind them.
    ("alltoall", "direct"): ALPHA + max(PEER + (P - 1) / P * N / LINE, (P - 1) * PEER + N / P / LINE),
    ("alltoall", "bruck"): LOG_P * ALPHA + N / 2 * LOG_P / LINE,
    ("broadcast", "ring"): (P - 1) * (ALPHA + N / LINE),  # pipelined chain, one chunk
    ("sendrecv", "direct"): ALPHA + N / LINE,
}


@pytest.mark.parametrize(("collective", "algorithm"), sorted(CLOSED_FORMS), ids="-".join)
def test_non_blocking_fabric_matches_the_closed_form(ideal_simulator, collective, algorithm):
    result = ideal_simulator.run(collective, N, algorithm, "Simple")
    assert result["protocol"] == "Simple"
    assert result["time_s"] == pytest.approx(BASE + CLOSED_FORMS[collective, algorithm], rel=1e-3)


@pytest.mark.parametrize(("cards_per_host", "depth"), [(1, int(LOG_P)), (8, 7 + int(math.log2(P // 8)))])
def test_double_binary_tree_tends_to_its_pipelined_closed_form(cards_per_host, depth):
    """Both trees pipelined, each rank sends ~2n; a chunk climbs as many hops as in NCCL's trees:
    a chain inside each host, then floor(log2 hosts) levels (one card a host: log2 p)."""
    fabric = fat_tree(endpoints=P, radix=16, cards_per_host=cards_per_host, cable_latency_ns=0, switch_latency_ns=0)
    # Enough 64-byte chunks in flight to cover the latency: the wire never waits.
    tiny_chunks = {"scale_up": {"Simple": {"base_latency_ns": 0.0, "hop_latency_ns": ALPHA * 1e9, "chunk_bytes": 64, "chunks_in_flight": 2**16}}}
    result = Simulator(fabric, transport=tiny_chunks, ecmp="spray").run("allreduce", N, "tree", "Simple")
    assert result["time_s"] == pytest.approx(2 * depth * ALPHA + 2 * N / LINE, rel=1e-3)


def test_library_closed_forms_agree_with_the_flow_model(ideal_simulator):
    for collective, algorithm in (("allreduce", "ring"), ("allreduce", "one_shot"), ("alltoall", "bruck")):
        phases = phases_for(collective, algorithm, N, P)
        baseline = closed_form_time(phases, bandwidth=LINE, alpha=ALPHA, chunk_bytes=2**40, peer_issue=PEER, base=BASE)
        assert ideal_simulator.run(collective, N, algorithm, "Simple")["time_s"] == pytest.approx(baseline, rel=1e-6)


@pytest.fixture(scope="module")
def worked_case():
    return Simulator(supernode())  # 1,024 cards, 400 Gb/s = 50 GB/s links


def test_domain_worked_case_ring_allreduce(worked_case):
    result = worked_case.run("allreduce", 342e6, "ring", "Simple")  # the closed form's protocol
    # card-0001's link to its leaf carries what the card sends plus what it receives.
    sent = result["link_bytes"][0] / 2
    assert sent == pytest.approx(2 * 1023 / 1024 * 342e6, rel=1e-9)
    assert sent == pytest.approx(684e6, rel=0.002)  # each card moves ~684 MB
    assert result["bandwidth_s"] == pytest.approx(13.67e-3, rel=0.002)
    assert result["bound"] == "bandwidth"
    json.dumps(result)  # plain data all the way down


def test_the_worked_case_ring_trades_bandwidth_for_latency_as_the_tuner_would(worked_case):
    # 2,046 ring steps at 3.4 us (Simple) against 1.9 us (LL128) outweigh LL128's 8 % less
    # bandwidth, so the fastest prediction, NCCL's rule, is LL128.
    simple = worked_case.run("allreduce", 342e6, "ring", "Simple")
    chosen = worked_case.run("allreduce", 342e6, "ring")
    assert chosen["protocol"] == "LL128" and chosen["time_s"] < simple["time_s"]
    assert chosen["bandwidth_s"] == pytest.approx(simple["bandwidth_s"] / 0.92, rel=1e-9)
    assert chosen["protocol_times"]["Simple"] == pytest.approx(simple["time_s"], rel=1e-12)


def test_only_in_switch_reduction_brings_the_worked_case_under_10_ms(worked_case):
    # One 50 GB/s port per card: ring and direct two-shot each push 2(p-1)/p n through it,
    # and more channels share the same port, so none of them can beat 13.7 ms.
    any_peer_count = Simulator(supernode(), transport={"direct_max_ranks": 1024})
    for algorithm in ("ring", "two_shot", "hierarchical"):
        assert any_peer_count.run("allreduce", 342e6, algorithm)["bandwidth_s"] >= 13.6e-3
    four_channels = Simulator(supernode(), channels=4).run("allreduce", 342e6, "ring")
    assert four_channels["time_s"] >= 13.6e-3
    # In-switch reduction sends n once up and once down: 342 MB / (0.85 x 50 GB/s) = 8 ms.
    what_if = Simulator(supernode(), in_switch_reduction=True).run("allreduce", 342e6)
    assert what_if["algorithm"] == "in_switch" and what_if["time_s"] < 10e-3
    assert what_if["choice"]["reason"].startswith("in_switch (Simple) is the fastest")
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


@pytest.mark.parametrize(("in_flight", "knee_range"), [(1, (10e3, 20e3)), (8, (10e3 / 15, 20e3 / 15))])
def test_chunk_sweep_knee_sits_at_the_bandwidth_delay_product_over_the_chunks_in_flight(in_flight, knee_range):
    # Cross-leaf path: 3 switches x 100 ns = 300 ns; 50 GB/s x 300 ns = 15 KB. A slot is free
    # again alpha + C / R after it was filled, so k slots keep the wire busy k C / (alpha + C / R)
    # of the time: half at C = BDP / (2k - 1), 15 KB stop-and-wait, 1 KB with 8 slots.
    fabric = fat_tree(endpoints=32, radix=8, cards_per_host=4, cable_latency_ns=0)
    ranks = ["card-01", "card-05"]  # different leaves

    def efficiency(chunk):
        simple = {"base_latency_ns": 0.0, "hop_latency_ns": 0.0, "chunk_bytes": chunk, "chunks_in_flight": in_flight}
        result = simulate(fabric, collective="sendrecv", size_bytes=64 * 2**20, algorithm="direct", protocol="Simple",
                          ranks=ranks, transport={"scale_up": {"Simple": simple}})
        return result["algbw_GBps"] * 1e9 / LINE

    chunks = 2.0 ** np.arange(7, 21)
    efficiencies = np.array([efficiency(int(chunk)) for chunk in chunks])
    knee = np.interp(0.5, efficiencies, chunks)
    assert knee_range[0] < knee < knee_range[1]
    assert efficiencies[-1] > 0.98  # large chunks: the link is nearly always busy


def test_pipelined_chunks_bring_a_large_ring_to_the_flow_bound():
    """With NCCL's 8 slots in flight a 1 GiB ring pays each step's latency once, not once per chunk."""
    fabric = fat_tree(endpoints=64, radix=16)
    steps, size = 2 * 63, 2**30
    flow_bound = 2 * 63 / 64 * size / LINE
    pipelined = simulate(fabric, collective="allreduce", size_bytes=size, algorithm="ring", protocol="Simple", ecmp="spray")
    assert pipelined["bandwidth_s"] == pytest.approx(flow_bound, rel=1e-9)
    # Latency: Simple's 8.4 us once and 3.4 us plus at most 1 us of path per step, whatever the size.
    assert pipelined["latency_s"] < 8.4e-6 + steps * 4.4e-6
    assert pipelined["time_s"] < 1.01 * (flow_bound + 8.4e-6 + steps * 4.4e-6)
    stop_and_wait = simulate(fabric, collective="allreduce", size_bytes=size, algorithm="ring", protocol="Simple",
                             ecmp="spray", transport={"scale_up": {"Simple": {"chunks_in_flight": 1}}})
    assert stop_and_wait["time_s"] > 1.05 * pipelined["time_s"]


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


def test_all_pairs_patterns_over_the_limit_run_as_flow_classes_without_their_pairs(monkeypatch):
    import twin.simcore.simulate as simulate_module

    built = []

    def recording(*args, **kwargs):
        phases = phases_for(*args, **kwargs)
        built.extend(phases)
        return phases

    monkeypatch.setattr(simulate_module, "phases_for", recording)
    fabric = supernode(cards=64, cards_per_host=8, switch_radix=16)
    simulator = Simulator(fabric, ecmp="pinned", max_pattern_flows=1000)  # 64 x 63 pairs
    assert simulator.too_large("alltoall") == {}
    result = simulator.run("alltoall", 1e6, "direct")
    all_pairs = [phase for phase in built if phase.unbuilt_pairs]
    assert all_pairs and all(len(phase.sources) == 0 and phase.flow_count == 64 * 63 for phase in all_pairs)
    assert result["phases"][0]["flows"] == 64 * 63
    exact = Simulator(fabric, ecmp="pinned").run("alltoall", 1e6, "direct")
    assert result["time_s"] == pytest.approx(exact["time_s"], rel=1e-9)
    assert simulator.run("alltoall", 1e6, "auto")["choice"]["skipped"].keys() == {"bruck"}  # not NCCL's: not too large
