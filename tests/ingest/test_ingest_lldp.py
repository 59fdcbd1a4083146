"""LLDP JSON (lldpctl -f json / json0): sample, both shapes, pitfalls, errors with paths, fuzzing."""

import doctest
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ingest.fuzzing import assert_parses_or_ingest_error
from twin.ingest import IngestError, ParseOptions, detect_format, parse_fabric
from twin.ingest.parsers import lldp
from twin.ingest.parsers.cabling import DEFAULT_LATENCY_NS, DEFAULT_LINK_GBPS
from twin.ingest.parsers.lldp import LldpJsonParser, mau_gbps
from twin.simcore.translation import words_from_plain

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = (DATA / "lldp" / "lldpctl_json_node01.json").read_text()
# The other formats' samples, the InfiniBand ones included (tests/data/ib belongs to those parsers' tests).
OTHER_SAMPLES = sorted(path for folder in ("slurm", "nccl_xml", "nvidia_smi", "cabling", "ib") for path in (DATA / folder).glob("*"))

# The sample as `lldpctl -f json0` prints it: every value in a list, names in "name" fields.
JSON0 = {
    "lldp": [
        {
            "interface": [
                {
                    "name": "eno1", "via": "LLDP", "rid": "1", "age": "12 days, 03:17:42",
                    "chassis": [{
                        "id": [{"type": "mac", "value": "3c:2c:30:4a:10:00"}],
                        "name": [{"value": "mgmt-sw-r01"}],
                        "descr": [{"value": "Cumulus Linux version 5.9.1 running on Mellanox Technologies Ltd. MSN2201"}],
                        "mgmt-ip": [{"value": "10.0.100.21"}],
                        "capability": [{"type": "Bridge", "enabled": True}, {"type": "Router", "enabled": True}],
                    }],
                    "port": [{
                        "id": [{"type": "ifname", "value": "swp11"}],
                        "descr": [{"value": "node01:eno1"}],
                        "auto-negotiation": [{
                            "supported": True, "enabled": True,
                            "current": [{"value": "1000BaseTFD - Four-pair Category 5 UTP, full duplex mode"}],
                        }],
                    }],
                },
                {
                    "name": "ens108np0", "via": "LLDP",
                    "chassis": [{
                        "id": [{"type": "mac", "value": "b8:ce:f6:21:7a:00"}],
                        "name": [{"value": "roce-leaf-01"}],
                        "descr": [{"value": "Cumulus Linux version 5.9.1 running on Nvidia SN5600"}],
                        "mgmt-ip": [{"value": "10.0.100.31"}, {"value": "fd00:100::31"}],
                        "capability": [{"type": "Bridge", "enabled": False}, {"type": "Router", "enabled": True}],
                    }],
                    "port": [{"id": [{"type": "ifname", "value": "swp1s0"}], "descr": [{"value": "node01-gpu0"}]}],
                },
            ]
        }
    ]
}


def interface(name: str, chassis: dict, port: str = "swp1", mau: str | None = None) -> dict:
    body = {"via": "LLDP", "chassis": chassis, "port": {"id": {"type": "ifname", "value": port}}}
    if mau:
        body["port"]["auto-negotiation"] = {"current": mau}
    return {name: body}


def parse(text: str, source_name: str = "node01.json", options: ParseOptions = ParseOptions()):
    spec = LldpJsonParser().parse(text, source_name=source_name, options=options)
    spec.validate()
    return spec


def parse_error(text: str) -> IngestError:
    with pytest.raises(IngestError) as raised:
        LldpJsonParser().parse(text, source_name="node01.json")
    return raised.value


def test_doctests():
    assert doctest.testmod(lldp).failed == 0


