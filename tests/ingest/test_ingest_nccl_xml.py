"""NCCL topology XML: dumps and hint files, the pitfalls of FORMATS.md section 2, safety, fuzzing."""

import doctest
import re
from collections import Counter
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ingest.fuzzing import assert_parses_or_ingest_error, mutated
from twin.ingest import IngestError, ParseOptions, detect_format, parse_fabric
from twin.ingest.parsers import nccl_xml
from twin.ingest.parsers.nccl_xml import (
    DEFAULT_LATENCY_NS,
    NcclTopoXmlParser,
    normalise_bus_id,
    nvlink_lane_gbps,
    pcie_gbps,
)
from twin.simcore.translation import words_from_plain

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLES = DATA / "nccl_xml"
DUMP = (SAMPLES / "nccl_topo_dump_8xH100.xml").read_text()
HINT = (SAMPLES / "nccl_topo_hint_4gpu_vm.xml").read_text()
AZURE_V4 = (SAMPLES / "azure-ndv4-topo.xml").read_text()
AZURE_V5 = (SAMPLES / "azure-ndv5-topo.xml").read_text()
# The other formats' samples, the InfiniBand ones included (tests/data/ib belongs to those parsers' tests).
OTHER_SAMPLES = sorted(path for folder in ("slurm", "nvidia_smi", "cabling", "lldp", "ib") for path in (DATA / folder).glob("*"))
GEN5_X16 = pcie_gbps(32.0, 16)
GEN4_X16 = pcie_gbps(16.0, 16)


def parse(text: str, source_name: str = "node01.xml", options: ParseOptions = ParseOptions()):
    spec = NcclTopoXmlParser().parse(text, source_name=source_name, options=options)
    spec.validate()
    return spec


def parse_error(text: str, options: ParseOptions = ParseOptions()) -> IngestError:
    with pytest.raises(IngestError) as raised:
        NcclTopoXmlParser().parse(text, source_name="node01.xml", options=options)
    return raised.value


def system(body: str, cpu_attrs: str = 'numaid="0"') -> str:
    """A one-CPU system around ``body``; the body starts on line 3."""
    return f'<system version="1">\n  <cpu {cpu_attrs}>\n{body}\n  </cpu>\n</system>\n'


def media(spec) -> Counter:
    return Counter((link.attrs["medium"], link.attrs.get("path"), round(link.bandwidth_gbps, 1)) for link in spec.links)


def node(spec, node_id: str):
    return spec.nodes[spec.node_index()[node_id]]


def test_doctests():
    assert doctest.testmod(nccl_xml).failed == 0


# Samples ------------------------------------------------------------------------------------


def test_h100_dump():
    spec = parse(DUMP)
    assert spec.kind_counts() == {"card": 8, "nic": 8, "switch": 1, "host": 0, "aggregation": 0}
    assert media(spec) == {("nvlink", None, 3600.0): 8, ("pcie", "PIX", round(GEN5_X16, 1)): 8}
    assert Counter(link.state for link in spec.links) == {"up": 16}
    assert {link.domain for link in spec.links} == {"scale-up"}
    assert {link.latency_ns for link in spec.links} == {DEFAULT_LATENCY_NS}
    gpu = node(spec, "node01/gpu:0000:18:00.0")
    assert (gpu.kind, gpu.name, gpu.host) == ("card", "node01/gpu0", "node01")
    assert gpu.attrs == {"busid": "0000:18:00.0", "gpu_index": 0, "sm": 90, "rank": 0, "numa_node": 0}
    nic = node(spec, "node01/nic:mlx5_0")
    assert (nic.name, nic.host) == ("node01/mlx5_0", "node01")
    assert nic.attrs == {
        "busid": "0000:19:00.0", "guid": "0c42a10300860100", "speed_gbps": 400.0,
        "net_devs": (0,), "hca_ports": ("1",), "numa_node": 0,
    }
    switch = node(spec, "node01/nvswitch")
    assert (switch.tier, switch.attrs) == ("leaf", {"role": "nvswitch"})
    assert "warnings" not in spec.attrs


