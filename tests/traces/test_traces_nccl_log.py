"""NCCL debug logs: the sample's exact content, each FORMATS.md pitfall, errors and fuzzing."""

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twin.ingest.errors import IngestError
from twin.traces.model import CollectiveEvent, FlowEvent
from twin.traces.nccl_log import bus_id_from_nccl, detect_nccl_log, parse_nccl_log

SAMPLE_NAME = "nccl_debug_init_coll_8rank.log"
SAMPLE = (Path(__file__).resolve().parent.parent / "data" / "traces" / SAMPLE_NAME).read_text()


def parse(text, **options):
    return parse_nccl_log(text, source_name="job.log", **options)


def init_line(host, pid, dev, rank, nranks, bus, comm_id, pointer=None, ts=""):
    pointer = pointer or f"0x{pid:x}{dev:x}0"
    return f"{ts}{host}:{pid}:{pid} [{dev}] NCCL INFO ncclCommInitRank comm {pointer} rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} busId {bus} commId {comm_id} - Init START"


def coll_line(host, pid, dev, op, op_count, count, dtype, pointer=None, nranks=2, root=0, ts=""):
    pointer = pointer or f"0x{pid:x}{dev:x}0"
    return (
        f"{ts}{host}:{pid}:{pid} [{dev}] NCCL INFO {op}: opCount {op_count} sendbuff 0x7f00 recvbuff 0x7f80 count {count} "
        f"datatype {dtype} op 0 root {root} comm {pointer} [nranks={nranks}] stream 0x55aa"
    )


def two_rank_log(*colls):
    lines = [init_line("gpu-a", 100, 0, 0, 2, "18000", "0xabc"), init_line("gpu-b", 200, 0, 1, 2, "18000", "0xabc")]
    return "\n".join(lines + list(colls)) + "\n"


# -- the sample -----------------------------------------------------------------------------------


def test_sample_ranks_events_and_attributes():
    trace = parse(SAMPLE)
    assert [binding.bus_id for binding in trace.ranks] == [
        f"0000:{bus}:00.0" for bus in ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")
    ]
    assert trace.ranks[5].card == "node01/gpu:0000:ab:00.0" and trace.ranks[5].device == 5
    assert len(trace.events) == 13
    collectives = [event for event in trace.events if isinstance(event, CollectiveEvent)]
    assert Counter(event.op for event in collectives) == {"allreduce": 6, "broadcast": 2, "allgather": 2, "reducescatter": 2}
    assert all(event.ranks == tuple(range(8)) and event.comm == "0x5f1c2b7a9d0e4c51" for event in collectives)
    assert trace.events[-1] == FlowEvent(0.012, 0, 1, 1048576 * 2)  # Send/Recv of 1M bfloat16 is one flow
    attrs = trace.attrs
    assert attrs["nccl_version"] == "2.21.5+cuda12.4" and attrs["timing"] == "order" and attrs["spacing_s"] == 0.001
    (comm,) = attrs["communicators"]
    assert comm["nranks"] == 8 and comm["ranks"] == tuple(range(8))
    assert sorted(comm["ring_next"], key=int) == [str(channel) for channel in range(16)]
    assert comm["ring_next"]["0"] == (1, 2, 3, 4, 5, 6, 7, 0) and comm["ring_prev"]["15"] == (7, 0, 1, 2, 3, 4, 5, 6)
    # Trees lines come from ranks 0, 3 and 7 only; the others are unknown (None), -1 is NCCL's "none".
    assert comm["tree_up"]["5"] == (-1, None, None, 2, None, None, None, 6)
    assert comm["tree_down"]["5"][0] == (1, None, None, 4, None, None, None, -1)


def test_bytes_are_count_times_datatype_size_and_whole_buffer_for_gathers():
    trace = parse(SAMPLE)
    by_op = {event.op: event for event in trace.events if isinstance(event, CollectiveEvent)}
    assert by_op["allgather"].count == 2097152 and by_op["allgather"].dtype == "bfloat16"
    assert by_op["allgather"].bytes == 2097152 * 2 * 8  # count is per rank; bytes is the gathered buffer
    first = trace.events[0]
    assert first.op == "broadcast" and first.bytes == first.count * 4


def test_detection():
    assert detect_nccl_log(SAMPLE) and not detect_nccl_log("# nThread 1 nGpus 8\n")


def test_bus_id_decoding():
    assert bus_id_from_nccl("db000") == "0000:db:00.0"
    assert bus_id_from_nccl("118001") == "0001:18:00.1"


