"""Completing uploaded fabrics: cards from HCAs, the scale-up hint files leave out, SHARP, and
what makes an upload unusable. On real files (tests/data: an X5 cluster dump, Azure hint files, a
topograph tree) and SuperPOD-style dumps."""
from pathlib import Path

import pytest

from twin.ingest import IngestError, ParseOptions, detect_format, parse_fabric
from twin.ingest.completion import HCA_CARD_SOURCE, complete_fabric
from twin.ingest.merge import merge_fabrics
from twin.ingest.writers.superpod import DEFAULT_HCA_DESCRIPTION, hca_guid, superpod_files
from twin.simcore.generate import supernode
from twin.simcore.simulate import Simulator

DATA = Path(__file__).resolve().parents[1] / "data"  # the real files of ../shared/samples, kept with the tests


def parsed(name: str, text: str):
    fmt = detect_format(text)
    return name, fmt, parse_fabric(text, source_name=name, format=fmt)


def completed(files: dict[str, str], options: ParseOptions = ParseOptions()):
    parts = [parsed(name, text) for name, text in files.items()]
    spec = parts[0][2] if len(parts) == 1 else merge_fabrics([(name, spec) for name, _, spec in parts], name="pod")
    return complete_fabric(spec, options=options, formats={name: fmt for name, fmt, _ in parts})


def sample(name: str) -> dict[str, str]:
    path = DATA / name
    return {path.name: path.read_text()}


@pytest.fixture(scope="module")
def pod_files():
    # 2 scalable units of 32 DGX; dgx031 and dgx064 are out for service (their ports carry two
    # storage servers and the UFM), dgx005's HCAs kept the firmware's default description.
    return superpod_files(units=2, missing={31, 64}, nameless={5})


def test_a_dump_alone_has_a_card_for_every_compute_hca(pod_files):
    result = completed({"superpod.ibnetdiscover": pod_files["superpod.ibnetdiscover"]})
    cards = result.spec.cards()
    assert len(cards) == 62 * 8  # 62 DGX in the dump, 8 compute HCAs each
    assert result.summary["cards"]["sources"] == {HCA_CARD_SOURCE: 496}
    assert result.summary["cards"]["non_compute_hcas"] == 5  # stor01, stor02 (2 each), ufm01
    assert {name.split("/")[0] for name in result.summary["cards"]["non_compute_examples"]} == {"stor01", "stor02", "ufm01"}
    by_name = {card.name: card for card in cards}
    assert by_name["dgx001/gpu0"].attrs["hca"] == f"ib:{hca_guid(1, 0)}" and by_name["dgx001/gpu7"].host == "dgx001"
    assert f"gpu@{hca_guid(5, 3)}" in by_name  # a default description names no host
    assert result.warnings == ()


def test_per_host_xmls_name_the_gpus_and_hcas_fill_in_the_rest(pod_files):
    files = {name: text for name, text in pod_files.items() if name == "superpod.ibnetdiscover" or name <= "dgx010.xml"}
    result = completed(files)
    sources = result.summary["cards"]["sources"]
    assert sources == {"nccl-topo-xml": 80, HCA_CARD_SOURCE: (62 - 10) * 8}
    gpu = next(card for card in result.spec.cards() if card.id == "dgx005/gpu:0000:18:00.0")
    # The XML's GUID joins the nameless HCA: the GPU reaches the fabric through its PCIe-affine HCA.
    links = {(link.a, link.b) for link in result.spec.links}
    assert (gpu.id, f"ib:{hca_guid(5, 0)}") in links or (f"ib:{hca_guid(5, 0)}", gpu.id) in links
    assert result.summary["scale_up"]["hosts"] == 0  # a real dump has its NVLinks


def test_a_file_for_a_host_the_fabric_lacks_is_merged_with_a_warning(pod_files):
    stranger = pod_files["dgx001.xml"].replace("0xb8cef603", "0xaaaaaaaa")
    result = completed({"superpod.ibnetdiscover": pod_files["superpod.ibnetdiscover"], "dgx900.xml": stranger})
    assert any("dgx900" in warning and "not in the fabric" in warning for warning in map(str, result.warnings))
    assert any("falls apart into 2 parts" in warning for warning in map(str, result.warnings))


def test_the_storage_rule_can_be_changed(pod_files):
    dump = {"superpod.ibnetdiscover": pod_files["superpod.ibnetdiscover"]}
    everything = completed(dump, ParseOptions(non_compute_hca_pattern=""))
    assert len(everything.spec.cards()) == 496 + 5
    two_per_host = completed(dump, ParseOptions(compute_hcas_per_host=2))
    # 61 named DGX keep 2 each, the nameless dgx005's 8 HCAs have no host to count by.
    assert len(two_per_host.spec.cards()) == 61 * 2 + 8
    assert two_per_host.summary["cards"]["beyond_count"] == 61 * 6