def test_nvlink_and_pcie_links_name_ports_after_the_peer():
    spec = parse(DUMP)
    nvlink, pcie = spec.links[0], spec.links[8]
    assert nvlink.ends() == (("node01/gpu:0000:18:00.0", "node01/nvswitch"), ("node01/nvswitch", "node01/gpu:0000:18:00.0"))
    assert nvlink.attrs == {"medium": "nvlink", "lanes": 18}
    assert pcie.ends() == (("node01/gpu:0000:18:00.0", "node01/nic:mlx5_0"), ("node01/nic:mlx5_0", "node01/gpu:0000:18:00.0"))


def test_numa_nodes_follow_the_cpu():
    spec = parse(DUMP)
    assert node(spec, "node01/gpu:0000:db:00.0").attrs["numa_node"] == 1


@pytest.mark.parametrize(
    ("text", "cards", "pix", "rate"),
    [(HINT, 4, 4, GEN4_X16), (AZURE_V4, 8, 16, GEN4_X16), (AZURE_V5, 8, 8, GEN5_X16)],
    ids=["hint-4gpu", "azure-ndv4", "azure-ndv5"],
)
def test_hint_files_infer_cards_and_nics_from_class(text, cards, pix, rate):
    spec = parse(text)
    assert spec.kind_counts() == {"card": cards, "nic": cards, "switch": 0, "host": 0, "aggregation": 0}
    assert media(spec) == {("pcie", "PIX", round(rate, 1)): pix}
    nic = spec.nodes_of_kind("nic")[0]
    assert nic.id == f"node01/nic:{nic.attrs['busid']}"


def test_host_from_file_name_else_a_warning():
    spec = parse(DUMP, source_name="nccl_topo_dump_8xH100.xml")
    assert spec.cards()[0].id == "host/gpu:0000:18:00.0"
    assert "names no host" in str(words_from_plain(spec.attrs["warnings"][0]))


def test_options_override_the_per_nvlink_rate_and_latency():
    spec = parse(DUMP, options=ParseOptions(default_bandwidth_gbps=400, default_latency_ns=1))
    assert spec.links[0].bandwidth_gbps == 18 * 400 and {link.latency_ns for link in spec.links} == {1.0}


def test_nvlink_lane_rates_by_generation():
    assert [nvlink_lane_gbps(sm) for sm in (60, 70, 80, 86, 90, 100, 103, None)] == [
        160.0, 200.0, 200.0, 112.5, 200.0, 400.0, 400.0, 200.0,
    ]
    spec = parse(system('<pci busid="0000:18:00.0" class="0x030200"><gpu dev="0" sm="100">'
                        '<nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/></gpu></pci>'))
    assert spec.links[0].bandwidth_gbps == 18 * 400


# Detection ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [DUMP, HINT, AZURE_V4, AZURE_V5, '<?xml version="1.0"?>\n<!-- c -->\n<system version="1"/>'])
def test_detected_as_nccl_xml(text):
    assert detect_format(text) == "nccl-topo-xml"


@pytest.mark.parametrize(
    "text",
    [
        '<topology version="2.0"><object type="Machine"/></topology>',
        '<graphs version="1"><graph id="0" pattern="4"><channel><net dev="0"/></channel></graph></graphs>',
    ],
    ids=["hwloc", "nccl-graph-dump"],
)
def test_look_alikes_are_not_detected_and_refused_by_root(text):
    assert not NcclTopoXmlParser().detect(text)
    error = parse_error(text)
    assert error.path in ("/topology", "/graphs") and error.line == 1 and "root element" in error.message


@pytest.mark.parametrize("path", OTHER_SAMPLES, ids=lambda path: path.name)
def test_other_samples_are_not_nccl_xml(path):
    assert not NcclTopoXmlParser().detect(path.read_text())


