"""Binding ranks to cards: by card id, host + bus id, host + device index; clear errors otherwise."""

from pathlib import Path

import pytest

from twin.replay import bind_trace, replay_summary, replay_trace
from twin.replay.binding import MAX_BINDING_PROBLEMS
from twin.simcore.generate import supernode
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec
from twin.traces.errors import TraceError
from twin.traces.model import CollectiveEvent, RankBinding, Trace
from twin.traces.nccl_log import parse_nccl_log

DATA = Path(__file__).resolve().parents[1] / "data" / "replay"
BUSES = ("0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0", "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0")


def one_host(card_ids, card_attrs=lambda index: {}, host="node01"):
    """Cards on one host, each on port i of one leaf switch."""
    cards = [NodeSpec(card_id, "card", card_id, host=host, attrs=card_attrs(index)) for index, card_id in enumerate(card_ids)]
    leaf = NodeSpec("leaf", "switch", "leaf", tier="leaf", radix=16)
    links = [LinkSpec(card.id, "1", "leaf", str(index + 1), 400, 10) for index, card in enumerate(cards)]
    return FabricSpec("host", (*cards, leaf), links)


def two_rank_trace(*bindings):
    return Trace("t", bindings, [CollectiveEvent(0.0, "allreduce", tuple(binding.rank for binding in bindings), 1_000_000)])


def test_nccl_log_binds_by_card_id_and_replays():
    log = parse_nccl_log((DATA / "nccl_debug_init_coll_8rank.log").read_text(), source_name="nccl.log")
    spec = one_host([f"node01/gpu:{bus}" for bus in BUSES])
    bound = bind_trace(spec, log)
    assert set(bound.matched_by) == {"card"} and bound.cards[0] == "node01/gpu:0000:18:00.0"
    summary = replay_summary(replay_trace(bound))
    assert summary["events"]["total"] == len(log.events) > 0
    assert summary["busiest_links"][0]["class"] == "card-leaf (scale-up)"


def test_bus_id_binds_to_a_card_of_another_naming():
    # An NCCL topology dump names cards by bus id in attrs; the host may be written differently.
    spec = one_host([f"gpu{index}" for index in range(2)], lambda index: {"busid": BUSES[index]})
    bound = bind_trace(spec, two_rank_trace(
        RankBinding(0, "node01/gpu:0000:18:00.0", "Node01.cluster.local", "0000:18:00.0", 0),
        RankBinding(1, None, "node01", "00000000:2A:00.0", 1),
    ))  # fmt: skip
    assert bound.cards == ("gpu0", "gpu1") and bound.matched_by == ("bus_id", "bus_id")


def test_device_index_binds_to_generated_and_nvidia_smi_cards():
    generated = supernode(cards=16, switch_radix=16)  # host-001 and host-002, attrs index_on_host
    bound = bind_trace(generated, two_rank_trace(RankBinding(0, None, "HOST-002", None, 3), RankBinding(1, None, "host-001", None, 0)))
    assert bound.cards == ("card-0012", "card-0001") and bound.matched_by == ("device", "device")
    smi = one_host(["node01/gpu0", "node01/gpu1"])  # nvidia-smi knows cards by index only
    bound = bind_trace(smi, two_rank_trace(RankBinding(0, None, "node01", "0000:18:00.0", 1), RankBinding(1, None, "node01", None, 0)))
    assert bound.cards == ("node01/gpu1", "node01/gpu0")


def test_unknown_and_ambiguous_ranks_are_listed():
    spec = one_host(["a", "b", "c"], lambda index: {"gpu_index": 0})  # every card claims index 0
    bindings = (
        RankBinding(0, "a"),
        RankBinding(1, "node09/gpu:0000:18:00.0", "node09", "0000:18:00.0"),
        RankBinding(2, None, "node01", None, 0),
        RankBinding(3, "a"),
        RankBinding(4),
    )
    with pytest.raises(TraceError) as caught:
        bind_trace(spec, two_rank_trace(*bindings))
    assert "not cards of fabric 'host'" in str(caught.value)
    assert caught.value.problems == (
        "rank 1: no card of fabric 'host' matches card 'node09/gpu:0000:18:00.0', host 'node09' with bus id 0000:18:00.0",
        "rank 2: host 'node01' and device 0 match 3 cards ('a', 'b', 'c'); expected exactly one",
        "rank 3: card 'a' is already rank 0's; expected one rank per card",
        "rank 4: names no card, host, bus id or device; expected a card id or a host with a bus id or device index",
    )


def test_a_rank_that_names_nothing_is_fine_when_no_event_uses_it():
    spec = one_host(["a", "b"])
    trace = Trace("t", [RankBinding(0, "a"), RankBinding(1, "b"), RankBinding(2)], [CollectiveEvent(0.0, "allreduce", (0, 1), 10)])
    bound = bind_trace(spec, trace)
    assert bound.cards == ("a", "b", None) and bound.card_of_rank == {0: "a", 1: "b"}


def test_at_most_50_problems_are_listed():
    spec = one_host(["a", "b"])
    bindings = [RankBinding(rank, f"missing{rank}") for rank in range(80)]
    with pytest.raises(TraceError) as caught:
        bind_trace(spec, Trace("t", bindings, [CollectiveEvent(0.0, "allreduce", tuple(range(80)), 10)]))
    assert len(caught.value.problems) == MAX_BINDING_PROBLEMS


def test_an_inconsistent_trace_is_rejected_before_binding():
    with pytest.raises(TraceError, match="has no binding"):
        bind_trace(one_host(["a"]), Trace("t", [RankBinding(0, "a")], [CollectiveEvent(0.0, "allreduce", (0, 5), 10)]))
