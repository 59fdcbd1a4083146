"""Snapshot diff and cabling check: finding classes, matching rules, punch list."""

import csv
import dataclasses
import doctest
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twin.simcore import diff
from twin.simcore.diff import (
    DEFAULT_ERROR_THRESHOLDS,
    FINDING_CLASSES,
    PUNCH_LIST_COLUMNS,
    diff_fabrics,
    normalise_name,
    normalise_port,
    punch_list_csv,
)
from twin.simcore.errors import FabricError
from twin.simcore.generate import supernode
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec


def card(node_id, name=None, **kwargs):
    return NodeSpec(node_id, "card", name or node_id, **kwargs)


def switch(node_id, name=None, tier="leaf", **kwargs):
    return NodeSpec(node_id, "switch", name or node_id, tier=tier, **kwargs)


def link(a, a_port, b, b_port, gbps=400.0, **kwargs):
    return LinkSpec(a, a_port, b, b_port, gbps, 10.0, **kwargs)


# Four cards on leaf01 ports 1-4, two uplinks to spine01.
PLAN = FabricSpec(
    "plan",
    (
        *(card(f"c{n}") for n in range(1, 5)),
        switch("leaf01"),
        switch("spine01", tier="spine"),
    ),
    (
        *(link(f"c{n}", "1", "leaf01", str(n)) for n in range(1, 5)),
        link("leaf01", "33", "spine01", "1"),
        link("leaf01", "34", "spine01", "2"),
    ),
)


def with_links(spec, links, nodes=None, name="found"):
    return FabricSpec(name, tuple(spec.nodes if nodes is None else nodes), tuple(links))


def replace_link(spec, position, **changes):
    links = list(spec.links)
    links[position] = dataclasses.replace(links[position], **changes)
    return links


def only(report, finding_class):
    findings = [finding for finding in report.findings if finding.finding_class == finding_class]
    assert len(findings) == 1, report.findings
    return findings[0]


def classes(report):
    return {name: count for name, count in report.counts.items() if count}


def test_identical_fabrics_are_clean():
    fabric = supernode(cards=64, switch_radix=16)
    report = diff_fabrics(fabric, fabric)
    assert report.clean and report.findings == ()
    assert report.counts == {name: 0 for name in FINDING_CLASSES}
    assert report.summary["links_matched"] == len(fabric.links)
    assert report.summary["nodes_matched_by_id"] == len(fabric.nodes)


def test_link_order_and_orientation_do_not_matter():
    reversed_links = [
        dataclasses.replace(link, a=link.b, a_port=link.b_port, b=link.a, b_port=link.a_port)
        for link in reversed(PLAN.links)
    ]
    assert diff_fabrics(PLAN, with_links(PLAN, reversed_links)).clean


def test_missing_link():
    report = diff_fabrics(PLAN, with_links(PLAN, PLAN.links[1:]))
    assert classes(report) == {"MISSING": 1}
    finding = only(report, "MISSING")
    assert (finding.end.name, finding.end.port, finding.peer.label()) == ("leaf01", "1", "c1:1")
    assert finding.severity == "major"
    assert str(finding.action) == "connect leaf01:1 to c1:1"


def test_extra_link_between_known_nodes():
    found = with_links(PLAN, (*PLAN.links, link("leaf01", "35", "spine01", "3")))
    report = diff_fabrics(PLAN, found)
    assert classes(report) == {"EXTRA": 1}
    finding = only(report, "EXTRA")
    assert (finding.end.label(), finding.peer.label(), finding.severity) == ("leaf01:35", "spine01:3", "minor")


def test_cable_in_the_wrong_port_is_miswired_with_a_move_action():
    # c3 planned on leaf01:3 but plugged into the free leaf01:5.
    report = diff_fabrics(PLAN, with_links(PLAN, replace_link(PLAN, 2, b_port="5")))
    assert classes(report) == {"MISWIRED": 1}
    finding = only(report, "MISWIRED")
    assert str(finding.expected) == "leaf01:3" and str(finding.found) == "leaf01:5"
    assert str(finding.action) == "move cable from leaf01:5 to leaf01:3"
    assert "c3:1 reaches leaf01:5 instead of leaf01:3" == str(finding.message)


def test_swapped_ports_are_one_finding_not_two_miswired():
    links = replace_link(PLAN, 0, b_port="2")
    links[1] = dataclasses.replace(links[1], b_port="1")
    report = diff_fabrics(PLAN, with_links(PLAN, links))
    assert classes(report) == {"SWAPPED": 1}
    finding = only(report, "SWAPPED")
    # Described on the switch, where both ports are on one device.
    assert {finding.end.label(), finding.other_end.label()} == {"leaf01:1", "leaf01:2"}
    assert str(finding.action) == "swap the cables at leaf01:1 and leaf01:2"


