"""Whatever the text, the InfiniBand parsers answer with a fabric or an IngestError, nothing else;
and a file of a million lines is read without holding a million lines in memory."""

import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twin.ingest import IngestError, ParseOptions, parse_fabric

DATA = Path(__file__).resolve().parents[1] / "data" / "ib"
SAMPLES = {
    "ibnetdiscover": (DATA / "ibnetdiscover_2leaf_1spine_8hca.txt").read_text(),
    "ibnetdiscover-ports": (DATA / "ibnetdiscover_ports_leaf01_spine01.txt").read_text(),
    "iblinkinfo": (DATA / "iblinkinfo_leaf02.txt").read_text(),
}
FORMATS = (*SAMPLES, None)  # None: detected from the content
PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def parses_or_fails_cleanly(text: str, format: str | None) -> None:
    try:
        parse_fabric(text, source_name="fuzz.txt", format=format, options=ParseOptions(max_problems=5))
    except IngestError as error:
        assert error.source == "fuzz.txt" and str(error)


@PROPERTY_SETTINGS
@given(text=st.text(), format=st.sampled_from(FORMATS))
def test_random_text(text, format):
    parses_or_fails_cleanly(text, format)


@PROPERTY_SETTINGS
@given(
    text=st.text(alphabet=st.sampled_from(list('[]()"#=x0123456789abcdefSHR-\t \nlidSwitchCa:NDR4')), max_size=400),
    format=st.sampled_from(FORMATS),
)
def test_random_text_made_of_the_formats_characters(text, format):
    parses_or_fails_cleanly(text, format)


def mutations(lines: list[str]):
    """Strategy: the lines after 1-6 deletions, duplications, swaps or character flips."""
    index = st.integers(0, len(lines) - 1)
    edit = st.one_of(
        st.tuples(st.just("delete"), index, st.just(0)),
        st.tuples(st.just("duplicate"), index, st.just(0)),
        st.tuples(st.just("swap"), index, index),
        st.tuples(st.just("flip"), index, st.integers(0, 1 << 16)),
    )
    return st.lists(edit, min_size=1, max_size=6)


def mutate(lines: list[str], edits, flips) -> str:
    lines = list(lines)
    for (operation, first, second), replacement in zip(edits, flips):
        first %= len(lines) or 1
        if not lines:
            break
        if operation == "delete":
            del lines[first]
        elif operation == "duplicate":
            lines.insert(first, lines[first])
        elif operation == "swap":
            second %= len(lines)
            lines[first], lines[second] = lines[second], lines[first]
        elif lines[first]:
            position = second % len(lines[first])
            lines[first] = lines[first][:position] + replacement + lines[first][position + 1 :]
    return "\n".join(lines)


@pytest.mark.parametrize("format", list(SAMPLES))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_mutated_valid_dumps(format, data):
    lines = SAMPLES[format].split("\n")
    edits = data.draw(mutations(lines))
    flips = data.draw(st.lists(st.characters(), min_size=len(edits), max_size=len(edits)))
    parses_or_fails_cleanly(mutate(lines, edits, flips), format)


def padded_million_lines() -> str:
    """The sample with comment lines between its blocks, up to 10^6 lines (~30 MB)."""
    sample = SAMPLES["ibnetdiscover"]
    blocks = sample.split("\n\n")
    padding = 1_000_000 - sample.count("\n")
    per_gap = padding // (len(blocks) - 1) - 1
    gap = "\n" + "# padding between the blocks\n" * per_gap + "\n"
    text = gap.join(blocks)
    return text + "# padding at the end\n" * (1_000_000 - text.count("\n"))


def test_a_million_lines_parse_in_bounded_memory():
    text = padded_million_lines()
    assert text.count("\n") == 1_000_000
    tracemalloc.start()
    try:
        fabric = parse_fabric(text, source_name="big.topo")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(fabric.links) == 15
    # The text itself was allocated before tracing; reading it must not copy it line by line
    # (a list of a million lines is ~60 MB here).
    assert peak < 10 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_a_million_bad_lines_stop_at_the_problem_limit():
    text = SAMPLES["ibnetdiscover"] + "garbage line\n" * 1_000_000
    with pytest.raises(IngestError) as raised:
        parse_fabric(text, source_name="big.topo", options=ParseOptions(max_problems=50))
    assert len(raised.value.problems) == 50 and raised.value.truncated
    assert raised.value.line == SAMPLES["ibnetdiscover"].count("\n") + 1