def test_parse_fabric_detects_and_validates():
    assert parse_fabric(DUMP, source_name="node01.xml") == parse(DUMP)


# Pitfalls of FORMATS.md section 2 -------------------------------------------------------------


def test_bus_ids_are_normalised():
    assert normalise_bus_id("00000000:1A:00.0") == "0000:1a:00.0"
    assert normalise_bus_id("1a:00.0") == "0000:1a:00.0"
    assert normalise_bus_id("fffffff:ff:ff.0") == "fffffff:ff:ff.0"
    assert normalise_bus_id("0000:1a:00") is None
    spec = parse(system('<pci busid="00000000:1A:00.0" class="0x030200"><gpu dev="0"/></pci>'))
    assert spec.cards()[0].id == "node01/gpu:0000:1a:00.0"


def test_multi_node_nvlink_dump_keys_pci_by_host_hash():
    half = ('<cpu host_hash="0x{hash}" numaid="0"><pci busid="0000:18:00.0" class="0x030200">'
            '<gpu dev="0" sm="100"><nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/></gpu></pci></cpu>')
    text = f'<system version="1">{half.format(hash="AAAA")}{half.format(hash="bbbb")}</system>'
    spec = parse(text, source_name="nvl72-tray1.xml")
    assert [card.id for card in spec.cards()] == ["host-aaaa/gpu:0000:18:00.0", "host-bbbb/gpu:0000:18:00.0"]
    assert [switch.id for switch in spec.switches()] == ["nvl72-tray1/nvswitch"]
    assert {link.b for link in spec.links} == {"nvl72-tray1/nvswitch"}


def test_dual_port_hca_is_one_nic_with_two_ports():
    nets = "".join(
        f'<net name="mlx5_0" dev="{port - 1}" speed="200000" port="{port}" guid="0xc42a10300860100"/>' for port in (1, 2)
    )
    spec = parse(system(f'<pci busid="0000:19:00.0" class="0x020700"><nic>{nets}</nic></pci>'))
    nic = spec.nodes_of_kind("nic")[0]
    assert nic.attrs["hca_ports"] == ("1", "2") and nic.attrs["net_devs"] == (0, 1) and nic.attrs["guid"] == "0c42a10300860100"


def test_plugin_indices_are_not_guids_and_non_positive_speed_is_unknown():
    spec = parse(system('<pci busid="0000:19:00.0" class="0x020000"><nic><net name="eth0" guid="0x1f" speed="-1"/></nic></pci>'))
    assert spec.nodes_of_kind("nic")[0].attrs == {"busid": "0000:19:00.0", "numa_node": 0}


def test_socket_nic_without_pci():
    spec = parse(system('<nic><net name="eth0" speed="100000"/></nic>'))
    assert spec.nodes_of_kind("nic")[0].id == "node01/nic:eth0" and not spec.links


def test_nccl_reader_limits_give_warnings_not_errors():
    text = '<?xml version="1.0"?>\n' + system('\t<pci busid="0000:18:00.0" class="0x030200"><gpu dev="0"/></pci>')
    spec = parse(text)
    warnings = [str(words_from_plain(warning)) for warning in spec.attrs["warnings"]]
    assert any("prolog" in warning for warning in warnings) and any("line 4: a TAB" in warning for warning in warnings)
    many = " ".join(f'a{index}="1"' for index in range(17))
    assert "18 attributes; NCCL's reader takes at most 16" in str(words_from_plain(parse(system(f'<pci busid="0000:18:00.0" {many}/>')).attrs["warnings"][0]))


def test_comments_are_fine():
    assert parse(system('<!-- a comment --><pci busid="0000:18:00.0" class="0x030200"/>')).kind_counts()["card"] == 1


