"""nccl-tests output (``all_reduce_perf`` and friends) into measurements and replayable sweeps.

A file holds one or more reports (several tests concatenated, or one report
per process when mpirun starts a binary built without MPI). Each report gives
a ``Measurement``: the devices (``# Using devices``), the result rows and the
footer. ``measurement_trace`` turns one into a ``Trace`` with one collective
per message size, in the order measured. Both writers are read: the classic
one (``[0x18]`` bus ids, ``%6.2f`` columns) and the 2025+ one (version and
start/concluded lines, ``[0000:18:00]`` bus ids, ``1.2e+04``-style numbers),
including the ``-S`` timestamp and ``-I`` per-iteration columns. See
docs/formats/nccl-tests.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from twin.ingest.errors import IngestError, ProblemCollector
from twin.ingest.hostlist import short_host_name
from twin.ingest.options import ParseOptions
from twin.ingest.parsers.nccl_xml import normalise_bus_id
from twin.simcore.errors import problem_phrase
from twin.simcore.translation import LATER, Joined
from twin.traces.errors import TraceError
from twin.traces.model import (
    DTYPE_SIZES,
    OPERATIONS,
    CollectiveEvent,
    Measurement,
    MeasurementRow,
    MeasuredTiming,
    RankBinding,
    Trace,
    gpu_card_id,
)

__all__ = ["FORMAT_NAME", "PROGRAMS", "detect_nccl_tests", "measurement_trace", "parse_nccl_tests"]

FORMAT_NAME = "nccl-tests"

PROGRAMS = {
    "all_reduce_perf": "allreduce", "all_gather_perf": "allgather", "reduce_scatter_perf": "reducescatter",
    "broadcast_perf": "broadcast", "reduce_perf": "reduce", "alltoall_perf": "alltoall",
    "sendrecv_perf": "sendrecv", "gather_perf": "gather", "scatter_perf": "scatter", "hypercube_perf": "hypercube",
}  # fmt: skip
"""nccl-tests binaries and the collective each measures (our names)."""

# Launcher prefixes: Open MPI --tag-output, srun -l, torchrun/Ray-style "[rank3]:".
_LAUNCHER = re.compile(r"^(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: |\[rank\d+\]:\s?)")
_NCCL_LOG_LINE = re.compile(r"\S+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE)|NCCL (?:INFO|WARN) ")
_VERSION = re.compile(r"nccl-tests version (\S+)(?: nccl-headers=(\d+))?(?: nccl-library=(\d+))?")
_CONFIG_VALUE = re.compile(r"(nThread|nGpus|minBytes|maxBytes|step:|warmup iters:|agg iters:|iters:|validation:|graph:|unalign:) (\d+)")
_DEVICE = re.compile(r"Rank\s+(\d+)\s+Group\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)")
_OLD_BUS = re.compile(r"0x([0-9a-fA-F]{1,2})")
_NEW_BUS = re.compile(r"([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})")
_TIME_COLUMNS = ("time", "cputime")
_ROW_HELP = LATER.gettext("size count type redop root, then time algbw busbw #wrong for out-of-place and in-place")


def detect_nccl_tests(text: str) -> bool:
    """Whether ``text`` looks like nccl-tests output (its ``# nThread`` configuration line)."""
    return re.search(r"^(?:\S*:)?# nThread \d+ nGpus \d+", text[:65536], re.MULTILINE) is not None


@dataclass
class _Report:
    """One report being read; ``columns`` is set by the column-name header line."""

    line: int
    program: str | None = None
    attrs: dict = field(default_factory=lambda: {"source_format": FORMAT_NAME})
    has_config: bool = False
    devices: list[RankBinding] = field(default_factory=list)
    columns: tuple[int, int, bool, list[str]] | None = None  # keys, half width, timestamp, key names
    rows: list[MeasurementRow] = field(default_factory=list)
    first_row_line: int | None = None
    out_of_bounds: int | None = None
    avg_busbw: float | None = None


def parse_nccl_tests(
    text: str, *, source_name: str, options: ParseOptions = ParseOptions(), collective: str | None = None
) -> tuple[Measurement, ...]:
    """Every report in ``text``, in file order.

    ``collective`` (one of ``OPERATIONS`` or a ``PROGRAMS`` value) says what
    was measured when the output does not: reports before nccl-tests 2.17
    name no program, and a file name such as ``all_gather_perf.txt`` is used
    next, then the rows themselves (which cannot tell all_gather from
    alltoall). Raises ``IngestError`` with every problem and its line.
    """
    if collective is not None and collective not in PROGRAMS.values():
        raise IngestError(
            LATER.gettext("unknown collective %(collective)s") % {"collective": repr(collective)}, source=source_name,
            expected=LATER.gettext("one of %(names)s") % {"names": Joined(list(dict.fromkeys(PROGRAMS.values())), ", ")},
        )  # fmt: skip
    problems = ProblemCollector(source_name, limit=options.max_problems)
    reports = list(_reports(text, problems))
    if not reports and not problems:
        raise IngestError(
            LATER.gettext("no nccl-tests report"), source=source_name,
            expected=LATER.gettext("the output of an nccl-tests binary, starting with a '# nThread N nGpus N ...' line"),
        )  # fmt: skip
    measurements = []
    for report in reports:
        if not report.rows:
            problems.add(LATER.gettext("report without result rows"), line=report.line, expected=LATER.gettext("rows of %(row)s") % {"row": _ROW_HELP})
            continue
        name = _collective_of(report, collective, source_name)
        if name is None:
            problems.add(
                LATER.gettext("cannot tell which collective this report measured"), line=report.first_row_line,
                expected=LATER.gettext(
                    "the '# Collective test starting: <program>' line (nccl-tests 2.17+), "
                    "a file name naming the program (e.g. all_gather_perf.txt) or the collective chosen explicitly"
                ),
            )  # fmt: skip
            continue
        measurements.append(
            Measurement(
                collective=name, program=report.program, ranks=tuple(report.devices), rows=tuple(report.rows),
                avg_busbw_gbytes_per_s=report.avg_busbw, out_of_bounds=report.out_of_bounds, attrs=report.attrs,
            )  # fmt: skip
        )
    problems.raise_if_any()
    return tuple(measurements)


def _reports(text: str, problems: ProblemCollector) -> Iterator[_Report]:
    report: _Report | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _LAUNCHER.sub("", raw).strip()
        if not line or _NCCL_LOG_LINE.search(line):
            continue
        if not line.startswith("#"):
            if report is not None and report.columns is not None and report.avg_busbw is None and line[0].isdigit():
                _read_row(report, line, number, problems)
            continue
        body = line[1:].strip()
        starts_report = body.startswith(("nccl-tests version", "Collective test starting:", "nThread "))
        if starts_report and (report is None or report.has_config):
            if report is not None:
                yield report
            report = _Report(number)
        if report is None:
            continue
        _read_comment(report, body, number, problems)
    if report is not None:
        yield report


def _read_comment(report: _Report, body: str, number: int, problems: ProblemCollector) -> None:
    if body.startswith("nccl-tests version"):
        match = _VERSION.match(body)
        if match:
            report.attrs["nccl_tests_version"] = match[1]
            if match[3]:
                report.attrs["nccl_library"] = int(match[3])
    elif body.startswith(("Collective test starting:", "Collective test concluded:")):
        report.program = report.program or body.partition(":")[2].strip().rsplit("/", 1)[-1] or None
    elif body.startswith("nThread "):
        report.has_config = True
        report.attrs["config"] = {
            key.rstrip(":").replace(" ", "_"): int(value) for key, value in _CONFIG_VALUE.findall(body)
        }
    elif body.startswith("Rank "):
        _read_device(report, body, number, problems)
    elif body.split()[:2] == ["size", "count"] or body.split()[:3] == ["size", "count", "type"]:
        _read_columns(report, body, number, problems)
    elif body.startswith("Out of bounds values"):
        value = body.partition(":")[2].split()
        report.out_of_bounds = int(value[0]) if value and value[0].isdigit() else None
    elif body.startswith("Avg bus bandwidth"):
        value = body.partition(":")[2].split()
        try:
            report.avg_busbw = float(value[0])
        except (IndexError, ValueError):
            problems.add(LATER.gettext("unreadable average bus bandwidth"), line=number, expected="'# Avg bus bandwidth : <GB/s>'")


def _read_device(report: _Report, body: str, number: int, problems: ProblemCollector) -> None:
    match = _DEVICE.fullmatch(body)
    bus_id = _bus_id(match[6]) if match else None
    if match is None or bus_id is None:
        problems.add(
            LATER.gettext("unreadable device line %(line)s") % {"line": repr(body[:80])}, line=number,
            expected="'#  Rank R Group G Pid P on HOST device D [0x18 or 0000:18:00] NAME'",
        )  # fmt: skip
        return
    host = short_host_name(match[4])
    report.devices.append(RankBinding(int(match[1]), gpu_card_id(host, bus_id), host, bus_id, int(match[5])))


def _bus_id(text: str) -> str | None:
    """Bus id of a device line: ``0x18`` (classic writer: bus only, domain 0 and device 0 assumed)
    or ``0000:18:00`` (2025+ writer: function 0 assumed), as ``dddd:bb:dd.f``."""
    text = text.strip()
    if match := _OLD_BUS.fullmatch(text):
        return f"0000:{int(match[1], 16):02x}:00.0"
    if _NEW_BUS.fullmatch(text):
        return normalise_bus_id(text + ".0")
    return None


def _read_columns(report: _Report, body: str, number: int, problems: ProblemCollector) -> None:
    names = body.split()
    timestamp = names[-1] == "timestamp"
    if timestamp:
        names = names[:-1]
    times = [position for position, name in enumerate(names) if name in _TIME_COLUMNS]
    if len(times) != 2 or times[0] < 3 or (len(names) - times[0]) != 2 * (times[1] - times[0]):
        problems.add(
            LATER.gettext("unexpected column names %(names)s") % {"names": repr(body[:100])}, line=number,
            expected=LATER.gettext("size count type redop [root] followed by two equal halves starting with time"),
        )  # fmt: skip
        return
    report.columns = (times[0], times[1] - times[0], timestamp, names[: times[0]])


def _read_row(report: _Report, line: str, number: int, problems: ProblemCollector) -> None:
    keys, half, timestamp, key_names = report.columns
    tokens = line.split()
    if timestamp and len(tokens) in (keys + half + 2, keys + 2 * half + 2):
        tokens = tokens[:-2]  # the -S timestamp: a date and a time
    if len(tokens) not in (keys + half, keys + 2 * half):
        problems.add(
            LATER.ngettext("%(count)s value in a result row", "%(count)s values in a result row", len(tokens)) % {"count": len(tokens)},
            line=number,
            expected=LATER.gettext("%(count)s: %(row)s") % {"count": keys + 2 * half, "row": _ROW_HELP},
        )
        return
    values = dict(zip(key_names, tokens))
    try:
        size, count = _whole(values["size"]), _whole(values["count"])
        root = int(values.get("root", "-1"))
        halves = [_timing(tokens[start : start + half]) for start in range(keys, len(tokens), half)]
    except (KeyError, ValueError) as error:
        problems.add(LATER.gettext("unreadable result row (%(error)s)") % {"error": str(error)}, line=number, expected=_ROW_HELP)
        return
    # A row with one half is in-place only (out-of-place skipped, as in trace replays).
    out_of_place, in_place = (halves[0], halves[1]) if len(halves) == 2 else (None, halves[0])
    report.first_row_line = report.first_row_line or number
    report.rows.append(
        MeasurementRow(size, count, values.get("type", "?"), values.get("redop", "none"), root, out_of_place, in_place)
    )


def _whole(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(f"negative {text}")
    return value


def _timing(tokens: list[str]) -> MeasuredTiming:
    """time algbw busbw #wrong (per-iteration columns after them are not kept)."""
    time_us, algbw, busbw, wrong = tokens[:4]
    return MeasuredTiming(float(time_us), float(algbw), float(busbw), None if wrong == "N/A" else float(wrong))


def _collective_of(report: _Report, chosen: str | None, source_name: str) -> str | None:
    """The explicit choice, the program the report names, one named in the file name, else the rows' shape."""
    if chosen is not None:
        return chosen
    if report.program in PROGRAMS:
        return PROGRAMS[report.program]
    lowered = source_name.lower()
    for program in sorted(PROGRAMS, key=len, reverse=True):
        if program.removesuffix("_perf") in lowered:
            return PROGRAMS[program]
    return _inferred_collective(report)


def _inferred_collective(report: _Report) -> str | None:
    """From size = count x type size (x ranks when gathered), redop and root; None when ambiguous."""
    ranks = max(len(report.devices), 1)
    for row in report.rows:
        element = DTYPE_SIZES.get(row.dtype)
        if not row.count or element is None:
            continue
        reducing, rooted = row.redop != "none", row.root >= 0
        if row.size_bytes == row.count * element:
            return {(True, False): "allreduce", (True, True): "reduce", (False, True): "broadcast", (False, False): "sendrecv"}[
                (reducing, rooted)
            ]
        if ranks > 1 and row.size_bytes == row.count * element * ranks:
            return "reducescatter" if reducing and not rooted else None  # allgather or alltoall; gather or scatter
        return None
    return None


def measurement_trace(measurement: Measurement, *, name: str | None = None) -> Trace:
    """A replayable sweep: one collective per non-empty row, over every rank, in measured order.

    Row ``k`` starts when the rows before it would have finished: ``t_s`` is
    the sum of their measured times (out-of-place, else in-place). Rows of
    size 0 (all_gather's smallest steps) move nothing and are left out.
    """
    if measurement.collective not in OPERATIONS:
        cannot = LATER.gettext("nccl-tests %(collective)s cannot be replayed") % {"collective": measurement.collective}
        raise TraceError(problem_phrase("", cannot, LATER.gettext("one of %(names)s") % {"names": Joined(list(OPERATIONS))}))
    if not measurement.ranks:
        raise TraceError(problem_phrase("", LATER.gettext("the measurement lists no devices"), LATER.gettext("its '# Using devices' lines")))
    ranks = tuple(binding.rank for binding in measurement.ranks)
    events = []
    t_s = 0.0
    for row in measurement.rows:
        if row.size_bytes > 0:
            events.append(CollectiveEvent(round(t_s, 9), measurement.collective, ranks, row.size_bytes, count=row.count, dtype=row.dtype))
        timing = row.out_of_place or row.in_place
        if timing is not None and math.isfinite(timing.time_us) and timing.time_us > 0:
            t_s += timing.time_us * 1e-6
    trace = Trace(
        name=name or measurement.program or f"nccl-tests {measurement.collective}",
        ranks=measurement.ranks,
        events=tuple(events),
        attrs={"source_format": FORMAT_NAME, "collective": measurement.collective},
    )
    trace.validate()
    return trace
