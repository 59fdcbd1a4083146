"""The canonical twin-fabric format: round trips, and errors that point at the right line."""

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from twin.ingest import IngestError, export_canonical, parse_fabric
from twin.ingest.parsers.canonical import CanonicalParser
from twin.simcore.generate import supernode
from twin.simcore.model import LINK_DOMAINS, LINK_STATES, NODE_KINDS, SWITCH_TIERS

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "twin/ingest/schemas/twin-fabric.schema.json").read_text())
EXAMPLE = ROOT / "docs/formats/example-fabric.json"

# One element per line, so every test knows its line numbers.
TINY = """\
{
  "format": "twin-fabric",
  "version": 1,
  "name": "tiny",
  "nodes": [
    {"id": "c1", "kind": "card", "name": "c1"},
    {"id": "c2", "kind": "card", "name": "c2"},
    {"id": "l1", "kind": "switch", "name": "l1", "tier": "leaf", "radix": 8}
  ],
  "links": [
    {"a": "c1", "a_port": "1", "b": "l1", "b_port": "1", "bandwidth_gbps": 400, "latency_ns": 10},
    {"a": "c2", "a_port": "1", "b": "l1", "b_port": "2", "bandwidth_gbps": 400, "latency_ns": 10}
  ]
}
"""

TINY_YAML = """\
format: twin-fabric
version: 1
name: tiny
nodes:
  - {id: c1, kind: card, name: c1}
  - {id: c2, kind: card, name: c2}
  - {id: l1, kind: switch, name: l1, tier: leaf, radix: 8}
links:
  - {a: c1, a_port: "1", b: l1, b_port: "1", bandwidth_gbps: 400, latency_ns: 10}
  - a: c2
    a_port: "1"
    b: l1
    b_port: "2"
    bandwidth_gbps: 400
    latency_ns: 10
"""


def parse(text: str, source_name: str = "tiny.json"):
    return CanonicalParser().parse(text, source_name=source_name)


def parse_error(text: str, source_name: str = "tiny.json") -> IngestError:
    with pytest.raises(IngestError) as raised:
        parse(text, source_name)
    return raised.value


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_tiny_document_parses():
    fabric = parse(TINY)
    assert fabric.name == "tiny"
    assert [node.id for node in fabric.cards()] == ["c1", "c2"]
    assert fabric.switches()[0].tier == "leaf" and fabric.switches()[0].radix == 8
    assert fabric.links[1].ends() == (("c2", "1"), ("l1", "2"))
    assert fabric.links[1].bandwidth_gbps == 400.0 and fabric.links[1].state == "up"


def test_generated_demo_round_trips():
    fabric = supernode()
    text = export_canonical(fabric)
    assert parse(text, "demo.json") == fabric
    assert export_canonical(parse(text, "demo.json")) == text


def test_export_is_stable_pretty_json():
    text = export_canonical(parse(TINY))
    assert text.startswith('{\n  "format": "twin-fabric",\n  "version": 1,')
    assert text.endswith("}\n")
    assert list(json.loads(text)) == ["format", "version", "name", "nodes", "links"]
    assert json.loads(text)["links"][0] == {
        "a": "c1",
        "a_port": "1",
        "b": "l1",
        "b_port": "1",
        "bandwidth_gbps": 400.0,
        "latency_ns": 10.0,
    }


def test_example_file_parses_and_is_in_canonical_form():
    text = EXAMPLE.read_text(encoding="utf-8")
    fabric = parse_fabric(text, source_name=EXAMPLE.name)
    assert fabric.kind_counts()["card"] == 8
    assert sorted(node.tier for node in fabric.switches()) == ["leaf", "leaf", "spine"]
    assert len(fabric.links) == 16
    assert export_canonical(fabric) == text


def test_yaml_form_reads_the_same_fabric():
    assert parse(TINY_YAML, "tiny.yaml") == parse(TINY)
    dumped = yaml.safe_dump(json.loads(export_canonical(supernode(cards=64, switch_radix=16))))
    assert parse(dumped, "demo.yaml") == supernode(cards=64, switch_radix=16)


def test_null_optional_fields_mean_the_default():
    text = edit(TINY, '"name": "c1"}', '"name": "c1", "tier": null, "attrs": null}')
    assert parse(text) == parse(TINY)


