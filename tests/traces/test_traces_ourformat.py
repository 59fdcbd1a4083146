"""The twin-trace format (JSON lines and CSV): round trips, line-numbered errors, fuzzing."""

import doctest
import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twin.ingest.errors import IngestError
from twin.ingest.options import ParseOptions
from twin.traces import model, nccl_log, ourformat, training
from twin.traces.errors import TraceError
from twin.traces.model import OPERATIONS, CollectiveEvent, FlowEvent, RankBinding, Trace, trace_from_dict, trace_to_dict
from twin.traces.ourformat import (
    detect_trace_csv,
    detect_trace_jsonl,
    export_trace_csv,
    export_trace_jsonl,
    parse_trace_csv,
    parse_trace_jsonl,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "traces"
FORMATS = [(export_trace_jsonl, parse_trace_jsonl), (export_trace_csv, parse_trace_csv)]


@st.composite
def traces(draw):
    """Valid traces: 1-6 ranks with optional card data, then time-ordered events."""
    rank_numbers = draw(st.lists(st.integers(0, 40), min_size=2, max_size=6, unique=True))
    text = st.text(string.ascii_letters + string.digits + ":/._-, \"'", min_size=1, max_size=12)
    ranks = tuple(
        RankBinding(rank, draw(st.none() | text), draw(st.none() | text), draw(st.none() | text), draw(st.none() | st.integers(0, 15)))
        for rank in rank_numbers
    )
    times = sorted(draw(st.lists(st.floats(0, 1e4, allow_nan=False), max_size=12)))
    events = []
    for t_s in times:
        size = draw(st.integers(0, 2**40))
        if draw(st.booleans()):
            src, dst = draw(st.lists(st.sampled_from(rank_numbers), min_size=2, max_size=2, unique=True))
            events.append(FlowEvent(t_s, src, dst, size))
        else:
            group = draw(st.lists(st.sampled_from(rank_numbers), min_size=1, unique=True)) if draw(st.booleans()) else rank_numbers
            events.append(CollectiveEvent(t_s, draw(st.sampled_from(OPERATIONS)), tuple(group), size, draw(st.none() | text), draw(st.none() | text), draw(st.none() | st.integers(0, 2**40)), draw(st.none() | st.sampled_from(["float", "bfloat16"]))))
    attrs = draw(st.dictionaries(st.text(string.ascii_lowercase, min_size=1, max_size=5), st.integers() | text | st.lists(st.integers(), max_size=3), max_size=3))
    return Trace(draw(text), ranks, tuple(events), attrs)


def test_docstring_examples():
    for module in (model, ourformat, nccl_log, training):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__


@pytest.mark.parametrize("export, parse", FORMATS, ids=["jsonl", "csv"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces())
def test_parse_of_export_is_identity(export, parse, trace):
    assert parse(export(trace), source_name="t") == trace


@settings(max_examples=40, deadline=None)
@given(trace=traces())
def test_plain_dict_round_trip(trace):
    plain = trace_to_dict(trace)
    assert trace_from_dict(json.loads(json.dumps(plain))) == trace


def test_sample_files_read_and_agree():
    from_jsonl = parse_trace_jsonl((DATA / "trace_example.jsonl").read_text(), source_name="trace_example.jsonl")
    from_csv = parse_trace_csv((DATA / "trace_example.csv").read_text(), source_name="trace_example.csv")
    assert from_jsonl.ranks == from_csv.ranks and from_jsonl.events == from_csv.events
    assert len(from_jsonl.ranks) == 4 and len(from_jsonl.events) == 4
    assert from_jsonl.events[1] == CollectiveEvent(0.001, "allreduce", (0, 1, 2, 3), 67108864, "ring", None, 16777216, "float")
    assert from_jsonl.events[2].ranks == (0, 1)  # an explicit group
    assert from_jsonl.ranks[0].card == "node01/gpu:0000:18:00.0"


def test_detection():
    assert detect_trace_jsonl((DATA / "trace_example.jsonl").read_text())
    assert detect_trace_csv((DATA / "trace_example.csv").read_text())
    assert not detect_trace_jsonl((DATA / "trace_example.csv").read_text())
    assert not detect_trace_csv((DATA / "nccl_debug_init_coll_8rank.log").read_text())


def error_of(parse, text, **options):
    with pytest.raises(IngestError) as caught:
        parse(text, source_name="bad.trace", options=ParseOptions(**options))
    return caught.value


HEADER = '{"format": "twin-trace", "version": 1, "name": "t"}\n'
RANKS = '{"type": "rank", "rank": 0}\n{"type": "rank", "rank": 1}\n'


@pytest.mark.parametrize(
    "body, line, words",
    [
        ('{"type": "flow", "t_s": 0, "src_rank": 0, "dst_rank": 7, "bytes": 1}', 4, "rank 7 has no rank record"),
        ('{"type": "flow", "t_s": -1, "src_rank": 0, "dst_rank": 1, "bytes": 1}', 4, "t_s -1"),
        ('{"type": "flow", "t_s": 0, "src_rank": 0, "dst_rank": 0, "bytes": 1}', 4, "to itself"),
        ('{"type": "flow", "t_s": 0, "src_rank": 0, "dst_rank": 1, "bytes": 1.5}', 4, "bytes 1.5"),
        ('{"type": "flow", "t_s": 0, "src_rank": 0, "dst_rank": 1}', 4, "without bytes"),
        ('{"type": "collective", "t_s": 0, "op": "allgatherv", "bytes": 1}', 4, 'op "allgatherv"'),
        ('{"type": "collective", "t_s": 0, "op": "allreduce", "bytes": 1, "root": 0}', 4, "unknown field 'root'"),
        ('{"type": "collective", "t_s": 0, "op": "allreduce", "ranks": [0, 0], "bytes": 1}', 4, "appears twice"),
        ('{"type": "hop"}', 4, 'unknown record type "hop"'),
        ("[1, 2]", 4, "not a JSON object"),
        ('{"type": "flow", ', 4, "malformed JSON"),
    ],
)
def test_jsonl_errors_name_the_line(body, line, words):
    error = error_of(parse_trace_jsonl, HEADER + RANKS + body + "\n")
    assert error.line == line and words in str(error) and "bad.trace line" in str(error)


def test_jsonl_order_and_header_errors():
    late_rank = HEADER + RANKS + '{"type": "flow", "t_s": 1, "src_rank": 0, "dst_rank": 1, "bytes": 1}\n{"type": "rank", "rank": 2}\n'
    assert error_of(parse_trace_jsonl, late_rank).line == 5
    backwards = HEADER + RANKS + '{"type": "flow", "t_s": 1, "src_rank": 0, "dst_rank": 1, "bytes": 1}\n{"type": "flow", "t_s": 0.5, "src_rank": 0, "dst_rank": 1, "bytes": 1}\n'
    assert "time order" in str(error_of(parse_trace_jsonl, backwards))
    assert "first record is not the header" in str(error_of(parse_trace_jsonl, RANKS))
    assert error_of(parse_trace_jsonl, HEADER.replace('"version": 1', '"version": 2')).path == "version"
    assert "no header" in str(error_of(parse_trace_jsonl, ""))


def test_many_problems_are_reported_at_once_up_to_the_limit():
    bad = HEADER + RANKS + '{"type": "flow", "t_s": 0, "src_rank": 0, "dst_rank": 9, "bytes": 1}\n' * 80
    error = error_of(parse_trace_jsonl, bad)
    assert len(error.problems) == 50 and error.truncated
    assert [problem.line for problem in error.problems[:3]] == [4, 5, 6]
    assert len(error_of(parse_trace_jsonl, bad, max_problems=5).problems) == 5


def test_csv_errors_name_the_line():
    header = ",".join(ourformat.CSV_COLUMNS)
    text = (DATA / "trace_example.csv").read_text().splitlines()
    assert "bad header row" in str(error_of(parse_trace_csv, "kind,colour\n"))
    broken = "\n".join([*text[:7], text[7].replace("allreduce", "allgatherv")]) + "\n"
    assert header == text[0]
    error = error_of(parse_trace_csv, broken)
    assert error.line == 8 and error.path == "op"
    assert "unknown kind" in str(error_of(parse_trace_csv, header + "\nthing\n"))
    assert error_of(parse_trace_csv, "\n".join([*text[:2], "rank,,,,x"]) + "\n").line == 3


@st.composite
def mutated(draw, text):
    """A text with a few characters deleted, duplicated or replaced, or lines shuffled."""
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        position = draw(st.integers(0, len(lines) - 1))
        line = lines[position]
        action = draw(st.sampled_from(["cut", "duplicate", "replace", "drop", "swap"]))
        cut = draw(st.integers(0, len(line)))
        if action == "cut":
            lines[position] = line[:cut] + line[cut + 1 :]
        elif action == "duplicate":
            lines.insert(position, line)
        elif action == "replace":
            lines[position] = line[:cut] + draw(st.sampled_from(list('0-9a:" ,[]{}x\n.-'))) + line[cut + 1 :]
        elif action == "drop":
            del lines[position]
        else:
            other = draw(st.integers(0, len(lines) - 1))
            lines[position], lines[other] = lines[other], lines[position]
    return "".join(lines)


@pytest.mark.parametrize("name, parse", [("trace_example.jsonl", parse_trace_jsonl), ("trace_example.csv", parse_trace_csv)])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_mutated_files_raise_only_ingest_errors(name, parse, data):
    text = data.draw(mutated((DATA / name).read_text()))
    try:
        parse(text, source_name=name)
    except IngestError:
        pass


@pytest.mark.parametrize("parse", [parse_trace_jsonl, parse_trace_csv])
@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=300))
def test_random_text_raises_only_ingest_errors(parse, text):
    try:
        parse(text, source_name="random")
    except IngestError:
        pass


def test_validate_lists_inconsistencies():
    trace = Trace("t", (RankBinding(0), RankBinding(0)), (FlowEvent(1, 0, 5, 3), CollectiveEvent(0.5, "scan", (), -1)))
    with pytest.raises(TraceError) as caught:
        trace.validate()
    text = str(caught.value)
    for words in ("bound twice", "has no binding", "before the previous", "unknown operation", "without ranks", "bytes -1"):
        assert words in text


def test_unknown_cards_lists_cards_outside_the_fabric():
    trace = Trace("t", (RankBinding(0, "a"), RankBinding(1, "b"), RankBinding(2)), ())
    assert trace.unknown_cards({"a"}) == ("b",)
