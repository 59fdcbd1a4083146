"""NCCL debug logs (``NCCL_DEBUG=INFO``, ``NCCL_DEBUG_SUBSYS=INIT,GRAPH,COLL``) into a ``Trace``.

What is read (docs/formats/nccl-log.md has the grammar, FORMATS.md section 6
the sources):

* ``ncclCommInitRank comm <ptr> rank R nranks N cudaDev D [nvmlDev D] busId <hex>
  [commId 0x...] - Init START|COMPLETE``: communicators, their ranks and each
  rank's host, PCI bus id and CUDA device. Ranks of every communicator are
  joined by ``commId`` (by size in logs old enough to print none).
* ``Ring``, ``Trees``/``Tree`` and complete ``Channel cc/nn :`` ring-order
  lines: per-rank ring and tree neighbours, kept in ``attrs``.
* COLL lines ``<Op>: opCount <hex> ... count N datatype T op O root R comm <ptr>``:
  one ``CollectiveEvent`` per (communicator, opCount), joined across the
  ranks that logged it; ``Send``/``Recv`` pairs become ``FlowEvent``s.

Lines are found by their ``HOST:PID:TID [DEV] NCCL INFO`` prefix wherever it
is, so launcher prefixes (``[1,0]<stdout>:``, ``0: ``, ``(RayTrainWorker
pid=...)``) and fused lines (two prefixes on one line) are read; anything else
(application output, WARN blocks) is skipped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime

from twin.ingest.errors import IngestError, ProblemCollector
from twin.ingest.hostlist import short_host_name
from twin.ingest.options import ParseOptions
from twin.simcore.translation import LATER, Joined
from twin.traces.model import DTYPE_SIZES, CollectiveEvent, Event, FlowEvent, RankBinding, Trace, gpu_card_id

__all__ = [
    "DEFAULT_SPACING_S",
    "NCCL_DATATYPES",
    "NCCL_OPERATIONS",
    "FORMAT_NAME",
    "bus_id_from_nccl",
    "detect_nccl_log",
    "parse_nccl_log",
]

FORMAT_NAME = "nccl-log"
DEFAULT_SPACING_S = 1e-3
"""Seconds between consecutive operations when the log has no timestamps."""

NCCL_DATATYPES = ("int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2")
"""``ncclDataType_t`` numbers (the COLL line's ``datatype``) as nccl-tests type names; sizes in ``DTYPE_SIZES``."""

NCCL_OPERATIONS = {
    "AllReduce": "allreduce", "AllGather": "allgather", "ReduceScatter": "reducescatter",
    "Broadcast": "broadcast", "Reduce": "reduce", "AlltoAll": "alltoall",
}  # fmt: skip
"""COLL line operation names that become collectives (``Send``/``Recv`` become flows)."""

# Collectives whose NCCL count is per rank while the trace's bytes are the whole buffer.
_COUNT_PER_RANK = ("allgather", "reducescatter", "alltoall")

# The fixed part of an INFO prefix; the host before it and an optional timestamp are found by hand,
# because a regex that starts with the free-form host tries every position of a line.
_ANCHOR = re.compile(r":(\d+):(\d+) \[(\d+)\] NCCL INFO ?")
_HOST_DELIMITERS = frozenset(" \t:[]<>()")
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?")
_INIT = re.compile(
    r"(?:\w+ )?comm (?P<ptr>0x[0-9a-fA-F]+) rank (?P<rank>\d+) nranks (?P<nranks>\d+) cudaDev (?P<dev>\d+)"
    r"(?: nvmlDev \d+)? busId (?P<bus>[0-9a-fA-F]+)(?: commId (?P<comm_id>0x[0-9a-fA-F]+))?.* - Init (?:START|COMPLETE)"
)
_RING = re.compile(r"Ring (\d+) : (\d+) -> (\d+) -> (\d+)")
_TREES = re.compile(r"\[(\d+)\] (-?\d+)/(-?\d+)/(-?\d+)->(\d+)->(-?\d+)")
_TREE = re.compile(r"Tree (\d+) : (-?\d+) -> (\d+) -> (-?\d+)/(-?\d+)/(-?\d+)")
_CHANNEL_ORDER = re.compile(r"Channel (\d+)/(\d+) :((?: +\d+)*) *(\.\.\.)?\s*")
_COLL = re.compile(
    r"(?P<op>\w+): opCount (?P<op_count>[0-9a-fA-F]+) sendbuff \S+ recvbuff \S+ count (?P<count>\d+) "
    r"datatype (?P<dtype>\d+) op \d+ root (?P<root>-?\d+) comm (?P<comm>0x[0-9a-fA-F]+|\(nil\))"
)
_DETECT = re.compile(r"\S+:\d+:\d+ \[\d+\] NCCL INFO ")


def detect_nccl_log(text: str) -> bool:
    """Whether ``text`` holds NCCL INFO lines (looked for in its first 64 kB)."""
    return _DETECT.search(text[:65536]) is not None


def bus_id_from_nccl(text: str) -> str:
    """PCI bus id from NCCL's log form (``%lx`` of the id's hex digits) as ``dddd:bb:dd.f``.

    >>> bus_id_from_nccl("18000"), bus_id_from_nccl("11a0f1")
    ('0000:18:00.0', '0001:1a:0f.1')
    """
    value = int(text, 16)
    domain = value >> 20
    return f"{domain:04x}:{value >> 12 & 0xFF:02x}:{value >> 4 & 0xFF:02x}.{value & 0xF:x}"


@dataclass(frozen=True)
class _Line:
    """One NCCL INFO message and its prefix; ``fused`` when it was not first on its line."""

    number: int
    ts: str | None
    host: str
    pid: int
    dev: int
    message: str
    fused: bool


@dataclass
class _Comm:
    """A communicator as gathered from the log, in communicator rank numbering."""

    key: str
    nranks: int
    line: int
    members: dict[int, tuple[str, str, int]] = field(default_factory=dict)  # rank -> host, bus id, cudaDev
    rings: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)  # (rank, channel) -> prev, next
    trees: dict[tuple[int, int], tuple[int, tuple[int, ...]]] = field(default_factory=dict)  # -> up, downs


