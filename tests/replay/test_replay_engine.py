"""The replay engine: agreement with the simulation core, queueing, congestion and stretch."""

import dataclasses

import numpy as np
import pytest

from twin.replay import ReplayOptions, bind_trace, replay_summary, replay_trace, sample_timeline
from twin.simcore.generate import supernode
from twin.simcore.simulate import Simulator
from twin.traces.errors import TraceError
from twin.traces.model import CollectiveEvent, FlowEvent, RankBinding, Trace
from twin.traces.training import training_step

SPEC = supernode(cards=64, switch_radix=16)  # 8 leaves of 8 cards, 4 spines
CARDS = [card.id for card in SPEC.cards()]
EVEN, ODD = tuple(range(0, 64, 2)), tuple(range(1, 64, 2))  # both rings cross every leaf's uplinks


def trace(*events, name="test"):
    return Trace(name, [RankBinding(rank, card) for rank, card in enumerate(CARDS)], events)


def replayed(*events, **options):
    return replay_trace(bind_trace(SPEC, trace(*events)), options=ReplayOptions(**options))


def test_single_ring_allreduce_matches_the_simulator():
    replay = replayed(CollectiveEvent(0.0, "allreduce", tuple(range(64)), 64_000_000, algorithm="ring"))
    alone = Simulator(SPEC).run("allreduce", 64_000_000, "ring")
    assert np.allclose(replay.link_bytes(), alone["link_bytes"], rtol=1e-12)
    assert replay.duration_s == pytest.approx(alone["time_s"], rel=1e-12)
    assert replay.peak_congestion <= 1.0
    summary = replay_summary(replay)
    assert summary["operations"]["allreduce"]["stretch"] == pytest.approx(1.0)
    assert summary["operations"]["allreduce"]["algorithms"] == {"ring": 1}
    assert summary["operations"]["allreduce"]["protocols"] == {alone["protocol"]: 1}


def test_each_operation_records_the_protocol_the_tuner_would_pick():
    """Small messages go by a low-latency protocol, large ones by Simple, for collectives as for
    point-to-point flows, as the simulation core (NCCL's tuner) picks them."""
    replay = replayed(
        CollectiveEvent(0.0, "allreduce", tuple(range(8)), 1024),
        CollectiveEvent(0.0, "allreduce", tuple(range(8, 16)), 256_000_000),
        FlowEvent(0.0, 16, 40, 1024),
        FlowEvent(0.0, 17, 41, 256_000_000),
    )
    small, large, small_flow, large_flow = (replay.costs[replay.cost_index[position]] for position in range(4))
    assert small.protocol == Simulator(SPEC, ranks=CARDS[:8]).run("allreduce", 1024)["protocol"] and small.protocol != "Simple"
    assert large.protocol == "Simple" and large_flow.protocol == "Simple" and small_flow.protocol in ("LL", "LL128")
    summary = replay_summary(replay)
    assert sum(summary["operations"]["flow"]["protocols"].values()) == summary["operations"]["flow"]["count"] == 2


def test_down_links_carry_nothing_and_the_rest_still_matches():
    links = list(SPEC.links)
    uplink = next(number for number, link in enumerate(links) if link.a.startswith("leaf") and link.b.startswith("spine"))
    links[uplink] = dataclasses.replace(links[uplink], state="down")
    degraded = dataclasses.replace(SPEC, links=tuple(links))
    replay = replay_trace(bind_trace(degraded, trace(CollectiveEvent(0.0, "allreduce", EVEN, 64_000_000, algorithm="ring"))))
    alone = Simulator(degraded, ranks=[CARDS[rank] for rank in EVEN]).run("allreduce", 64_000_000, "ring")
    assert replay.link_bytes()[uplink] == 0
    assert np.allclose(replay.link_bytes(), alone["link_bytes"], rtol=1e-12)


def test_automatic_algorithm_is_the_simulators_choice():
    replay = replayed(CollectiveEvent(0.0, "allreduce", tuple(range(8)), 1_000_000))
    alone = Simulator(SPEC, ranks=CARDS[:8]).run("allreduce", 1_000_000)
    assert replay.costs[0].algorithm == alone["algorithm"]
    assert replay.duration_s == pytest.approx(alone["time_s"], rel=1e-12)


def test_overlapping_collectives_congest_and_stretch():
    replay = replayed(
        CollectiveEvent(0.0, "allreduce", EVEN, 64_000_000, algorithm="ring"),
        CollectiveEvent(0.0, "allreduce", ODD, 64_000_000, algorithm="ring"),
    )
    solo = replay.solo_s
    taken = replay.end_s - replay.start_s
    assert replay.peak_congestion > 1.5
    assert (taken > solo * 1.5).all()  # both share the leaf-spine links for their whole run
    assert (taken < solo * replay.peak_congestion * 1.001).all()  # never slower than the worst demand allows
    timeline = sample_timeline(replay, max_frames=4)
    assert timeline.totals["max_congestion"][0] > 1.5
    assert timeline.totals["max_utilization"].max() <= 1.0 + 1e-9  # pipelined chunks fill the links exactly
    # Carried bytes still add up to what the two collectives move.
    assert timeline.totals["bytes"].sum() == pytest.approx(replay.arc_bytes().sum(), rel=1e-9)
    summary = replay_summary(replay)
    assert summary["events"]["stretched"] == 2
    assert summary["peak_congestion"]["congestion"] == replay.peak_congestion