def test_swapped_uplinks_between_two_switches():
    links = replace_link(PLAN, 4, b_port="2")
    links[5] = dataclasses.replace(links[5], b_port="1")
    report = diff_fabrics(PLAN, with_links(PLAN, links))
    assert classes(report) == {"SWAPPED": 1}


def test_three_way_shuffle_is_miswired_not_swapped():
    # c1 -> port 2, c2 -> port 3, c3 -> port 1: a rotation, no pair exchanged.
    links = list(PLAN.links)
    for position, port in ((0, "2"), (1, "3"), (2, "1")):
        links[position] = dataclasses.replace(links[position], b_port=port)
    report = diff_fabrics(PLAN, with_links(PLAN, links))
    assert classes(report) == {"MISWIRED": 3}


def test_degraded_bandwidth_width_and_state():
    plan = with_links(PLAN, replace_link(PLAN, 0, attrs={"width": "4x", "speed": "NDR"}), name="plan")
    links = replace_link(plan, 0, bandwidth_gbps=100.0, state="degraded", attrs={"width": "1x", "speed": "NDR"})
    links[1] = dataclasses.replace(links[1], state="down")
    # The plan gives no speed for c3's link: nothing to compare HDR with.
    links[2] = dataclasses.replace(links[2], attrs={"speed": "HDR", "width": "4x"})
    report = diff_fabrics(plan, with_links(plan, links))
    assert classes(report) == {"DEGRADED": 2}
    by_peer = {finding.peer.name: finding for finding in report.findings}
    assert by_peer["c1"].severity == "major"
    assert str(by_peer["c1"].found) == "state degraded; 100 Gb/s; width 1x"
    assert str(by_peer["c1"].expected) == "state up; 400 Gb/s; width 4x"
    assert by_peer["c2"].severity == "critical" and str(by_peer["c2"].found) == "state down"
    assert "reseat or replace" in str(by_peer["c2"].action)


def test_slower_speed_than_plan_is_degraded():
    plan = with_links(PLAN, replace_link(PLAN, 0, attrs={"speed": "NDR"}), name="plan")
    report = diff_fabrics(plan, with_links(plan, replace_link(plan, 0, attrs={"speed": "HDR"})))
    finding = only(report, "DEGRADED")
    assert (str(finding.expected), str(finding.found)) == ("speed NDR", "speed HDR")


def test_better_than_planned_is_not_degraded():
    found = with_links(PLAN, replace_link(PLAN, 0, bandwidth_gbps=800.0))
    assert diff_fabrics(PLAN, found).clean


@pytest.mark.parametrize(
    ("errors", "thresholds", "reported"),
    [
        ({"symbol_errors": 10}, None, False),
        ({"symbol_errors": 11}, None, True),
        ({"SymbolErrorCounter": 11}, None, True),  # perfquery's name
        ({"LinkDownedCounter": 1}, None, True),
        ({"symbol_errors": 11}, {"symbol_errors": 100}, False),
        ({"symbol_errors": 11}, {"SymbolErrorCounter": None}, False),
        ({"vl15_dropped": 5}, None, False),  # not checked by default
        ({"vl15_dropped": 5}, {"VL15Dropped": 0}, True),
    ],
)
def test_error_counters_over_thresholds(errors, thresholds, reported):
    found = with_links(PLAN, replace_link(PLAN, 0, attrs={"errors": errors}))
    report = diff_fabrics(PLAN, found, error_thresholds=thresholds)
    assert report.counts["DEGRADED"] == int(reported)
    if reported:
        finding = only(report, "DEGRADED")
        assert finding.severity == "minor" and "over threshold" in str(finding.message)


def test_default_thresholds_are_the_documented_ones():
    assert DEFAULT_ERROR_THRESHOLDS["symbol_errors"] == 10
    assert DEFAULT_ERROR_THRESHOLDS["link_downed"] == 0


@pytest.mark.parametrize("bad", [-1, "10", True, float("nan")])
def test_bad_threshold_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="error threshold 'symbol_errors'.*non-negative number"):
        diff_fabrics(PLAN, PLAN, error_thresholds={"symbol_errors": bad})