def test_nvswitches_on_pci_are_one_switch_each():
    links = "".join(f'<nvlink target="0000:0{index}:00.0" count="2" tclass="0x068000"/>' for index in range(1, 7))
    spec = parse(system(f'<pci busid="0000:18:00.0" class="0x030200"><gpu dev="0" sm="80">{links}</gpu></pci>'))
    assert len(spec.switches()) == 6 and spec.switches()[0].id == "node01/nvswitch:0000:01:00.0"
    assert spec.switches()[0].attrs == {"role": "nvswitch", "busid": "0000:01:00.0"}
    assert {(link.bandwidth_gbps, link.attrs["lanes"]) for link in spec.links} == {(400.0, 2)}


def test_direct_gpu_nvlinks_are_deduplicated():
    gpu = ('<pci busid="0000:{me}:00.0" class="0x030200"><gpu dev="{dev}" sm="70">'
           '<nvlink target="0000:{peer}:00.0" count="2" tclass="0x030200"/></gpu></pci>')
    spec = parse(system(gpu.format(me="18", dev=0, peer="19") + gpu.format(me="19", dev=1, peer="18")))
    assert len(spec.links) == 1 and spec.links[0].bandwidth_gbps == 400.0 and spec.links[0].attrs["lanes"] == 2


def test_cpu_nvlinks_and_grace_c2c_are_card_attributes():
    body = ('<pci busid="0000:18:00.0" class="0x030200"><gpu dev="0" sm="90">'
            '<nvlink target="0000:00:00.0" count="3" tclass="0x068001"/><c2c bw="20000" count="10"/></gpu></pci>')
    spec = parse(system(body))
    assert not spec.links and spec.cards()[0].attrs["cpu_nvlinks"] == 3 and spec.cards()[0].attrs["c2c_gbps"] == 1600.0


def test_partitioned_gpu_is_one_card():
    spec = parse(system('<pci busid="0000:18:00.0" class="0x030200"><gpu dev="0" mlopart="0"/><gpu dev="1" mlopart="1"/></pci>'))
    assert len(spec.cards()) == 1 and spec.cards()[0].attrs["partitions"] == 2


def test_rccl_gpus_and_xgmi_are_read():
    spec = parse(system('<pci busid="0000:18:00.0" class="0x038000"><gpu dev="0" gcn="gfx942" arch="169983">'
                        '<xgmi target="0000:19:00.0" count="1"/></gpu></pci>'))
    assert spec.cards()[0].attrs["gpu_index"] == 0


def test_pcie_paths_pix_pxb_and_through_the_cpu():
    body = """
    <pci busid="0000:10:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:11:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="0">
        <pci busid="0000:12:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="0"/></pci>
      </pci>
      <pci busid="0000:13:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16"><nic><net name="mlx5_0"/></nic></pci>
    </pci>
    <pci busid="0000:20:00.0" class="0x020700" link_speed="" link_width="16"><nic><net name="mlx5_1"/></nic></pci>"""
    spec = parse(system(body))
    assert [(link.b, link.attrs["path"], round(link.bandwidth_gbps, 1)) for link in spec.links] == [
        ("node01/nic:mlx5_0", "PXB", round(GEN4_X16, 1)),  # the x0 (= x16) Gen4 bridge is the slowest hop
    ]


def test_negative_numa_id_means_none():
    spec = parse(system('<pci busid="0000:18:00.0" class="0x030200"/>', cpu_attrs='numaid="-1"'))
    assert "numa_node" not in spec.cards()[0].attrs


