"""Slurm topology.conf: samples, the pitfalls of FORMATS.md section 4, errors with lines, fuzzing."""

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ingest.fuzzing import assert_parses_or_ingest_error, mutated
from twin.ingest import IngestError, ParseOptions, detect_format, parse_fabric
from twin.ingest.parsers.slurm import DEFAULT_LATENCY_NS, DEFAULT_LINK_GBPS, SlurmTopologyParser

DATA = Path(__file__).resolve().parents[1] / "data"
SLURM = DATA / "slurm"
TREE = (SLURM / "slurm_topology_tree_2tier.conf").read_text()
BLOCK = (SLURM / "slurm_topology_block.conf").read_text()
TOPOGRAPH = (SLURM / "topograph-tree.conf").read_text()
# The other formats' samples, the InfiniBand ones included (tests/data/ib belongs to those parsers' tests).
OTHER_SAMPLES = sorted(path for folder in ("nccl_xml", "nvidia_smi", "cabling", "lldp", "ib") for path in (DATA / folder).glob("*"))


def parse(text: str, options: ParseOptions = ParseOptions()):
    spec = SlurmTopologyParser().parse(text, source_name="topology.conf", options=options)
    spec.validate()
    return spec


def parse_error(text: str, options: ParseOptions = ParseOptions()) -> IngestError:
    with pytest.raises(IngestError) as raised:
        SlurmTopologyParser().parse(text, source_name="topology.conf", options=options)
    return raised.value


def tiers(spec) -> Counter:
    return Counter(node.tier for node in spec.switches())


def neighbours(spec, node_id: str) -> set[str]:
    return {link.b if link.a == node_id else link.a for link in spec.links if node_id in (link.a, link.b)}


# Samples ------------------------------------------------------------------------------------


def test_two_tier_sample():
    spec = parse(TREE)
    assert spec.kind_counts() == {"card": 0, "nic": 0, "switch": 3, "host": 8, "aggregation": 0}
    assert tiers(spec) == {"leaf": 2, "spine": 1}
    assert len(spec.links) == 10 and Counter(link.state for link in spec.links) == {"up": 10}
    assert {link.domain for link in spec.links} == {"scale-out"}
    assert neighbours(spec, "leaf02") == {"spine01", "host:node05", "host:node06", "host:node07", "host:node08"}
    leaf = spec.nodes[spec.node_index()["leaf01"]]
    assert leaf.name == "leaf01" and leaf.attrs == {"level": 1, "link_speed": 400}


def test_links_carry_the_documented_defaults_and_name_ports_after_the_peer():
    link = parse(TREE).links[0]
    assert (link.a, link.a_port, link.b, link.b_port) == ("leaf01", "host:node01", "host:node01", "leaf01")
    assert (link.bandwidth_gbps, link.latency_ns) == (DEFAULT_LINK_GBPS, DEFAULT_LATENCY_NS) == (400.0, 10.0)


def test_options_set_bandwidth_and_latency():
    spec = parse(TREE, ParseOptions(default_bandwidth_gbps=200, default_latency_ns=0))
    assert {(link.bandwidth_gbps, link.latency_ns) for link in spec.links} == {(200.0, 0.0)}


def test_three_tier_tool_generated_file():
    spec = parse(TOPOGRAPH)
    assert spec.kind_counts()["switch"] == 19 and spec.kind_counts()["host"] == 96
    assert tiers(spec) == {"core": 1, "spine": 6, "leaf": 12}
    assert len(spec.links) == 6 + 12 + 96
    assert neighbours(spec, "switch.2.3") == {"switch.3.1", "switch.1.5", "switch.1.6"}
    assert neighbours(spec, "host:srv3105") == {"switch.1.5"}