def test_unknown_device_is_reported_with_its_links_not_as_extra():
    nodes = (*PLAN.nodes, card("stranger"))
    found = with_links(PLAN, (*PLAN.links, link("stranger", "1", "leaf01", "7")), nodes=nodes)
    report = diff_fabrics(PLAN, found)
    assert classes(report) == {"UNKNOWN_DEVICE": 1}
    finding = only(report, "UNKNOWN_DEVICE")
    assert finding.end.node == "stranger" and "1 to leaf01:7" in str(finding.found)
    # Listed under the switch port it hangs on.
    assert finding.location()[0].label() == "leaf01:7"


def test_missing_card_is_one_finding_with_its_links():
    nodes = [node for node in PLAN.nodes if node.id != "c4"]
    found = with_links(PLAN, PLAN.links[:3] + PLAN.links[4:], nodes=nodes)
    report = diff_fabrics(PLAN, found)
    assert classes(report) == {"MISSING": 1}
    finding = only(report, "MISSING")
    assert finding.end.port is None and finding.end.node == "c4"
    assert finding.severity == "major" and "1 to leaf01:4" in str(finding.expected)


def test_missing_switch_is_critical():
    nodes = [node for node in PLAN.nodes if node.id != "spine01"]
    report = diff_fabrics(PLAN, with_links(PLAN, PLAN.links[:4], nodes=nodes))
    assert classes(report) == {"MISSING": 1}
    assert only(report, "MISSING").severity == "critical"


def test_replaced_card_with_a_new_guid_matches_by_name():
    plan = FabricSpec(
        "plan",
        (switch("leaf01"), NodeSpec("ib:0000000000000001", "nic", "node01/mlx5_0")),
        (link("ib:0000000000000001", "1", "leaf01", "1"),),
    )
    found = FabricSpec(
        "found",
        (switch("leaf01"), NodeSpec("ib:00000000000000ff", "nic", "node01/mlx5_0")),
        (link("ib:00000000000000ff", "1", "leaf01", "1"),),
    )
    report = diff_fabrics(plan, found)
    assert report.clean
    assert report.summary["nodes_matched_by_name"] == 1


def test_plan_by_name_matches_discovery_by_guid_with_port_spellings():
    plan = FabricSpec(
        "netbox",
        (NodeSpec("node01", "host", "Node01"), switch("leaf01", "Leaf_01"), switch("spine01", "spine01", tier="spine")),
        (link("node01", "eth0", "leaf01", "p1"), link("leaf01", "Ethernet1/33", "spine01", "port 01")),
    )
    found = FabricSpec(
        "discovery",
        (
            NodeSpec("host:node01", "host", "node01.cluster.local"),
            switch("ib:aaaaaaaaaaaaaaaa", "leaf-01"),
            switch("ib:bbbbbbbbbbbbbbbb", "SPINE01", tier="spine"),
        ),
        (
            link("host:node01", "eth0", "ib:aaaaaaaaaaaaaaaa", "1"),
            link("ib:aaaaaaaaaaaaaaaa", "eth1/33", "ib:bbbbbbbbbbbbbbbb", "1"),
        ),
    )
    report = diff_fabrics(plan, found)
    assert report.clean, report.findings
    assert report.summary["nodes_matched_by_name"] == 3


def test_ambiguous_names_are_reported_not_guessed():
    plan = FabricSpec("plan", (switch("leaf01"), card("gpu-a", "gpu")), (link("gpu-a", "1", "leaf01", "1"),))
    found = FabricSpec(
        "found",
        (switch("leaf01"), card("ib:01", "GPU"), card("ib:02", "gpu")),
        (link("ib:01", "1", "leaf01", "1"),),
    )
    report = diff_fabrics(plan, found)
    finding = only(report, "AMBIGUOUS")
    assert "'gpu'" in str(finding.message) and "ib:01" in str(finding.found) and "ib:02" in str(finding.found)
    # Not matched: the plan's card is missing and both found cards are unknown.
    assert report.counts["MISSING"] == 1 and report.counts["UNKNOWN_DEVICE"] == 2


def test_ports_equal_after_normalisation_in_one_fabric_are_ambiguous():
    found = with_links(PLAN, (*PLAN.links, link("c1", "01", "spine01", "9")))
    report = diff_fabrics(PLAN, found)
    finding = only(report, "AMBIGUOUS")
    assert "same port" in str(finding.found) and "found fabric" in str(finding.message)


def test_changed_node_fields():
    nodes = [
        dataclasses.replace(node, tier="core") if node.id == "spine01" else node for node in PLAN.nodes
    ]
    report = diff_fabrics(PLAN, with_links(PLAN, PLAN.links, nodes=nodes))
    finding = only(report, "CHANGED")
    assert (str(finding.expected), str(finding.found)) == ("tier spine", "tier core")


