"""Generated training steps: the article's worked case and the documented formulas."""

from collections import Counter

import pytest

from twin.traces.errors import TraceError
from twin.traces.model import CollectiveEvent, FlowEvent
from twin.traces.training import training_step

GPT3 = dict(model_params=175e9, hidden_size=12288, seq_len=2048, layers=96)


def cards(count):
    return [f"node{number // 8:03d}/gpu{number % 8}" for number in range(count)]


def test_article_case_175b_tp16_dp64_on_1024_cards():
    """DOMAIN.md: ~350 GB of gradient a step, ~342 MB per card."""
    step = training_step(**GPT3, tp=16, dp=64, placement=cards(1024))
    dp_allreduces = [event for event in step.events if isinstance(event, CollectiveEvent) and len(event.ranks) == 64]
    assert len(dp_allreduces) == 16  # one per TP index
    assert {event.bytes for event in dp_allreduces} == {21_875_000_000}  # each rank's gradient shard: 175e9 / 16 x 2
    assert sum(event.bytes for event in dp_allreduces) == 350e9  # the whole gradient, once
    assert step.attrs["dp_shard_bytes_per_rank"] == 341_796_875  # 350 GB / 1024 = DOMAIN.md's S
    assert dp_allreduces[0].ranks == tuple(range(0, 1024, 16))  # same TP index, every replica
    tp = [event for event in step.events if len(event.ranks) == 16]
    assert len(tp) == 4 * 96 * 64  # 4 all-reduces per layer (2 forward, 2 backward) per TP group
    assert {event.bytes for event in tp} == {2048 * 12288 * 2} and tp[0].ranks == tuple(range(16))


def test_pipeline_sends_and_gpipe_slots():
    step = training_step(model_params=1e9, hidden_size=1024, seq_len=128, layers=4, tp=2, pp=2, dp=2, micro_batches=3, placement=cards(8), spacing_s=1.0)
    flows = [event for event in step.events if isinstance(event, FlowEvent)]
    assert len(flows) == 2 * 3 * 2 * 2  # forward + backward, 3 micro-batches, dp x tp pairs
    assert {(flow.src_rank, flow.dst_rank) for flow in flows} == {(0, 4), (1, 5), (2, 6), (3, 7), (4, 0), (5, 1), (6, 2), (7, 3)}
    assert {flow.bytes for flow in flows} == {128 * 1024 * 2}
    times = [event.t_s for event in step.events]
    # Per pass 4 waves of 2 layers x 2 all-reduces, plus a send slot in the 3 waves where stage 0 works: 19 slots.
    assert times == sorted(times) and times[-1] == 2 * 19
    assert step.events[-1].bytes == 2 * round(1e9 / 4)


def test_expert_parallel_alltoalls():
    step = training_step(model_params=1e9, hidden_size=1024, seq_len=128, layers=2, tp=1, dp=4, ep=2, placement=cards(4))
    counts = Counter((event.op, event.ranks) for event in step.events)
    assert counts[("alltoall", (0, 1))] == counts[("alltoall", (2, 3))] == 2 * 2 * 2  # dispatch + combine, fwd + bwd, 2 layers
    assert counts[("allreduce", (0, 1, 2, 3))] == 1


def test_layers_from_model_size():
    step = training_step(model_params=12 * 1024**2 * 8, hidden_size=1024, seq_len=16, tp=2, dp=1, placement=cards(2))
    assert step.attrs["layers"] == 8


@pytest.mark.parametrize(
    "arguments, words",
    [
        (dict(tp=16, dp=64, placement=cards(1000)), "expected tp x pp x dp = 1024"),
        (dict(tp=16, dp=64, placement=cards(1023) + ["node000/gpu0"]), "a card twice"),
        (dict(tp=0, dp=64, placement=cards(0)), "tp 0"),
        (dict(tp=2, dp=6, ep=4, placement=cards(12)), "ep 4 does not divide dp 6"),
        (dict(tp=2, dp=2, pp=4, layers=6, placement=cards(16)), "do not split into 4"),
    ],
)
def test_inconsistent_arguments_are_listed(arguments, words):
    with pytest.raises(TraceError, match=words):
        training_step(**{**GPT3, **arguments})


def test_activation_sizes_are_required_beyond_pure_data_parallelism():
    with pytest.raises(TraceError, match="hidden_size and seq_len"):
        training_step(model_params=1e9, tp=2, dp=2, placement=cards(4))
    assert len(training_step(model_params=1e9, tp=1, dp=4, placement=cards(4)).events) == 1