@dataclass
class _Operation:
    """One collective (or one point-to-point transfer) joined across the lines that logged it."""

    order: int
    line: int
    op: str
    comm: str
    count: int
    dtype: str
    ts: float | None
    src: int = -1  # flows only, communicator ranks
    dst: int = -1


def parse_nccl_log(
    text: str, *, source_name: str, options: ParseOptions = ParseOptions(), spacing_s: float = DEFAULT_SPACING_S
) -> Trace:
    """Read an NCCL debug log into a ``Trace`` named after the source.

    Event times come from the log's timestamps when every COLL line has one
    (``NCCL_DEBUG_TIMESTAMP_LEVELS=INFO``, seconds from the first operation),
    else operation ``k`` (in order of first appearance) is at ``k * spacing_s``;
    ``attrs["timing"]`` says which. Raises ``IngestError`` with every problem
    (up to ``options.max_problems``) and its line.
    """
    problems = ProblemCollector(source_name, limit=options.max_problems)
    lines = list(_nccl_lines(text))
    if not lines:
        raise IngestError(
            LATER.gettext("no NCCL INFO lines"), source=source_name,
            expected=LATER.gettext("the output of a job run with NCCL_DEBUG=INFO (lines like 'host:pid:tid [dev] NCCL INFO ...')"),
        )  # fmt: skip
    reader = _LogReader(problems, spacing_s)
    for line in lines:
        reader.read(line)
    return reader.trace(source_name)


