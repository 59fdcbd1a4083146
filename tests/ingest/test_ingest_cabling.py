"""Cabling plans: NetBox cable CSV and point-to-point CSV; samples, pitfalls, errors with lines, fuzzing."""

import doctest
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ingest.fuzzing import assert_parses_or_ingest_error, mutated
from twin.ingest import IngestError, ParseOptions, detect_format, parse_fabric
from twin.ingest.parsers import cabling
from twin.ingest.parsers.cabling import (
    DEFAULT_LATENCY_NS,
    DEFAULT_LINK_GBPS,
    CablingCsvParser,
    NetboxCablesParser,
    device_role,
    parse_speed,
)

DATA = Path(__file__).resolve().parents[1] / "data"
NETBOX = (DATA / "cabling" / "netbox_cables_import.csv").read_text()
# The other formats' samples, the InfiniBand ones included (tests/data/ib belongs to those parsers' tests).
OTHER_SAMPLES = sorted(path for folder in ("slurm", "nccl_xml", "nvidia_smi", "lldp", "ib") for path in (DATA / folder).glob("*"))

# Rows start on line 2.
POINT_TO_POINT = """\
device,port,peer_device,peer_port,speed
node01,mlx5_0,leaf01,1,NDR
node02,mlx5_0,leaf01,2,400G
leaf01,33,spine01,1,400 Gb/s
leaf01,34,spine01,2,1xNDR
"""

NETBOX_EXPORT = """\
ID,Label,Device A,Termination A,Device B,Termination B,Status,Type,Length
1,BRK-1,leaf01,"p1, p2",node01,"mlx5_0, mlx5_1",Connected,DAC (Passive),3 Meters
2,,leaf01,p33,spine01,p1,Planned,,
"""


def parse(parser, text: str, options: ParseOptions = ParseOptions()):
    spec = parser.parse(text, source_name="plan.csv", options=options)
    spec.validate()
    return spec


def parse_error(parser, text: str, options: ParseOptions = ParseOptions()) -> IngestError:
    with pytest.raises(IngestError) as raised:
        parser.parse(text, source_name="plan.csv", options=options)
    return raised.value


def netbox(text: str = NETBOX, options: ParseOptions = ParseOptions()):
    return parse(NetboxCablesParser(), text, options)


def plan(text: str = POINT_TO_POINT, options: ParseOptions = ParseOptions()):
    return parse(CablingCsvParser(), text, options)


def test_doctests():
    assert doctest.testmod(cabling).failed == 0


# NetBox ---------------------------------------------------------------------------------------


def test_netbox_sample():
    spec = netbox()
    assert spec.attrs == {"plan": True}
    assert spec.kind_counts() == {"card": 0, "nic": 0, "switch": 4, "host": 8, "aggregation": 0}
    assert {node.id: node.tier for node in spec.switches()} == {
        "leaf01": "leaf", "leaf02": "leaf", "spine01": "spine", "mgmt-sw-r01": "leaf",
    }
    assert len(spec.links) == 13
    assert Counter(link.state for link in spec.links) == {"up": 11, "down": 2}
    assert Counter(link.attrs["status"] for link in spec.links) == {"connected": 11, "planned": 1, "decommissioning": 1}
    # Cat6 caps the management cable; 3 m and 30 m cables at 5 ns/m; the others have no speed in NetBox.
    assert Counter(link.bandwidth_gbps for link in spec.links) == {DEFAULT_LINK_GBPS: 12, 10.0: 1}
    assert Counter(link.latency_ns for link in spec.links) == {15.0: 8, 150.0: 4, 10.0: 1}
    assert {link.domain for link in spec.links} == {"scale-out"}
    first = spec.links[0]
    assert first.ends() == (("host:node01", "mlx5_0"), ("leaf01", "p1"))
    assert first.attrs == {"status": "connected", "label": "IB-R0-0001", "cable_type": "dac-passive", "length_m": 3.0}


def test_netbox_ui_export_with_multi_termination_cells():
    spec = netbox(NETBOX_EXPORT)
    assert [link.ends() for link in spec.links] == [
        (("leaf01", "p1"), ("host:node01", "mlx5_0")),
        (("leaf01", "p2"), ("host:node01", "mlx5_1")),
        (("leaf01", "p33"), ("spine01", "p1")),
    ]
    assert spec.links[0].attrs == {"status": "connected", "label": "BRK-1", "cable_type": "dac (passive)", "length_m": 3.0}
    assert spec.links[2].state == "down"


def test_netbox_power_and_console_cables_are_skipped():
    text = NETBOX + "pdu-a,dcim.poweroutlet,o1,node01,dcim.powerport,psu1,power,connected,,,,\n"
    assert len(netbox(text).links) == 13


