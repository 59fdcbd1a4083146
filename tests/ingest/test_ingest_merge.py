"""Merging parsed files of one fabric: identity joins, one link per port pair, recorded conflicts."""

import pytest

from twin.ingest import IngestError, export_canonical, parse_fabric
from twin.ingest.merge import merge_fabrics
from twin.simcore.generate import supernode
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

HCA_GUID = "0c42a10300860100"
LEAF_GUID = "0c42a1030086aa01"

# What ibnetdiscover gives: switch and HCA by GUID, the cable measured (width, speed).
IB = FabricSpec(
    "ib",
    (
        NodeSpec(f"ib:{LEAF_GUID}", "switch", "leaf01", tier="leaf", radix=64, attrs={"guid": LEAF_GUID, "lid": 2}),
        NodeSpec(f"ib:{HCA_GUID}", "nic", "node01/mlx5_0", host="node01", attrs={"guid": HCA_GUID}),
    ),
    (
        LinkSpec(f"ib:{HCA_GUID}", "1", f"ib:{LEAF_GUID}", "1", 400.0, 0.0, domain="scale-out",
                 attrs={"width": "4x", "speed": "NDR", "medium": "ib"}),
    ),
)
# What an NCCL topology dump gives: GPU by bus id, NIC by device name with its GUID unpadded.
NCCL = FabricSpec(
    "nccl",
    (
        NodeSpec("host:node01", "host", "node01"),
        NodeSpec("node01/gpu:0000:18:00.0", "card", "node01/gpu0", host="node01", attrs={"gpu_index": 0}),
        NodeSpec("node01/nic:mlx5_0", "nic", "mlx5_0", host="node01", attrs={"guid": "0xc42a10300860100"}),
    ),
    (
        LinkSpec("node01/gpu:0000:18:00.0", "pcie", "node01/nic:mlx5_0", "pcie", 256.0, 0.0,
                 attrs={"medium": "pcie"}),
    ),
)
# What nvidia-smi topo -m gives: the GPU by index only, the NIC by device name.
SMI = FabricSpec(
    "smi",
    (
        NodeSpec("node01/gpu0", "card", "node01/gpu0", host="node01", attrs={"gpu_index": 0}),
        NodeSpec("node01/gpu1", "card", "node01/gpu1", host="node01", attrs={"gpu_index": 1}),
        NodeSpec("node01/nic:mlx5_0", "nic", "mlx5_0", host="node01"),
    ),
    (LinkSpec("node01/gpu0", "pcie", "node01/nic:mlx5_0", "pcie", 128.0, 0.0),),
)


def merged_three():
    return merge_fabrics([("ib.txt", IB), ("topo.xml", NCCL), ("smi.txt", SMI)], name="node01")


def node(spec, node_id):
    return next(node for node in spec.nodes if node.id == node_id)


def conflicts(spec, field=None):
    recorded = spec.attrs.to_plain().get("merge_conflicts", [])
    return [c for c in recorded if field is None or c["field"] == field]


def test_hca_guid_joins_the_nic_of_the_nccl_dump_and_nvidia_smi():
    merged = merged_three()
    nics = merged.nodes_of_kind("nic")
    assert [nic.id for nic in nics] == [f"ib:{HCA_GUID}"]
    nic = nics[0]
    assert nic.name == "node01/mlx5_0" and nic.host == "node01"
    # "0xc42a10300860100" is the same GUID: no conflict about it.
    assert nic.attrs["guid"] == HCA_GUID and not conflicts(merged, "attrs.guid")
    assert nic.attrs["also_known_as"] == ("mlx5_0",)
    assert nic.attrs["merged_from"] == ("ib.txt", "topo.xml", "smi.txt")


def test_index_only_gpu_joins_the_bus_id_gpu_of_the_same_host():
    merged = merged_three()
    assert sorted(card.id for card in merged.cards()) == ["node01/gpu1", "node01/gpu:0000:18:00.0"]
    assert node(merged, "node01/gpu:0000:18:00.0").attrs["merged_from"] == ("topo.xml", "smi.txt")


