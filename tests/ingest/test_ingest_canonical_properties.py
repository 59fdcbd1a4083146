"""Property tests: whatever text the canonical parser is given, it answers with a fabric or an
IngestError, never another exception."""
import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from twin.ingest import IngestError, export_canonical
from twin.ingest.parsers.canonical import CanonicalParser
from twin.simcore.generate import supernode

VALID = export_canonical(supernode(cards=16, switch_radix=8, name="prop"))
PARSER = CanonicalParser()


def parses_or_refuses(text: str) -> None:
    try:
        PARSER.parse(text, source_name="prop.json")
    except IngestError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.text())
@example("?")  # YAML: a mapping with a null key, whose path once crashed the error message
def test_random_text(text):
    parses_or_refuses(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["nodes", "links"]), st.integers(min_value=0, max_value=40), st.text(max_size=12), json_values)
def test_mutated_documents(section, index, field, value):
    document = json.loads(VALID)
    items = document[section]
    items[index % len(items)][field or "id"] = value
    parses_or_refuses(json.dumps(document, allow_nan=True))


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=len(VALID) - 1), st.integers(min_value=1, max_value=200))
def test_truncated_and_cut_documents(start, length):
    parses_or_refuses(VALID[:start] + VALID[start + length:])