def test_netbox_lengths_in_other_units():
    text = NETBOX.replace("aoc,connected,IB-ISL-0001,ffa500,30,m", "aoc,connected,IB-ISL-0001,ffa500,100,ft")
    assert netbox(text).links[8].attrs["length_m"] == pytest.approx(30.48)


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        ("dcim.interface,p33,spine01,dcim.interface,p1,aoc", "circuits.circuittermination,p33,spine01,dcim.interface,p1,aoc", "side_a_type"),
        ("aoc,connected,IB-ISL-0001", "aoc,in-use,IB-ISL-0001", "status 'in-use'"),
        ("ffa500,30,m", "ffa500,thirty,m", "length 'thirty' m"),
        ("leaf01,dcim.interface,p33,spine01", ",dcim.interface,p33,spine01", "side A has no device"),
    ],
)
def test_netbox_bad_rows_point_at_their_line(old, new, fragment):
    text = NETBOX.replace(old, new, 1)
    assert text != NETBOX
    error = parse_error(NetboxCablesParser(), text)
    assert error.line == 10 and fragment in error.message and error.expected


def test_netbox_unequal_terminations():
    error = parse_error(NetboxCablesParser(), NETBOX_EXPORT.replace('"mlx5_0, mlx5_1"', "mlx5_0"))
    assert error.line == 2 and "2 terminations on side A and 1 on side B" in error.message


# Point-to-point ---------------------------------------------------------------------------------


def test_point_to_point_plan():
    spec = plan()
    assert spec.attrs == {"plan": True}
    assert [node.id for node in spec.nodes] == ["host:node01", "leaf01", "host:node02", "spine01"]
    assert [(link.bandwidth_gbps, dict(link.attrs)) for link in spec.links] == [
        (400.0, {"speed": "NDR"}), (400.0, {}), (400.0, {}), (100.0, {"speed": "NDR", "width": "1x"}),
    ]
    assert {(link.state, link.latency_ns, link.domain) for link in spec.links} == {("up", DEFAULT_LATENCY_NS, "scale-out")}


@pytest.mark.parametrize(
    ("text", "gbps"),
    [
        ("400G", 400), ("400g", 400), ("400 Gb/s", 400), ("400Gbps", 400), ("400Gbit/s", 400), ("400GbE", 400),
        ("1.6T", 1600), ("1.6 Tb/s", 1600), ("100M", 0.1), ("100 Mb/s", 0.1), ("200", 200), ("NDR", 400),
        ("ndr", 400), ("4xHDR", 200), ("2xNDR", 200), ("HDR100", 100), ("NDR200", 200), ("FDR10", 40), ("EDR", 100),
    ],
)
def test_accepted_speed_forms(text, gbps):
    assert parse_speed(text)[0] == pytest.approx(gbps)


@pytest.mark.parametrize("text", ["fast", "400 GB", "400 GB/s", "G400", "4x", "-400G", ""])
def test_rejected_speed_forms(text):
    assert parse_speed(text) is None


def test_empty_speed_takes_the_default_and_options():
    text = "device,port,peer_device,peer_port,speed\nnode01,1,leaf01,1,\n"
    assert plan(text).links[0].bandwidth_gbps == DEFAULT_LINK_GBPS
    link = plan(text, ParseOptions(default_bandwidth_gbps=800, default_latency_ns=3)).links[0]
    assert (link.bandwidth_gbps, link.latency_ns) == (800.0, 3.0)


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("leaf01", ("switch", "leaf")), ("IB-SPINE-02", ("switch", "spine")), ("core1", ("switch", "core")),
        ("superspine-1", ("switch", "core")), ("mgmt-sw-r01", ("switch", "leaf")), ("tor-r03", ("switch", "leaf")),
        ("switch.3.1", ("switch", "leaf")), ("A09-P1-IBLEAF-04-04", ("switch", "leaf")), ("node01-gpu3", ("card", None)),
        ("card-0001", ("card", None)), ("gpu3", ("card", None)), ("gpu-r03-n01", ("host", None)),
        ("storage01", ("host", None)), ("node07", ("host", None)),
    ],
)
def test_kind_from_name(name, role):
    assert device_role(name) == role


def test_kind_columns_override_the_name_and_cards_make_scale_up_links():
    text = "device,port,peer_device,peer_port,speed,role,peer_role\nacc7,1,fabric-a,9,800G,gpu,spine\n"
    spec = plan(text)
    assert [(node.id, node.kind, node.tier) for node in spec.nodes] == [("acc7", "card", None), ("fabric-a", "switch", "spine")]
    assert spec.links[0].domain == "scale-up"


def test_kind_column_applies_to_rows_without_one():
    text = "device,port,peer_device,peer_port,kind\nbox1,1,box2,1,switch\nbox1,2,box3,1,\n"
    assert plan(text).nodes[0].kind == "switch" and plan(text).links[1].a == "box1"


def test_state_column_accepts_link_and_netbox_words():
    text = "device,port,peer_device,peer_port,state\nn1,1,leaf1,1,degraded\nn2,1,leaf1,2,planned\n"
    spec = plan(text)
    assert [(link.state, link.attrs.get("status")) for link in spec.links] == [("degraded", None), ("down", "planned")]


def test_a_cable_listed_from_both_ends_is_one_cable():
    text = POINT_TO_POINT + "leaf01,1,node01,mlx5_0,NDR\nnode01,mlx5_0,leaf01,1,NDR\n"
    assert len(plan(text).links) == 4