def test_block_sample_is_grouping_not_links():
    spec = parse(BLOCK)
    assert spec.kind_counts()["host"] == 16 and not spec.links
    assert spec.attrs["block_sizes"] == (4, 8, 16)
    assert spec.attrs["blocks"]["nvl04"] == ("host:gpu-r04-n01", "host:gpu-r04-n02", "host:gpu-r04-n04", "host:gpu-spare1")
    assert spec.nodes[spec.node_index()["host:gpu-r03-n02"]].attrs == {"block": "nvl03"}


def test_ring_statements():
    spec = parse("RingName=r1 Nodes=n[1-4]\n")
    assert spec.attrs["rings"] == {"r1": ("host:n1", "host:n2", "host:n3", "host:n4")}
    error = parse_error("RingName=r1 Nodes=n[1-17]\n")
    assert error.line == 1 and "ring of 17 nodes" in error.message


# Detection ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [TREE, BLOCK, TOPOGRAPH, "switchname=s1 nodes=n1\n", "  BlockSizes=4\n"])
def test_detected_as_slurm(text):
    assert detect_format(text) == "slurm-topology"


@pytest.mark.parametrize("path", OTHER_SAMPLES, ids=lambda path: path.name)
def test_other_samples_are_not_slurm(path):
    assert not SlurmTopologyParser().detect(path.read_text())


def test_parse_fabric_detects_and_validates():
    assert parse_fabric(TREE, source_name="topology.conf") == parse(TREE)


# Pitfalls of FORMATS.md section 4 -------------------------------------------------------------


def test_zero_padding_in_node_names():
    spec = parse("SwitchName=s1 Nodes=node0[5-8]\nSwitchName=s2 Nodes=node[008-010]\n")
    assert [node.id for node in spec.nodes if node.kind == "host"] == [
        "host:node05", "host:node06", "host:node07", "host:node08", "host:node008", "host:node009", "host:node010",
    ]


def test_nodes_and_switches_on_one_line_is_an_error():
    error = parse_error("# comment\nSwitchName=s1 Nodes=n1 Switches=s2\nSwitchName=s2 Nodes=n2\n")
    assert error.line == 2 and "both Nodes= and Switches=" in error.message


def test_several_parents_make_a_dag():
    spec = parse("SwitchName=l1 Nodes=n[1-2]\nSwitchName=s1 Switches=l1\nSwitchName=s2 Switches=l1\n")
    assert neighbours(spec, "l1") == {"s1", "s2", "host:n1", "host:n2"}
    assert tiers(spec) == {"leaf": 1, "spine": 2}


def test_cycles_are_rejected():
    error = parse_error("SwitchName=a Switches=b\nSwitchName=b Switches=c\nSwitchName=c Switches=a\n")
    assert "cycle (a -> b -> c -> a): not a tree" in error.message and error.line == 1


def test_a_switch_listing_itself_is_a_cycle():
    assert "cycle" in parse_error("SwitchName=a Switches=a\n").message


def test_long_chains_need_no_recursion():
    lines = [f"SwitchName=s{index} Switches=s{index + 1}" for index in range(5000)] + ["SwitchName=s5000 Nodes=n1"]
    spec = parse("\n".join(lines))
    assert spec.nodes[0].attrs["level"] == 5001 and spec.nodes[0].tier == "core"


def test_names_longer_than_64_characters():
    error = parse_error(f"SwitchName={'s' * 65} Nodes=n1\n")
    assert "65 characters" in error.message and error.expected == "at most 64 characters"


def test_duplicate_switch_names():
    error = parse_error("SwitchName=s1 Nodes=n1\nSwitchName=S1 Nodes=n2\n")
    assert error.line == 2 and "already defined on line 1" in error.message


def test_link_speed_is_a_relative_number_not_a_bandwidth():
    spec = parse("SwitchName=s1 Nodes=n1 LinkSpeed=7\n")
    assert spec.links[0].bandwidth_gbps == DEFAULT_LINK_GBPS and spec.nodes[0].attrs["link_speed"] == 7
    assert parse_error("SwitchName=s1 Nodes=n1 LinkSpeed=fast\n").expected == "an unsigned integer"