def test_sample():
    spec = parse(SAMPLE, source_name="lldpctl_json_node01.json")
    assert spec.kind_counts() == {"card": 0, "nic": 0, "switch": 2, "host": 1, "aggregation": 0}
    host, mgmt, leaf = spec.nodes
    assert (host.id, host.kind, host.name) == ("host:node01", "host", "node01")
    assert (mgmt.id, mgmt.tier) == ("mgmt-sw-r01", "leaf")
    assert mgmt.attrs == {
        "chassis_id": "3c:2c:30:4a:10:00",
        "description": "Cumulus Linux version 5.9.1 running on Mellanox Technologies Ltd. MSN2201",
        "mgmt_ips": ("10.0.100.21",),
        "capabilities": ("Bridge", "Router"),
    }
    assert leaf.attrs["mgmt_ips"] == ("10.0.100.31", "fd00:100::31") and leaf.attrs["capabilities"] == ("Router",)
    assert [(link.ends(), link.bandwidth_gbps) for link in spec.links] == [
        ((("host:node01", "eno1"), ("mgmt-sw-r01", "swp11")), 1.0),
        ((("host:node01", "ens108np0"), ("roce-leaf-01", "swp1s0")), DEFAULT_LINK_GBPS),
    ]
    assert {(link.state, link.domain, link.latency_ns) for link in spec.links} == {("up", "scale-out", DEFAULT_LATENCY_NS)}
    assert {link.attrs["medium"] for link in spec.links} == {"ethernet"}
    assert "warnings" not in spec.attrs


def test_json0_reads_the_same_fabric():
    assert parse(json.dumps(JSON0)) == parse(SAMPLE)


def test_one_interface_collapses_to_an_object():
    document = {"lldp": {"interface": interface("eno1", {"sw1": {"id": {"type": "mac", "value": "aa"}}})}}
    spec = parse(json.dumps(document))
    assert spec.links[0].ends() == (("host:node01", "eno1"), ("sw1", "swp1"))


def test_capability_and_mgmt_ip_as_object_or_string():
    chassis = {"box7": {"mgmt-ip": "10.0.0.7", "capability": {"type": "Bridge", "enabled": True}}}
    spec = parse(json.dumps({"lldp": {"interface": [interface("eno1", chassis)]}}))
    assert spec.nodes[1].kind == "switch" and spec.nodes[1].attrs == {"mgmt_ips": ("10.0.0.7",), "capabilities": ("Bridge",)}


def test_neighbour_hosts_and_unnamed_chassis():
    station = {"gpu-r01-n02.cluster": {"capability": [{"type": "Station", "enabled": True}, {"type": "Bridge", "enabled": False}]}}
    unnamed = {"id": {"type": "mac", "value": "AA:BB:CC:00:11:22"}, "capability": {"type": "Router", "enabled": True}}
    document = {"lldp": {"interface": [interface("eth0", station, "eth3"), interface("eth1", unnamed, "Ethernet1/1")]}}
    spec = parse(json.dumps(document))
    assert [(node.id, node.kind) for node in spec.nodes] == [
        ("host:node01", "host"), ("host:gpu-r01-n02", "host"), ("aa:bb:cc:00:11:22", "switch"),
    ]


def test_mau_speeds():
    assert [mau_gbps(mau) for mau in ("10BaseT", "100BaseTXFD", "2.5GbaseT", "25GbaseCR", "400GbaseCR8", "10GigBaseSR")] == [
        0.01, 0.1, 2.5, 25.0, 400.0, 10.0,
    ]
    document = {"lldp": {"interface": [interface("eth0", {"leaf1": {}}, mau="100GbaseCR4 - 100GBASE-R PCS/PMA over 4 lane copper")]}}
    assert parse(json.dumps(document)).links[0].bandwidth_gbps == 100.0


def test_options_fill_in_unknown_speeds():
    spec = parse(SAMPLE, options=ParseOptions(default_bandwidth_gbps=200, default_latency_ns=4))
    assert [(link.bandwidth_gbps, link.latency_ns) for link in spec.links] == [(1.0, 4.0), (200.0, 4.0)]


def test_host_from_file_name_else_a_warning():
    spec = parse(SAMPLE, source_name="lldp.json")
    assert spec.nodes[0].id == "host:host" and "names no host" in str(words_from_plain(spec.attrs["warnings"][0]))


def test_no_neighbours_is_a_lonely_host():
    spec = parse('{"lldp": {}}')
    assert [node.id for node in spec.nodes] == ["host:node01"] and not spec.links


# Pitfalls and errors --------------------------------------------------------------------------


