"""Pure ingest layer: text of a fabric description in, ``FabricSpec`` out.

Importing ``twin.ingest`` registers the built-in parsers, so
``parse_fabric`` works as soon as anything from here is imported.
"""

from twin.ingest import parsers  # noqa: F401  (importing registers the built-in parsers)
from twin.ingest.errors import IngestError, IngestProblem, ParserNotFound, ProblemCollector
from twin.ingest.options import ParseOptions
from twin.ingest.parsers.canonical import export_canonical
from twin.ingest.registry import (
    Parser,
    detect_format,
    get_parser,
    parse_fabric,
    register_parser,
    registered_parsers,
)

__all__ = [
    "IngestError",
    "IngestProblem",
    "ParseOptions",
    "ProblemCollector",
    "Parser",
    "ParserNotFound",
    "detect_format",
    "export_canonical",
    "get_parser",
    "parse_fabric",
    "register_parser",
    "registered_parsers",
]
