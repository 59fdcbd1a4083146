"""nccl-tests output: both samples exactly, each FORMATS.md pitfall, errors and fuzzing."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twin.ingest.errors import IngestError
from twin.traces.errors import TraceError
from twin.traces.model import measurement_from_dict, measurement_to_dict
from twin.traces.nccl_tests import detect_nccl_tests, measurement_trace, parse_nccl_tests

DATA = Path(__file__).resolve().parent.parent / "data" / "traces"
CLASSIC_NAME = "nccl-tests_all_reduce_perf_8gpu_classic.txt"
NEW_NAME = "nccl-tests_all_gather_perf_8gpu_v2.17.txt"
CLASSIC = (DATA / CLASSIC_NAME).read_text()
NEW = (DATA / NEW_NAME).read_text()


def parse(text, source_name="out.txt", **options):
    return parse_nccl_tests(text, source_name=source_name, **options)


def test_classic_writer_sample():
    (measurement,) = parse(CLASSIC, CLASSIC_NAME)
    assert measurement.collective == "allreduce" and measurement.program is None  # from the file name
    assert len(measurement.ranks) == 8 and measurement.ranks[1].bus_id == "0000:2a:00.0"
    assert measurement.ranks[7].card == "node01/gpu:0000:db:00.0" and measurement.ranks[7].device == 7
    assert len(measurement.rows) == 16 and measurement.out_of_bounds == 0
    last = measurement.rows[-1]
    assert (last.size_bytes, last.count, last.dtype, last.redop, last.root) == (8589934592, 2147483648, "float", "sum", -1)
    assert last.out_of_place.time_us == 31499 and last.in_place.busbw_gbytes_per_s == 481.07
    assert measurement.avg_busbw_gbytes_per_s == 162.074
    busbw = [half.busbw_gbytes_per_s for row in measurement.rows for half in (row.out_of_place, row.in_place)]
    assert sum(busbw) / len(busbw) == pytest.approx(162.074, abs=1e-3)  # the footer is the mean of all 32
    assert measurement.peak_busbw_gbytes_per_s() == 483.03
    assert measurement.attrs["config"]["nGpus"] == 8 and measurement.attrs["config"]["warmup_iters"] == 5


def test_new_writer_sample():
    (measurement,) = parse(NEW, "gathered.txt")
    assert measurement.collective == "allgather" and measurement.program == "all_gather_perf"
    assert measurement.attrs["nccl_tests_version"] == "2.17.8" and measurement.attrs["nccl_library"] == 22703
    assert measurement.ranks[0].bus_id == "0000:18:00.0"
    assert len(measurement.rows) == 14 and measurement.avg_busbw_gbytes_per_s == 83.717
    assert all(row.size_bytes == row.count * 4 * 8 for row in measurement.rows)


def test_sweep_trace_one_collective_per_size_at_measured_times():
    (measurement,) = parse(CLASSIC, CLASSIC_NAME)
    trace = measurement_trace(measurement)
    assert [event.bytes for event in trace.events] == [row.size_bytes for row in measurement.rows]
    assert trace.events[1].t_s == pytest.approx(13.93e-6) and trace.events[0].t_s == 0
    assert all(event.ranks == tuple(range(8)) and event.op == "allreduce" for event in trace.events)


def test_zero_size_rows_are_kept_as_measured_but_not_replayed():
    (measurement,) = parse(NEW)
    assert [row.size_bytes for row in measurement.rows[:3]] == [0, 0, 128]
    assert len(measurement_trace(measurement).events) == 12


def test_measurement_plain_dict_round_trip():
    (measurement,) = parse(NEW)
    assert measurement_from_dict(json.loads(json.dumps(measurement_to_dict(measurement)))) == measurement


def test_detection():
    assert detect_nccl_tests(CLASSIC) and detect_nccl_tests(NEW)
    assert not detect_nccl_tests((DATA / "nccl_debug_init_coll_8rank.log").read_text())


# -- pitfalls -------------------------------------------------------------------------------------


def test_wide_numbers_of_both_writers():
    wide = CLASSIC.replace("   31499  272.71  477.24", "   31499  1272.71  2227.24").replace("31248  274.90", "1.2e+04  1234.5")
    last = parse(wide, CLASSIC_NAME)[0].rows[-1]
    assert last.out_of_place.algbw_gbytes_per_s == 1272.71 and last.in_place.time_us == 12000.0
    assert last.in_place.algbw_gbytes_per_s == 1234.5


def test_one_report_per_process_when_mpirun_starts_a_non_mpi_build():
    single = CLASSIC.replace("nGpus 8", "nGpus 1")
    lines = single.splitlines()
    one_rank = "\n".join(line for line in lines if "Rank " not in line or "Rank  0 " in line)
    measurements = parse(one_rank + "\n" + one_rank.replace("Rank  0", "Rank  0").replace("[0x18]", "[0x2a]"), CLASSIC_NAME)
    assert len(measurements) == 2 and [len(m.ranks) for m in measurements] == [1, 1]
    assert measurements[1].ranks[0].bus_id == "0000:2a:00.0"


def test_concatenated_tests_and_interleaved_nccl_lines():
    noisy = NEW.replace("# Using devices\n", "# Using devices\nnode01:41822:41822 [0] NCCL INFO Bootstrap : Using eth0\n")
    noisy = noisy.replace("        8192 ", "node01:41822:41830 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/CUMEM\n        8192 ")
    measurements = parse(CLASSIC + noisy, CLASSIC_NAME)
    assert [m.collective for m in measurements] == ["allreduce", "allgather"]
    assert [len(m.rows) for m in measurements] == [16, 14]


def test_launcher_prefixes_are_skipped():
    prefixed = "\n".join("[1,0]<stdout>:" + line for line in NEW.splitlines())
    assert parse(prefixed) == parse(NEW)


def test_timestamp_and_per_iteration_columns():
    lines = NEW.splitlines()
    header = next(number for number, line in enumerate(lines) if "#wrong" in line)
    lines[header] += " timestamp"
    row = next(number for number, line in enumerate(lines) if line.strip().startswith("128 "))
    lines[row] += "  2025-03-01 10:00:00"
    (measurement,) = parse("\n".join(lines))
    assert measurement.rows[2].in_place.busbw_gbytes_per_s == 0.01
    per_iteration = (
        "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 1 iters: 5 agg iters: 1 validation: 1 graph: 0\n"
        "#  Rank  0 Group  0 Pid  1 on h device  0 [0000:18:00] GPU\n#  Rank  1 Group  0 Pid  1 on h device  1 [0000:2a:00] GPU\n"
        "#       size  count  type  redop  root  time  algbw  busbw  #wrong  i_min  i_max  i_p99  i_cv%  time  algbw  busbw  #wrong  i_min  i_max  i_p99  i_cv%\n"
        "           8      2  float  sum   -1   10.0   0.00   0.00    0   9.0  11.0  11.0  3.1   10.5   0.00   0.00    N/A   9.0  12.0  12.0  4.0\n"
        "# Avg bus bandwidth    : 0\n"
    )
    (measurement,) = parse(per_iteration, "all_reduce_perf.log")
    row = measurement.rows[0]
    assert row.out_of_place.time_us == 10.0 and row.in_place.time_us == 10.5 and row.in_place.wrong is None


def test_in_place_only_rows():
    text = NEW.replace("    11.48    0.00    0.00       0    11.53", "                                    11.53", 1)
    first = parse(text)[0].rows[0]
    assert first.out_of_place is None and first.in_place.time_us == 11.53


def test_collective_inference_and_explicit_choice():
    unnamed = NEW.replace("all_gather_perf", "perf")
    with pytest.raises(IngestError) as caught:
        parse(unnamed)
    assert "cannot tell which collective" in str(caught.value) and caught.value.line == 18
    assert parse(unnamed, collective="alltoall")[0].collective == "alltoall"
    assert parse(CLASSIC)[0].collective == "allreduce"  # inferred: size = count x 4, sum, unrooted
    with pytest.raises(IngestError):
        parse(CLASSIC, collective="allreduce_perf")


def test_gather_cannot_be_replayed():
    (measurement,) = parse(CLASSIC, collective="gather")
    with pytest.raises(TraceError):
        measurement_trace(measurement)


# -- errors ---------------------------------------------------------------------------------------


def test_bad_rows_and_device_lines_are_reported_with_line_numbers():
    bad = CLASSIC.replace("  2048           512", "  2048           5x2").replace("[0x3a]", "[bus 3a]")
    bad = bad.replace("   32768          8192     float     sum      -1    14.16", "   32768          8192     float     sum      -1")
    with pytest.raises(IngestError) as caught:
        parse(bad, CLASSIC_NAME)
    assert [problem.line for problem in caught.value.problems] == [6, 20, 22]


def test_text_without_a_report_is_rejected():
    with pytest.raises(IngestError, match="no nccl-tests report"):
        parse("just some text\n")
    with pytest.raises(IngestError, match="without result rows"):
        parse(CLASSIC.split("#       size")[0], CLASSIC_NAME)


@st.composite
def mutated(draw, text):
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 6))):
        position = draw(st.integers(0, len(lines) - 1))
        line = lines[position]
        cut = draw(st.integers(0, len(line)))
        action = draw(st.sampled_from(["cut", "replace", "drop", "duplicate"]))
        if action == "cut":
            lines[position] = line[:cut]
        elif action == "replace":
            lines[position] = line[:cut] + draw(st.sampled_from(list("0 x.-e#[]:N/A"))) + line[cut + 1 :]
        elif action == "drop":
            del lines[position]
        else:
            lines.insert(position, line)
    return "\n".join(lines)


@pytest.mark.parametrize("sample", [CLASSIC, NEW], ids=["classic", "new"])
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_mutated_output_raises_only_ingest_errors(sample, data):
    try:
        measurements = parse(data.draw(mutated(sample)), CLASSIC_NAME)
    except IngestError:
        return
    for measurement in measurements:
        try:
            measurement_trace(measurement)
        except TraceError:
            pass


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=300))
def test_random_text_raises_only_ingest_errors(text):
    try:
        parse("# nThread 1 nGpus 1 minBytes 8\n" + text)
    except IngestError:
        pass