def test_malformed_json_reports_jsons_line():
    error = parse_error(edit(TINY, '"version": 1,', '"version": 1,,'))
    assert (error.source, error.line, error.path) == ("tiny.json", 3, None)
    assert error.message.startswith("malformed JSON: Expecting property name")
    assert str(error).startswith("tiny.json line 3: malformed JSON")


def test_malformed_yaml_reports_yamls_line():
    error = parse_error(edit(TINY_YAML, "    b: l1\n", "    b: [l1\n"), "tiny.yaml")
    # YAML notices the unclosed list on the next line.
    assert error.line == 13 and error.message.startswith("malformed YAML")


def test_unknown_node_in_a_link_points_at_the_link():
    error = parse_error(edit(TINY, '"b": "l1", "b_port": "2"', '"b": "card-9999", "b_port": "2"'))
    assert (error.line, error.path) == (12, "links[1].b")
    assert str(error) == (
        "tiny.json line 12 (links[1].b): unknown node 'card-9999'; "
        'expected the id of a node declared in "nodes"'
    )


def test_unknown_node_in_block_yaml_points_at_the_field():
    error = parse_error(edit(TINY_YAML, "    b: l1\n", "    b: l9\n"), "tiny.yaml")
    assert (error.line, error.path) == (12, "links[1].b")


def test_port_used_twice_points_at_the_second_link():
    error = parse_error(edit(TINY, '"b_port": "2"', '"b_port": "1"'))
    assert (error.line, error.path) == (12, "links[1].b_port")
    assert "port '1' of node 'l1' is already used by links[0]" in error.message


def test_duplicate_node_id_points_at_the_second_node():
    error = parse_error(edit(TINY, '{"id": "c2"', '{"id": "c1"'))
    assert (error.line, error.path) == (7, "nodes[1].id")


def test_wrong_version_is_reported_first():
    text = edit(edit(TINY, '"version": 1', '"version": 2'), '"radix": 8', '"radix": "8"')
    error = parse_error(text)
    assert (error.line, error.path) == (3, "version")
    assert error.message == "unexpected value 2"
    assert error.expected == "1, the only version this build reads"


def test_schema_errors_carry_line_path_and_expectation():
    error = parse_error(edit(TINY, '"radix": 8', '"radix": "8"'))
    assert (error.line, error.path) == (8, "nodes[2].radix")
    assert error.expected == "the number of ports, an integer of at least 1"

    error = parse_error(edit(TINY, '"kind": "switch"', '"kind": "router"'))
    assert (error.line, error.path) == (8, "nodes[2].kind")
    assert error.message == 'unexpected value "router"'

    error = parse_error(edit(TINY, ', "latency_ns": 10},', "},"))
    assert (error.line, error.path) == (11, "links[0]")
    assert error.message == "missing field 'latency_ns'"

    error = parse_error(edit(TINY, '"b_port": "2"', '"b_port": 2'))
    assert (error.line, error.path) == (12, "links[1].b_port")


def test_non_finite_numbers_are_rejected_even_in_attrs():
    error = parse_error(edit(TINY, '"latency_ns": 10},', '"latency_ns": NaN},'))
    assert (error.line, error.path) == (11, "links[0].latency_ns")
    text = edit(TINY, '"name": "tiny",', '"name": "tiny", "attrs": {"x": [Infinity]},')
    error = parse_error(text)
    assert (error.line, error.path) == (4, "attrs.x[0]")


def test_yaml_values_that_are_not_json_are_rejected_with_their_line():
    text = edit(TINY_YAML, "name: tiny\n", "name: tiny\nattrs: {installed: 2024-06-01}\n")
    error = parse_error(text, "tiny.yaml")
    assert (error.line, error.path) == (4, "attrs.installed")