def _nccl_lines(text: str) -> Iterator[_Line]:
    """Every NCCL INFO message, split at each prefix and with fused host names repaired.

    When two processes' lines are fused, the second prefix's host name is
    glued to the first message's tail (``... stream 0x5619ffca1e90node01:...``);
    the host is then the longest host seen at the start of a line that ends
    the glued word, and the rest goes back to the first message.
    """
    found: list[_Line] = []
    line_hosts: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if "NCCL INFO" not in line:
            continue
        segment_start = 0
        prefixes = []
        for match in _ANCHOR.finditer(line):
            host_start = match.start()
            while host_start > segment_start and line[host_start - 1] not in _HOST_DELIMITERS:
                host_start -= 1
            if host_start == match.start():
                continue  # no host before ":pid:tid": not a prefix
            prefixes.append((match, host_start, _timestamp_before(line, host_start, segment_start)))
            segment_start = match.end()
        for position, (match, host_start, stamp) in enumerate(prefixes):
            end = prefixes[position + 1][1] if position + 1 < len(prefixes) else len(line)
            if stamp is not None and position + 1 < len(prefixes) and prefixes[position + 1][2] is not None:
                end = line.rindex("[", 0, end)
            host = line[host_start : match.start()]
            if position == 0:
                line_hosts.add(host)
            found.append(_Line(number, stamp, host, int(match[1]), int(match[3]), line[match.end() : end], position > 0))
    for index, line in enumerate(found):
        if line.fused and line.host not in line_hosts:
            host = max((host for host in line_hosts if line.host.endswith(host)), key=len, default=None)
            if host is not None:
                glued = line.host[: -len(host)]
                previous = found[index - 1]
                found[index - 1] = replace(previous, message=previous.message + glued)
                found[index] = replace(line, host=host)
    for line in found:
        short = short_host_name(line.host)
        yield line if short == line.host else replace(line, host=short)


def _timestamp_before(line: str, host_start: int, segment_start: int) -> str | None:
    """The ``[%F %T[.%Nf]] `` timestamp NCCL puts right before the host, if there is one."""
    head = line[segment_start:host_start].rstrip(" ")
    if not head.endswith("]"):
        return None
    opening = head.rfind("[")
    stamp = head[opening + 1 : -1] if opening >= 0 else ""
    return stamp if _TIMESTAMP.fullmatch(stamp) else None