def test_unknown_plan_fields_are_not_changes():
    nodes = [dataclasses.replace(node, radix=64) if node.kind == "switch" else node for node in PLAN.nodes]
    assert diff_fabrics(PLAN, with_links(PLAN, PLAN.links, nodes=nodes)).clean


def test_inconsistent_input_names_the_side():
    broken = FabricSpec("broken", PLAN.nodes, (*PLAN.links, link("c1", "9", "nowhere", "1")))
    with pytest.raises(FabricError, match="the found fabric 'broken' is inconsistent") as raised:
        diff_fabrics(PLAN, broken)
    assert "unknown node 'nowhere'" in str(raised.value)


def test_punch_list_is_grouped_by_switch_in_natural_order():
    plan = FabricSpec(
        "plan",
        (*(card(f"c{n}") for n in range(1, 4)), switch("leaf10"), switch("leaf2")),
        (link("c1", "1", "leaf10", "1"), link("c2", "1", "leaf2", "10"), link("c3", "1", "leaf2", "9")),
    )
    found = with_links(plan, ())
    rows = list(csv.reader(io.StringIO(punch_list_csv(diff_fabrics(plan, found)))))
    assert tuple(rows[0]) == PUNCH_LIST_COLUMNS
    assert [(row[0], row[1]) for row in rows[1:]] == [("leaf2", "9"), ("leaf2", "10"), ("leaf10", "1")]
    assert rows[1] == ["leaf2", "9", "MISSING", "major", "c3:1", "400 Gb/s", "no link", "connect leaf2:9 to c3:1"]


def test_punch_list_row_for_a_swap_names_both_ports():
    links = replace_link(PLAN, 0, b_port="2")
    links[1] = dataclasses.replace(links[1], b_port="1")
    rows = list(csv.DictReader(io.StringIO(punch_list_csv(diff_fabrics(PLAN, with_links(PLAN, links))))))
    assert len(rows) == 1
    assert rows[0]["switch"] == "leaf01" and rows[0]["port"] in ("1 <-> 2", "2 <-> 1")
    assert rows[0]["class"] == "SWAPPED"


def test_report_as_plain_is_json_ready():
    found = with_links(PLAN, replace_link(PLAN, 2, b_port="5"))
    plain = json.loads(json.dumps(diff_fabrics(PLAN, found).as_plain()))
    assert plain["counts"]["MISWIRED"] == 1
    (finding,) = plain["findings"]
    assert finding["class"] == "MISWIRED"
    assert finding["end"] == {"node": "c3", "name": "c3", "port": "1"}
    assert set(finding) >= {"severity", "peer", "expected", "found", "message", "action"}


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [("Leaf01", "leaf01"), ("leaf_01", "leaf-01"), ("leaf 01", "leaf-01"), ("node01.example.com", "node01"),
     ("10.0.0.1", "10.0.0.1"), ("node01/gpu:0000:18:00.0", "node01/gpu:0000:18:00.0")],
)
def test_normalise_name(raw, normalised):
    assert normalise_name(raw) == normalised


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [("1", "1"), ("01", "1"), ("p1", "1"), ("Port 7", "7"), ("Eth1/1", "eth1/1"), ("Ethernet1/01", "eth1/1"),
     ("et1/1", "eth1/1"), ("swp1s0", "swp1s0"), ("mlx5_0", "mlx5_0"), ("0", "0")],
)
def test_normalise_port(raw, normalised):
    assert normalise_port(raw) == normalised


def test_docstring_examples():
    result = doctest.testmod(diff)
    assert result.attempted > 0 and result.failed == 0


FAULTABLE = supernode(cards=64, switch_radix=16)
CARD_LINKS = [position for position, link in enumerate(FAULTABLE.links) if link.a.startswith("card")]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(CARD_LINKS), min_size=2, max_size=12, unique=True), st.data())
def test_random_faults_are_each_explained_once(chosen, data):
    """Removed links are MISSING, swapped pairs SWAPPED; nothing else is reported."""
    pairs = len(chosen) // 2 if data.draw(st.booleans()) else 0
    links = list(FAULTABLE.links)
    swapped = chosen[: 2 * pairs]
    for first, second in zip(swapped[::2], swapped[1::2]):
        links[first], links[second] = (
            dataclasses.replace(links[first], a=links[second].a),
            dataclasses.replace(links[second], a=links[first].a),
        )
    for position in chosen[2 * pairs :]:
        links[position] = None
    found = with_links(FAULTABLE, [link for link in links if link])
    report = diff_fabrics(FAULTABLE, found)
    assert classes(report) == {
        name: count
        for name, count in (("SWAPPED", pairs), ("MISSING", len(chosen) - 2 * pairs))
        if count
    }
