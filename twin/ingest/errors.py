"""Errors raised while reading a fabric description.

An ``IngestError`` says where the problem is (source name, line, path inside
the document) and what would have been valid, in a form meant for the person
who wrote the file: ``fabric.json line 12 (links[3].b): unknown node
'card-9999'; expected the id of a node declared in "nodes"``.

Parsers give ``message`` and ``expected`` as ``Phrase``s (``LATER.gettext``): the parse runs
without Django, in a child process, and its errors are shown in the reader's language. The
``message`` and ``expected`` attributes of an ``IngestError`` and the ``detail`` of ``as_dict``
are English; ``as_dict`` keeps the words too (``words``, JSON-ready), and ``in_language`` renders
a stored error for its reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from twin.simcore.errors import TwinCoreError
from twin.simcore.translation import ENGLISH, LATER, Joined, Phrase, Translations, plain_words, rendered, words_from_plain

__all__ = ["IngestError", "IngestProblem", "ParserNotFound", "ProblemCollector", "Words", "in_language"]

Words = str | Phrase
"""What a reader says: a Phrase (translated where it is shown), or English text (the trace readers)."""

WHERE_SEPARATOR = " "
"""Between the file's name, its line and the element path, in every language (no catalogue entry:
gettext gives it back as it is)."""


@dataclass(frozen=True)
class IngestProblem:
    """One thing wrong in a source: what, where (line or element path) and what was expected."""

    message: Words
    line: int | None = None
    path: str | None = None
    expected: Words | None = None

    def words(self, source: str | None) -> Words:
        """The whole sentence: where, what, and what was expected."""
        where = [
            part
            for part in (
                source,
                LATER.pgettext("place in a file", "line %(number)s") % {"number": str(self.line)} if self.line is not None else None,
                f"({self.path})" if self.path else None,
            )
            if part
        ]
        text = LATER.gettext("%(where)s: %(problem)s") % {"where": Joined(where, WHERE_SEPARATOR), "problem": self.message} if where else self.message
        return LATER.gettext("%(problem)s; expected %(expected)s") % {"problem": text, "expected": self.expected} if self.expected else text

    def describe(self, source: str | None, translations: Translations = ENGLISH) -> str:
        return str(rendered(self.words(source), translations))

    def as_dict(self, source: str | None) -> dict[str, Any]:
        return {
            "message": str(self.message),
            "source": source,
            "line": self.line,
            "path": self.path,
            "expected": None if self.expected is None else str(self.expected),
            "detail": self.describe(source),
            "words": {"message": plain_words(self.message), "expected": plain_words(self.expected), "detail": plain_words(self.words(source))},
        }


class IngestError(TwinCoreError):
    """A fabric description cannot be read.

    It carries every problem found (up to the parser's limit) in ``problems``;
    the locating fields of the error itself are those of the first problem.
    """

    def __init__(
        self,
        message: Words,
        *,
        source: str | None = None,
        line: int | None = None,
        path: str | None = None,
        expected: Words | None = None,
        problems: Iterable[IngestProblem] = (),
        truncated: bool = False,
    ) -> None:
        super().__init__(str(message))
        self.source = source
        self.problems = tuple(problems) or (IngestProblem(message, line, path, expected),)
        self.truncated = truncated
        first = self.problems[0]
        self.line, self.path = first.line, first.path
        self.message = str(first.message)
        self.expected = None if first.expected is None else str(first.expected)

    @property
    def words(self) -> Words:
        """The first problem's sentence, and how many more there are."""
        text = self.problems[0].words(self.source)
        more = len(self.problems) - 1
        if not more:
            return text
        if self.truncated:
            return LATER.ngettext("%(problem)s (and %(count)s or more other problem)", "%(problem)s (and %(count)s or more other problems)", more) % {"problem": text, "count": more}
        return LATER.ngettext("%(problem)s (and %(count)s more problem)", "%(problem)s (and %(count)s more problems)", more) % {"problem": text, "count": more}

    def __str__(self) -> str:
        return str(rendered(self.words))

    def as_dict(self) -> dict:
        """JSON-ready form for API responses; ``detail`` is the full sentence in English,
        ``words`` the same to render in another language (``in_language``)."""
        first = self.problems[0].as_dict(self.source)
        return {
            **first,
            "detail": str(self),
            "words": {**first["words"], "detail": plain_words(self.words)},
            "problems": [problem.as_dict(self.source) for problem in self.problems],
            "truncated": self.truncated,
        }


def in_language(error: Mapping[str, Any], translations: Translations) -> dict[str, Any]:
    """An ``IngestError.as_dict()`` (or one of its problems) with message, expected and detail in
    the language of ``translations``, without the stored words."""
    shown = {key: value for key, value in error.items() if key != "words"}
    for key, words in error.get("words", {}).items():
        if words is not None:
            shown[key] = str(rendered(words_from_plain(words), translations))
    if "problems" in error:
        shown["problems"] = [in_language(problem, translations) for problem in error["problems"]]
    return shown


class ProblemCollector:
    """Gathers the problems of one source so that a parser reports many at once.

    ``add`` records a problem and raises at once when ``limit`` is reached;
    ``raise_if_any`` raises one ``IngestError`` with everything gathered.
    """

    def __init__(self, source: str | None, *, limit: int = 50) -> None:
        self.source = source
        self.limit = limit
        self.problems: list[IngestProblem] = []

    def __len__(self) -> int:
        return len(self.problems)

    def add(self, message: Words, *, line: int | None = None, path: str | None = None, expected: Words | None = None) -> None:
        self.problems.append(IngestProblem(message, line, path, expected))
        if len(self.problems) >= self.limit:
            raise self.error(truncated=True)

    def error(self, *, truncated: bool = False) -> IngestError:
        first = self.problems[0]
        return IngestError(first.message, source=self.source, problems=self.problems, truncated=truncated)

    def raise_if_any(self) -> None:
        if self.problems:
            raise self.error()


class ParserNotFound(IngestError, LookupError):
    """No parser is registered under the requested format name."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        known = sorted(known)
        super().__init__(
            LATER.gettext("unknown format %(name)s") % {"name": repr(name)},
            expected=LATER.gettext("one of %(names)s") % {"names": Joined(known, ", ")} if known else LATER.gettext("a registered format (none are)"),
        )
        self.name = name
        self.known = tuple(known)