# Safety -------------------------------------------------------------------------------------

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE system [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<system version="1"><cpu numaid="&lol3;"/></system>
"""
EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE system [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<system version="1"><cpu numaid="0">&secret;</cpu></system>
"""


@pytest.mark.parametrize("text", [BILLION_LAUGHS, EXTERNAL_ENTITY], ids=["entity-expansion", "external-entity"])
def test_entities_are_refused(text):
    error = parse_error(text)
    assert error.line == 2 and "refused" in error.message and "DOCTYPE" in error.message


# Malformed input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", 1, "malformed XML: no element found"),
        ('<system version="1">\n  <cpu>\n</system>\n', 3, "malformed XML: mismatched tag"),
        ("\x00\x01\x02garbage\xff", 1, "malformed XML"),
        ('<system version="2"/>', 1, 'root element <system version="2">'),
    ],
)
def test_malformed_documents(text, line, fragment):
    error = parse_error(text)
    assert error.line == line and error.message.startswith(fragment) and error.expected


def test_bad_bus_id_points_at_the_element():
    text = DUMP.replace('busid="0000:99:00.0"', 'busid="zz:99"')
    error = parse_error(text)
    assert error.path == "/system/cpu[2]/pci[1]/pci[1]" and error.line == 54
    assert error.message == 'busid="zz:99"' and "PCI bus id" in error.expected


def test_element_path_of_a_unique_child_has_no_index():
    error = parse_error(DUMP.replace('<nvlink target="fffffff:ff:ff.0" count="18"', '<nvlink target="fffffff:ff:ff.0" count="x"', 1))
    assert error.path == "/system/cpu[1]/pci[1]/pci[1]/gpu/nvlink" and error.line == 6 and error.expected == "an integer"


def test_gpu_outside_pci():
    error = parse_error(system('<gpu dev="0"/>'))
    assert error.path == "/system/cpu/gpu" and error.line == 3 and "outside any <pci>" in error.message


def test_duplicate_bus_id():
    error = parse_error(system('<pci busid="0000:18:00.0"/>\n<pci busid="0000:18:00.0"/>'))
    assert error.line == 4 and "already used at line 3" in error.message


def test_many_problems_are_reported_at_once():
    text = DUMP.replace('count="18"', 'count="0"')
    error = parse_error(text)
    assert len(error.problems) == 8 and [problem.line for problem in error.problems][:2] == [6, 23]
    assert len(parse_error(text, ParseOptions(max_problems=3)).problems) == 3


# Property tests -------------------------------------------------------------------------------


@st.composite
def with_random_values(draw, text: str) -> str:
    """``text``, still well-formed, with some attribute values replaced by random text."""
    values = list(re.finditer(r'="([^"]*)"', text))
    for match in sorted(draw(st.lists(st.sampled_from(values), min_size=1, max_size=4, unique_by=lambda m: m.start())),
                        key=lambda m: m.start(), reverse=True):
        replacement = escape(draw(st.text(max_size=12)), {'"': "&quot;"})
        text = text[: match.start(1)] + replacement + text[match.end(1) :]
    return text


def parses_or_ingest_error(text: str) -> None:
    assert_parses_or_ingest_error(NcclTopoXmlParser(), text, "node01.xml")


@given(st.text(max_size=300))
@settings(max_examples=150, deadline=None)
def test_random_text_raises_only_ingest_error(text):
    parses_or_ingest_error(text)


@given(st.sampled_from([DUMP, HINT, AZURE_V4]).flatmap(mutated))
@settings(max_examples=150, deadline=None)
def test_mutated_samples_raise_only_ingest_error(text):
    parses_or_ingest_error(text)


@given(st.sampled_from([DUMP, HINT]).flatmap(with_random_values))
@settings(max_examples=200, deadline=None)
def test_random_attribute_values_raise_only_ingest_error(text):
    parses_or_ingest_error(text)


def test_a_gpu_listing_the_same_nvswitch_twice_is_an_error_on_its_line():
    """Found by the property test: two <nvlink> elements of one GPU to the same NVSwitch."""
    twice = DUMP.replace(
        '<nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/>',
        '<nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/>\n          <nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/>',
        1,
    )
    assert twice != DUMP
    with pytest.raises(IngestError, match="a second nvlink"):
        NcclTopoXmlParser().parse(twice, source_name="node01.xml")