def test_yaml_anchors_and_aliases_are_refused_before_anything_is_built():
    # 402 bytes that stand for 9**9 strings: without the refusal, loading and validating it
    # takes minutes and gigabytes.
    bomb = (ROOT / "tests/data/canonical/billion-laughs.yaml").read_text()
    error = parse_error(bomb, "lol.yaml")
    assert (error.line, error.message) == (5, "YAML anchor 'a' is not allowed")
    assert str(error).startswith("lol.yaml line 5: YAML anchor 'a' is not allowed; expected every value written out in full")
    error = parse_error(edit(TINY_YAML, "name: tiny\n", "name: tiny\nattrs: {x: *undefined}\n"), "tiny.yaml")
    assert (error.line, error.message) == (4, "YAML alias 'undefined' is not allowed")


def test_unknown_fields_are_pointed_at():
    error = parse_error(edit(TINY, '"name": "c2"}', '"name": "c2", "colour": "red"}'))
    assert (error.line, error.path) == (7, "nodes[1].colour")
    assert error.message == "unknown field 'colour'"
    assert error.expected.startswith("a node object with id, kind and name")


def test_a_document_that_is_not_an_object():
    error = parse_error("[1, 2]\n")
    assert (error.line, error.path) == (1, None)
    assert str(error).startswith("tiny.json line 1: unexpected value [1, 2]; expected an object with format, version")
    assert parse_error("").message == "unexpected value null"


def test_schema_is_valid_and_lists_the_models_choices():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    node, link = SCHEMA["$defs"]["node"]["properties"], SCHEMA["$defs"]["link"]["properties"]
    assert tuple(node["kind"]["enum"]) == NODE_KINDS
    assert tuple(node["tier"]["enum"]) == (*SWITCH_TIERS, None)
    assert tuple(link["state"]["enum"]) == (*LINK_STATES, None)
    assert tuple(link["domain"]["enum"]) == (*LINK_DOMAINS, None)


def test_the_docs_point_at_the_one_schema():
    docs = (ROOT / "docs/formats/twin-fabric.md").read_text(encoding="utf-8")
    assert "../../twin/ingest/schemas/twin-fabric.schema.json" in docs
    assert not (ROOT / "docs/formats/twin-fabric.schema.json").exists()


def test_every_problem_is_reported_up_to_the_limit():
    from twin.ingest import ParseOptions

    document = json.loads(export_canonical(supernode(cards=32, switch_radix=8, name="many")))
    for link in document["links"][:5]:
        link["b"] = "ghost"
    text = json.dumps(document, indent=2)
    with pytest.raises(IngestError) as caught:
        parse_fabric(text, source_name="many.json")
    error = caught.value
    assert len(error.problems) == 5 and not error.truncated
    assert all(problem.line is not None and problem.path.endswith(".b") for problem in error.problems)
    assert "(and 4 more problems)" in str(error)
    assert len(error.as_dict()["problems"]) == 5
    with pytest.raises(IngestError) as caught:
        parse_fabric(text, source_name="many.json", options=ParseOptions(max_problems=3))
    assert len(caught.value.problems) == 3 and caught.value.truncated


def test_fast_schema_check_never_clears_what_the_full_validator_rejects():
    """The compiled validator only speeds up valid files: on every invalid document the two agree."""
    from twin.ingest.parsers.canonical import _passes_fast_schema_check, _validator

    valid = json.loads(export_canonical(supernode(cards=32, switch_radix=8, name="agree")))
    mutations = [
        lambda d: d.update(version=2),
        lambda d: d.update(format="other"),
        lambda d: d.pop("nodes"),
        lambda d: d["nodes"][0].update(kind="gpu"),
        lambda d: d["nodes"][0].update(extra=1),
        lambda d: d["nodes"][0].update(radix="64"),
        lambda d: d["links"][0].update(bandwidth_gbps="400"),
        lambda d: d["links"][0].update(state="flapping"),
        lambda d: d["links"][0].pop("a_port"),
        lambda d: d["links"][0].update(attrs={"x": {"y": object.__name__}, "z": [1, {"w": None}]}),
        lambda d: d.update(attrs=[]),
    ]
    for mutate in mutations:
        document = json.loads(json.dumps(valid))
        mutate(document)
        text = json.dumps(document)
        full_says_valid = not list(_validator().iter_errors(document))
        assert _passes_fast_schema_check(text, document) == full_says_valid, text[:200]
    assert _passes_fast_schema_check(json.dumps(valid), valid)
    assert not _passes_fast_schema_check('{"a": NaN}', {"a": float("nan")})