class _LogReader:
    """Interprets NCCL INFO messages in file order and builds the trace at the end."""

    def __init__(self, problems: ProblemCollector, spacing_s: float) -> None:
        self.problems = problems
        self.spacing_s = spacing_s
        self.nccl_version: str | None = None
        self.comms: dict[str, _Comm] = {}
        self.comm_of_device: dict[tuple[str, int, int], str] = {}  # (host, pid, cudaDev) -> comm being set up
        self.comm_of_pointer: dict[tuple[str, int, str], tuple[str, int]] = {}  # -> comm key, rank
        self.operations: dict[tuple, _Operation] = {}
        self.p2p_sequence: Counter[tuple] = Counter()
        self.unknown_pointers: set[tuple[str, int, str]] = set()
        self.skipped_operations: Counter[str] = Counter()
        self.truncated_channel_lines = 0
        self.untimed_lines = 0
        self.timestamps: dict[str, float] = {}

    # -- messages -----------------------------------------------------------------------------------

    def read(self, line: _Line) -> None:
        message = line.message
        if ": opCount " in message:
            self._collective(line)
        elif "- Init " in message:
            self._init(line)
        elif message.startswith("Ring "):
            self._ring(line)
        elif message.startswith("Trees "):
            self._trees(line)
        elif message.startswith("Tree "):
            self._tree(line)
        elif message.startswith("Channel ") and "->" not in message and " via " not in message:
            self._channel_order(line)
        elif message.startswith("NCCL version ") and self.nccl_version is None:
            self.nccl_version = message.removeprefix("NCCL version ").strip() or None

    def _init(self, line: _Line) -> None:
        match = _INIT.match(line.message)
        if match is None:
            if "comm " in line.message:
                self.problems.add(
                    LATER.gettext("unreadable communicator line %(line)s") % {"line": repr(line.message[:80])}, line=line.number,
                    expected="'ncclCommInitRank comm <ptr> rank R nranks N cudaDev D busId <hex> commId 0x... - Init START'",
                )  # fmt: skip
            return
        rank, nranks = int(match["rank"]), int(match["nranks"])
        # Logs old enough to print no commId are joined by communicator size.
        key = match["comm_id"].lower() if match["comm_id"] else f"nranks={nranks}"
        comm = self.comms.setdefault(key, _Comm(key, nranks, line.number))
        if comm.nranks != nranks:
            self.problems.add(
                LATER.gettext("communicator %(comm)s has %(nranks)s ranks here and %(before)s at line %(line)s")
                % {"comm": key, "nranks": nranks, "before": comm.nranks, "line": str(comm.line)},
                line=line.number, expected=LATER.gettext("the same nranks on every rank of a communicator"),
            )  # fmt: skip
            return
        if rank >= nranks:
            self.problems.add(
                LATER.gettext("rank %(rank)s of a %(nranks)s-rank communicator") % {"rank": str(rank), "nranks": nranks},
                line=line.number,
                expected=LATER.gettext("a rank below %(nranks)s") % {"nranks": nranks},
            )
            return
        device = (line.host, bus_id_from_nccl(match["bus"]), int(match["dev"]))
        known = comm.members.setdefault(rank, device)
        if known[:2] != device[:2]:
            self.problems.add(
                LATER.gettext("rank %(rank)s of communicator %(comm)s is %(host)s bus %(bus)s here and %(known_host)s bus %(known_bus)s before")
                % {"rank": str(rank), "comm": key, "host": device[0], "bus": device[1], "known_host": known[0], "known_bus": known[1]},
                line=line.number, expected=LATER.gettext("one device per rank of a communicator"),
            )  # fmt: skip
        self.comm_of_device[(line.host, line.pid, line.dev)] = key
        self.comm_of_pointer[(line.host, line.pid, match["ptr"].lower())] = (key, rank)

    def _current_comm(self, line: _Line) -> _Comm | None:
        key = self.comm_of_device.get((line.host, line.pid, line.dev))
        return None if key is None else self.comms[key]

    def _ring(self, line: _Line) -> None:
        match = _RING.match(line.message)
        comm = self._current_comm(line)
        if match and comm:
            channel, prev, rank, following = map(int, match.groups())
            comm.rings[(rank, channel)] = (prev, following)

    def _trees(self, line: _Line) -> None:
        comm = self._current_comm(line)
        if comm:
            for channel, d0, d1, d2, rank, up in (map(int, groups) for groups in _TREES.findall(line.message)):
                comm.trees[(rank, channel)] = (up, tuple(down for down in (d0, d1, d2) if down >= 0))

    def _tree(self, line: _Line) -> None:
        match = _TREE.match(line.message)
        comm = self._current_comm(line)
        if match and comm:
            channel, up, rank, d0, d1, d2 = map(int, match.groups())
            comm.trees[(rank, channel)] = (up, tuple(down for down in (d0, d1, d2) if down >= 0))

    def _channel_order(self, line: _Line) -> None:
        """A ``Channel cc/nn :`` ring order (rank 0 only) fills ring neighbours when complete.

        NCCL <= 2.22 prints only the first 20 ranks, later versions cut the line
        at 128 characters with ``...``: such lines are counted, never used.
        """
        match = _CHANNEL_ORDER.fullmatch(line.message)
        comm = self._current_comm(line)
        if match is None or comm is None:
            return
        order = [int(rank) for rank in match[3].split()]
        if match[4] or sorted(order) != list(range(comm.nranks)):
            self.truncated_channel_lines += 1
            return
        channel = int(match[1])
        for position, rank in enumerate(order):
            # ``Ring`` lines (every rank, GRAPH) are the reference; they win when both exist.
            comm.rings.setdefault((rank, channel), (order[position - 1], order[(position + 1) % len(order)]))

    def _collective(self, line: _Line) -> None:
        match = _COLL.match(line.message)
        if match is None:
            self.problems.add(
                LATER.gettext("unreadable collective line %(line)s") % {"line": repr(line.message[:80])}, line=line.number,
                expected="'<Op>: opCount <hex> sendbuff <ptr> recvbuff <ptr> count N datatype T op O root R comm <ptr> ...'",
            )  # fmt: skip
            return
        name = match["op"]
        if name not in NCCL_OPERATIONS and name not in ("Send", "Recv"):
            self.skipped_operations[name] += 1
            return
        dtype_number = int(match["dtype"])
        if dtype_number >= len(NCCL_DATATYPES):
            self.problems.add(
                LATER.gettext("unknown datatype %(number)s") % {"number": str(dtype_number)}, line=line.number,
                expected=LATER.gettext("an ncclDataType_t number 0..%(last)s (%(names)s)") % {"last": len(NCCL_DATATYPES) - 1, "names": Joined(list(NCCL_DATATYPES), ", ")},
            )  # fmt: skip
            return
        pointer = (line.host, line.pid, match["comm"].lower())
        joined = self.comm_of_pointer.get(pointer)
        if joined is None:
            if pointer not in self.unknown_pointers:
                self.unknown_pointers.add(pointer)
                self.problems.add(
                    LATER.gettext("comm %(comm)s of %(host)s pid %(pid)s has no ncclCommInitRank line") % {"comm": match["comm"], "host": line.host, "pid": str(line.pid)},
                    line=line.number,
                    expected=LATER.gettext("a log that includes communicator set-up (NCCL_DEBUG_SUBSYS with INIT, not COLL alone)"),
                )  # fmt: skip
            return
        key, rank = joined
        ts = self._seconds(line.ts)
        count, dtype = int(match["count"]), NCCL_DATATYPES[dtype_number]
        if name in ("Send", "Recv"):
            self._point_to_point(line, name, key, rank, int(match["root"]), count, dtype, ts)
            return
        op = NCCL_OPERATIONS[name]
        identity = (key, int(match["op_count"], 16))
        known = self.operations.get(identity)
        if known is None:
            self.operations[identity] = _Operation(len(self.operations), line.number, op, key, count, dtype, ts)
        elif (known.op, known.count, known.dtype) != (op, count, dtype):
            self.problems.add(
                LATER.gettext("opCount %(op_count)s of communicator %(comm)s is %(op)s of %(count)s %(dtype)s here but %(known_op)s of %(known_count)s %(known_dtype)s at line %(line)s") % {
                    "op_count": match["op_count"], "comm": key, "op": name, "count": str(count), "dtype": dtype,
                    "known_op": known.op, "known_count": str(known.count), "known_dtype": known.dtype, "line": str(known.line),
                },
                line=line.number, expected=LATER.gettext("the same operation on every rank for one opCount"),
            )  # fmt: skip
        elif ts is not None and (known.ts is None or ts < known.ts):
            known.ts = ts

    def _point_to_point(self, line: _Line, name: str, key: str, rank: int, peer: int, count: int, dtype: str, ts: float | None) -> None:
        """The k-th Send from a to b and the k-th Recv at b from a are one flow."""
        nranks = self.comms[key].nranks
        if not 0 <= peer < nranks or peer == rank:
            self.problems.add(
                LATER.gettext("%(op)s peer %(peer)s on rank %(rank)s of a %(nranks)s-rank communicator") % {"op": name, "peer": str(peer), "rank": str(rank), "nranks": nranks},
                line=line.number,
                expected=LATER.gettext("another rank below %(nranks)s (the root field)") % {"nranks": nranks},
            )  # fmt: skip
            return
        src, dst = (rank, peer) if name == "Send" else (peer, rank)
        side = (name, key, src, dst)
        identity = ("p2p", key, src, dst, self.p2p_sequence[side])
        self.p2p_sequence[side] += 1
        known = self.operations.get(identity)
        if known is None:
            self.operations[identity] = _Operation(len(self.operations), line.number, "flow", key, count, dtype, ts, src, dst)
        elif ts is not None and (known.ts is None or ts < known.ts):
            known.ts = ts

    def _seconds(self, stamp: str | None) -> float | None:
        if stamp is None:
            self.untimed_lines += 1
            return None
        seconds = self.timestamps.get(stamp)
        if seconds is None:
            whole, _, fraction = stamp.replace(",", ".").partition(".")
            try:
                moment = datetime.fromisoformat(whole)
            except ValueError:
                self.untimed_lines += 1
                return None
            seconds = self.timestamps[stamp] = moment.timestamp() + (float("0." + fraction) if fraction else 0.0)
        return seconds

    # -- result -------------------------------------------------------------------------------------

    def trace(self, name: str) -> Trace:
        if not self.comms and not self.problems.problems:
            self.problems.add(
                LATER.gettext("no communicator in the log"), line=None,
                expected=LATER.gettext("ncclCommInitRank lines (NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS including INIT)"),
            )  # fmt: skip
        self.problems.raise_if_any()
        bindings, comm_ranks = self._rank_numbering()
        events = self._events(comm_ranks)
        attrs = {
            "source_format": FORMAT_NAME,
            "nccl_version": self.nccl_version,
            "timing": "log" if self._timed() else "order",
            "communicators": [self._comm_attrs(comm, comm_ranks[comm.key]) for comm in self.comms.values()],
            "truncated_channel_lines": self.truncated_channel_lines,
            "skipped_operations": dict(sorted(self.skipped_operations.items())),
        }
        if not self._timed():
            attrs["spacing_s"] = self.spacing_s
        trace = Trace(name=name, ranks=tuple(bindings), events=tuple(events), attrs=attrs)
        trace.validate()
        return trace

    def _timed(self) -> bool:
        return bool(self.operations) and self.untimed_lines == 0

    def _rank_numbering(self) -> tuple[list[RankBinding], dict[str, tuple[int, ...]]]:
        """Trace ranks: the largest communicator's numbering, then devices only other communicators use.

        A device is (host, bus id); a rank of a communicator whose device the
        log never shows gets a rank of its own, bound to no card.
        """
        world = max(self.comms.values(), key=lambda comm: (comm.nranks, len(comm.members)))
        bindings: list[RankBinding] = []
        rank_of_device: dict[tuple[str, str], int] = {}
        comm_ranks: dict[str, tuple[int, ...]] = {}
        for comm in (world, *(comm for comm in self.comms.values() if comm is not world)):
            numbers = []
            for comm_rank in range(comm.nranks):
                device = comm.members.get(comm_rank)
                number = rank_of_device.get(device[:2]) if device else None
                if number is None:
                    number = len(bindings)
                    if device is None:
                        bindings.append(RankBinding(number))
                    else:
                        host, bus_id, cuda_dev = device
                        rank_of_device[(host, bus_id)] = number
                        bindings.append(RankBinding(number, gpu_card_id(host, bus_id), host, bus_id, cuda_dev))
                numbers.append(number)
            comm_ranks[comm.key] = tuple(numbers)
        return bindings, comm_ranks

    def _events(self, comm_ranks: dict[str, tuple[int, ...]]) -> list[Event]:
        timed = self._timed()
        start = min((operation.ts for operation in self.operations.values()), default=0.0) if timed else 0.0
        events: list[tuple[float, int, Event]] = []
        for order, operation in enumerate(self.operations.values()):
            t_s = round(operation.ts - start if timed else order * self.spacing_s, 9)
            ranks = comm_ranks[operation.comm]
            element_bytes = operation.count * DTYPE_SIZES[operation.dtype]
            if operation.op == "flow":
                event: Event = FlowEvent(t_s, ranks[operation.src], ranks[operation.dst], element_bytes)
            else:
                scale = len(ranks) if operation.op in _COUNT_PER_RANK else 1
                event = CollectiveEvent(
                    t_s, operation.op, ranks, element_bytes * scale,
                    comm=operation.comm, count=operation.count, dtype=operation.dtype,
                )  # fmt: skip
            events.append((t_s, order, event))
        events.sort(key=lambda item: item[:2])
        return [event for _, _, event in events]

    @staticmethod
    def _comm_attrs(comm: _Comm, ranks: tuple[int, ...]) -> dict:
        """Plain attrs of a communicator; neighbours as per-channel lists indexed by communicator rank.

        ``ring_prev``/``ring_next``: channel -> the previous/next rank of each rank;
        ``tree_up``: channel -> each rank's parent (-1 at the root);
        ``tree_down``: channel -> three lists, each rank's first, second and third
        child (-1 for none), as NCCL prints ``d0/d1/d2``. ``None`` where the log
        does not say (a rank that did not log it).
        """

        def per_channel(entries: dict, value) -> dict[str, list]:
            channels: dict[str, list] = {}
            for (rank, channel), entry in sorted(entries.items(), key=lambda item: item[0][::-1]):
                channels.setdefault(str(channel), [None] * comm.nranks)[rank] = value(entry)
            return channels

        tree_down = {
            channel: [[None if downs is None else (downs + (-1, -1, -1))[slot] for downs in children] for slot in range(3)]
            for channel, children in per_channel(comm.trees, lambda entry: entry[1]).items()
        }
        return {
            "id": comm.key,
            "nranks": comm.nranks,
            "ranks": list(ranks),
            "ring_prev": per_channel(comm.rings, lambda entry: entry[0]),
            "ring_next": per_channel(comm.rings, lambda entry: entry[1]),
            "tree_up": per_channel(comm.trees, lambda entry: entry[0]),
            "tree_down": tree_down,
        }
