"""Benchmark of the trace inputs: a 1,024-rank NCCL log and a 4,096-rank training step.

Run from the repository root: ``.venv/bin/python bench/bench_traces.py``.

The NCCL log is generated here: 128 hosts x 8 GPUs, one world communicator
with set-up, ring and tree lines for 16 channels, then ``OPERATIONS``
collectives logged by every rank (10,240 COLL lines). It prints the parse
time (best of a few runs), the peak traced memory (a separate run under
``tracemalloc``, which slows Python down) and the ratio against a naive
baseline that runs one regex per line and builds a dict per COLL line. The
training step is 175B parameters, TP=16 x PP=4 x DP=64 on 4,096 cards.
Figures are printed, not asserted.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twin.traces.nccl_log import parse_nccl_log  # noqa: E402
from twin.traces.training import training_step  # noqa: E402
from bench.measure import best_time, peak_traced_bytes  # noqa: E402

HOSTS, GPUS, CHANNELS, OPERATIONS = 128, 8, 16, 10
BUSES = ("18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000")
REPEATS = 3


def nccl_log(hosts: int = HOSTS) -> str:
    """A log of ``hosts x 8`` ranks in NCCL 2.21's format (FORMATS.md section 6)."""
    ranks = hosts * GPUS
    lines = []
    for rank in range(ranks):
        host, dev = f"node{rank // GPUS:03d}", rank % GPUS
        prefix = f"{host}:{4000 + dev}:{4000 + dev} [{dev}] NCCL INFO "
        comm = f"0x55{rank:010x}"
        lines.append(f"{prefix}ncclCommInitRank comm {comm} rank {rank} nranks {ranks} cudaDev {dev} nvmlDev {dev} busId {BUSES[dev]} commId 0x5f1c2b7a9d0e4c51 - Init START")
        trees = " ".join(f"[{channel}] {(rank * 2 + 1) % ranks}/-1/-1->{rank}->{(rank - 1) // 2}" for channel in range(CHANNELS))
        lines.append(f"{prefix}Trees {trees}")
        lines.extend(f"{prefix}Ring {channel:02d} : {(rank - 1) % ranks} -> {rank} -> {(rank + 1) % ranks}" for channel in range(CHANNELS))
        lines.append(f"{prefix}ncclCommInitRank comm {comm} rank {rank} nranks {ranks} cudaDev {dev} nvmlDev {dev} busId {BUSES[dev]} commId 0x5f1c2b7a9d0e4c51 - Init COMPLETE")
    for op_count in range(OPERATIONS):
        for rank in range(ranks):
            host, dev = f"node{rank // GPUS:03d}", rank % GPUS
            lines.append(
                f"{host}:{4000 + dev}:{4000 + dev} [{dev}] NCCL INFO AllReduce: opCount {op_count:x} sendbuff 0x7f00 recvbuff 0x7f80 "
                f"count {1 << (10 + op_count)} datatype 9 op 0 root 0 comm 0x55{rank:010x} [nranks={ranks}] stream 0x5600"
            )
    return "\n".join(lines) + "\n"


_NAIVE_COLL = re.compile(
    r"^(\S+):(\d+):(\d+) \[(\d+)\] NCCL INFO (\w+): opCount (\w+) sendbuff (\S+) recvbuff (\S+) count (\d+) datatype (\d+) op (\d+) root (-?\d+) comm (\S+)"
)
_NAIVE_INIT = re.compile(r"^(\S+):(\d+):(\d+) \[(\d+)\] NCCL INFO ncclCommInitRank comm (\S+) rank (\d+) nranks (\d+) .*busId (\w+) commId (\S+)")
_NAIVE_RING = re.compile(r"^(\S+):(\d+):(\d+) \[(\d+)\] NCCL INFO Ring (\d+) : (\d+) -> (\d+) -> (\d+)")
_NAIVE_TREES = re.compile(r"^(\S+):(\d+):(\d+) \[(\d+)\] NCCL INFO Trees (.*)")


def naive_baseline(text: str) -> list[dict]:
    """Regexes tried per line (no launcher prefixes, fused lines, checks or line-numbered errors),
    a dict per matching line, collectives joined by (comm, opCount) at the end."""
    pointers, operations, rings, trees = {}, {}, {}, {}
    for line in text.splitlines():
        match = _NAIVE_INIT.match(line)
        if match:
            pointers[(match[1], match[2], match[5])] = (match[9], int(match[6]))
            continue
        match = _NAIVE_RING.match(line)
        if match:
            rings[(match[1], match[2], match[5])] = dict(zip(("prev", "rank", "next"), match.groups()[5:]))
            continue
        match = _NAIVE_TREES.match(line)
        if match:
            trees[(match[1], match[2])] = re.findall(r"\[(\d+)\] (-?\d+)/(-?\d+)/(-?\d+)->(\d+)->(-?\d+)", match[5])
            continue
        match = _NAIVE_COLL.match(line)
        if match:
            record = dict(zip(("host", "pid", "tid", "dev", "op", "op_count", "send", "recv", "count", "dtype", "redop", "root", "comm"), match.groups()))
            comm, rank = pointers[(record["host"], record["pid"], record["comm"])]
            operations.setdefault((comm, int(record["op_count"], 16)), []).append((rank, record))
    return [{"comm": comm, "op_count": op_count, "ranks": sorted(rank for rank, _ in lines)} for (comm, op_count), lines in operations.items()]


def peak_megabytes(run: Callable[[], object]) -> float:
    return peak_traced_bytes(run) / 1e6


def main() -> None:
    text = nccl_log()
    lines = text.count("\n")
    trace = parse_nccl_log(text, source_name="bench.log")
    print(f"NCCL log: {HOSTS * GPUS:,} ranks, {lines:,} lines ({len(text) / 1e6:.1f} MB), {HOSTS * GPUS * OPERATIONS:,} COLL lines")
    print(f"  -> {len(trace.ranks):,} ranks, {len(trace.events)} collectives, rings and trees of {len(trace.attrs['communicators'][0]['ring_next'])} channels")
    ours = best_time(lambda: parse_nccl_log(text, source_name="bench.log"), REPEATS)
    naive = best_time(lambda: naive_baseline(text), REPEATS)
    print(f"  parse_nccl_log   {ours:7.3f} s  ({lines / ours / 1e3:,.0f} k lines/s), peak {peak_megabytes(lambda: parse_nccl_log(text, source_name='bench.log')):.0f} MB")
    print(f"  naive baseline   {naive:7.3f} s  (regexes + a dict per line, no checks), peak {peak_megabytes(lambda: naive_baseline(text)):.0f} MB")
    print(f"  ratio ours / naive: {ours / naive:.2f}")

    placement = [f"node{number // 8:03d}/gpu{number % 8}" for number in range(4096)]

    def step():
        return training_step(model_params=175e9, hidden_size=12288, seq_len=2048, layers=96, tp=16, pp=4, dp=64, micro_batches=4, placement=placement)

    events = len(step().events)
    print(f"training step: 175B, TP16 x PP4 x DP64 = 4,096 ranks, 4 micro-batches -> {events:,} events")
    print(f"  training_step    {best_time(step, REPEATS):7.3f} s, peak {peak_megabytes(step):.0f} MB")


if __name__ == "__main__":
    main()