def test_collectives_apart_in_time_do_not_congest():
    first = CollectiveEvent(0.0, "allreduce", EVEN, 64_000_000, algorithm="ring")
    alone = replayed(first).duration_s
    replay = replayed(first, CollectiveEvent(alone * 2, "allreduce", ODD, 64_000_000, algorithm="ring"))
    assert replay.peak_congestion <= 1.0
    assert np.allclose(replay.end_s - replay.start_s, replay.solo_s, rtol=1e-9)
    assert replay.start_s[1] == pytest.approx(alone * 2)
    assert replay_summary(replay)["events"]["stretched"] == 0


def test_a_communicator_runs_one_collective_at_a_time():
    event = CollectiveEvent(0.0, "allreduce", EVEN, 8_000_000, algorithm="ring", comm="dp")
    replay = replayed(event, event, CollectiveEvent(0.0, "allgather", EVEN, 8_000_000, comm="other"))
    assert replay.start_s[1] == pytest.approx(replay.end_s[0])  # queued behind the first on "dp"
    assert replay.start_s[2] == 0.0  # another communicator on the same ranks starts at once
    by_rank = replayed(event, event, CollectiveEvent(0.0, "allgather", EVEN, 8_000_000, comm="other"), ordering="rank")
    assert by_rank.start_s[2] == pytest.approx(by_rank.end_s[1])  # a rank runs one operation at a time
    assert by_rank.peak_congestion <= 1.0


def test_repeated_operations_are_costed_once():
    events = [CollectiveEvent(0.001 * step, "allreduce", tuple(range(8)), 4_000_000, algorithm="ring") for step in range(50)]
    replay = replayed(*events)
    assert (replay.lookups, replay.distinct_costs) == (50, 1)
    assert replay_summary(replay)["events"]["cache_hit_rate"] == pytest.approx(0.98)


def test_a_flow_loads_one_direction_like_a_sendrecv():
    forward = replayed(FlowEvent(0.0, 0, 63, 10_000_000))
    exchange = Simulator(SPEC, ranks=[CARDS[0], CARDS[63]]).run("sendrecv", 10_000_000, "direct")
    assert forward.duration_s == pytest.approx(exchange["time_s"], rel=1e-12)
    backward = replayed(FlowEvent(0.0, 63, 0, 10_000_000))
    assert np.allclose(forward.link_bytes() + backward.link_bytes(), exchange["link_bytes"])
    cost = forward.costs[0]
    assert cost.algorithm == "flow" and len(cost.arcs) == 4  # card, leaf, spine, leaf, card: one way only
    # Opposite directions of a full-duplex link do not compete.
    both = replayed(FlowEvent(0.0, 0, 63, 10_000_000), FlowEvent(0.0, 63, 0, 10_000_000))
    assert both.peak_congestion <= 1.0 and both.duration_s == pytest.approx(forward.duration_s)


def test_events_that_move_nothing_take_no_time():
    replay = replayed(
        CollectiveEvent(0.0, "allreduce", (0,), 1_000),
        FlowEvent(0.0, 1, 2, 0),
        CollectiveEvent(0.5, "allreduce", (3, 4), 0),
    )
    assert replay.end_s.tolist() == replay.start_s.tolist() == [0.0, 0.0, 0.5]
    timeline = sample_timeline(replay)
    assert len(timeline) == 600 and timeline.events_done[-1] == 3 and timeline.totals["bytes"].sum() == 0


def test_events_the_core_cannot_run_are_listed():
    bad = CollectiveEvent(0.0, "allreduce", EVEN, 1_000, algorithm="in_switch")
    with pytest.raises(TraceError) as caught:
        replayed(CollectiveEvent(0.0, "allreduce", EVEN, 1_000), bad, bad)
    assert len(caught.value.problems) == 1  # the same operation is reported once
    assert caught.value.problems[0].startswith("events[1]: allreduce (in_switch) of 1,000 bytes on 32 ranks")


def test_article_training_step_names_its_hottest_links():
    """DOMAIN.md's worked case: 175B, TP=16 x DP=64 on 1,024 cards."""
    spec = supernode(cards=1024)
    step = training_step(model_params=175e9, tp=16, dp=64, hidden_size=12288, seq_len=2048, layers=96,
                         placement=[card.id for card in spec.cards()])  # fmt: skip
    replay = replay_trace(bind_trace(spec, step), options=ReplayOptions(ordering="rank"))
    summary = replay_summary(replay)
    assert summary["events"]["total"] == 4 * 96 * 64 + 16
    assert summary["events"]["distinct_operations"] == 64 + 16  # one per TP group, one per DP group
    assert summary["operations"]["allreduce"]["bytes"] == 4 * 96 * 64 * 2048 * 12288 * 2 + 350_000_000_000
    hottest = summary["busiest_links"][0]
    # DP groups of 64 ranks run a ring (direct writes stop at 16 ranks): where hashing puts two
    # ring flows on one uplink, it carries more than any card's own link.
    assert hottest["class"] == "leaf-spine (scale-up)" and hottest["bytes"] > 0
    # The DP all-reduces (last) share the spines: that is where the step congests.
    assert summary["peak_congestion"]["class"] == "leaf-spine (scale-up)"
    assert summary["peak_congestion"]["congestion"] > 1
    assert summary["peak_congestion"]["t_s"] >= replay.start_s[-16:].min()
    last = sample_timeline(replay, max_frames=20).frame(19)
    assert last["events_done"] == last["events_total"] == len(step.events)
    assert {record["class"] for record in last["top"]} == {"leaf-spine (scale-up)"}
