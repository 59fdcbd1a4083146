"""The map layout: deterministic, tier-aware, grouped, and small at 16,384 cards."""

import json
import random
from collections import Counter, defaultdict

import pytest

from twin.simcore.generate import fat_tree, rail_optimised, supernode, supernode_cluster
from twin.simcore.layout import GROUP_KINDS, STATE_SEVERITY, fabric_layout
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec


@pytest.fixture(scope="module")
def big():
    fabric = fat_tree(endpoints=16384, radix=64)
    return fabric, fabric_layout(fabric)


def by_id(layout):
    nodes = layout["nodes"]
    return {
        node_id: (nodes["x"][i], nodes["y"][i]) for i, node_id in enumerate(nodes["id"])
    }


def group_kind(layout, group):
    return GROUP_KINDS[layout["groups"]["kind"][group]]


def ancestors(layout, group):
    chain = []
    while group >= 0:
        chain.append(group)
        group = layout["groups"]["parent"][group]
    return chain


def inside(layout, group, x, y):
    g = layout["groups"]
    return g["x"][group] <= x <= g["x"][group] + g["w"][group] and g["y"][group] <= y <= (
        g["y"][group] + g["h"][group]
    )


def test_same_fabric_same_layout_whatever_the_order():
    fabric = supernode(cards=256, switch_radix=32)
    first = fabric_layout(fabric)
    assert json.dumps(first) == json.dumps(fabric_layout(fabric))
    shuffled_nodes = list(fabric.nodes)
    shuffled_links = list(fabric.links)
    random.Random(7).shuffle(shuffled_nodes)
    random.Random(8).shuffle(shuffled_links)
    shuffled = fabric_layout(FabricSpec(fabric.name, tuple(shuffled_nodes), tuple(shuffled_links)))
    assert by_id(shuffled) == by_id(first)


def test_json_ready_with_columns_of_equal_length():
    layout = fabric_layout(fat_tree(endpoints=512, radix=16))
    assert json.loads(json.dumps(layout)) == layout
    assert layout["version"] == 1 and layout["snapshot"] is None
    assert layout["levels"] == ["domain", "group", "node"]
    for table in ("groups", "nodes", "links", "group_links"):
        lengths = {len(column) for column in layout[table].values()}
        assert len(lengths) == 1, table
    assert layout["codes"]["kind"][:5] == ["card", "nic", "switch", "host", "aggregation"]
    assert layout["codes"]["tier"] == [None, "leaf", "spine", "core"]
    assert layout["codes"]["state"] == ["up", "down", "degraded"]
    assert layout["codes"]["domain"] == ["scale-up", "scale-out"]


def test_rows_are_ordered_core_spine_leaf_endpoints_inside_each_pod(big):
    fabric, layout = big
    nodes, groups = layout["nodes"], layout["groups"]
    tiers = layout["codes"]["tier"]
    rows_by_pod = defaultdict(lambda: defaultdict(list))
    core_ys, other_ys = [], []
    for i, node in enumerate(fabric.nodes):
        row = tiers[nodes["tier"][i]] or "endpoint"
        pod = next(
            (g for g in ancestors(layout, nodes["group"][i]) if group_kind(layout, g) == "pod"), None
        )
        (core_ys if row == "core" else other_ys).append(nodes["y"][i])
        if pod is not None:
            rows_by_pod[pod][row].append(nodes["y"][i])
    assert max(core_ys) < min(other_ys)
    assert len(rows_by_pod) == 16
    for rows in rows_by_pod.values():
        assert max(rows["spine"]) < min(rows["leaf"])
        assert max(rows["leaf"]) < min(rows["endpoint"])
    assert Counter(group_kind(layout, g) for g in range(len(groups["id"]))) == {
        "domain": 1,
        "pod": 16,
        "leaf": 512,
        "tier": 17,  # the cores, and the spines of each pod
    }


def test_cards_sit_under_their_leaf_in_natural_order():
    fabric = supernode(cards=256, switch_radix=32)
    layout = fabric_layout(fabric)
    position = by_id(layout)
    leaf_of = {link.a: link.b for link in fabric.links if link.a.startswith("card")}
    nodes = layout["nodes"]
    group_of = dict(zip(nodes["id"], nodes["group"]))
    for card, leaf in leaf_of.items():
        assert group_of[card] == group_of[leaf]
        assert position[card][1] > position[leaf][1]
        group = group_of[card]
        assert layout["groups"]["label"][group] == leaf
        assert inside(layout, group, *position[card])
    # Columns of 8 cards fill left to right: card 9 starts the second column of leaf 1.
    assert position["card-0009"][0] > position["card-0001"][0]
    assert position["card-0009"][1] == position["card-0001"][1]
    assert position["card-0002"][0] == position["card-0001"][0]
    leaves = sorted((n for n in fabric.switches() if n.tier == "leaf"), key=lambda n: position[n.id])
    assert [leaf.id for leaf in leaves][:3] == ["leaf-01", "leaf-02", "leaf-03"]