# -- pitfalls -------------------------------------------------------------------------------------


def test_hex_op_count_joins_ranks_and_orders_operations():
    log = two_rank_log(
        coll_line("gpu-a", 100, 0, "AllReduce", "f", 4, 7),
        coll_line("gpu-a", 100, 0, "AllReduce", "1f", 8, 7),
        coll_line("gpu-b", 200, 0, "AllReduce", "1f", 8, 7),
        coll_line("gpu-b", 200, 0, "AllReduce", "f", 4, 7),
    )
    events = parse(log).events
    assert [(event.bytes, event.ranks) for event in events] == [(16, (0, 1)), (32, (0, 1))]


def test_fused_lines_are_split_and_glued_host_names_repaired():
    lines = SAMPLE.splitlines()
    coll = [number for number, line in enumerate(lines) if "opCount b " in line]
    fused = list(lines)
    fused[coll[0]] = lines[coll[0]] + lines[coll[1]]  # "...stream 0x55f9e1a09c10node01:30105:..."
    del fused[coll[1]]
    assert parse("\n".join(fused)) == parse(SAMPLE)


@pytest.mark.parametrize("prefix", ["[1,0]<stdout>:", "0: ", "(RayTrainWorker pid=4242, ip=10.0.0.7) ", "[rank3]:"])
def test_launcher_prefixes_are_skipped(prefix):
    prefixed = "\n".join(prefix + line for line in SAMPLE.splitlines())
    assert parse(prefixed).events == parse(SAMPLE).events


def test_crlf_line_ends():
    assert parse(SAMPLE.replace("\n", "\r\n")) == parse(SAMPLE)


def test_truncated_ring_order_lines_are_counted_not_used():
    nranks = 32
    lines = [init_line("h", 1, 0, 0, nranks, "18000", "0x77")]
    order_2_22 = "".join(f" {rank:3d}" for rank in range(20))  # NCCL <= 2.22 prints the first 20 ranks only
    lines.append(f"h:1:1 [0] NCCL INFO Channel 00/02 :{order_2_22}")
    lines.append("h:1:1 [0] NCCL INFO Channel 01/02 : " + " ".join(str(rank) for rank in range(31)) + " ...")
    trace = parse("\n".join(lines))
    comm = trace.attrs["communicators"][0]
    assert trace.attrs["truncated_channel_lines"] == 2 and comm["ring_next"] == {}
    assert len(trace.ranks) == 32 and trace.ranks[1].card is None  # only rank 0 logged its set-up


def test_complete_ring_order_line_gives_neighbours():
    lines = [init_line("h", 1, 0, 0, 4, "18000", "0x77"), "h:1:1 [0] NCCL INFO Channel 00/01 :    0   2   1   3"]
    comm = parse("\n".join(lines)).attrs["communicators"][0]
    assert comm["ring_next"] == {"0": (2, 3, 1, 0)} and comm["ring_prev"] == {"0": (3, 2, 0, 1)}


def test_multiple_communicators_map_onto_world_ranks():
    lines = []
    buses = ["18000", "2a000", "3a000", "5d000"]
    for rank in range(4):
        lines.append(init_line("n1", 10 + rank, rank, rank, 4, buses[rank], "0x100"))
    # Two 2-rank sub-communicators (a TP split): world ranks {0,1} and {2,3}, each numbered 0..1.
    for rank in range(4):
        lines.append(init_line("n1", 10 + rank, rank, rank % 2, 2, buses[rank], f"0x{200 + rank // 2}", pointer=f"0x5{rank}"))
    for rank in range(4):
        lines.append(coll_line("n1", 10 + rank, rank, "AllReduce", "0", 256, 9, pointer=f"0x5{rank}"))
        lines.append(coll_line("n1", 10 + rank, rank, "AllGather", "0", 16, 7, nranks=4))
    trace = parse("\n".join(lines))
    assert len(trace.ranks) == 4
    groups = sorted((event.comm, event.ranks, event.bytes) for event in trace.events)
    assert groups == [("0x100", (0, 1, 2, 3), 16 * 4 * 4), ("0x200", (0, 1), 512), ("0x201", (2, 3), 512)]
    assert len(trace.attrs["communicators"]) == 3


