"""Benchmark of the replay engine on a 4,096-card super-node.

Run from the repository root: ``.venv/bin/python bench/bench_replay.py``.

Two traces on ``supernode(cards=4096, switch_radix=128)`` (64 leaves, 32
spines, 8,192 links):

1. a generated training step, 175B parameters, TP=16 x PP=4 x DP=64 with 4
   micro-batches (collectives and pipeline flows), replayed with the
   ``"rank"`` ordering;
2. an NCCL debug log generated here (64 hosts x 8 GPUs: one communicator per
   host and one per local GPU index across hosts, 1,000 collectives of mixed
   sizes), bound to the fabric's cards by host and device index.

For each it prints the replay's compute time per event and the cost cache's
hit rate, the frames per second ``sample_timeline`` produces (and
``Timeline.frame`` serves once stored), the JSON size of a frame, and the
ratio against a naive baseline that re-simulates every event with a fresh
``Simulator`` (no cache): the baseline is timed on a sample of events and
extrapolated. Last, the size of a worst-case frame of a 16,384-card fat-tree
(49,152 links). Figures are printed, not asserted.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twin.replay import ReplayOptions, bind_trace, replay_summary, replay_trace, sample_timeline  # noqa: E402
from twin.replay.layout import FabricLayout  # noqa: E402
from twin.replay.timeline import FrameBuilder  # noqa: E402
from twin.simcore.generate import fat_tree, supernode  # noqa: E402
from twin.simcore.simulate import Simulator  # noqa: E402
from twin.traces.model import FlowEvent, Trace  # noqa: E402
from twin.traces.nccl_log import parse_nccl_log  # noqa: E402
from twin.traces.training import training_step  # noqa: E402

HOSTS, GPUS, OPERATIONS = 64, 8, 1000
BUSES = ("18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000")
NAIVE_SAMPLE = 40
FRAMES = 600


def nccl_log() -> str:
    """64 hosts x 8 GPUs; per host a TP communicator, per local index a DP one; 1,000 collectives."""
    lines = []
    comms = [("host", host, [host * GPUS + dev for dev in range(GPUS)]) for host in range(HOSTS)]
    comms += [("index", dev, [host * GPUS + dev for host in range(HOSTS)]) for dev in range(GPUS)]
    for number, (_, _, members) in enumerate(comms):
        for comm_rank, rank in enumerate(members):
            host, dev = f"host-{rank // GPUS + 1:03d}", rank % GPUS
            lines.append(
                f"{host}:{4000 + dev}:{4000 + dev} [{dev}] NCCL INFO ncclCommInitRank comm 0x{number:04x}{rank:06x} rank {comm_rank} "
                f"nranks {len(members)} cudaDev {dev} nvmlDev {dev} busId {BUSES[dev]} commId 0x{number + 1:016x} - Init START"
            )
    chooser = random.Random(11)
    op_counts = [0] * len(comms)
    for _ in range(OPERATIONS):
        number = chooser.randrange(len(comms))
        members = comms[number][2]
        op, count = chooser.choice(("AllReduce", "AllGather", "ReduceScatter")), 1 << chooser.randrange(14, 26)
        for rank in members:
            host, dev = f"host-{rank // GPUS + 1:03d}", rank % GPUS
            lines.append(
                f"{host}:{4000 + dev}:{4000 + dev} [{dev}] NCCL INFO {op}: opCount {op_counts[number]:x} sendbuff 0x7f00 recvbuff 0x7f80 "
                f"count {count} datatype 9 op 0 root 0 comm 0x{number:04x}{rank:06x} [nranks={len(members)}] stream 0x5600"
            )
        op_counts[number] += 1
    return "\n".join(lines) + "\n"


def naive_seconds_per_event(bound, sample: int) -> float:
    """A fresh Simulator per event, as without a cache; timed on ``sample`` events spread over the trace."""
    events = bound.trace.events
    card = bound.card_of_rank
    picked = np.linspace(0, len(events) - 1, min(sample, len(events))).astype(int)
    started = time.perf_counter()
    for position in picked.tolist():
        event = events[position]
        if isinstance(event, FlowEvent):
            ranks, op, algorithm = [card[event.src_rank], card[event.dst_rank]], "broadcast", "ring"
        else:
            ranks, op, algorithm = [card[rank] for rank in event.ranks], event.op, event.algorithm or "auto"
        if event.bytes and len(ranks) > 1:
            Simulator(bound.spec, ranks=ranks).run(op, event.bytes, algorithm)
    return (time.perf_counter() - started) / len(picked)


def report(name: str, spec, trace: Trace, options: ReplayOptions) -> None:
    started = time.perf_counter()
    bound = bind_trace(spec, trace)
    bind_s = time.perf_counter() - started
    started = time.perf_counter()
    replay = replay_trace(bound, options=options)
    replay_s = time.perf_counter() - started
    events = len(trace.events)
    started = time.perf_counter()
    timeline = sample_timeline(replay, max_frames=FRAMES)
    produced = [timeline.frame(index) for index in range(len(timeline))]
    frames_s = time.perf_counter() - started
    started = time.perf_counter()
    served = sum(1 for _ in timeline.frames())
    serve_s = time.perf_counter() - started
    sizes = [len(json.dumps(frame)) for frame in produced]
    stored = len(json.dumps(timeline.to_plain()))
    summary = replay_summary(replay)
    naive = naive_seconds_per_event(bound, NAIVE_SAMPLE) * events
    print(f"{name}: {events:,} events, {len(bound.trace.ranks):,} ranks; replayed span {replay.duration_s:.4g} s simulated, peak congestion {replay.peak_congestion:.2f}")
    print(f"  bind {bind_s:.2f} s; replay {replay_s:.2f} s = {replay_s / events * 1e6:,.0f} us/event "
          f"(costing {replay.cost_compute_s:.2f} s for {replay.distinct_costs:,} distinct operations, cache hit rate {summary['events']['cache_hit_rate']:.1%})")  # fmt: skip
    print(f"  frames: {len(produced)} sampled and encoded in {frames_s:.2f} s = {len(produced) / frames_s:,.0f} frames/s; "
          f"served from the stored timeline at {served / serve_s:,.0f} frames/s")  # fmt: skip
    print(f"  frame JSON: median {int(np.median(sizes)):,} B, max {max(sizes):,} B; stored timeline {stored / 1e6:.2f} MB")
    print(f"  naive baseline (fresh Simulator per event, {NAIVE_SAMPLE} sampled): ~{naive:,.0f} s -> ratio ours / naive = {replay_s / naive:.4f}")
    busiest = summary["busiest_links"][0]
    print(f"  busiest link {busiest['from']} -> {busiest['to']} ({busiest['class']}), {busiest['bytes'] / 1e9:,.1f} GB")


def worst_case_frame_16k() -> None:
    layout = FabricLayout.of(fat_tree(endpoints=16384))
    generator = np.random.default_rng(1)
    builder = FrameBuilder(layout, 1)
    builder.add(slice(0, 1), generator.random((1, layout.arc_count)), 2 * generator.random((1, layout.arc_count)), np.array([1e12]))
    timeline = builder.timeline(
        source="replay", t_s=np.array([1.0]), t_end_s=np.array([1.1]), active_offsets=np.array([0, 5000]),
        active_events=np.arange(10**6, 10**6 + 5000), events_done=np.array([10**5]), events_total=10**6,
    )  # fmt: skip
    size = len(json.dumps(timeline.frame(0)))
    print(f"16,384-card fat-tree ({layout.link_count:,} links, {len(layout.switch_positions):,} switches): worst-case frame {size:,} B")


def main() -> None:
    spec = supernode(cards=4096, switch_radix=128)
    cards = [card.id for card in spec.cards()]
    print(f"fabric: {spec.name}, {len(cards):,} cards, {len(spec.links):,} links")
    step = training_step(
        model_params=175e9, tp=16, pp=4, dp=64, micro_batches=4, hidden_size=12288, seq_len=2048, layers=96, placement=cards,
    )  # fmt: skip
    report("training step 175B TP16 x PP4 x DP64", spec, step, ReplayOptions(ordering="rank"))
    text = nccl_log()
    log = parse_nccl_log(text, source_name="bench.log")
    report(f"NCCL log ({text.count(chr(10)):,} lines)", spec, log, ReplayOptions())
    worst_case_frame_16k()


if __name__ == "__main__":
    main()