def test_every_group_contains_its_nodes_and_children(big):
    fabric, layout = big
    nodes, groups = layout["nodes"], layout["groups"]
    for i in range(len(fabric.nodes)):
        for group in ancestors(layout, nodes["group"][i]):
            assert inside(layout, group, nodes["x"][i], nodes["y"][i]), (fabric.nodes[i].id, group)
    for group, parent in enumerate(groups["parent"]):
        assert parent < group  # parents come first
        if parent >= 0:
            assert inside(layout, parent, groups["x"][group], groups["y"][group])
    counted_nodes = Counter()
    counted_cards = Counter()
    for i, node in enumerate(fabric.nodes):
        for group in ancestors(layout, nodes["group"][i]):
            counted_nodes[group] += 1
            counted_cards[group] += node.kind == "card"
    assert groups["nodes"] == [counted_nodes[g] for g in range(len(groups["id"]))]
    assert groups["members"] == [counted_cards[g] for g in range(len(groups["id"]))]
    domain = groups["kind"].index(GROUP_KINDS.index("domain"))
    assert groups["members"][domain] == 16384 and groups["nodes"][domain] == len(fabric.nodes)
    b = layout["bounds"]
    assert all(b["x0"] <= x <= b["x1"] for x in nodes["x"])
    assert all(b["y0"] <= y <= b["y1"] for y in nodes["y"])


def test_group_links_aggregate_links_between_innermost_groups():
    fabric = supernode(cards=128, switch_radix=16)
    states = {5: "down", 130: "degraded", 131: "down", 140: "degraded"}
    links = tuple(
        LinkSpec(
            link.a, link.a_port, link.b, link.b_port, link.bandwidth_gbps * (1 + i % 2),
            link.latency_ns, state=states.get(i, "up"),
        )
        for i, link in enumerate(fabric.links)
    )
    fabric = FabricSpec(fabric.name, fabric.nodes, links)
    layout = fabric_layout(fabric)
    group_of = dict(zip(layout["nodes"]["id"], layout["nodes"]["group"]))
    expected = defaultdict(lambda: [0, 0.0, 0])
    for link in fabric.links:
        ga, gb = group_of[link.a], group_of[link.b]
        if ga < 0 or gb < 0 or ga == gb:
            continue
        entry = expected[(min(ga, gb), max(ga, gb))]
        entry[0] += 1
        entry[1] += link.bandwidth_gbps
        entry[2] = max(entry[2], STATE_SEVERITY[link.state])
    gl = layout["group_links"]
    codes = layout["codes"]["state"]
    got = {
        (a, b): [n, bw, STATE_SEVERITY[codes[s]]]
        for a, b, n, bw, s in zip(gl["a"], gl["b"], gl["links"], gl["bandwidth_gbps"], gl["worst_state"])
    }
    assert got == {key: [n, pytest.approx(bw), s] for key, (n, bw, s) in expected.items()}
    assert sum(gl["links"]) == sum(n for n, _, _ in expected.values()) > 0
    assert {s for _, _, s in expected.values()} == {0, 1, 2}


def test_links_are_node_indices_with_codes():
    fabric = supernode(cards=64, switch_radix=16)
    layout = fabric_layout(fabric)
    links = layout["links"]
    ids = layout["nodes"]["id"]
    assert len(links["a"]) == len(fabric.links)
    for i, link in enumerate(fabric.links):
        assert {ids[links["a"][i]], ids[links["b"][i]]} == {link.a, link.b}
    assert set(links["bandwidth_gbps"]) == {400}
    assert set(links["state"]) == {0} and set(links["domain"]) == {0}