def test_gpu_index_does_not_join_across_hosts():
    other = FabricSpec("smi2", (NodeSpec("node02/gpu0", "card", "node02/gpu0", host="node02", attrs={"gpu_index": 0}),), ())
    merged = merge_fabrics([("topo.xml", NCCL), ("smi2.txt", other)], name="m")
    assert {card.id for card in merged.cards()} == {"node01/gpu:0000:18:00.0", "node02/gpu0"}


def test_links_between_the_same_ports_are_one_and_conflicts_are_recorded():
    merged = merged_three()
    pcie = [link for link in merged.links if link.a_port == "pcie"]
    assert len(pcie) == 1 and len(merged.links) == 2
    assert pcie[0].bandwidth_gbps == 256.0  # the NCCL dump lists more facts than nvidia-smi
    (conflict,) = conflicts(merged, "bandwidth_gbps")
    assert conflict["subject"] == "link"
    assert conflict["kept"] == {"source": "topo.xml", "value": 256.0}
    assert conflict["dropped"] == [{"source": "smi.txt", "value": 128.0}]


def test_measured_link_wins_over_the_plan():
    plan = FabricSpec(
        "plan",
        (
            NodeSpec(f"ib:{LEAF_GUID}", "switch", "leaf01", tier="leaf"),
            NodeSpec(f"ib:{HCA_GUID}", "nic", "node01/mlx5_0"),
        ),
        (LinkSpec(f"ib:{LEAF_GUID}", "01", f"ib:{HCA_GUID}", "1", 800.0, 5.0, attrs={"label": "IB-R0-0001"}),),
    )
    merged = merge_fabrics([("plan.csv", plan), ("ib.txt", IB)], name="m")
    (link,) = merged.links
    assert link.bandwidth_gbps == 400.0 and link.latency_ns == 0.0
    assert link.attrs["label"] == "IB-R0-0001" and link.attrs["speed"] == "NDR"
    assert {c["field"] for c in conflicts(merged)} == {"bandwidth_gbps", "latency_ns", "domain"}


def test_different_guids_are_never_joined_by_device_name():
    stale = FabricSpec(
        "stale",
        (NodeSpec("node01/nic:mlx5_0", "nic", "mlx5_0", host="node01", attrs={"guid": "0x1234"}),),
        (),
    )
    merged = merge_fabrics([("ib.txt", IB), ("old-topo.xml", stale)], name="m")
    assert {nic.id for nic in merged.nodes_of_kind("nic")} == {f"ib:{HCA_GUID}", "node01/nic:mlx5_0"}
    (refused,) = conflicts(merged, "identity")
    assert "different GUID" in refused["reason"]


def test_two_bus_ids_with_one_index_stay_two_gpus():
    nccl = FabricSpec(
        "nccl",
        (
            NodeSpec("node01/gpu:0000:18:00.0", "card", "a", host="node01", attrs={"gpu_index": 0}),
            NodeSpec("node01/gpu:0000:2a:00.0", "card", "b", host="node01", attrs={"gpu_index": 0}),
        ),
        (),
    )
    merged = merge_fabrics([("topo.xml", nccl)], name="m")
    assert len(merged.cards()) == 2 and conflicts(merged, "identity")


def test_bus_id_spellings_are_one_gpu():
    first = FabricSpec("a", (NodeSpec("node01/gpu:0000:18:00.0", "card", "g"),), ())
    second = FabricSpec("b", (NodeSpec("node01/gpu:00000000:18:00.0", "card", "g"),), ())
    merged = merge_fabrics([("a", first), ("b", second)], name="m")
    assert [card.id for card in merged.cards()] == ["node01/gpu:0000:18:00.0"]