def test_leading_junk_bom_crlf_comments_and_domain_names():
    text = "\ufeff# exported 2024-06-01\r\nDevice,Port,Peer_Device,Peer_Port\r\n# rack 1\r\nNode01.cluster,1,leaf01,1\r\n"
    spec = plan(text)
    assert spec.links[0].a == "host:node01" and spec.nodes[0].name == "Node01.cluster"


# Errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ("node03,mlx5_0,leaf01,1,NDR", "port '1' of 'leaf01' is already cabled on line 2"),
        ("node03,mlx5_0,node03,mlx5_1,NDR", "a cable from 'node03' to itself"),
        ("node03,mlx5_0,leaf01,3,fast", "speed 'fast'"),
        ("node03,mlx5_0,leaf01,3,0G", "speed '0G'"),
        ("node03,,leaf01,3,NDR", "empty port"),
        ("node03,mlx5_0,leaf01,3,NDR,extra", "6 cells"),
    ],
)
def test_bad_rows_point_at_their_line(row, fragment):
    error = parse_error(CablingCsvParser(), POINT_TO_POINT + row + "\n")
    assert error.line == 6 and fragment in error.message and error.expected


def test_conflicting_kind_columns():
    text = "device,port,peer_device,peer_port,kind\nbox1,1,box2,1,switch\nbox1,2,box3,1,host\n"
    error = parse_error(CablingCsvParser(), text)
    assert error.line == 3 and "'box1' is a host here but a switch on line 2" in error.message
    assert "kind 'router'" in parse_error(CablingCsvParser(), text.replace("host", "router")).message


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", None, "no header row"),
        ("a,b,c\n1,2,3\n", None, "no header row"),
        ("device,port,peer_device,peer_port\n", None, "no cables"),
        ("device,port,peer_device,peer_port,port\nn1,1,l1,1,2\n", 1, "column 'port' appears twice"),
        ('device,port,peer_device,peer_port\nn1,"' + "x" * 200_000 + '",l1,1\n', 2, "malformed CSV"),
    ],
)
def test_malformed_files(text, line, fragment):
    error = parse_error(CablingCsvParser(), text)
    assert error.line == line and fragment in error.message


def test_many_problems_are_reported_at_once():
    rows = "".join(f"node{index},1,leaf01,{index},slow\n" for index in range(10))
    error = parse_error(CablingCsvParser(), "device,port,peer_device,peer_port,speed\n" + rows)
    assert [problem.line for problem in error.problems] == list(range(2, 12)) and not error.truncated
    truncated = parse_error(CablingCsvParser(), "device,port,peer_device,peer_port,speed\n" + rows, ParseOptions(max_problems=3))
    assert len(truncated.problems) == 3 and truncated.truncated


# Detection ----------------------------------------------------------------------------------------


def test_detection():
    assert detect_format(NETBOX) == "netbox-cables" and detect_format(NETBOX_EXPORT) == "netbox-cables"
    assert detect_format(POINT_TO_POINT) == "cabling-csv"
    assert not CablingCsvParser().detect(NETBOX) and not NetboxCablesParser().detect(POINT_TO_POINT)
    assert detect_format("$ cat plan.csv\n" + POINT_TO_POINT) == "cabling-csv"


@pytest.mark.parametrize("path", OTHER_SAMPLES, ids=lambda path: path.name)
def test_other_samples_are_not_cabling_plans(path):
    text = path.read_text()
    assert not NetboxCablesParser().detect(text) and not CablingCsvParser().detect(text)


def test_parse_fabric_detects_and_validates():
    assert parse_fabric(NETBOX, source_name="plan.csv") == netbox()
    assert parse_fabric(POINT_TO_POINT, source_name="plan.csv") == plan()


# Property tests -------------------------------------------------------------------------------------


def parses_or_ingest_error(parser, text: str) -> None:
    assert_parses_or_ingest_error(parser, text, "plan.csv")


PARSERS = st.sampled_from([NetboxCablesParser(), CablingCsvParser()])


@given(PARSERS, st.text(max_size=300))
@settings(max_examples=150, deadline=None)
def test_random_text_raises_only_ingest_error(parser, text):
    parses_or_ingest_error(parser, text)


@given(st.lists(st.lists(st.text(alphabet='ab,"\n -1G', max_size=6), min_size=4, max_size=6), max_size=6))
@settings(max_examples=150, deadline=None)
def test_random_rows_raise_only_ingest_error(rows):
    body = "".join(",".join(row) + "\n" for row in rows)
    parses_or_ingest_error(CablingCsvParser(), "device,port,peer_device,peer_port,speed,kind\n" + body)


@given(st.sampled_from([(NetboxCablesParser(), NETBOX), (NetboxCablesParser(), NETBOX_EXPORT), (CablingCsvParser(), POINT_TO_POINT)])
       .flatmap(lambda pair: st.tuples(st.just(pair[0]), mutated(pair[1]))))
@settings(max_examples=200, deadline=None)
def test_mutated_samples_raise_only_ingest_error(parser_and_text):
    parses_or_ingest_error(*parser_and_text)
