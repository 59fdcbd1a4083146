"""Errors raised while reading a fabric description.

An ``IngestError`` says where the problem is (source name, line, path inside
the document) and what would have been valid, in a form meant for the person
who wrote the file: ``fabric.json line 12 (links[3].b): unknown node
'card-9999'; expected the id of a node declared in "nodes"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from twin.simcore.errors import TwinCoreError

__all__ = ["IngestError", "IngestProblem", "ParserNotFound", "ProblemCollector"]


@dataclass(frozen=True)
class IngestProblem:
    """One thing wrong in a source: what, where (line or element path) and what was expected."""

    message: str
    line: int | None = None
    path: str | None = None
    expected: str | None = None

    def describe(self, source: str | None) -> str:
        where = " ".join(
            part
            for part in (
                source,
                f"line {self.line}" if self.line is not None else None,
                f"({self.path})" if self.path else None,
            )
            if part
        )
        text = f"{where}: {self.message}" if where else self.message
        return f"{text}; expected {self.expected}" if self.expected else text

    def as_dict(self, source: str | None) -> dict[str, str | int | None]:
        return {
            "message": self.message,
            "source": source,
            "line": self.line,
            "path": self.path,
            "expected": self.expected,
            "detail": self.describe(source),
        }


class IngestError(TwinCoreError):
    """A fabric description cannot be read.

    It carries every problem found (up to the parser's limit) in ``problems``;
    the locating fields of the error itself are those of the first problem.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        path: str | None = None,
        expected: str | None = None,
        problems: Iterable[IngestProblem] = (),
        truncated: bool = False,
    ) -> None:
        super().__init__(message)
        self.source = source
        self.problems = tuple(problems) or (IngestProblem(message, line, path, expected),)
        self.truncated = truncated
        first = self.problems[0]
        self.message, self.line, self.path, self.expected = first.message, first.line, first.path, first.expected

    def __str__(self) -> str:
        text = self.problems[0].describe(self.source)
        more = len(self.problems) - 1
        if more:
            text += f" (and {more}{' or more' if self.truncated else ''} more problem{'s' if more > 1 else ''})"
        return text

    def as_dict(self) -> dict:
        """JSON-ready form for API responses; ``detail`` is the full sentence."""
        return {
            **self.problems[0].as_dict(self.source),
            "detail": str(self),
            "problems": [problem.as_dict(self.source) for problem in self.problems],
            "truncated": self.truncated,
        }


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

    def add(self, message: str, *, line: int | None = None, path: str | None = None, expected: str | None = None) -> None:
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
            f"unknown format {name!r}",
            expected=f"one of {', '.join(known)}" if known else "a registered format (none are)",
        )
        self.name = name
        self.known = tuple(known)
