"""FabricSpec and friends: normalisation, helpers, validation, dict round-trip."""

import dataclasses
import json

import pytest

from twin.simcore.errors import FabricError, TwinCoreError, format_path
from twin.simcore.generate import supernode
from twin.simcore.model import (
    NODE_KINDS,
    Attrs,
    FabricSpec,
    LinkSpec,
    NodeSpec,
    fabric_from_dict,
    fabric_to_dict,
)


def small_fabric(**changes) -> FabricSpec:
    """Two cards under one leaf, one spine; ``changes`` replace FabricSpec fields."""
    fabric = FabricSpec(
        name="small",
        nodes=(
            NodeSpec("c1", "card", "card 1", host="h1", attrs={"index_on_host": 0}),
            NodeSpec("c2", "card", "card 2", host="h1", attrs={"index_on_host": 1}),
            NodeSpec("l1", "switch", "leaf 1", tier="leaf", radix=4),
            NodeSpec("s1", "switch", "spine 1", tier="spine", radix=4),
        ),
        links=(
            LinkSpec("c1", "1", "l1", "1", 400, 10),
            LinkSpec("c2", "1", "l1", "2", 400, 10),
            LinkSpec("l1", "3", "s1", "1", 400, 10, state="degraded", attrs={"width": "2x"}),
        ),
        attrs={"site": "lab", "tags": ["a", "b"]},
    )
    return dataclasses.replace(fabric, **changes)


def replace_node(fabric: FabricSpec, position: int, **changes) -> FabricSpec:
    nodes = list(fabric.nodes)
    nodes[position] = dataclasses.replace(nodes[position], **changes)
    return dataclasses.replace(fabric, nodes=tuple(nodes))


def replace_link(fabric: FabricSpec, position: int, **changes) -> FabricSpec:
    links = list(fabric.links)
    links[position] = dataclasses.replace(links[position], **changes)
    return dataclasses.replace(fabric, links=tuple(links))


def test_attrs_are_frozen_sorted_and_hashable():
    attrs = Attrs({"b": [1, {"x": [2]}], "a": None})
    assert list(attrs) == ["a", "b"]
    assert attrs["b"] == (1, Attrs({"x": (2,)}))
    assert attrs == {"a": None, "b": (1, {"x": (2,)})}
    assert hash(attrs) == hash(Attrs({"a": None, "b": [1, {"x": [2]}]}))
    assert attrs.to_plain() == {"a": None, "b": [1, {"x": [2]}]}
    with pytest.raises(TypeError):
        attrs["c"] = 1  # type: ignore[index]


@pytest.mark.parametrize("bad", [{"when": object()}, {1: "x"}])
def test_attrs_reject_values_that_are_not_json(bad):
    with pytest.raises(TypeError):
        Attrs(bad)


