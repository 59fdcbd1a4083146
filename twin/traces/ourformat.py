"""The twin's own trace format, "twin-trace" version 1, as JSON lines or CSV.

Both carry the same records (docs/formats/trace.md has the field tables and
examples): a header with the trace's name and attributes, one ``rank``
record per rank (the rank -> card mapping), then time-ordered ``flow`` and
``collective`` records. Every problem is reported with its line, up to
``options.max_problems`` at once; ``parse_*(export_*(trace)) == trace``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from twin.ingest.errors import IngestError, ProblemCollector
from twin.ingest.options import ParseOptions
from twin.simcore.translation import LATER, Joined
from twin.traces.model import (
    OPERATIONS,
    CollectiveEvent,
    Event,
    FlowEvent,
    RankBinding,
    Trace,
)

__all__ = [
    "CSV_COLUMNS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "detect_trace_csv",
    "detect_trace_jsonl",
    "export_trace_csv",
    "export_trace_jsonl",
    "parse_trace_csv",
    "parse_trace_jsonl",
]

FORMAT_NAME = "twin-trace"
FORMAT_VERSION = 1

# Field -> (value kind, required) for each record type; the same table reads JSON and CSV.
_RECORD_FIELDS: Mapping[str, Mapping[str, tuple[str, bool]]] = {
    "rank": {"rank": ("count", True), "card": ("text", False), "host": ("text", False), "bus_id": ("text", False), "device": ("count", False)},
    "flow": {"t_s": ("seconds", True), "src_rank": ("count", True), "dst_rank": ("count", True), "bytes": ("count", True)},
    "collective": {
        "t_s": ("seconds", True), "op": ("operation", True), "ranks": ("ranks", False), "bytes": ("count", True),
        "algorithm": ("text", False), "comm": ("text", False), "count": ("count", False), "dtype": ("text", False),
    },
}  # fmt: skip
_HEADER_FIELDS = ("format", "version", "name", "attrs")

CSV_COLUMNS = ("kind", "name", "version", "attrs", *dict.fromkeys(
    field for fields in _RECORD_FIELDS.values() for field in fields
))  # fmt: skip
"""Columns of the CSV form, in the order ``export_trace_csv`` writes them."""

_EXPECTED = {
    "count": LATER.gettext("a non-negative integer"),
    "seconds": LATER.gettext("a finite, non-negative number of seconds"),
    "text": LATER.pgettext("expected value", "text"),
    "operation": LATER.gettext("one of %(names)s") % {"names": Joined(list(OPERATIONS), ", ")},
    "ranks": LATER.gettext("a list of rank numbers (in CSV: numbers and ranges such as 0-7, space-separated)"),
}
_ATTRS_EXPECTED = LATER.gettext("a JSON object such as %(example)s") % {"example": '{"job": "gpt-175b"}'}
_ONE_OBJECT_A_LINE = LATER.gettext("one JSON object per line")
_INTEGER = re.compile(r"[+-]?\d+")
_RANK_RANGE = re.compile(r"(\d+)(?:-(\d+))?")
_JSONL_MARKER = re.compile(r'\A\ufeff?\s*\{[^\n]*"format"\s*:\s*"twin-trace"')


# -- detection ------------------------------------------------------------------------------------


def detect_trace_jsonl(text: str) -> bool:
    """Whether ``text`` starts like a twin-trace JSON-lines file."""
    return _JSONL_MARKER.match(text) is not None


def detect_trace_csv(text: str) -> bool:
    """Whether ``text`` starts like a twin-trace CSV file (a header with ``kind``, then a ``trace`` row)."""
    lines = [line for line in text.lstrip("\ufeff").splitlines()[:2]]
    return len(lines) == 2 and "kind" in lines[0].split(",") and lines[1].startswith("trace,")


# -- reading --------------------------------------------------------------------------------------


class _TraceBuilder:
    """Collects header, rank and event records in file order, checking order and references."""

    def __init__(self, source_name: str, options: ParseOptions) -> None:
        self.problems = ProblemCollector(source_name, limit=options.max_problems)
        self.source_name = source_name
        self.name: str | None = None
        self.attrs: Mapping[str, Any] = {}
        self.bindings: dict[int, RankBinding] = {}
        self.events: list[Event] = []
        self.event_lines: list[int] = []
        self.last_time = 0.0

    def header(self, name: Any, version: Any, attrs: Any, *, line: int) -> None:
        if version != FORMAT_VERSION:
            self.problems.add(LATER.gettext("unsupported version %(version)s") % {"version": repr(version)}, line=line, path="version", expected=str(FORMAT_VERSION))
        if not isinstance(name, str) or not name:
            self.problems.add(LATER.gettext("missing trace name"), line=line, path="name", expected=LATER.gettext("a non-empty text"))
        else:
            self.name = name
        if not isinstance(attrs, Mapping):
            self.problems.add(LATER.gettext("attrs is not an object"), line=line, path="attrs", expected=_ATTRS_EXPECTED)
        else:
            self.attrs = attrs

    def record(self, kind: str, fields: Mapping[str, Any], *, line: int) -> None:
        if kind == "rank":
            self._rank(fields, line)
        else:
            self._event(kind, fields, line)

    def _rank(self, fields: Mapping[str, Any], line: int) -> None:
        if self.events:
            self.problems.add(
                LATER.gettext("rank record after the first event"), line=line, expected=LATER.gettext("every rank record before the flow and collective records"),
            )
            return
        rank = fields["rank"]
        if rank in self.bindings:
            self.problems.add(LATER.gettext("rank %(rank)s is bound twice") % {"rank": str(rank)}, line=line, path="rank", expected=LATER.gettext("one rank record per rank"))
            return
        self.bindings[rank] = RankBinding(**fields)

    def _event(self, kind: str, fields: Mapping[str, Any], line: int) -> None:
        if fields["t_s"] < self.last_time:
            self.problems.add(
                LATER.gettext("time %(time)s s is before the previous event's %(previous)s s") % {"time": str(fields["t_s"]), "previous": str(self.last_time)},
                line=line, path="t_s", expected=LATER.gettext("records in time order"),
            )
        self.last_time = max(self.last_time, fields["t_s"])
        if kind == "flow":
            named = (fields["src_rank"], fields["dst_rank"])
            if named[0] == named[1]:
                self.problems.add(
                    LATER.gettext("flow from rank %(rank)s to itself") % {"rank": str(named[0])}, line=line, path="dst_rank", expected=LATER.gettext("two different ranks"),
                )
            event: Event = FlowEvent(**fields)
        else:
            ranks = fields.get("ranks")
            if ranks is None:
                ranks = tuple(self.bindings)
            elif len(set(ranks)) != len(ranks):
                self.problems.add(LATER.gettext("a rank appears twice"), line=line, path="ranks", expected=LATER.gettext("distinct ranks"))
            elif not ranks:
                self.problems.add(
                    LATER.gettext("empty rank list"), line=line, path="ranks", expected=LATER.gettext("at least one rank, or the field left out for all ranks"),
                )
            named = ranks
            event = CollectiveEvent(**{**fields, "ranks": ranks})
        unbound = sorted({rank for rank in named if rank not in self.bindings})
        if unbound:
            self.problems.add(
                LATER.ngettext("rank %(ranks)s has no rank record", "ranks %(ranks)s have no rank record", len(unbound[:10]))
                % {"ranks": Joined([str(rank) for rank in unbound[:10]], ", ")},
                line=line, expected=LATER.gettext("ranks declared by rank records"),
            )
        self.events.append(event)

    def trace(self) -> Trace:
        if self.name is None and not self.problems:
            self.problems.add(LATER.gettext("no header record"), line=1, expected=LATER.gettext("a first record naming the format %(format)s") % {"format": f'"{FORMAT_NAME}"'})
        self.problems.raise_if_any()
        trace = Trace(name=self.name, ranks=tuple(self.bindings.values()), events=tuple(self.events), attrs=self.attrs)
        trace.validate()  # the checks above cover it; a failure here is a bug, not bad input
        return trace


def _convert(kind: str, value: Any, *, from_text: bool) -> Any:
    """The value of a field as the model wants it; ``ValueError`` if it is not one."""
    if kind == "text":
        if not isinstance(value, str):
            raise ValueError
        return value
    if kind == "operation":
        if value not in OPERATIONS:
            raise ValueError
        return value
    if kind == "count":
        if from_text:
            if not _INTEGER.fullmatch(value.strip()):
                raise ValueError
            value = int(value)
        if type(value) is not int or value < 0:
            raise ValueError
        return value
    if kind == "seconds":
        if from_text:
            value = float(value)
        if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
            raise ValueError
        return float(value)
    # ranks
    if from_text:
        return _ranks_from_text(value)
    if not isinstance(value, list) or not all(type(rank) is int and rank >= 0 for rank in value):
        raise ValueError
    return tuple(value)


def _ranks_from_text(text: str) -> tuple[int, ...]:
    ranks: list[int] = []
    for term in text.split():
        match = _RANK_RANGE.fullmatch(term)
        if match is None:
            raise ValueError
        low, high = int(match[1]), int(match[2] or match[1])
        if high < low or high - low > 1_000_000:
            raise ValueError
        ranks.extend(range(low, high + 1))
    return tuple(ranks)


def _fields(kind: str, raw: Mapping[str, Any], *, line: int, problems: ProblemCollector, from_text: bool) -> dict[str, Any] | None:
    """Converted fields of one record, or ``None`` after reporting what is wrong with it."""
    before = len(problems)
    spec = _RECORD_FIELDS[kind]
    fields: dict[str, Any] = {}
    for name, (value_kind, required) in spec.items():
        value = raw.get(name)
        if value is None or (from_text and value == ""):
            if required:
                problems.add(LATER.gettext("%(kind)s record without %(field)s") % {"kind": kind, "field": name}, line=line, path=name, expected=_EXPECTED[value_kind])
            continue
        try:
            fields[name] = _convert(value_kind, value, from_text=from_text)
        except (ValueError, OverflowError):
            shown = value if from_text else json.dumps(value)
            problems.add(f"{name} {shown!s:.60}", line=line, path=name, expected=_EXPECTED[value_kind])
    return fields if len(problems) == before else None


def parse_trace_jsonl(text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> Trace:
    """Read a twin-trace JSON-lines file; ``IngestError`` lists every problem with its line."""
    builder = _TraceBuilder(source_name, options)
    problems = builder.problems
    seen_header = False
    for line_number, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as error:
            problems.add(
                LATER.gettext("malformed JSON: %(error)s") % {"error": getattr(error, "msg", None) or LATER.gettext("nested too deeply")},
                line=line_number,
                expected=_ONE_OBJECT_A_LINE,
            )
            continue
        if not isinstance(record, dict):
            problems.add(LATER.gettext("the line is not a JSON object"), line=line_number, expected=_ONE_OBJECT_A_LINE)
            continue
        if not seen_header:
            seen_header = True
            if record.get("format") != FORMAT_NAME:
                problems.add(LATER.gettext("the first record is not the header"), line=line_number, path="format", expected=f'"format": "{FORMAT_NAME}"')
                continue
            _report_unknown(record, _HEADER_FIELDS, line_number, problems)
            builder.header(record.get("name"), record.get("version"), record.get("attrs", {}), line=line_number)
            continue
        kind = record.get("type")
        if kind not in _RECORD_FIELDS:
            problems.add(
                LATER.gettext("unknown record type %(type)s") % {"type": json.dumps(kind)}, line=line_number, path="type", expected=LATER.gettext('"rank", "flow" or "collective"'),
            )
            continue
        _report_unknown(record, ("type", *_RECORD_FIELDS[kind]), line_number, problems)
        fields = _fields(kind, record, line=line_number, problems=problems, from_text=False)
        if fields is not None:
            builder.record(kind, fields, line=line_number)
    return builder.trace()


def _report_unknown(record: Mapping[str, Any], known: Iterable[str], line: int, problems: ProblemCollector) -> None:
    for key in record:
        if key not in known:
            problems.add(
                LATER.gettext("unknown field %(field)s") % {"field": repr(key)}, line=line, path=key, expected=LATER.gettext("one of %(names)s") % {"names": Joined(list(known), ", ")},
            )


def parse_trace_csv(text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> Trace:
    """Read a twin-trace CSV file; ``IngestError`` lists every problem with its line."""
    builder = _TraceBuilder(source_name, options)
    problems = builder.problems
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    try:
        header = [column.strip() for column in next(reader, [])]
        unknown = [column for column in header if column not in CSV_COLUMNS]
        if "kind" not in header or unknown or len(set(header)) != len(header):
            raise IngestError(
                LATER.gettext("bad header row %(row)s") % {"row": repr(",".join(header)[:80])},
                source=source_name, line=1,
                expected=LATER.gettext("distinct column names from %(columns)s, including kind") % {"columns": Joined(list(CSV_COLUMNS), ", ")},
            )
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(header):
                problems.add(
                    LATER.ngettext("%(count)s cell in a row", "%(count)s cells in a row", len(row)) % {"count": len(row)},
                    line=line,
                    expected=LATER.gettext("at most %(count)s, one for each header column") % {"count": len(header)},
                )
                continue
            cells = dict(zip(header, row))  # cells are kept as written: spaces in text fields count
            kind = cells["kind"].strip()
            if kind == "trace":
                attrs = _json_cell(cells.get("attrs") or "{}", line, problems)
                version = cells.get("version", "").strip()
                builder.header(cells.get("name"), int(version) if _INTEGER.fullmatch(version) else version, attrs, line=line)
            elif kind in _RECORD_FIELDS:
                if builder.name is None and not problems:
                    problems.add(LATER.gettext("%(kind)s record before the trace record") % {"kind": kind}, line=line, expected=LATER.gettext("a trace row first"))
                fields = _fields(kind, cells, line=line, problems=problems, from_text=True)
                if fields is not None:
                    builder.record(kind, fields, line=line)
            else:
                problems.add(
                    LATER.gettext("unknown kind %(kind)s") % {"kind": repr(kind)}, line=line, path="kind", expected=LATER.gettext('"trace", "rank", "flow" or "collective"'),
                )
    except csv.Error as error:
        problems.add(LATER.gettext("malformed CSV: %(error)s") % {"error": str(error)}, line=reader.line_num, expected="RFC 4180 CSV")
    return builder.trace()


def _json_cell(text: str, line: int, problems: ProblemCollector) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        problems.add(LATER.gettext("attrs is not valid JSON"), line=line, path="attrs", expected=_ATTRS_EXPECTED)
        return {}


# -- writing --------------------------------------------------------------------------------------


def _records(trace: Trace) -> Iterator[tuple[str, dict[str, Any]]]:
    """(kind, fields) of every record after the header, ``None`` fields left out."""
    all_ranks = tuple(binding.rank for binding in trace.ranks)
    for binding in trace.ranks:
        yield "rank", _present(rank=binding.rank, card=binding.card, host=binding.host, bus_id=binding.bus_id, device=binding.device)
    for event in trace.events:
        if isinstance(event, FlowEvent):
            yield "flow", {"t_s": event.t_s, "src_rank": event.src_rank, "dst_rank": event.dst_rank, "bytes": event.bytes}
        else:
            yield "collective", _present(
                t_s=event.t_s, op=event.op,
                # Left out means every rank, which keeps world-sized collectives short.
                ranks=None if event.ranks == all_ranks else list(event.ranks),
                bytes=event.bytes, algorithm=event.algorithm, comm=event.comm, count=event.count, dtype=event.dtype,
            )  # fmt: skip


def _present(**fields: Any) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


def export_trace_jsonl(trace: Trace) -> str:
    """The trace as twin-trace JSON lines: the header, then one record per line."""
    header = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "name": trace.name, "attrs": trace.attrs.to_plain()}
    lines = [_dumps(header)]
    lines.extend(_dumps({"type": kind, **fields}) for kind, fields in _records(trace))
    return "\n".join(lines) + "\n"


def _dumps(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))


def export_trace_csv(trace: Trace) -> str:
    """The trace as twin-trace CSV: the header row, the trace row, then one row per record."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def cells(row: Mapping[str, Any]) -> list[str]:
        return [_cell(row.get(column)) for column in CSV_COLUMNS]

    writer.writerow(cells({"kind": "trace", "name": trace.name, "version": FORMAT_VERSION, "attrs": _dumps(trace.attrs.to_plain())}))
    for kind, fields in _records(trace):
        writer.writerow(cells({"kind": kind, **fields}))
    return out.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return _rank_ranges(value)
    return repr(value) if isinstance(value, float) else str(value)


def _rank_ranges(ranks: list[int]) -> str:
    """Ranks as space-separated numbers, runs of consecutive ranks as ``low-high``.

    >>> _rank_ranges([0, 1, 2, 3, 8, 10, 11])
    '0-3 8 10-11'
    """
    terms: list[str] = []
    start = 0
    for position in range(1, len(ranks) + 1):
        if position == len(ranks) or ranks[position] != ranks[position - 1] + 1:
            low, high = ranks[start], ranks[position - 1]
            terms.append(str(low) if low == high else f"{low}-{high}")
            start = position
    return " ".join(terms)
