"""nvidia-smi topo -m: the sample, the pitfalls of FORMATS.md section 3, errors with lines, fuzzing."""

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ingest.fuzzing import assert_parses_or_ingest_error, mutated
from twin.ingest import IngestError, ParseOptions, detect_format, parse_fabric
from twin.ingest.parsers.nccl_xml import DEFAULT_LATENCY_NS, DEFAULT_PCIE_GBPS
from twin.ingest.parsers.nvidia_smi import NvidiaSmiTopoParser
from twin.simcore.translation import words_from_plain

DATA = Path(__file__).resolve().parents[1] / "data"
H100 = (DATA / "nvidia_smi" / "nvidia-smi_topo_m_8xH100.txt").read_text()
# The other formats' samples, the InfiniBand ones included (tests/data/ib belongs to those parsers' tests).
OTHER_SAMPLES = sorted(path for folder in ("slurm", "nccl_xml", "cabling", "lldp", "ib") for path in (DATA / folder).glob("*"))

# An old driver: SOC instead of SYS, a NIC column named by its device, no NIC Legend, DGX-1 style mesh.
OLD_DGX1 = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tmlx5_0\tCPU Affinity
GPU0\t X \tNV1\tNV1\tNV2\tPHB\t0-19
GPU1\tNV1\t X \tNV2\tNV1\tPHB\t0-19
GPU2\tNV1\tNV2\t X \tNV2\tSOC\t20-39
GPU3\tNV2\tNV1\tNV2\t X \tSOC\t20-39
mlx5_0\tPHB\tPHB\tSOC\tSOC\t X \t

