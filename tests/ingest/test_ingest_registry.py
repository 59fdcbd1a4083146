"""Parser registry: detection, explicit override, unknown formats, the validity guarantee."""

import json

import pytest

from twin.ingest import (
    IngestError,
    ParseOptions,
    Parser,
    ParserNotFound,
    detect_format,
    export_canonical,
    get_parser,
    parse_fabric,
    register_parser,
    registered_parsers,
    registry,
)
from twin.simcore.errors import TwinCoreError
from twin.simcore.generate import supernode
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

SMALL = supernode(cards=8, cards_per_host=4, switch_radix=8)


@pytest.fixture
def scratch_registry(monkeypatch):
    """A copy of the registry that the test may add to; the real one is restored after."""
    monkeypatch.setattr(registry, "_PARSERS", dict(registry._PARSERS))


@pytest.fixture
def pairs_parser(scratch_registry):
    """A toy format: a "PAIRS" header, then one "card switch" cable per line."""

    @register_parser
    class PairsParser(Parser):
        name = "pairs"
        label = "Card-switch pairs"
        extensions = (".pairs",)

        def detect(self, text):
            return text.startswith("PAIRS")

        def parse(self, text, *, source_name, options=ParseOptions()):
            lines = text.splitlines()[1:]
            cables = [line.split() for line in lines if line.strip() and not line.startswith("#")]
            cards = sorted({card for card, _ in cables})
            switches = sorted({switch for _, switch in cables})
            nodes = tuple(NodeSpec(card, "card", card) for card in cards) + tuple(
                NodeSpec(switch, "switch", switch, tier="leaf") for switch in switches
            )
            links = tuple(
                LinkSpec(card, "1", switch, str(port), 400, 10)
                for port, (card, switch) in enumerate(cables, start=1)
            )
            return FabricSpec(source_name, nodes, links)

    return PairsParser


def test_builtin_canonical_parser_is_registered():
    parser = get_parser("twin-fabric")
    assert parser in registered_parsers()
    assert parser.label and ".json" in parser.extensions and ".yaml" in parser.extensions


def test_detection_by_content():
    assert detect_format(export_canonical(SMALL)) == "twin-fabric"
    assert detect_format("format: twin-fabric\nversion: 1\n") == "twin-fabric"
    assert detect_format("format: 'twin-fabric'\n") == "twin-fabric"
    assert detect_format('{"format": "twin-fabric-2"}') is None
    assert detect_format("hello") is None


def test_parse_fabric_detects_and_validates():
    assert parse_fabric(export_canonical(SMALL), source_name="small.json") == SMALL


def test_undetectable_content_names_the_known_formats():
    with pytest.raises(IngestError) as raised:
        parse_fabric('{"nodes": []}', source_name="mystery.json")
    assert raised.value.source == "mystery.json"
    assert "twin-fabric" in raised.value.expected
    assert str(raised.value).startswith("mystery.json: cannot tell the format")


def test_a_registered_parser_is_detected(pairs_parser):
    assert detect_format("PAIRS\nc1 sw1\n") == "pairs"
    fabric = parse_fabric("PAIRS\nc1 sw1\nc2 sw1\n", source_name="two.pairs")
    assert [node.id for node in fabric.cards()] == ["c1", "c2"]


def test_explicit_format_overrides_detection(pairs_parser):
    # The comment makes the canonical parser, registered first, claim the text.
    text = "PAIRS\n# format: twin-fabric\nc1 sw1\n"
    assert detect_format(text) == "twin-fabric"
    with pytest.raises(IngestError):
        parse_fabric(text, source_name="x.pairs")
    fabric = parse_fabric(text, source_name="x.pairs", format="pairs")
    assert [node.id for node in fabric.nodes] == ["c1", "sw1"]


def test_invalid_result_of_a_parser_becomes_an_ingest_error(pairs_parser):
    with pytest.raises(IngestError) as raised:
        parse_fabric("PAIRS\nc1 sw1\nc2 sw1\nc1 sw2\n", source_name="dup.pairs")
    # c1 is cabled twice on its port "1".
    assert raised.value.path == "links[2].a_port"
    assert "port '1' of node 'c1' is already used by links[0]" in raised.value.message


def test_unknown_format_raises_parser_not_found():
    with pytest.raises(ParserNotFound) as raised:
        get_parser("csv")
    error = raised.value
    assert isinstance(error, IngestError) and isinstance(error, LookupError)
    assert isinstance(error, TwinCoreError)
    assert error.name == "csv" and "twin-fabric" in error.known
    assert str(error).startswith("unknown format 'csv'; expected one of ") and "twin-fabric" in str(error)
    with pytest.raises(ParserNotFound):
        parse_fabric(export_canonical(SMALL), source_name="x", format="csv")


def test_registration_refuses_duplicates_and_non_parsers(scratch_registry):
    class Again(Parser):
        name = "twin-fabric"
        label = "again"

        def detect(self, text):
            return False

        def parse(self, text, *, source_name, options=ParseOptions()):
            raise AssertionError

    with pytest.raises(ValueError, match="already registered by CanonicalParser"):
        register_parser(Again)
    with pytest.raises(TypeError):
        register_parser(object)


def test_ingest_error_text_and_api_form():
    error = IngestError(
        "unknown node 'card-9999'",
        source="fabric.json",
        line=12,
        path="links[3].b",
        expected='the id of a node declared in "nodes"',
    )
    assert str(error) == (
        "fabric.json line 12 (links[3].b): unknown node 'card-9999'; "
        'expected the id of a node declared in "nodes"'
    )
    plain = error.as_dict()
    assert json.loads(json.dumps(plain)) == plain
    assert plain["line"] == 12 and plain["detail"] == str(error)
    assert str(IngestError("bad")) == "bad"
    assert str(IngestError("bad", line=3)) == "line 3: bad"