def test_two_super_nodes_get_two_domain_boxes_under_the_scale_out_network():
    fabric = supernode_cluster(supernodes=2, cards_per_supernode=256)
    layout = fabric_layout(fabric)
    nodes, groups = layout["nodes"], layout["groups"]
    domains = [g for g in range(len(groups["id"])) if group_kind(layout, g) == "domain"]
    assert [groups["label"][g] for g in domains] == ["sn1", "sn2"]
    assert [groups["members"][g] for g in domains] == [256, 256]
    domain_of = {}
    for i, node_id in enumerate(nodes["id"]):
        chain = ancestors(layout, nodes["group"][i])
        domain_of[node_id] = next((g for g in chain if g in domains), None)
    for node in fabric.nodes:
        if node.id.startswith("so-"):
            assert domain_of[node.id] is None
        elif node.kind == "card":
            assert domain_of[node.id] == domains[node.attrs["supernode"] - 1]
            # Under its scale-up leaf, not its scale-out one.
            leaf_group = nodes["group"][nodes["id"].index(node.id)]
            assert groups["label"][leaf_group].startswith("sn")
        else:
            assert domain_of[node.id] == domains[int(node.id[2]) - 1]
    position = by_id(layout)
    scale_out_ys = [position[n.id][1] for n in fabric.nodes if n.id.startswith("so-")]
    assert max(scale_out_ys) < min(groups["y"][g] for g in domains)
    assert groups["x"][domains[0]] + groups["w"][domains[0]] <= groups["x"][domains[1]]
    # Scale-out links between domain groups and the scale-out tier groups are aggregated.
    assert sum(layout["group_links"]["links"]) > 0


def test_loose_endpoints_and_unknown_link_ends_are_tolerated():
    fabric = FabricSpec(
        "odd",
        (
            NodeSpec("sw", "switch", "sw", tier="leaf"),
            NodeSpec("c1", "card", "c1"),
            NodeSpec("nic1", "nic", "nic1"),
            NodeSpec("lonely", "card", "lonely"),
            NodeSpec("lonely2", "host", "lonely2"),
        ),
        (
            LinkSpec("c1", "1", "nic1", "1", 100, 1, domain="scale-out"),
            LinkSpec("nic1", "2", "sw", "1", 100, 1, domain="scale-out"),
            LinkSpec("c1", "2", "ghost", "1", 100, 1, domain="scale-out"),
        ),
    )
    layout = fabric_layout(fabric)
    nodes = layout["nodes"]
    assert len(layout["links"]["a"]) == 2
    group = dict(zip(nodes["id"], nodes["group"]))
    assert group["c1"] == group["nic1"] == group["sw"]  # the card hangs from the leaf through its NIC
    assert group["lonely"] == group["lonely2"] != group["sw"]
    assert group_kind(layout, group["lonely"]) == "unattached"


def test_many_domains_are_packed_into_blocks():
    layout = fabric_layout(rail_optimised(servers=128, servers_per_unit=32))
    kinds = Counter(group_kind(layout, g) for g in range(len(layout["groups"]["id"])))
    assert kinds["domain"] == 128 and kinds["block"] == 11  # ceil(sqrt(128)) = 12 domains a block
    roots = [g for g, p in enumerate(layout["groups"]["parent"]) if p < 0]
    assert len(roots) < 20


def test_sixteen_thousand_cards_small(big):
    """Small enough to send (its time is bench_map.py's: a test asserts no timing)."""
    fabric, layout = big
    payload = json.dumps(layout, separators=(",", ":"))
    assert len(payload) < 5_000_000
    assert len(layout["nodes"]["id"]) == len(fabric.nodes) == 16384 + 512 + 512 + 256
    assert len(layout["links"]["a"]) == 49152
    # The coarse view is small: under 600 aggregated group links instead of 49,152 links.
    assert len(layout["group_links"]["a"]) < 600


def test_sharp_engines_are_drawn_with_their_switch_not_as_unattached_endpoints():
    from twin.ingest import parse_fabric
    from twin.ingest.writers.superpod import superpod_files

    dump = superpod_files(units=1, missing={32})["superpod.ibnetdiscover"]
    layout = fabric_layout(parse_fabric(dump, source_name="pod", format="ibnetdiscover"))
    nodes = layout["nodes"]
    position = {name: (x, y, group) for name, x, y, group in zip(nodes["name"], nodes["x"], nodes["y"], nodes["group"])}
    assert "unattached" not in {layout["codes"]["group_kind"][kind] for kind in layout["groups"]["kind"]}
    engines = [i for i, kind in enumerate(nodes["kind"]) if layout["codes"]["kind"][kind] == "aggregation"]
    assert len(engines) == 12  # 8 rail leaves and 4 spines, one SHARP engine each
    for engine in engines:
        switch = nodes["name"][engine].removesuffix("/aggregation")
        x, y, group = position[switch]
        assert (nodes["x"][engine] - x, nodes["y"][engine] - y, nodes["group"][engine]) == (3.0, 3.0, group)