def test_completion_is_idempotent_and_leaves_complete_fabrics_alone(pod_files):
    once = completed({"superpod.ibnetdiscover": pod_files["superpod.ibnetdiscover"]})
    assert complete_fabric(once.spec).spec == once.spec
    generated = supernode(cards=32, switch_radix=8)
    assert complete_fabric(generated).spec == generated and complete_fabric(generated).warnings == ()


def test_sharp_engines_make_their_switch_reduce_in_network(pod_files):
    result = completed({"superpod.ibnetdiscover": pod_files["superpod.ibnetdiscover"]})
    switches = [node for node in result.spec.switches()]
    assert switches and all(switch.attrs.get("in_switch_reduction") for switch in switches)
    engine = next(node for node in result.spec.nodes if node.kind == "aggregation")
    assert engine.attrs["switch"] in {switch.id for switch in switches}
    in_network = Simulator(result.spec).run("allreduce", 64 * 2**20, "in_switch")
    assert in_network["time_s"] > 0


def test_the_real_x5_dump_gets_a_card_per_hca():
    result = completed(sample("ib/X5.topofile"))
    assert len(result.spec.cards()) == 89 and result.summary["cards"]["sources"] == {HCA_CARD_SOURCE: 89}
    ring = Simulator(result.spec).run("allreduce", 2**24, "ring")
    # QDR/DDR: no ring busbw can beat the slowest HCA link (4xDDR carries 16 of its 20 Gb/s: 2 GB/s).
    assert 0 < ring["busbw_GBps"] <= 2.0 + 1e-9


def test_a_cloud_hint_file_gets_the_nvswitch_it_leaves_out():
    result = completed(sample("nccl_xml/azure-ndv4-topo.xml"))
    scale_up = result.summary["scale_up"]
    assert scale_up["hosts"] == 1 and list(scale_up["generations"]) == ["A100 (NVLink 3), 2,400 Gb/s per GPU (PCIe at 252 Gb/s)"]
    nvlinks = [link for link in result.spec.links if link.attrs.get("inferred") == "scale-up"]
    assert len(nvlinks) == 8 and {link.bandwidth_gbps for link in nvlinks} == {2400.0}
    allreduce = Simulator(result.spec).run("allreduce", 2**28, "ring")
    assert allreduce["busbw_GBps"] > 100  # NVLink, not PCIe (a PCIe-only ring tops out near 31 GB/s)
    corrected = completed(sample("nccl_xml/azure-ndv4-topo.xml"), ParseOptions(nvlink_gbps=1200.0))
    assert {link.bandwidth_gbps for link in corrected.spec.links if link.attrs.get("inferred")} == {1200.0}
    left_out = completed(sample("nccl_xml/azure-ndv4-topo.xml"), ParseOptions(scale_up="none"))
    assert left_out.summary["scale_up"]["hosts"] == 0 and len(left_out.spec.links) == 16


def test_a_real_dump_without_nvlink_is_a_pcie_server_and_stays_one():
    text = sample("nccl_xml/nccl_topo_dump_8xH100.xml")["nccl_topo_dump_8xH100.xml"]
    without_nvlink = "\n".join(line for line in text.splitlines() if "<nvlink" not in line)
    result = completed({"node01.xml": without_nvlink})
    assert result.summary["scale_up"]["hosts"] == 0


def test_a_lone_adapter_is_refused_and_isolated_nodes_are_named():
    lone = (
        "vendid=0x2c9\ndevid=0x1021\nsysimgguid=0x0c42a10300860100\ncaguid=0x0c42a10300860100\n"
        f'Ca\t1 "H-0c42a10300860100"\t\t# "{DEFAULT_HCA_DESCRIPTION}"\n'
    )
    with pytest.raises(IngestError, match="no link between any two"):
        completed({"lone.ibnetdiscover": lone})


def test_a_fabric_without_cards_says_so():
    result = completed(sample("slurm/topograph-tree.conf"))
    assert any(warning.startswith("no cards") for warning in map(str, result.warnings))


def block_topology(units: int, missing_from_fabric: str = "dgx900") -> str:
    """topology/block: one block of 8 DGX (an NVLink rack's worth) per quarter unit."""
    from twin.ingest.writers.superpod import host_name

    blocks = [
        f"BlockName=su{unit + 1}-b{block + 1} Nodes=" + ",".join(host_name(server) for server in range(unit * 32 + block * 8 + 1, unit * 32 + block * 8 + 9))
        for unit in range(units) for block in range(4)
    ]
    return "\n".join([*blocks, f"BlockName=spare Nodes={missing_from_fabric}", "BlockSizes=8,16"]) + "\n"