def test_conflicting_node_facts_keep_the_specific_source():
    plan = FabricSpec("plan", (NodeSpec(f"ib:{LEAF_GUID}", "switch", "leaf01", tier="spine"),), ())
    merged = merge_fabrics([("plan.csv", plan), ("ib.txt", IB)], name="m")
    leaf = node(merged, f"ib:{LEAF_GUID}")
    assert leaf.tier == "leaf" and leaf.radix == 64
    (conflict,) = conflicts(merged, "tier")
    assert conflict["kept"]["source"] == "ib.txt" and conflict["dropped"][0]["source"] == "plan.csv"


def test_one_port_cabled_to_two_peers_keeps_one_and_says_so():
    other = FabricSpec(
        "plan",
        (NodeSpec(f"ib:{LEAF_GUID}", "switch", "leaf01", tier="leaf"), NodeSpec("node02", "host", "node02")),
        (LinkSpec(f"ib:{LEAF_GUID}", "1", "node02", "mlx5_0", 400.0, 0.0),),
    )
    merged = merge_fabrics([("plan.csv", other), ("ib.txt", IB)], name="m")
    assert len(merged.links) == 1
    (dropped,) = conflicts(merged, "link")
    assert "port already cabled" in dropped["reason"]


def test_nested_attrs_merge_key_by_key():
    first = FabricSpec("a", (NodeSpec("s", "switch", "s", tier="leaf", attrs={"ports": {"3": {"state": "down"}}}),), ())
    second = FabricSpec("b", (NodeSpec("s", "switch", "s", tier="leaf", attrs={"ports": {"4": {"state": "down"}, "3": {"state": "up"}}}),), ())
    merged = merge_fabrics([("a", first), ("b", second)], name="m")
    assert node(merged, "s").attrs["ports"].to_plain() == {"3": {"state": "down"}, "4": {"state": "down"}}
    (conflict,) = conflicts(merged)
    assert conflict["field"] == "attrs.ports.3.state" and conflict["kept"]["value"] == "down"


def test_a_single_part_round_trips_its_structure():
    fabric = supernode(cards=64, switch_radix=16)
    merged = merge_fabrics([("demo.json", fabric)], name="demo")
    assert [n.id for n in merged.nodes] == [n.id for n in fabric.nodes]
    assert [l.ends() for l in merged.links] == [l.ends() for l in fabric.links]
    assert "merge_conflicts" not in merged.attrs
    assert merged.attrs["merged_from"] == ("demo.json",)


def test_canonical_files_merge():
    fabric = supernode(cards=16, switch_radix=8)
    half = len(fabric.links) // 2
    first = FabricSpec("first", fabric.nodes, fabric.links[:half])
    second = FabricSpec("second", fabric.nodes, fabric.links[half - 3 :])
    parts = [
        (name, parse_fabric(export_canonical(spec), source_name=name))
        for name, spec in (("first.json", first), ("second.json", second))
    ]
    merged = merge_fabrics(parts, name="whole")
    assert len(merged.links) == len(fabric.links) and len(merged.nodes) == len(fabric.nodes)


def test_result_is_valid():
    merged_three().validate()


def test_no_parts_is_an_error():
    with pytest.raises(IngestError, match="nothing to merge"):
        merge_fabrics([], name="m")


def test_a_part_that_is_not_a_pair_is_an_error():
    with pytest.raises(IngestError, match=r"part 1 is a FabricSpec") as raised:
        merge_fabrics([("ib.txt", IB), IB], name="m")
    assert raised.value.path == "parts[1]"


def test_an_inconsistent_part_names_its_source():
    broken = FabricSpec("broken", IB.nodes, (*IB.links, LinkSpec("x", "1", f"ib:{LEAF_GUID}", "2", 400.0, 0.0)))
    with pytest.raises(IngestError) as raised:
        merge_fabrics([("ib.txt", IB), ("broken.txt", broken)], name="m")
    assert raised.value.source == "broken.txt"
    assert "unknown node 'x'" in str(raised.value) and raised.value.path == "links[1].a"