def test_log_timestamps_give_event_times():
    log = two_rank_log(
        coll_line("gpu-a", 100, 0, "AllReduce", "0", 4, 7, ts="[2025-03-01 10:00:00.250000] "),
        coll_line("gpu-b", 200, 0, "AllReduce", "0", 4, 7, ts="[2025-03-01 10:00:00.200000] "),
        coll_line("gpu-a", 100, 0, "Broadcast", "1", 4, 7, ts="[2025-03-01 10:00:01.700000] "),
    )
    trace = parse(log)
    assert trace.attrs["timing"] == "log" and "spacing_s" not in trace.attrs
    assert [event.t_s for event in trace.events] == [0.0, 1.5]


def test_spacing_orders_untimed_operations():
    log = two_rank_log(coll_line("gpu-a", 100, 0, "AllReduce", "0", 4, 7), coll_line("gpu-a", 100, 0, "AllReduce", "1", 4, 7))
    assert [event.t_s for event in parse(log, spacing_s=0.5).events] == [0.0, 0.5]


def test_unsupported_operations_are_counted():
    trace = parse(two_rank_log(coll_line("gpu-a", 100, 0, "Gather", "0", 4, 7)))
    assert trace.events == () and trace.attrs["skipped_operations"] == {"Gather": 1}


# -- errors ---------------------------------------------------------------------------------------


def error_of(text):
    with pytest.raises(IngestError) as caught:
        parse(text)
    return caught.value


def test_coll_only_log_is_rejected_with_the_reason():
    text = "\n".join(line for line in SAMPLE.splitlines() if "opCount" in line)
    error = error_of(text)
    assert error.line == 1 and "no ncclCommInitRank line" in str(error) and "INIT" in error.expected
    assert len(error.problems) == 8  # one per unknown communicator pointer, not one per line


def test_bad_lines_are_reported_with_their_line_numbers():
    log = two_rank_log(
        "gpu-a:100:100 [0] NCCL INFO AllReduce: opCount zz sendbuff 0x1 recvbuff 0x2 count 4",
        coll_line("gpu-a", 100, 0, "AllReduce", "0", 4, 42),
        coll_line("gpu-a", 100, 0, "AllReduce", "1", 4, 7),
        coll_line("gpu-b", 200, 0, "AllGather", "1", 4, 7),
        coll_line("gpu-a", 100, 0, "Send", "2", 4, 7, root=5),
    )
    error = error_of(log)
    assert [problem.line for problem in error.problems] == [3, 4, 6, 7]
    assert "unreadable collective line" in str(error.problems[0].message)
    assert "unknown datatype 42" in str(error.problems[1].message)
    assert "AllGather" in str(error.problems[2].message) and "line 5" in str(error.problems[2].message)
    assert "peer 5" in str(error.problems[3].message)


def test_conflicting_communicator_set_up_is_reported():
    log = "\n".join(
        [init_line("a", 1, 0, 0, 2, "18000", "0x9"), init_line("b", 2, 0, 0, 2, "2a000", "0x9"), init_line("c", 3, 0, 0, 4, "18000", "0x9")]
    )
    error = error_of(log)
    assert [problem.line for problem in error.problems] == [2, 3]


def test_text_without_nccl_lines_is_rejected():
    assert "no NCCL INFO lines" in str(error_of("hello\nworld\n"))
    assert "no communicator" in str(error_of("h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\n"))


@st.composite
def mutated_sample(draw):
    lines = SAMPLE.splitlines()
    for _ in range(draw(st.integers(1, 6))):
        position = draw(st.integers(0, len(lines) - 1))
        line = lines[position]
        cut = draw(st.integers(0, len(line)))
        action = draw(st.sampled_from(["cut", "replace", "drop", "fuse", "duplicate"]))
        if action == "cut":
            lines[position] = line[:cut]
        elif action == "replace":
            lines[position] = line[:cut] + draw(st.sampled_from(list("0a-: []x/>"))) + line[cut + 1 :]
        elif action == "drop":
            del lines[position]
        elif action == "fuse" and position + 1 < len(lines):
            lines[position : position + 2] = [line[:cut] + lines[position + 1]]
        else:
            lines.insert(position, line)
    return "\n".join(lines)


@settings(max_examples=120, deadline=None)
@given(text=mutated_sample())
def test_mutated_logs_raise_only_ingest_errors(text):
    try:
        trace = parse(text)
    except IngestError:
        return
    trace.validate()


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=300) | st.lists(st.sampled_from(SAMPLE.splitlines()[:12] + ["h:1:1 [0] NCCL INFO x", "\r"]), max_size=8).map("".join))
def test_random_text_raises_only_ingest_errors(text):
    try:
        parse(text)
    except IngestError:
        pass
