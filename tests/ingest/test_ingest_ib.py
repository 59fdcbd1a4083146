"""InfiniBand ibnetdiscover and iblinkinfo parsers: samples, each pitfall of FORMATS.md section 1,
and malformed input that must give an IngestError on the right line."""

from collections import Counter
from pathlib import Path

import pytest

from twin.ingest import IngestError, ParseOptions, detect_format, parse_fabric
from twin.ingest.parsers.infiniband import (
    DEFAULT_CABLE_LATENCY_NS,
    IblinkinfoParser,
    IbnetdiscoverParser,
    IbnetdiscoverPortsParser,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "ib"
SAMPLE = (DATA / "ibnetdiscover_2leaf_1spine_8hca.txt").read_text()
LINKINFO = (DATA / "iblinkinfo_leaf02.txt").read_text()
X5 = (DATA / "X5.topofile").read_text()
PORTS = (DATA / "ibnetdiscover_ports_leaf01_spine01.txt").read_text()

HEADER = "#\n# Topology file: generated on Mon Jun  2 10:14:07 2025\n#\n# Initiated from node 0c42a10300860100 port 0c42a10300860100\n"
LEAF, SPINE = "b8599f0300a01240", "b8599f0300fc6d40"
HCA1, HCA2 = "0c42a10300860100", "0c42a10300860200"


def switch(guid: str, description: str, lid: int, ports: list[str], nports: int = 65) -> str:
    """A switch block; ``ports`` are the port lines, without their tail of tabs."""
    return (
        f"\nvendid=0x2c9\ndevid=0xd2f2\nsysimgguid=0x{guid.lstrip('0')}\nswitchguid=0x{guid.lstrip('0')}({guid.lstrip('0')})\n"
        f'Switch\t{nports} "S-{guid}"\t\t# "{description}" enhanced port 0 lid {lid} lmc 0\n'
        + "".join(f"{line}\n" for line in ports)
    )


def ca(guid: str, description: str, ports: list[str], nports: int = 1, devid: str = "0x1021") -> str:
    return (
        f"\nvendid=0x2c9\ndevid={devid}\nsysimgguid=0x{guid.lstrip('0')}\ncaguid=0x{guid.lstrip('0')}\n"
        f'Ca\t{nports} "H-{guid}"\t\t# "{description}"\n' + "".join(f"{line}\n" for line in ports)
    )


def to_ca(port: int, guid: str, description: str, lid: int, link: str = "4xNDR", far_port: int = 1) -> str:
    return f'[{port}]\t"H-{guid}"[{far_port}]({guid.lstrip("0")}) \t\t# "{description}" lid {lid} {link}'


def to_switch(port: int, guid: str, far_port: int, description: str, lid: int, link: str = "4xNDR") -> str:
    return f'[{port}]\t"S-{guid}"[{far_port}]\t\t# "{description}" lid {lid} {link}'


def ca_port(port: int, guid: str, lid: int, switch_guid: str, far_port: int, description: str, far_lid: int, link: str = "4xNDR") -> str:
    return f'[{port}]({guid.lstrip("0")}) \t"S-{switch_guid}"[{far_port}]\t\t# lid {lid} lmc 0 "{description}" lid {far_lid} {link}'


def two_hcas(hca1: str = "node01 mlx5_0", hca2: str = "node02 mlx5_0", link2: str = "4xNDR") -> str:
    """One leaf with two HCAs: the smallest complete dump."""
    return HEADER + switch(
        LEAF, "MF0;leaf01:MQM9700/U1", 2, [to_ca(1, HCA1, hca1, 11), to_ca(2, HCA2, hca2, 12, link2)]
    ) + ca(HCA1, hca1, [ca_port(1, HCA1, 11, LEAF, 1, "MF0;leaf01:MQM9700/U1", 2)]) + ca(
        HCA2, hca2, [ca_port(1, HCA2, 12, LEAF, 2, "MF0;leaf01:MQM9700/U1", 2, link2)]
    )


def parse(text: str, options: ParseOptions = ParseOptions()):
    return parse_fabric(text, source_name="fabric.topo", format="ibnetdiscover", options=options)


def parse_error(text: str, format: str = "ibnetdiscover", options: ParseOptions = ParseOptions()) -> IngestError:
    with pytest.raises(IngestError) as raised:
        parse_fabric(text, source_name="fabric.topo", format=format, options=options)
    assert raised.value.source == "fabric.topo"
    return raised.value


def line_of(text: str, fragment: str) -> int:
    """1-based number of the only line containing ``fragment``."""
    numbers = [number for number, line in enumerate(text.split("\n"), start=1) if fragment in line]
    assert len(numbers) == 1, (fragment, numbers)
    return numbers[0]


def states(fabric) -> Counter:
    return Counter(link.state for link in fabric.links)


# ---------------------------------------------------------------------------------------------
# Samples


def test_hand_written_sample_counts():
    fabric = parse(SAMPLE)
    assert fabric.kind_counts() == {"card": 0, "nic": 8, "switch": 3, "host": 0, "aggregation": 3}
    assert Counter(node.tier for node in fabric.switches()) == {"leaf": 2, "spine": 1}
    assert len(fabric.links) == 15 and states(fabric) == {"up": 14, "degraded": 1}
    assert {link.domain for link in fabric.links} == {"scale-out"}
    assert fabric.attrs["generated_on"] == "Mon Jun  2 10:14:07 2025"
    assert fabric.attrs["initiated_from"] == HCA1


def test_hand_written_sample_identities():
    nodes = {node.id: node for node in parse(SAMPLE).nodes}
    leaf = nodes[f"ib:{LEAF}"]
    assert (leaf.name, leaf.kind, leaf.tier, leaf.radix) == ("leaf01", "switch", "leaf", 65)
    assert leaf.attrs["guid"] == LEAF and leaf.attrs["lid"] == 2 and leaf.attrs["description"] == "MF0;leaf01:MQM9700/U1"
    hca = nodes[f"ib:{HCA1}"]
    assert (hca.kind, hca.name, hca.host, hca.attrs["lid"]) == ("nic", "node01/mlx5_0", "node01", 11)
    unnamed = nodes["ib:0c42a10300860700"]  # node07 kept the adapter's default description
    assert unnamed.host is None and unnamed.name == "MT4129 ConnectX7   Mellanox Technologies"
    engine = nodes["ib:b8599f0300a01250"]
    assert (engine.kind, engine.name, engine.attrs["device_id"]) == ("aggregation", "leaf01/aggregation", "0xcf09")


def test_hand_written_sample_degraded_uplink():
    degraded = [link for link in parse(SAMPLE).links if link.state == "degraded"]
    assert len(degraded) == 1
    link = degraded[0]
    assert {link.ends()[0], link.ends()[1]} == {(f"ib:{SPINE}", "4"), ("ib:b8599f0300a01a40", "34")}
    assert link.bandwidth_gbps == 100.0 and link.attrs["width"] == "1x" and link.attrs["speed"] == "NDR"


def test_real_x5_topofile_counts():
    fabric = parse(X5)
    assert fabric.kind_counts() == {"card": 0, "nic": 89, "switch": 11, "host": 0, "aggregation": 0}
    assert len(fabric.links) == 159 and states(fabric) == {"up": 159}
    assert Counter(node.tier for node in fabric.switches()) == {"leaf": 6, "spine": 4, "core": 1}
    assert Counter(link.attrs["speed"] for link in fabric.links) == {"QDR": 136, "DDR": 23}  # grep: 272 and 46 port lines
    assert {link.bandwidth_gbps for link in fabric.links} == {32.0, 16.0}  # 4xQDR and 4xDDR carry 8 of 10 bits


def test_real_x5_keeps_hash_inside_descriptions():
    nodes = {node.id: node for node in parse(X5).nodes}
    voltaire = nodes["ib:0008f10500108c5c"]
    assert voltaire.attrs["description"] == voltaire.name == "Voltaire 4036 # 4036-8C5C"


def test_real_x5_names_each_device_once():
    """89 HCAs and 4 switches share their default descriptions: each takes its GUID, so a hot link
    or a finding names one device (the names people gave stay as they are)."""
    nodes = {node.id: node for node in parse(X5).nodes}
    assert len({node.name for node in nodes.values()}) == len(nodes)
    assert nodes["ib:003048c707b60000"].name == "MT25408 ConnectX Mellanox Technologies (003048c707b60000)"
    assert nodes["ib:0008f10500200b50"].name == "Voltaire 4036 - 36 QDR ports switch (0008f10500200b50)"
    assert nodes["ib:0008f10500108c5c"].name == "Voltaire 4036 # 4036-8C5C"


def test_iblinkinfo_sample():
    fabric = parse_fabric(LINKINFO, source_name="leaf02.txt", format="iblinkinfo")
    assert fabric.kind_counts() == {"card": 0, "nic": 4, "switch": 2, "host": 0, "aggregation": 1}
    assert len(fabric.links) == 7 and states(fabric) == {"up": 6, "degraded": 1}
    nodes = {node.id: node for node in fabric.nodes}
    leaf = nodes["ib:b8599f0300a01a40"]  # the same id as from ibnetdiscover
    assert (leaf.name, leaf.tier, leaf.attrs["lid"]) == ("leaf02", "leaf", 3)
    down = leaf.attrs["ports"]
    assert len(down) == 58 and down["5"] == {"state": "down", "physical_state": "Polling"}
    assert down["35"]["physical_state"] == "Disabled"
    assert nodes["spine01"].kind == "switch" and nodes["spine01"].tier == "spine"
    assert nodes["node05/nic:mlx5_0"].host == "node05"
    assert nodes["ib:lid-17"].kind == "nic" and nodes["ib:lid-6"].kind == "aggregation"
    degraded = next(link for link in fabric.links if link.state == "degraded")
    assert degraded.ends() == (("ib:b8599f0300a01a40", "34"), ("spine01", "4"))
    assert degraded.attrs["possible_width"] == "4x" and degraded.bandwidth_gbps == 100.0
    assert degraded.attrs["physical_state"] == "LinkUp"


def test_ports_report_sample():
    fabric = parse_fabric(PORTS, source_name="ports.txt", format="ibnetdiscover-ports")
    assert fabric.kind_counts() == {"card": 0, "nic": 4, "switch": 2, "host": 0, "aggregation": 2}
    assert len(fabric.links) == 8 and states(fabric) == {"up": 7, "degraded": 1}
    by_id = {node.id: node for node in fabric.nodes}
    reference = {node.id: node for node in parse(SAMPLE).nodes}
    for node_id in (f"ib:{LEAF}", f"ib:{SPINE}", f"ib:{HCA1}", "ib:b8599f0300a01250"):  # same ids, names, tiers
        assert (by_id[node_id].name, by_id[node_id].tier, by_id[node_id].host) == (
            reference[node_id].name,
            reference[node_id].tier,
            reference[node_id].host,
        )
    assert len(by_id[f"ib:{LEAF}"].attrs["ports"]) == 58 and by_id[f"ib:{LEAF}"].attrs["ports"]["5"] == {"state": "down"}


def test_ports_report_errors_name_the_line():
    text = PORTS.replace("0x0c42a10300860200 4x NDR", "0x0c42a10300860200 5x NDR")
    error = parse_error(text, "ibnetdiscover-ports")
    assert error.line == line_of(text, "5x NDR") and "unknown link width '5x'" in error.message
    text = PORTS.replace("2 33 0xb8599f0300a01240 4x NDR - SW     1  1", "2 33 0xb8599f0300a01240 4x NDR - SW     1  9")
    error = parse_error(text, "ibnetdiscover-ports")
    assert error.line == PORTS.count("\n") and "disagrees" in error.message


def test_formats_are_detected():
    assert detect_format(SAMPLE) == "ibnetdiscover"
    assert detect_format(X5) == "ibnetdiscover"
    assert detect_format(LINKINFO) == "iblinkinfo"
    assert detect_format(PORTS) == "ibnetdiscover-ports"
    assert not IbnetdiscoverParser().detect(LINKINFO) and not IblinkinfoParser().detect(SAMPLE)
    assert not IbnetdiscoverPortsParser().detect(SAMPLE) and not IbnetdiscoverPortsParser().detect(LINKINFO)


# ---------------------------------------------------------------------------------------------
# Pitfalls of FORMATS.md section 1, one test each


def test_every_link_printed_twice_becomes_one_link():
    fabric = parse(two_hcas())
    assert len(fabric.links) == 2
    assert {frozenset(link.ends()) for link in fabric.links} == {
        frozenset({(f"ib:{LEAF}", "1"), (f"ib:{HCA1}", "1")}),
        frozenset({(f"ib:{LEAF}", "2"), (f"ib:{HCA2}", "1")}),
    }


def test_parallel_isls_stay_distinct():
    leaf_ports = [to_switch(33, SPINE, 1, "MF0;spine01:MQM9700/U1", 1), to_switch(34, SPINE, 2, "MF0;spine01:MQM9700/U1", 1)]
    spine_ports = [to_switch(1, LEAF, 33, "MF0;leaf01:MQM9700/U1", 2), to_switch(2, LEAF, 34, "MF0;leaf01:MQM9700/U1", 2)]
    text = HEADER + switch(LEAF, "MF0;leaf01:MQM9700/U1", 2, leaf_ports) + switch(SPINE, "MF0;spine01:MQM9700/U1", 1, spine_ports)
    links = parse(text).links
    assert sorted((link.a_port, link.b_port) for link in links) == [("33", "1"), ("34", "2")]


def test_hash_semicolon_and_colon_inside_quoted_descriptions():
    tricky = 'n1 # "rack 3"; slot: 4'
    fabric = parse(two_hcas(hca1=tricky))
    hca = next(node for node in fabric.nodes if node.id == f"ib:{HCA1}")
    assert hca.attrs["description"] == hca.name == tricky and hca.host is None


def test_host_only_in_description_with_domain_and_old_hca_names():
    fabric = parse(two_hcas(hca1="Node01.cluster.example mlx5_5", hca2="gpu17 HCA-1"))
    by_id = {node.id: node for node in fabric.nodes}
    assert (by_id[f"ib:{HCA1}"].host, by_id[f"ib:{HCA1}"].name) == ("node01", "node01/mlx5_5")
    assert (by_id[f"ib:{HCA2}"].host, by_id[f"ib:{HCA2}"].name) == ("gpu17", "gpu17/HCA-1")


def test_default_description_gives_no_host():
    default = "MT4129 ConnectX7   Mellanox Technologies"
    hca = parse(two_hcas(hca2=default)).nodes[2]
    assert hca.id == f"ib:{HCA2}" and hca.host is None and hca.name == default


def test_sharp_aggregation_node_is_not_a_card_or_nic():
    engine = "b8599f0300a01250"
    text = two_hcas().replace(
        "[2]\t", f'[65]\t"H-{engine}"[1]({engine}) \t\t# "Mellanox Technologies Aggregation Node" lid 5 4xNDR\n[2]\t', 1
    ) + ca(engine, "Mellanox Technologies Aggregation Node", [ca_port(1, engine, 5, LEAF, 65, "MF0;leaf01:MQM9700/U1", 2)], devid="0xcf09")
    fabric = parse(text)
    assert fabric.kind_counts()["aggregation"] == 1 and fabric.kind_counts()["nic"] == 2
    assert fabric.switches()[0].tier == "leaf"


def test_aggregation_node_only_is_no_reason_to_be_a_leaf():
    engine = "b8599f0300fc6d50"
    spine_ports = [to_ca(65, engine, "Mellanox Technologies Aggregation Node", 4)]
    text = HEADER + switch(SPINE, "MF0;spine01:MQM9700/U1", 1, spine_ports) + ca(
        engine, "Mellanox Technologies Aggregation Node", [ca_port(1, engine, 4, SPINE, 65, "MF0;spine01:MQM9700/U1", 1)], devid="0xcf09"
    )
    fabric = parse(text)
    assert fabric.kind_counts()["aggregation"] == 1 and fabric.kind_counts()["nic"] == 0


def test_degraded_width_is_below_the_usual_width_of_an_end():
    fabric = parse(two_hcas(link2="1xNDR"))
    assert {link.a: link.state for link in fabric.links} == {f"ib:{HCA1}": "up", f"ib:{HCA2}": "degraded"}
    assert [link.bandwidth_gbps for link in fabric.links] == [400.0, 100.0]


def test_split_ports_running_2x_are_not_degraded():
    text = two_hcas(link2="2xNDR").replace("4xNDR", "2xNDR").replace("Switch\t65", "Switch\t129")
    fabric = parse(text)
    assert states(fabric) == {"up": 2} and {link.bandwidth_gbps for link in fabric.links} == {200.0}
    assert fabric.switches()[0].radix == 129


def test_slower_speed_alone_is_not_degraded():
    fabric = parse(two_hcas(link2="4xHDR"))
    assert states(fabric) == {"up": 2} and sorted(link.bandwidth_gbps for link in fabric.links) == [200.0, 400.0]


@pytest.mark.parametrize(
    ("link", "gbps"),
    [("4xSDR", 8), ("4xDDR", 16), ("4xQDR", 32), ("4xFDR10", 40), ("4xFDR", 4 * 14.0625 * 64 / 66), ("4xEDR", 100), ("4xHDR", 200),
     ("4xNDR", 400), ("4xXDR", 800), ("1xNDR", 100), ("2xHDR", 100), ("8xNDR", 800), ("12xQDR", 96)],
)  # fmt: skip
def test_bandwidth_is_width_times_lane_payload_rate(link, gbps):
    text = two_hcas().replace("4xNDR", link)
    assert {link.bandwidth_gbps for link in parse(text).links} == {gbps}


def test_unknown_width_needs_a_default_bandwidth():
    text = two_hcas().replace("4xNDR", "??NDR")
    error = parse_error(text)
    assert error.line == line_of(text, f'"H-{HCA1}"[1]') and "no known width" in error.message
    fabric = parse(text, ParseOptions(default_bandwidth_gbps=123.0))
    assert {link.bandwidth_gbps for link in fabric.links} == {123.0}
    assert {link.attrs["width"] for link in fabric.links} == {"??"}


def test_latency_default_and_option():
    assert {link.latency_ns for link in parse(SAMPLE).links} == {DEFAULT_CABLE_LATENCY_NS}
    assert {link.latency_ns for link in parse(SAMPLE, ParseOptions(default_latency_ns=55.0)).links} == {55.0}


def test_director_chassis_asics_are_distinct_switches_sharing_a_system_guid():
    line_asic, spine_asic = "0002c9020040e2c8", "0002c9020040e2d0"
    text = HEADER + switch(
        line_asic, "MF0;dir01:CS7500/L05/U1", 7, [to_switch(19, spine_asic, 1, "MF0;dir01:CS7500/S01/U1", 8)], nports=36
    ).replace(f"sysimgguid=0x{line_asic.lstrip('0')}", "sysimgguid=0x2c9020040e2c0") + switch(
        spine_asic, "MF0;dir01:CS7500/S01/U1", 8, [to_switch(1, line_asic, 19, "MF0;dir01:CS7500/L05/U1", 7)], nports=36
    ).replace(f"sysimgguid=0x{spine_asic.lstrip('0')}", "sysimgguid=0x2c9020040e2c0")
    fabric = parse(text)
    assert sorted(node.name for node in fabric.nodes) == ["dir01/L05/U1", "dir01/S01/U1"]
    assert {node.attrs["system_guid"] for node in fabric.nodes} == {"0002c9020040e2c0"}


def test_self_loop_cable_goes_into_the_switch_ports():
    loop = [to_switch(25, LEAF, 26, "MF0;leaf01:MQM9700/U1", 2), to_switch(26, LEAF, 25, "MF0;leaf01:MQM9700/U1", 2)]
    text = two_hcas().replace("lid 12 4xNDR\n", "lid 12 4xNDR\n" + "\n".join(loop) + "\n", 1)
    fabric = parse(text)
    assert len(fabric.links) == 2
    ports = fabric.switches()[0].attrs["ports"]
    assert ports == {
        "25": {"state": "up", "loopback_to": "26", "width": "4x", "speed": "NDR"},
        "26": {"state": "up", "loopback_to": "25", "width": "4x", "speed": "NDR"},
    }


def test_dual_port_ca_is_one_node_with_two_links():
    leaf_ports = [to_ca(1, HCA1, "node01 mlx5_0", 11), to_ca(2, HCA1, "node01 mlx5_0", 13, far_port=2)]
    hca_ports = [
        ca_port(1, HCA1, 11, LEAF, 1, "MF0;leaf01:MQM9700/U1", 2),
        ca_port(2, "c42a10300860101", 13, LEAF, 2, "MF0;leaf01:MQM9700/U1", 2),
    ]
    text = HEADER + switch(LEAF, "MF0;leaf01:MQM9700/U1", 2, leaf_ports) + ca(HCA1, "node01 mlx5_0", hca_ports, nports=2)
    fabric = parse(text)
    assert fabric.kind_counts()["nic"] == 1 and fabric.nodes[1].radix == 2
    assert sorted(link.b_port for link in fabric.links) == ["1", "2"]


def test_lids_are_no_identity():
    relabelled = SAMPLE.replace(" lid 1 ", " lid 101 ").replace(" lid 2 ", " lid 102 ")
    assert [node.id for node in parse(relabelled).nodes] == [node.id for node in parse(SAMPLE).nodes]


def test_tiers_are_inferred_from_the_graph():
    core = "b8599f0300ccee00"
    # The spine gets one uplink to a core switch.
    text = SAMPLE.replace(
        '[65]\t"H-b8599f0300fc6d50"', f'[40]\t"S-{core}"[1]\t\t# "MF0;core01:MQM9700/U1" lid 7 4xNDR\n[65]\t"H-b8599f0300fc6d50"'
    ) + switch(core, "MF0;core01:MQM9700/U1", 7, [to_switch(1, SPINE, 40, "MF0;spine01:MQM9700/U1", 1)])
    tiers = {node.name: node.tier for node in parse(text).switches()}
    assert tiers == {"leaf01": "leaf", "leaf02": "leaf", "spine01": "spine", "core01": "core"}


def test_crlf_and_leading_shell_prompt_are_tolerated():
    text = "[root@ufm01 ~]# ibnetdiscover\nWarning: some junk\n" + SAMPLE.replace("\n", "\r\n") + "[root@ufm01 ~]# \r\n"
    assert parse(text) == parse(SAMPLE)


def test_grouping_and_full_output_options():
    text = two_hcas().replace(
        "\nvendid=0x2c9", "\nChassis 1 (guid 0x2c9020040e2c0)\n\n# Spine Nodes\n\nvendid=0x2c9", 1
    ).replace("lid 11 4xNDR", "lid 11 4xNDR s=8 w=2 v=3").replace("[1]\t", "[1][ext 1]\t", 1)
    assert parse(text) == parse(two_hcas())


def test_router_is_a_switch_marked_router():
    router = "0002c90000000abc"
    text = two_hcas().replace(
        "[2]\t", f'[30]\t"R-{router}"[1]\t\t# "gw01" lid 30 4xNDR\n[2]\t', 1
    ) + f'\nvendid=0x2c9\ndevid=0x1\nrtguid=0x{router.lstrip("0")}\nRt\t1 "R-{router}"\t\t# "gw01"\n' + ca_port(
        1, router, 30, LEAF, 30, "MF0;leaf01:MQM9700/U1", 2
    ) + "\n"
    node = next(node for node in parse(text).nodes if node.id == f"ib:{router}")
    assert (node.kind, node.attrs["node_type"], node.name) == ("switch", "router", "gw01")


def test_max_problems_option_limits_the_report():
    text = two_hcas().replace("4xNDR", "5xNDR")
    error = parse_error(text, options=ParseOptions(max_problems=2))
    assert len(error.problems) == 2 and error.truncated
    assert len(parse_error(text).problems) == 4  # each of the four port lines


# ---------------------------------------------------------------------------------------------
# Malformed input: an IngestError on the right line


@pytest.mark.parametrize("format", ["ibnetdiscover", "ibnetdiscover-ports", "iblinkinfo"])
def test_empty_file(format):
    error = parse_error("  \n\r\n", format)
    assert error.line is None and "empty" in error.message


@pytest.mark.parametrize("format", ["ibnetdiscover", "ibnetdiscover-ports", "iblinkinfo"])
def test_binary_garbage(format):
    garbage = bytes(range(256)).decode("latin-1") * 4
    error = parse_error(garbage, format)
    assert error.message.startswith("no ") and "found" in error.message


def test_truncated_after_the_ids_lines():
    text = SAMPLE[: SAMPLE.index("sysimgguid=0xc42a10300860700")]
    error = parse_error(text)
    assert "without its node line" in error.message
    assert error.line == text.count("\n") - 1  # the vendid= line opening the cut block


def test_truncated_in_the_middle_of_the_port_lines():
    cut = SAMPLE.index('[3]\t"H-0c42a10300860300"')
    text = SAMPLE[:cut]
    error = parse_error(text)
    assert error.line == line_of(text, '[1]\t"H-0c42a10300860100"')
    assert "no block of its own" in error.message


def test_truncated_mid_line():
    cut = SAMPLE.index("4xNDR", SAMPLE.index('[4]\t"H-0c42a10300860400"'))
    text = SAMPLE[: cut + 2]
    error = parse_error(text)
    assert error.line == line_of(text, '[4]\t"H-0c42a10300860400"')


def test_port_line_before_any_node():
    text = HEADER + to_ca(1, HCA1, "node01 mlx5_0", 11) + "\n" + two_hcas().removeprefix(HEADER)
    error = parse_error(text)
    assert error.line == 5 and "outside a node block" in error.message


def test_bad_guid_in_a_port_line():
    text = SAMPLE.replace('"H-0c42a10300860200"[1]', '"H-0c42a1030086zz00"[1]')
    error = parse_error(text)
    assert error.line == line_of(text, "0c42a1030086zz00") and "bad GUID" in error.message
    assert "16 hex digits" in error.expected


def test_bad_guid_in_a_node_line():
    text = SAMPLE.replace('Ca\t1 "H-0c42a10300860800"', 'Ca\t1 "H-0c42a103008608"')
    error = parse_error(text)
    assert error.line == line_of(text, '"H-0c42a103008608"') and "bad node GUID" in error.message


def test_a_bad_node_line_is_reported_once_not_for_each_of_its_ports():
    text = SAMPLE.replace("Switch\t65", "Switch\t0", 1)
    error = parse_error(text)
    assert error.line == line_of(text, "Switch\t0") and len(error.problems) == 1


def test_bad_width():
    text = SAMPLE.replace('lid 13 4xNDR', 'lid 13 5xNDR')
    error = parse_error(text)
    assert error.line == line_of(text, "5xNDR") and "unknown link width '5x'" in error.message
    assert "4x" in error.expected


def test_bad_speed():
    text = SAMPLE.replace('lid 13 4xNDR', 'lid 13 4xGDR')
    error = parse_error(text)
    assert error.line == line_of(text, "4xGDR") and "unknown link speed 'GDR'" in error.message


def test_link_listed_from_one_end_only():
    text = SAMPLE.replace('[2]\t"S-b8599f0300a01240"[34]\t\t# "MF0;leaf01:MQM9700/U1" lid 2 4xNDR\n', "")
    error = parse_error(text)
    assert error.line == line_of(text, '[34]\t"S-b8599f0300fc6d40"[2]') and "does not list it" in error.message


def test_port_listed_twice():
    line = '[3]\t"H-0c42a10300860300"[1](c42a10300860300) \t\t# "node03 mlx5_0" lid 13 4xNDR'
    text = SAMPLE.replace(line, line + "\n" + line)
    error = parse_error(text)
    assert error.line == line_of(SAMPLE, line) + 1 and "listed twice" in error.message


def test_unrecognised_line_inside_the_file():
    text = SAMPLE.replace("devid=0x1021\nsysimgguid=0xc42a10300860500", "devid=0x1021\nhello world\nsysimgguid=0xc42a10300860500")
    error = parse_error(text)
    assert error.line == line_of(text, "hello world") and "unrecognised line" in error.message


def test_iblinkinfo_port_line_before_any_header():
    text = "           3    1[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      15    1[  ] \"node05 mlx5_0\" ( )\n" + LINKINFO
    error = parse_error(text, "iblinkinfo")
    assert error.line == 1 and "before any" in error.message


def test_iblinkinfo_bad_width_and_guid():
    text = LINKINFO.replace("( 4X        106.25 Gbps Active/  LinkUp)==>      16", "( 5X        106.25 Gbps Active/  LinkUp)==>      16")
    error = parse_error(text, "iblinkinfo")
    assert error.line == 3 and "unknown link width '5X'" in error.message
    error = parse_error(LINKINFO.replace("Switch: 0xb8599f0300a01a40", "Switch: 0xb8599f0300a01a4g"), "iblinkinfo")
    assert error.line == 1 and "bad switch GUID" in error.message


def test_iblinkinfo_ca_blocks_resolve_far_ends_by_lid():
    text = LINKINFO + (
        "CA: node05 mlx5_0:\n"
        "      0x0c42a10300860500     15    1[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>       3    1[  ] "
        '"MF0;leaf02:MQM9700/U1" ( )\n'
    )
    fabric = parse_fabric(text, source_name="all.txt", format="iblinkinfo")
    ids = {node.id for node in fabric.nodes}
    assert "ib:0c42a10300860500" in ids and "node05/nic:mlx5_0" not in ids
    assert len(fabric.links) == 7  # the CA's line is the same cable as leaf02's port 1


def test_docstring_examples():
    import doctest

    from twin.ingest.parsers import infiniband

    assert doctest.testmod(infiniband).failed == 0
