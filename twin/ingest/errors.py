"""Errors raised while reading a fabric description.

An ``IngestError`` says where the problem is (source name, line, path inside
the document) and what would have been valid, in a form meant for the person
who wrote the file: ``fabric.json line 12 (links[3].b): unknown node
'card-9999'; expected the id of a node declared in "nodes"``.
"""

from __future__ import annotations

from collections.abc import Iterable

from twin.simcore.errors import TwinCoreError

__all__ = ["IngestError", "ParserNotFound"]


class IngestError(TwinCoreError):
    """A fabric description cannot be read; every locating field is optional."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        path: str | None = None,
        expected: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.line = line
        self.path = path
        self.expected = expected

    def __str__(self) -> str:
        where = " ".join(
            part
            for part in (
                self.source,
                f"line {self.line}" if self.line is not None else None,
                f"({self.path})" if self.path else None,
            )
            if part
        )
        text = f"{where}: {self.message}" if where else self.message
        return f"{text}; expected {self.expected}" if self.expected else text

    def as_dict(self) -> dict[str, str | int | None]:
        """JSON-ready form for API responses; ``detail`` is the full sentence."""
        return {
            "message": self.message,
            "source": self.source,
            "line": self.line,
            "path": self.path,
            "expected": self.expected,
            "detail": str(self),
        }


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
