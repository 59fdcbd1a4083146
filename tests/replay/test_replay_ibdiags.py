"""One-off InfiniBand counter readings: perfquery -x and ibqueryerrors output into telemetry samples."""
from pathlib import Path

import pytest

from twin.ingest import IngestError
from twin.ingest.registry import parse_fabric
from twin.replay import decode_frame, telemetry_frame
from twin.replay.ibdiags import parse_ibqueryerrors, parse_perfquery, parse_reading, reading_samples
from twin.replay.telemetry import TelemetryIndex

DATA = Path(__file__).resolve().parents[1] / "data"
DUMP = DATA / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"
LEAF01, SPINE01, NODE01 = "ib:b8599f0300a01240", "ib:b8599f0300fc6d40", "ib:0c42a10300860100"


@pytest.fixture(scope="module")
def index():
    return TelemetryIndex(parse_fabric(DUMP.read_text(), source_name=DUMP.name))


def reading(name):
    return (DATA / "telemetry" / name).read_text()


def test_perfquery_blocks_are_read_per_port_with_data_in_words():
    readings = parse_perfquery(reading("perfquery_x_leaf01_node01.txt"), source_name="pq.txt")
    assert [(r.lid, r.port, r.line) for r in readings] == [(2, "33", 1), (2, "34", 27), (11, "1", 53)]
    first = readings[0]
    assert first.counters == {"tx_bytes": 139580362720 * 4, "rx_bytes": 139580365110 * 4, "xmit_wait": 1542}
    assert first.errors["SymbolErrorCounter"] == 0 and "PortSelect" not in first.errors and "PortXmitPkts" not in first.errors


def test_two_perfquery_readings_give_utilisation_and_new_errors(index):
    _, first = parse_reading(reading("perfquery_x_leaf01_node01.txt"), source_name="a.txt")
    _, later = parse_reading(reading("perfquery_x_leaf01_node01_later.txt"), source_name="b.txt")
    samples, unknown = reading_samples(index, first, timestamp=1000.0)
    assert unknown == [] and {s["port"]["node"] for s in samples} == {LEAF01, NODE01}
    frame, state = telemetry_frame(index, samples, previous=None)
    assert frame["telemetry"]["first_samples"] == 3 and decode_frame(frame).utilization.max() == 0
    frame, _ = telemetry_frame(index, reading_samples(index, later, timestamp=1010.0)[0], previous=state)
    arcs = {(record["link"], record["from"]): record["utilization"] for record in frame["top"]}
    assert arcs[(0, LEAF01)] == pytest.approx(0.5)  # leaf01:33 -> spine01: 250 GB in 10 s on 400 Gb/s
    assert arcs[(1, LEAF01)] == pytest.approx(0.2)  # leaf01:34
    assert arcs[(14, NODE01)] == pytest.approx(0.25)
    assert frame["telemetry"]["errors"] == [{"node": LEAF01, "port": "34", "link": 1, "counters": {"SymbolErrorCounter": 4}}]


def test_ibqueryerrors_ports_are_found_by_guid_or_description(index):
    readings = parse_ibqueryerrors(reading("ibqueryerrors_2leaf_1spine.txt"), source_name="errors.txt")
    assert [(r.description, r.port) for r in readings] == [
        ("MF0;leaf01:MQM9700/U1", "34"), ("MF0;leaf01:MQM9700/U1", "2"), ("MF0;leaf02:MQM9700/U1", "34"), ("node03 mlx5_0", "1"), ("node42 mlx5_0", "1"),
    ]  # fmt: skip
    assert readings[2].errors == {"SymbolErrorCounter": 65535, "LinkErrorRecoveryCounter": 255, "PortRcvErrors": 1200}
    samples, unknown = reading_samples(index, readings, timestamp=5.0)
    assert [s["port"] for s in samples][-1] == {"node": "ib:0c42a10300860300", "port": "1"}  # node03 by its description
    assert unknown == ["line 10: 'node42 mlx5_0' (GUID 0x0c42a10300864201): no node of the fabric has this GUID or description"]
    assert all("tx_bytes" not in s for s in samples)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# Port extended counters: Lid 2 port 255 (CapMask: 0x5A00)\nPortXmitData:....1\n", "pq.txt line 1: port 255 is every port of the node added up"),
        ("# Port extended counters: Lid 2 port 1 (CapMask: 0x5A00)\nPortXmitData is 12\n", "pq.txt line 2: unexpected line 'PortXmitData is 12'"),
        ("hello\n", "pq.txt line 1: cannot tell what kind of counter reading this is"),
    ],
)
def test_readings_that_cannot_be_read_say_where(text, message):
    with pytest.raises(IngestError) as caught:
        parse_reading(text, source_name="pq.txt")
    assert str(caught.value).startswith(message), str(caught.value)


def test_ibqueryerrors_lines_out_of_place_are_refused():
    with pytest.raises(IngestError, match=r"e.txt line 1: port line before any node"):
        parse_ibqueryerrors("   GUID 0x1 port 1: [SymbolErrorCounter == 3]\n", source_name="e.txt")
