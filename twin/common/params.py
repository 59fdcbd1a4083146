"""Reading ids and JSON values out of query strings, form fields and bodies."""
import re

from twin.simcore.translation import LATER, Phrase

__all__ = ("MAX_JSON_DEPTH", "TOO_DEEP", "DatabaseIdConverter", "id_from_text", "json_value_problem")

# Far deeper than any run's parameters; shallow enough that storing and reading a value back
# never meets Python's recursion limit.
MAX_JSON_DEPTH = 32
TOO_DEEP = LATER.gettext("nested deeper than %(levels)s levels") % {"levels": str(MAX_JSON_DEPTH)}
"""Words (twin.simcore.translation), as ``json_value_problem``'s answers: rendered where they are shown."""

# At most 18 digits: every such number fits the databases' 64-bit integer keys (SQLite refuses
# larger ones with an OverflowError), and `str.isdigit` is not enough: it accepts "²", which
# `int` refuses.
DATABASE_ID_PATTERN = "[0-9]{1,18}"
_DATABASE_ID = re.compile(DATABASE_ID_PATTERN)


def id_from_text(text: str | None) -> int | None:
    """The whole number written in `text` (ASCII digits that fit a database key), or None."""
    return int(text) if text is not None and _DATABASE_ID.fullmatch(text) else None


class DatabaseIdConverter:
    """The `<id:...>` path converter: a row id that fits the database's key. Django's `int`
    converter takes any number of digits, and a 20-digit id then fails in the database (a 500)
    instead of finding no row (a 404)."""

    regex = DATABASE_ID_PATTERN

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


def json_value_problem(value) -> Phrase | None:
    """What makes a parsed JSON value unfit to store, or None: nesting deeper than
    MAX_JSON_DEPTH, or a NUL character in a string (PostgreSQL cannot store one in JSON)."""
    if isinstance(value, str):
        return _NUL if "\x00" in value else None
    pending = [(value, 1)]
    while pending:
        value, depth = pending.pop()
        if not isinstance(value, (dict, list)):
            continue
        if depth > MAX_JSON_DEPTH:
            return TOO_DEEP
        children = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        # A container's children by their types at once (parsed JSON has exact types): a column of
        # 16,384 counters costs one pass at C speed, not 16,384 turns of this loop.
        kinds = set(map(type, children))
        if str in kinds and "\x00" in "".join([child for child in children if type(child) is str]):
            return _NUL
        if dict in kinds or list in kinds:
            pending.extend([(child, depth + 1) for child in children if type(child) in (dict, list)])
    return None


_NUL = LATER.gettext("a string contains a NUL character (\\u0000), which no field accepts")
