"""Registry of fabric parsers, and the one entry point that uses it.

A parser is a ``Parser`` subclass decorated with ``@register_parser``; it is
registered when its module is imported (the built-ins by ``twin.ingest``).
``parse_fabric`` picks the parser (explicit format, else content sniffing in
registration order), runs it and guarantees the result is a valid fabric.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, TypeVar

from twin.ingest.errors import IngestError, IngestProblem, ParserNotFound
from twin.ingest.options import ParseOptions
from twin.simcore.errors import FabricError, format_path
from twin.simcore.model import FabricSpec
from twin.simcore.translation import LATER, Joined

__all__ = [
    "Parser",
    "detect_format",
    "get_parser",
    "parse_fabric",
    "register_parser",
    "registered_parsers",
]


class Parser(ABC):
    """A fabric description format: its name, how to recognise it, how to read it.

    Parsers are stateless; the registry holds one instance of each.
    """

    name: ClassVar[str]
    """Stable format id, used by the API and stored with uploads."""
    label: ClassVar[str]
    """Name for people, as shown in a format picker."""
    extensions: ClassVar[tuple[str, ...]] = ()
    """Usual file suffixes, lower case with the dot (hints for file pickers)."""

    @abstractmethod
    def detect(self, text: str) -> bool:
        """Whether ``text`` looks like this format; cheap, by content alone."""

    @abstractmethod
    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        """Read ``text``; raise ``IngestError`` naming ``source_name`` (with up to
        ``options.max_problems`` problems) on bad input."""


ParserClass = TypeVar("ParserClass", bound=type[Parser])

_PARSERS: dict[str, Parser] = {}


def register_parser(parser_class: ParserClass) -> ParserClass:
    """Class decorator: register one instance of ``parser_class`` under its ``name``."""
    if not (isinstance(parser_class, type) and issubclass(parser_class, Parser)):
        raise TypeError(f"{parser_class!r} is not a Parser subclass")
    name = parser_class.name
    if name in _PARSERS:
        raise ValueError(
            f"format {name!r} is already registered by {type(_PARSERS[name]).__qualname__}"
        )
    _PARSERS[name] = parser_class()
    return parser_class


def registered_parsers() -> tuple[Parser, ...]:
    """Every registered parser, in registration (and detection) order."""
    return tuple(_PARSERS.values())


def get_parser(name: str) -> Parser:
    """The parser registered under ``name``; ``ParserNotFound`` lists the known ones."""
    try:
        return _PARSERS[name]
    except KeyError:
        raise ParserNotFound(name, _PARSERS) from None


def detect_format(text: str) -> str | None:
    """Name of the first registered parser that recognises ``text``, else ``None``."""
    return next((parser.name for parser in _PARSERS.values() if parser.detect(text)), None)


def parse_fabric(
    text: str, *, source_name: str, format: str | None = None, options: ParseOptions = ParseOptions()
) -> FabricSpec:
    """Read a fabric description into a validated ``FabricSpec``.

    ``format`` names the parser and skips detection; without it the format is
    detected from the content. Raises ``ParserNotFound`` for an unknown format
    and ``IngestError`` for anything wrong with ``text``.
    """
    if format is None:
        format = detect_format(text)
        if format is None:
            raise IngestError(
                LATER.gettext("cannot tell the format of this file"),
                source=source_name,
                expected=LATER.gettext("a file in one of the known formats (%(formats)s), or the format chosen explicitly") % {"formats": Joined(list(_PARSERS), ", ")},
            )
    spec = get_parser(format).parse(text, source_name=source_name, options=options)
    try:
        spec.validate(max_problems=options.max_problems)
    except FabricError as error:
        # Parsers report problems with line numbers themselves; this is the safety net.
        problems = [IngestProblem(p.message, None, format_path(p.path), p.expected) for p in error.problems]
        raise IngestError(problems[0].message, source=source_name, problems=problems) from error
    return spec