@pytest.fixture(scope="module")
def pod_with_blocks():
    files = superpod_files(units=2, missing={32, 64}, storage_hosts=1, xml_hosts=range(1, 9))
    files["topology.conf"] = block_topology(2)
    return completed(files)


def test_a_slurm_topology_becomes_the_blocks_of_the_fabric_cards(pod_with_blocks):
    result = pod_with_blocks
    assert result.spec.kind_counts()["host"] == 0  # the scheduler's view, not more cabling
    assert not any("falls apart" in warning for warning in map(str, result.warnings))
    blocks = result.summary["slurm"]["blocks"]
    assert blocks["su1-b1"] == 8 and blocks["su1-b4"] == 7 and len(blocks) == 8  # dgx032 is not in the dump
    card = next(card for card in result.spec.cards() if card.name == "dgx009/gpu3")
    assert card.attrs["slurm_block"] == "su1-b2"
    assert any("not in the fabric: dgx032, dgx064, dgx900" in warning for warning in map(str, result.warnings))


def test_placement_keeps_tp_groups_in_one_block_and_fills_blocks_in_turn(pod_with_blocks):
    from twin.operations.placement import Job, aware_placement

    placement = aware_placement(pod_with_blocks.spec, Job(tp=8, dp=16), refine_moves=0)
    block_of = {card.id: card.attrs["slurm_block"] for card in pod_with_blocks.spec.cards()}
    groups = [placement.cards[start : start + 8] for start in range(0, len(placement.cards), 8)]
    assert all(len({block_of[card] for card in group}) == 1 for group in groups)
    assert len({block_of[card] for card in placement.cards}) == 2  # 16 DGX: two blocks of 8, not 16 blocks


def test_a_failure_reports_its_blast_radius_per_block(pod_with_blocks):
    from twin.operations.failures import Workload, evaluate_failure

    result = evaluate_failure(pod_with_blocks.spec, ["leaf-01"], Workload(size_bytes=1e6))
    by_block = result["blast_radius_by_block"]
    assert set(by_block) == {"su1-b1", "su1-b2", "su1-b3", "su1-b4"}  # leaf-01: rail 0 of unit 1
    assert by_block["su1-b1"] == {"cards": 64, "cards_cut_off": 8}
    assert result["blast_radius"]["leaf-01"]["cards_attached"] == 31


def test_the_map_draws_slurm_blocks_as_groups(pod_with_blocks):
    from twin.simcore.layout import fabric_layout

    layout = fabric_layout(pod_with_blocks.spec)
    groups = layout["groups"]
    blocks = [label for label, kind in zip(groups["label"], groups["kind"]) if layout["codes"]["group_kind"][kind] == "block"]
    assert blocks == ["su1-b1"]  # only dgx001-008 sent their XML: their NVLink domains, in their block


def test_the_design_rebuilt_from_an_uploaded_superpod_performs_like_the_upload(pod_files):
    """The what-if grows the design it infers; at 1x that design must be the uploaded fabric's
    twin, or every later stage is off."""
    from twin.whatif.rules import design_rules
    from twin.whatif.stages import build_stage, plan_stages

    uploaded = completed(pod_files).spec  # every DGX with its XML: NVLink inside, rails outside
    rules = design_rules(uploaded)
    assert (rules.design, rules.cards_per_host, rules.switch_radix, rules.tiers) == ("rail", 8, 64, 2)
    rebuilt = build_stage(plan_stages(rules, (1,), ["rail"])[0])
    for algorithm in ("ring", "hierarchical"):
        ours = Simulator(uploaded).run("allreduce", 2**30, algorithm)["busbw_GBps"]
        theirs = Simulator(rebuilt).run("allreduce", 2**30, algorithm)["busbw_GBps"]
        assert abs(ours - theirs) <= 0.05 * theirs, (algorithm, ours, theirs)


def test_a_slurm_tree_groups_the_map_by_its_switches(pod_files):
    """topology/tree: each host hangs from a Slurm switch; the map groups the hosts' NVLink
    domains by it, and the cards carry it."""
    from twin.simcore.layout import fabric_layout

    tree = "".join(f"SwitchName=su{unit + 1} Nodes=dgx[{unit * 32 + 1:03d}-{unit * 32 + 32:03d}]\n" for unit in range(2))
    files = {name: text for name, text in pod_files.items() if name == "superpod.ibnetdiscover" or name <= "dgx040.xml"}
    result = completed({**files, "topology.conf": tree + "SwitchName=top Switches=su[1-2]\n"})
    assert {card.attrs.get("slurm_switch") for card in result.spec.cards()} == {"su1", "su2"}
    layout = fabric_layout(result.spec)
    groups = layout["groups"]
    assert [label for label, kind in zip(groups["label"], groups["kind"]) if layout["codes"]["group_kind"][kind] == "block"] == ["su1", "su2"]
