"""What the parsers' property tests share: mutating a valid sample, and the one acceptable
outcome of parsing anything (a valid fabric, or an IngestError)."""
from hypothesis import strategies as st

from twin.ingest import IngestError, ParseOptions

__all__ = ("assert_parses_or_ingest_error", "mutated")


@st.composite
def mutated(draw, text: str) -> str:
    """``text`` with a few lines deleted, duplicated, swapped or with a character replaced."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "swap", "replace"]))
        if action == "delete" and len(lines) > 1:
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, lines[index])
        elif action == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[index], lines[other] = lines[other], lines[index]
        elif lines[index]:
            position = draw(st.integers(0, len(lines[index]) - 1))
            lines[index] = lines[index][:position] + draw(st.characters()) + lines[index][position + 1 :]
    return "\n".join(lines)


def assert_parses_or_ingest_error(parser, text: str, source_name: str) -> None:
    """The parser returns a fabric that validates, or raises IngestError: nothing else."""
    try:
        spec = parser.parse(text, source_name=source_name, options=ParseOptions(max_problems=5))
    except IngestError:
        return
    spec.validate()