def test_construction_normalises_representation():
    link = LinkSpec("a", "1", "b", "1", 400, 10)
    assert isinstance(link.bandwidth_gbps, float) and isinstance(link.latency_ns, float)
    node = NodeSpec("x", "card", "x", attrs={"k": [1]})
    assert isinstance(node.attrs, Attrs) and node.attrs["k"] == (1,)
    fabric = FabricSpec("f", [node], [link])
    assert isinstance(fabric.nodes, tuple) and isinstance(fabric.links, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fabric.name = "g"  # type: ignore[misc]


def test_equal_fabrics_compare_and_hash_equal():
    assert small_fabric() == small_fabric()
    assert hash(small_fabric()) == hash(small_fabric())
    assert small_fabric() != replace_link(small_fabric(), 0, latency_ns=11)


def test_helpers():
    fabric = small_fabric()
    assert fabric.node_index() == {"c1": 0, "c2": 1, "l1": 2, "s1": 3}
    assert [node.id for node in fabric.cards()] == ["c1", "c2"]
    assert [node.id for node in fabric.switches()] == ["l1", "s1"]
    assert fabric.kind_counts() == {kind: 0 for kind in NODE_KINDS} | {"card": 2, "switch": 2}


def test_dict_round_trip_is_json_ready_and_leaves_out_defaults():
    fabric = small_fabric()
    plain = fabric_to_dict(fabric)
    assert list(plain) == ["name", "attrs", "nodes", "links"]
    assert plain["nodes"][0] == {
        "id": "c1",
        "kind": "card",
        "name": "card 1",
        "host": "h1",
        "attrs": {"index_on_host": 0},
    }
    assert plain["links"][0] == {
        "a": "c1",
        "a_port": "1",
        "b": "l1",
        "b_port": "1",
        "bandwidth_gbps": 400.0,
        "latency_ns": 10.0,
    }
    assert plain["links"][2]["state"] == "degraded"
    assert plain["attrs"]["tags"] == ["a", "b"]
    assert fabric_from_dict(json.loads(json.dumps(plain))) == fabric


def test_from_dict_reads_null_as_default():
    plain = fabric_to_dict(small_fabric())
    plain["nodes"][0].update(tier=None, radix=None, attrs=None)
    plain["links"][0].update(state=None, domain=None)
    fabric = fabric_from_dict(plain)
    assert fabric.nodes[0].attrs == {} and fabric.nodes[0].tier is None
    assert fabric.links[0].state == "up" and fabric.links[0].domain == "scale-up"


def test_valid_fabric_passes():
    small_fabric().validate()


# Each case: a broken fabric, the path of the first problem, words its message must contain.
INVALID = {
    "duplicate id": (
        replace_node(small_fabric(), 1, id="c1"),
        ("nodes", 1, "id"),
        "duplicate node id 'c1', already declared at nodes[0]",
    ),
    "empty id": (replace_node(small_fabric(), 1, id=""), ("nodes", 1, "id"), "empty node id"),
    "unknown kind": (
        replace_node(small_fabric(), 0, kind="gpu"),
        ("nodes", 0, "kind"),
        "unknown kind 'gpu'",
    ),
    "switch without tier": (
        replace_node(small_fabric(), 2, tier=None),
        ("nodes", 2, "tier"),
        "switch without tier",
    ),
    "unknown tier": (
        replace_node(small_fabric(), 2, tier="edge"),
        ("nodes", 2, "tier"),
        "unknown tier 'edge'",
    ),
    "tier on a card": (
        replace_node(small_fabric(), 0, tier="leaf"),
        ("nodes", 0, "tier"),
        "a card has no tier",
    ),
    "zero radix": (replace_node(small_fabric(), 2, radix=0), ("nodes", 2, "radix"), "radix 0"),
    "unknown endpoint": (
        replace_link(small_fabric(), 1, b="l9"),
        ("links", 1, "b"),
        "unknown node 'l9'",
    ),
    "port used twice": (
        replace_link(small_fabric(), 1, b_port="1"),
        ("links", 1, "b_port"),
        "port '1' of node 'l1' is already used by links[0]",
    ),
    "port plugged into itself": (
        replace_link(small_fabric(), 2, b="l1", b_port="3"),
        ("links", 2, "b_port"),
        "port '3' of node 'l1' is already used by links[2]",
    ),
    "empty port": (
        replace_link(small_fabric(), 0, a_port=""),
        ("links", 0, "a_port"),
        "empty port",
    ),
    "zero bandwidth": (
        replace_link(small_fabric(), 0, bandwidth_gbps=0),
        ("links", 0, "bandwidth_gbps"),
        "bandwidth 0.0 Gb/s",
    ),
    "infinite bandwidth": (
        replace_link(small_fabric(), 0, bandwidth_gbps=float("inf")),
        ("links", 0, "bandwidth_gbps"),
        "bandwidth inf Gb/s",
    ),
    "negative latency": (
        replace_link(small_fabric(), 0, latency_ns=-1),
        ("links", 0, "latency_ns"),
        "latency -1.0 ns",
    ),
    "unknown state": (
        replace_link(small_fabric(), 0, state="flapping"),
        ("links", 0, "state"),
        "unknown state 'flapping'",
    ),
    "unknown domain": (
        replace_link(small_fabric(), 0, domain="wan"),
        ("links", 0, "domain"),
        "unknown domain 'wan'",
    ),
}


@pytest.mark.parametrize("case", INVALID.values(), ids=INVALID.keys())
def test_validate_reports_the_problem_with_its_path(case):
    fabric, path, message = case
    with pytest.raises(FabricError) as raised:
        fabric.validate()
    problem = raised.value.problems[0]
    assert (problem.path, str(problem.message)) == (path, message)
    assert problem.expected
    assert f"{format_path(path)}: {message}" in str(raised.value)
    assert isinstance(raised.value, TwinCoreError)


def test_validate_lists_problems_in_order_up_to_the_limit():
    fabric = replace_link(replace_node(small_fabric(), 0, kind="gpu"), 0, latency_ns=-5)
    fabric = replace_link(fabric, 1, state="off")
    with pytest.raises(FabricError) as raised:
        fabric.validate()
    assert [problem.path for problem in raised.value.problems] == [
        ("nodes", 0, "kind"),
        ("links", 0, "latency_ns"),
        ("links", 1, "state"),
    ]
    with pytest.raises(FabricError) as raised:
        fabric.validate(max_problems=2)
    assert len(raised.value.problems) == 2


def test_format_path():
    assert format_path(("links", 3, "b")) == "links[3].b"
    assert format_path(("nodes", 0)) == "nodes[0]"
    assert format_path(()) == ""


def test_self_loops_and_absurd_bandwidth_are_problems():
    from twin.simcore.errors import FabricError
    from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

    nodes = (NodeSpec("c1", "card", "c1"), NodeSpec("s1", "switch", "s1", tier="leaf"))
    loop = FabricSpec("f", nodes, (LinkSpec("s1", "1", "s1", "2", 400.0, 10.0),))
    with pytest.raises(FabricError, match="to itself"):
        loop.validate()
    absurd = FabricSpec("f", nodes, (LinkSpec("c1", "1", "s1", "1", 400e9, 10.0),))
    with pytest.raises(FabricError, match="unit"):
        absurd.validate()


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=0, max_value=200),
    st.sampled_from(["a", "b", "a_port", "b_port", "bandwidth_gbps", "latency_ns", "state", "domain"]),
    st.sampled_from(["", "card-0001", "leaf-01", "ghost", "1", "2", 0.0, -1.0, float("nan"), float("inf"), 400.0, 1e9, "up", "down", "sideways", "scale-out"]),
)
def test_fast_check_agrees_with_the_detailed_one(position, field, value):
    """validate's column-wise fast path never passes a fabric the detailed pass would refuse."""
    import dataclasses

    from twin.simcore.generate import supernode

    spec = supernode(cards=32, switch_radix=8)
    links = list(spec.links)
    index = position % len(links)
    try:
        links[index] = dataclasses.replace(links[index], **{field: value})
    except (TypeError, ValueError):
        return
    mutated = type(spec)(spec.name, spec.nodes, tuple(links), spec.attrs)
    assert mutated._looks_valid() == (not list(mutated._problems()))


def test_links_down_share_the_nodes_and_stay_valid():
    fabric = supernode(cards=64, cards_per_host=8, switch_radix=16)
    fabric.validate()
    failed = fabric.with_links_down([0, 5], name="two links down")
    assert [link.state for link in failed.links[:6]] == ["down", "up", "up", "up", "up", "down"]
    assert failed.links[1:5] == fabric.links[1:5] and failed.nodes is fabric.nodes and failed.name == "two links down"
    assert failed.__dict__.get("_known_valid") and fabric.links[0].state == "up"
