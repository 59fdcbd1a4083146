"""One-off readings of InfiniBand port counters: ``perfquery -x`` and ``ibqueryerrors`` output.

Both tools come with infiniband-diags (rdma-core). What they print:

- ``perfquery -x [lid port]`` (extended counters, 64-bit), one block per port::

      # Port extended counters: Lid 11 port 1 (CapMask: 0x5A00 CapMask2: 0x0000002)
      PortSelect:......................1
      PortXmitData:....................1234567890
      ...

  ``PortXmitData``/``PortRcvData`` count 4-byte words (octets / 4); with
  ``CapMask2`` bit ``IsAdditionalPortCountersExtendedSupported`` the block
  also holds the error counters and ``PortXmitWait``. Without ``-x`` the
  block is ``# Port counters: ...`` (32-bit counters), read the same way.
  Several blocks (a loop over LIDs) make one reading.
- ``ibqueryerrors [-d]``: the ports whose error counters exceed their
  thresholds, grouped by node::

      Errors for 0xb8599f0300a01240 "MF0;leaf01:MQM9700/U1"
         GUID 0xb8599f0300a01240 port 33: [SymbolErrorCounter == 12] [LinkDownedCounter == 1]
      Errors for "node03 mlx5_0"
         GUID 0x0c42a10300860301 port 1: [PortRcvErrors == 7]

  (switches are named by GUID and description, CAs by description; ``-d``
  adds ``[PortXmitData == N (1.2GB)]`` data counters; the ``## Summary``
  lines and ``Link info`` lines of ``-r`` are skipped).

``reading_samples`` turns a reading into telemetry samples of the fabric
(docs/replay.md): perfquery ports are found by LID, ibqueryerrors ports by
GUID or description. Plain Python: no web layer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from twin.ingest.errors import IngestError, ProblemCollector
from twin.replay.telemetry import TelemetryIndex
from twin.simcore.translation import LATER

__all__ = ["PortReading", "detect_ibqueryerrors", "detect_perfquery", "parse_ibqueryerrors", "parse_perfquery", "parse_reading", "reading_samples"]

_WORD = 4  # PortXmitData and PortRcvData count 4-octet words
_BYTES = {"PortXmitData": "tx_bytes", "PortRcvData": "rx_bytes"}
_WAIT = "PortXmitWait"
_NOT_COUNTERS = {"PortSelect", "CounterSelect", "CounterSelect2", "PortXmitPkts", "PortRcvPkts", "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts", "QP1Dropped"}
_ALL_PORTS = 255

_PERFQUERY_HEADER = re.compile(r"^# Port (?:extended )?counters: (?:Lid (?P<lid>\d+)|(?P<other>.+?)) port (?P<port>\d+)(?: \(CapMask.*\))?\s*$")
_PERFQUERY_FIELD = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9]*):\.*(?P<value>0x[0-9a-fA-F]+|\d+)\s*$")
_ERRORS_FOR = re.compile(r'^Errors for (?:0x(?P<guid>[0-9a-fA-F]+) )?"(?P<name>.*)"\s*$')
_ERRORS_PORT = re.compile(r"^\s+GUID 0x(?P<guid>[0-9a-fA-F]+) port (?P<port>\d+|ALL):(?P<counters>.*)$")
_ERRORS_COUNTER = re.compile(r"\[(?P<name>[A-Za-z][A-Za-z0-9]*) == (?P<value>\d+)(?: \([^)]*\))?\]")


@dataclass(frozen=True)
class PortReading:
    """The counters one tool printed for one port, and how the tool named the port."""

    port: str
    line: int
    lid: int | None = None
    guid: str | None = None  # the port's GUID (ibqueryerrors)
    node_guid: str | None = None  # the switch's GUID (ibqueryerrors' header)
    description: str | None = None
    counters: dict[str, int] = field(default_factory=dict)  # tx_bytes, rx_bytes, xmit_wait
    errors: dict[str, int] = field(default_factory=dict)  # by the tool's names (SymbolErrorCounter, ...)


def detect_perfquery(text: str) -> bool:
    return any(_PERFQUERY_HEADER.match(line) for line in text.splitlines()[:5])


def detect_ibqueryerrors(text: str) -> bool:
    head = text.lstrip()[:4000]
    return head.startswith("Errors for ") or head.startswith("## Summary:") or "\n## Summary:" in head


def parse_reading(text: str, *, source_name: str) -> tuple[str, list[PortReading]]:
    """``("perfquery" | "ibqueryerrors", readings)``, told by content."""
    if detect_perfquery(text):
        return "perfquery", parse_perfquery(text, source_name=source_name)
    if detect_ibqueryerrors(text):
        return "ibqueryerrors", parse_ibqueryerrors(text, source_name=source_name)
    raise IngestError(
        LATER.gettext("cannot tell what kind of counter reading this is"), source=source_name, line=1,
        expected=LATER.gettext("perfquery -x output (# Port extended counters: Lid ...) or ibqueryerrors output (Errors for ...)"),
    )  # fmt: skip


def parse_perfquery(text: str, *, source_name: str) -> list[PortReading]:
    problems = ProblemCollector(source_name)
    readings: list[PortReading] = []
    current: dict[str, Any] | None = None

    def close() -> None:
        if current is not None:
            readings.append(PortReading(**current))

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        header = _PERFQUERY_HEADER.match(line)
        if header:
            close()
            current = None
            if header["lid"] is None:
                problems.add(
                    LATER.gettext("port named by %(name)s") % {"name": repr(header["other"])}, line=number,
                    expected=LATER.gettext("a port named by its LID (perfquery -x <lid> <port>), as the fabric's snapshot knows LIDs"),
                )  # fmt: skip
            elif int(header["port"]) == _ALL_PORTS:
                problems.add(
                    LATER.gettext("port 255 is every port of the node added up"), line=number,
                    expected=LATER.gettext("one block per port (perfquery -x <lid> <port>, or -l to loop over the ports)"),
                )  # fmt: skip
            else:
                current = {"port": header["port"], "line": number, "lid": int(header["lid"]), "counters": {}, "errors": {}}
            continue
        found = _PERFQUERY_FIELD.match(line.strip())
        if not found:
            problems.add(
                LATER.gettext("unexpected line %(line)s") % {"line": repr(line.strip()[:80])}, line=number,
                expected=LATER.gettext('a counter line such as "PortXmitData:....................1234" or a "# Port extended counters: Lid N port P" header'),
            )  # fmt: skip
            continue
        if current is None:
            continue  # a block refused above (its header says why), or counters before any header

        name, value = found["name"], int(found["value"], 0)
        if name in _BYTES:
            current["counters"][_BYTES[name]] = value * _WORD
        elif name == _WAIT:
            current["counters"]["xmit_wait"] = value
        elif name not in _NOT_COUNTERS:
            current["errors"][name] = value
    close()
    problems.raise_if_any()
    if not readings:
        raise IngestError(
            LATER.gettext("no port counters in the reading"), source=source_name, line=1,
            expected=LATER.gettext("perfquery -x output: a '# Port extended counters: Lid N port P' block per port"),
        )  # fmt: skip
    return readings


def parse_ibqueryerrors(text: str, *, source_name: str) -> list[PortReading]:
    problems = ProblemCollector(source_name)
    readings: list[PortReading] = []
    node: tuple[str | None, str] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or line.startswith("##") or line.strip().startswith("Link info:"):
            continue
        header = _ERRORS_FOR.match(line)
        if header:
            node = (header["guid"].lower() if header["guid"] else None, header["name"])
            continue
        port = _ERRORS_PORT.match(line)
        if not port:
            problems.add(
                LATER.gettext("unexpected line %(line)s") % {"line": repr(line.strip()[:80])}, line=number,
                expected=LATER.gettext('an "Errors for ..." header, a "   GUID 0x... port N: [Counter == value]" line or a "## Summary" line'),
            )  # fmt: skip
            continue
        if node is None:
            problems.add(LATER.gettext("port line before any node"), line=number, expected=LATER.gettext('an "Errors for ..." header first'))
            continue
        counters = {match["name"]: int(match["value"]) for match in _ERRORS_COUNTER.finditer(port["counters"])}
        if not counters:
            problems.add(LATER.gettext("no counter on the port line"), line=number, expected=LATER.gettext("[CounterName == value] items"))
            continue
        if port["port"] == "ALL":
            continue  # the switch's ports added up: its own port lines carry them one by one
        data = {_BYTES[name]: value * _WORD for name, value in counters.items() if name in _BYTES}
        if _WAIT in counters:
            data["xmit_wait"] = counters[_WAIT]
        errors = {name: value for name, value in counters.items() if name not in _BYTES and name != _WAIT and name not in _NOT_COUNTERS}
        readings.append(PortReading(port=port["port"], line=number, guid=port["guid"].lower(), node_guid=node[0], description=node[1], counters=data, errors=errors))
    problems.raise_if_any()
    return readings


def reading_samples(index: TelemetryIndex, readings: Sequence[PortReading], *, timestamp: float) -> tuple[list[dict[str, Any]], list[str]]:
    """Telemetry samples of the ports the reading names, and the ports it names that the fabric
    lacks (``"line 12: lid 99 port 1: ..."``)."""
    samples, unknown = [], []
    for reading in readings:
        node, why = _node_of(index, reading)
        if node is None:
            unknown.append(f"line {reading.line}: {why}")
            continue
        if (node, reading.port) not in index.number:
            unknown.append(f"line {reading.line}: {node} port {reading.port}: not an end of a link of the fabric")
            continue
        sample: dict[str, Any] = {"port": {"node": node, "port": reading.port}, "timestamp": timestamp, **reading.counters}
        if reading.errors:
            sample["errors"] = dict(reading.errors)
        samples.append(sample)
    return samples, unknown


def _node_of(index: TelemetryIndex, reading: PortReading) -> tuple[str | None, str]:
    if reading.lid is not None:
        node = index.node_by_lid.get(reading.lid)
        return node, f"lid {reading.lid}: no node of the fabric has this LID"
    for guid in (reading.node_guid, reading.guid):
        if guid is not None:
            node_id = f"ib:{int(guid, 16):016x}"
            if node_id in index.ports_of_node:
                return node_id, ""
    node = index.node_by_name.get((reading.description or "").strip().lower())
    return node, f"{reading.description!r} (GUID 0x{reading.guid}): no node of the fabric has this GUID or description"