Legend:

  X   = Self
  SOC  = Connection traversing PCIe as well as the SMP link between CPU sockets(e.g. QPI)
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe switches (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing a single PCIe switch
  NV#  = Connection traversing a bonded set of # NVLinks
"""

# Rows start on line 2 (the header is line 1).
TWO_GPUS = """\
\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV4\tPXB\t0-0,8-8\t0\t\t2
GPU1\tNV4\t X \tSYS\t0-0,8-8\t0\t\t3
NIC0\tPXB\tSYS\t X \t\t\t\t

NIC Legend:

  NIC0: mlx5_bond_0
"""


def parse(text: str, source_name: str = "node01.txt", options: ParseOptions = ParseOptions()):
    spec = NvidiaSmiTopoParser().parse(text, source_name=source_name, options=options)
    spec.validate()
    return spec


def parse_error(text: str, options: ParseOptions = ParseOptions()) -> IngestError:
    with pytest.raises(IngestError) as raised:
        NvidiaSmiTopoParser().parse(text, source_name="node01.txt", options=options)
    return raised.value


def media(spec) -> Counter:
    return Counter((link.attrs["medium"], link.attrs.get("path"), link.bandwidth_gbps) for link in spec.links)


# Samples ------------------------------------------------------------------------------------


def test_h100_sample():
    spec = parse(H100)
    assert spec.kind_counts() == {"card": 8, "nic": 8, "switch": 1, "host": 0, "aggregation": 0}
    assert media(spec) == {("nvlink", None, 18 * 200.0): 8, ("pcie", "PIX", DEFAULT_PCIE_GBPS): 8}
    assert Counter(link.state for link in spec.links) == {"up": 16}
    assert {(link.domain, link.latency_ns) for link in spec.links} == {("scale-up", DEFAULT_LATENCY_NS)}
    card, nic, switch = spec.nodes[3], spec.nodes[8], spec.nodes[16]
    assert (card.id, card.name, card.host, card.attrs) == ("node01/gpu3", "node01/gpu3", "node01", {"gpu_index": 3})
    assert (nic.id, nic.name, nic.host) == ("node01/nic:mlx5_0", "node01/mlx5_0", "node01")
    assert (switch.id, switch.tier, switch.attrs) == ("node01/nvswitch", "leaf", {"role": "nvswitch"})
    assert spec.links[0].ends() == (("node01/gpu0", "node01/nvswitch"), ("node01/nvswitch", "node01/gpu0"))
    assert spec.links[0].attrs == {"medium": "nvlink", "lanes": 18}
    assert spec.links[8].ends() == (("node01/gpu0", "node01/nic:mlx5_0"), ("node01/nic:mlx5_0", "node01/gpu0"))


def test_options_set_the_per_nvlink_rate():
    spec = parse(H100, options=ParseOptions(default_bandwidth_gbps=400, default_latency_ns=2))
    assert spec.links[0].bandwidth_gbps == 18 * 400 and {link.latency_ns for link in spec.links} == {2.0}


def test_host_from_file_name_else_a_warning():
    spec = parse(H100, source_name="nvidia-smi_topo_m_8xH100.txt")
    assert spec.cards()[0].id == "host/gpu0" and "names no host" in str(words_from_plain(spec.attrs["warnings"][0]))


# Detection ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [H100, OLD_DGX1, TWO_GPUS, "$ nvidia-smi topo -m\n" + H100.replace("\t", "  ")])
def test_detected_as_nvidia_smi(text):
    assert detect_format(text) == "nvidia-smi-topo"


@pytest.mark.parametrize("path", OTHER_SAMPLES, ids=lambda path: path.name)
def test_other_samples_are_not_nvidia_smi(path):
    assert not NvidiaSmiTopoParser().detect(path.read_text())


def test_parse_fabric_detects_and_validates():
    assert parse_fabric(H100, source_name="node01.txt") == parse(H100)


# Pitfalls of FORMATS.md section 3 -------------------------------------------------------------


def test_pasted_copies_without_tabs_read_the_same():
    assert parse(H100.replace("\t", "   ")) == parse(H100)


def test_leading_junk_and_crlf():
    assert parse("[root@node01 ~]# nvidia-smi topo -m\r\n" + H100.replace("\n", "\r\n")) == parse(H100)


def test_old_driver_soc_device_columns_and_dgx1_mesh():
    spec = parse(OLD_DGX1)
    assert spec.kind_counts() == {"card": 4, "nic": 1, "switch": 0, "host": 0, "aggregation": 0}
    assert spec.nodes[4].id == "node01/nic:mlx5_0"
    # NV1/NV2 differ per pair: direct cables, no NVSwitch; PHB and SOC are no links.
    assert media(spec) == {("nvlink", None, 200.0): 3, ("nvlink", None, 400.0): 3}
    assert {frozenset((link.a, link.b)) for link in spec.links if link.attrs["lanes"] == 2} == {
        frozenset(("node01/gpu0", "node01/gpu3")), frozenset(("node01/gpu1", "node01/gpu2")),
        frozenset(("node01/gpu2", "node01/gpu3")),
    }


def test_nvlink_bridge_pair_bonds_numeric_gpu_numa_and_power_cpusets():
    spec = parse(TWO_GPUS)
    assert [node.id for node in spec.nodes] == ["node01/gpu0", "node01/gpu1", "node01/nic:mlx5_bond_0"]
    assert media(spec) == {("nvlink", None, 800.0): 1, ("pcie", "PXB", DEFAULT_PCIE_GBPS): 1}


def test_equal_nv_counts_within_18_links_are_a_direct_mesh():
    # HGX H100 4-GPU: NV6 to each of 3 peers = 18 links, all direct.
    header = "\tGPU0\tGPU1\tGPU2\tGPU3\n"
    rows = "".join(f"GPU{i}\t" + "\t".join(" X " if i == j else "NV6" for j in range(4)) + "\n" for i in range(4))
    spec = parse(header + rows)
    assert not spec.switches() and media(spec) == {("nvlink", None, 1200.0): 6}


def test_nic_columns_without_legend_keep_their_label():
    text = "\tGPU0\tNIC0\nGPU0\t X \tPIX\nNIC0\tPIX\t X \n"
    assert parse(text).nodes[1].id == "node01/nic:NIC0"


# Malformed input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", None, "no matrix header"),
        ("GPU0\t X \tNV4\n", None, "no matrix header"),
        (TWO_GPUS.replace("GPU1\tNV4\t X \tSYS", "GPU1\tNV4\t X \tFOO"), 3, "GPU1/NIC0 is 'FOO'"),
        (TWO_GPUS.replace("GPU1\tNV4\t X \tSYS\t0-0,8-8\t0\t\t3", "GPU1\tNV4"), 3, "row GPU1 has 1 cell"),
        (TWO_GPUS.replace("GPU1\tNV4\t X ", "GPU1\tNV2\t X "), 3, "GPU1/GPU0 is NV2 but GPU0/GPU1 (line 2) is NV4"),
        (TWO_GPUS.replace("GPU0\t X \tNV4", "GPU0\tNV4\t X "), 2, "GPU0/GPU0 is 'NV4'"),
        (TWO_GPUS.replace("\nGPU1\t", "\nGPU7\t"), 3, "row 'GPU7' is not a column"),
        (TWO_GPUS.replace("NIC0\tPXB\tSYS\t X \t\t\t\t\n", ""), None, "no row for NIC0"),
        (TWO_GPUS.replace("NIC0\tPXB", "GPU1\tNV4\t X \tSYS\t\t\t\t\nNIC0\tPXB"), 4, "second row for GPU1"),
        (TWO_GPUS + "  NIC1: mlx5_bond_0\n", 9, "repeats a NIC or a device"),
    ],
)
def test_malformed_matrices(text, line, fragment):
    error = parse_error(text)
    assert error.line == line and fragment in error.message and error.expected


def test_many_problems_are_reported_at_once():
    text = H100.replace("PIX", "PIQ")
    error = parse_error(text)
    assert len(error.problems) == 16 and error.problems[0].line == 2 and error.problems[-1].line == 17
    assert len(parse_error(text, ParseOptions(max_problems=4)).problems) == 4


# Property tests -------------------------------------------------------------------------------


def parses_or_ingest_error(text: str) -> None:
    assert_parses_or_ingest_error(NvidiaSmiTopoParser(), text, "node01.txt")


@given(st.text(max_size=300))
@settings(max_examples=150, deadline=None)
def test_random_text_raises_only_ingest_error(text):
    parses_or_ingest_error(text)


_MATRIX_PIECES = ["GPU0", "GPU1", "NIC0", " X ", "NV4", "NV18", "PIX", "SYS", "\t", "\n", "NIC Legend:", "  NIC0: mlx5_0"]


@given(st.lists(st.sampled_from(_MATRIX_PIECES), max_size=40).map("".join))
@settings(max_examples=200, deadline=None)
def test_random_matrices_raise_only_ingest_error(text):
    parses_or_ingest_error(text)


@given(st.sampled_from([H100, OLD_DGX1, TWO_GPUS]).flatmap(mutated))
@settings(max_examples=200, deadline=None)
def test_mutated_samples_raise_only_ingest_error(text):
    parses_or_ingest_error(text)