def test_old_lldpd_repeats_an_interface_key_for_a_second_neighbour():
    text = '{"lldp": {"interface": {"eno1": %s, "eno1": %s}}}' % (
        json.dumps(interface("eno1", {"sw1": {}})["eno1"]),
        json.dumps(interface("eno1", {"sw2": {}})["eno1"]),
    )
    error = parse_error(text)
    assert error.path == "lldp.interface.eno1" and "'eno1' of 'host:node01' already has a neighbour" in error.message


@pytest.mark.parametrize(
    ("document", "path", "fragment"),
    [
        ({"lldp": {"interface": [{"eno1": {"port": {"id": {"value": "swp1"}}}}]}}, "lldp.interface[0].eno1.chassis", "no chassis"),
        ({"lldp": {"interface": [interface("eno1", {"sw1": {}}, port="")]}}, "lldp.interface[0].eno1.port.id", "no port id"),
        ({"lldp": {"interface": [{"eno1": "text"}]}}, "lldp.interface[0].eno1", "not an object"),
        ({"lldp": [{"interface": [{"chassis": []}]}]}, "lldp[0].interface[0]", "interface without a name"),
        ({"lldp": {"interface": [interface("eno1", {"id": {"type": "mac"}})]}}, "lldp.interface[0].eno1.chassis", "neither name nor id"),
        ({"lldp": "x"}, "lldp", "neither an object nor a list"),
    ],
)
def test_bad_documents_point_at_the_json_path(document, path, fragment):
    error = parse_error(json.dumps(document))
    assert error.path == path and fragment in error.message and error.expected


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", 1, "malformed JSON"),
        ('{\n  "lldp": {\n    "interface": [,]\n  }\n}', 3, "malformed JSON"),
        ("[1, 2]", None, 'no top-level "lldp"'),
        ('{"lldp": ' + "[" * 100_000 + "]" * 100_000 + "}", None, "nested too deeply"),
    ],
)
def test_malformed_json(text, line, fragment):
    error = parse_error(text)
    assert error.line == line and fragment in error.message


def test_many_problems_are_reported_at_once():
    document = {"lldp": {"interface": [{f"eth{index}": {}} for index in range(8)]}}
    error = parse_error(json.dumps(document))
    assert [problem.path for problem in error.problems] == [f"lldp.interface[{index}].eth{index}.chassis" for index in range(8)]


# Detection ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [SAMPLE, json.dumps(JSON0), '\ufeff { "lldp" : {} }'])
def test_detected_as_lldp(text):
    assert detect_format(text) == "lldp-json"


@pytest.mark.parametrize("path", OTHER_SAMPLES, ids=lambda path: path.name)
def test_other_samples_are_not_lldp(path):
    assert not LldpJsonParser().detect(path.read_text())


def test_canonical_json_is_not_lldp():
    assert not LldpJsonParser().detect('{"format": "twin-fabric", "lldp": 1}')


def test_parse_fabric_detects_and_validates():
    assert parse_fabric(SAMPLE, source_name="node01.json") == parse(SAMPLE)


# Property tests -------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.sampled_from(["interface", "chassis", "port", "id", "name", "value", "capability", "mgmt-ip",
                                       "auto-negotiation", "current", "enabled", "type", "eno1", "sw1"]), children, max_size=4),
    max_leaves=25,
)


def parses_or_ingest_error(text: str) -> None:
    assert_parses_or_ingest_error(LldpJsonParser(), text, "node01.json")


@given(st.text(max_size=300))
@settings(max_examples=150, deadline=None)
def test_random_text_raises_only_ingest_error(text):
    parses_or_ingest_error(text)


@given(JSON_VALUES)
@settings(max_examples=300, deadline=None)
def test_random_json_under_lldp_raises_only_ingest_error(value):
    parses_or_ingest_error(json.dumps({"lldp": value}))


@given(st.sampled_from([SAMPLE, json.dumps(JSON0, indent=1)]).flatmap(
    lambda text: st.lists(st.tuples(st.integers(0, len(text) - 1), st.characters()), min_size=1, max_size=4).map(
        lambda edits: _apply(text, edits))))
@settings(max_examples=200, deadline=None)
def test_mutated_samples_raise_only_ingest_error(text):
    parses_or_ingest_error(text)


def _apply(text: str, edits: list[tuple[int, str]]) -> str:
    for position, character in edits:
        text = text[:position] + character + text[position + 1 :]
    return text