def test_generated_guid_node_names():
    spec = parse("SwitchName=S-0c42a10300860000 Nodes=H-0c42a10300860100,H-0c42a10300860101\n")
    assert [node.id for node in spec.nodes] == ["s-0c42a10300860000", "host:h-0c42a10300860100", "host:h-0c42a10300860101"]


def test_rail_optimised_host_under_several_leaves():
    spec = parse("SwitchName=rail0 Nodes=n[1-2]\nSwitchName=rail1 Nodes=n[1-2]\n")
    assert neighbours(spec, "host:n1") == {"rail0", "rail1"}


def test_comments_case_blanks_crlf_and_continuations():
    text = "# header\r\n\r\n  switchname=L1   NODES=n[1-2]  # two hosts\r\nSwitchName=s1 \\\r\n  Switches=l1\r\n"
    spec = parse(text)
    assert tiers(spec) == {"leaf": 1, "spine": 1} and len(spec.links) == 3


def test_unknown_child_switch():
    error = parse_error("SwitchName=s1 Switches=leaf[1-2]\nSwitchName=leaf1 Nodes=n1\n")
    assert error.line == 1 and "unknown switch 'leaf2'" in error.message


def test_block_sizes_rules():
    assert parse("BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,16,64\n").attrs["block_sizes"] == (4, 16, 64)
    assert "times a power of two" in parse_error("BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,12\n").expected
    assert parse_error("BlockName=b1 Nodes=n1\nBlockSizes=4,x\n").line == 2


def test_node_in_two_blocks():
    error = parse_error("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n2\n")
    assert error.line == 2 and "already in block 'b1'" in error.message


# Malformed input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", None, "no SwitchName"),
        ("# only comments\n", None, "no SwitchName"),
        ("SwitchName=s1 Nodes=n[1-\n", 1, "never closed"),
        ("SwitchName=s1 Nodes=n1\nNodeName=n1 CPUs=4\n", 2, "unknown statement 'NodeName'"),
        ("SwitchName=s1 Nodes\n", 1, "not a Key=Value pair"),
        ("SwitchName=s1 Nodes=n1 Nodes=n2\n", 1, "given twice"),
        ("SwitchName=s1 Color=red\n", 1, "unknown key 'Color'"),
        ("BlockName=b1\n", 1, "block without Nodes="),
        ("SwitchName= Nodes=n1\n", 1, "empty switch name"),
    ],
)
def test_malformed_lines(text, line, fragment):
    error = parse_error(text)
    assert error.line == line and fragment in error.message
    assert error.source == "topology.conf" and error.expected


def test_many_problems_are_reported_at_once():
    text = "\n".join(f"SwitchName=s{index} Nodes=n[{index}-" for index in range(1, 8))
    error = parse_error(text)
    assert [problem.line for problem in error.problems] == list(range(1, 8)) and not error.truncated


def test_max_problems_truncates():
    text = "\n".join(f"SwitchName=s{index} Nodes=n[{index}-" for index in range(1, 30))
    error = parse_error(text, ParseOptions(max_problems=5))
    assert len(error.problems) == 5 and error.truncated


# Property tests -------------------------------------------------------------------------------


def parses_or_ingest_error(text: str) -> None:
    assert_parses_or_ingest_error(SlurmTopologyParser(), text, "fuzz.conf")


@given(st.text(max_size=300))
@settings(max_examples=200, deadline=None)
def test_random_text_raises_only_ingest_error(text):
    parses_or_ingest_error(text)


@given(st.text(alphabet="SwitchNamesNodeBlockRing=[]-,0123456789 #\n\\", max_size=200))
@settings(max_examples=200, deadline=None)
def test_random_statements_raise_only_ingest_error(text):
    parses_or_ingest_error(text)


@given(st.sampled_from([TREE, BLOCK, TOPOGRAPH]).flatmap(mutated))
@settings(max_examples=200, deadline=None)
def test_mutated_samples_raise_only_ingest_error(text):
    parses_or_ingest_error(text)
