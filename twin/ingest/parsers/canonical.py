"""The canonical "twin-fabric" format, version 1: JSON, or YAML with the same structure.

The document mirrors ``twin.simcore.model`` (see docs/formats/twin-fabric.md).
Reading goes in three steps, each error pointing at a line of the source:

1. JSON (a document starting with ``{`` or ``[``) or YAML syntax (no anchors or aliases);
2. the JSON Schema in ``twin/ingest/schemas/twin-fabric.schema.json``;
3. ``FabricSpec.validate`` for what a schema cannot say (unknown node ids,
   duplicate ids, a port used twice).

Lines of steps 2 and 3 come from ``yaml.compose`` on the same text (JSON is
YAML), walking the node tree along the error's path; it runs only on error.
"""

from __future__ import annotations

import functools
import json
import math
import re
from importlib import resources
from typing import Any

import fastjsonschema
import jsonschema
import yaml

from twin.simcore.translation import LATER, gettext_noop
from twin.ingest.errors import IngestError, ProblemCollector, Words
from twin.ingest.options import ParseOptions
from twin.ingest.registry import Parser, register_parser
from twin.simcore.errors import FabricError, PathPart, format_path
from twin.simcore.model import FabricSpec, fabric_from_dict, fabric_to_dict

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "CanonicalParser", "export_canonical"]

FORMAT_NAME = "twin-fabric"
FORMAT_VERSION = 1

# `"format": "twin-fabric"` in JSON, `format: twin-fabric` in YAML, quoted or not.
_FORMAT_MARKER = re.compile(r"""["']?format["']?\s*:\s*["']?twin-fabric(?![\w-])""")
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@register_parser
class CanonicalParser(Parser):
    """Reads the twin's own format, as written by ``export_canonical``."""

    name = FORMAT_NAME
    label = gettext_noop("Twin fabric (canonical JSON or YAML)")
    extensions = (".json", ".yaml", ".yml")

    def detect(self, text: str) -> bool:
        return _FORMAT_MARKER.search(text) is not None

    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        document = _load(text, source_name)
        problems = ProblemCollector(source_name, limit=options.max_problems)
        lines = _LineFinder(text)
        # jsonschema explains errors well but takes seconds on a 16k-card file: a compiled
        # validator clears valid JSON documents, and only the others get the full explanation.
        if _passes_fast_schema_check(text, document):
            schema_errors = []
        else:
            # Most relevant first (shallow paths: a wrong version says more than any node error).
            schema_errors = sorted(_validator().iter_errors(document), key=jsonschema.exceptions.relevance, reverse=True)
        for schema_error in schema_errors[: options.max_problems]:
            path, message = _describe(schema_error)
            problems.add(
                message,
                line=lines.line_of(path),
                path=format_path(path) or None,
                expected=schema_error.schema.get("description"),
            )
        problems.raise_if_any()
        spec = fabric_from_dict(document)
        try:
            spec.validate(max_problems=options.max_problems)
        except FabricError as error:
            for problem in error.problems:
                problems.add(
                    problem.message,
                    line=lines.line_of(problem.path),
                    path=format_path(problem.path),
                    expected=problem.expected,
                )
            problems.raise_if_any()
        return spec


def export_canonical(spec: FabricSpec) -> str:
    """The fabric as a canonical JSON document: indented, keys in a stable order.

    ``CanonicalParser().parse(export_canonical(spec), ...) == spec`` for any
    valid ``spec``.
    """
    document = {"format": FORMAT_NAME, "version": FORMAT_VERSION, **fabric_to_dict(spec)}
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _load(text: str, source_name: str) -> Any:
    """Parse JSON or YAML syntax into plain Python data."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise IngestError(
                LATER.gettext("malformed JSON: %(error)s (column %(column)s)") % {"error": error.msg, "column": error.colno},
                source=source_name,
                line=error.lineno,
                expected=LATER.gettext("valid JSON"),
            ) from error
        except RecursionError as error:
            raise IngestError(LATER.gettext("JSON nested too deeply"), source=source_name, expected=LATER.gettext("a twin-fabric document")) from error
    try:
        _refuse_anchors_and_aliases(text, source_name)
        return yaml.load(text, Loader=_YAML_LOADER)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        raise IngestError(
            LATER.gettext("malformed YAML: %(error)s") % {"error": error.problem or error.context},
            source=source_name,
            line=mark.line + 1 if mark else None,
            expected=LATER.gettext("valid YAML"),
        ) from error
    except yaml.YAMLError as error:
        raise IngestError(LATER.gettext("malformed YAML: %(error)s") % {"error": str(error)}, source=source_name, expected=LATER.gettext("valid YAML")) from error


def _refuse_anchors_and_aliases(text: str, source_name: str) -> None:
    """Refuse a YAML document that uses an anchor (``&name``) or an alias (``*name``).

    Aliases let a few hundred bytes stand for billions of values (the "billion laughs"), which
    building or validating the document would then walk; the format never needs them. Scanning
    the parser's events costs a tenth of loading, and nothing is built before the refusal.
    """
    for event in yaml.parse(text, Loader=_YAML_LOADER):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise IngestError(
                (LATER.gettext("YAML alias %(name)s is not allowed") if isinstance(event, yaml.AliasEvent) else LATER.gettext("YAML anchor %(name)s is not allowed"))
                % {"name": repr(event.anchor)},
                source=source_name,
                line=event.start_mark.line + 1,
                expected=LATER.gettext("every value written out in full (no YAML anchors & or aliases *)"),
            )


def _is_finite_number(checker: jsonschema.TypeChecker, value: Any) -> bool:
    # Python's json reads NaN and Infinity, which JSON Schema counts as numbers.
    return jsonschema.Draft202012Validator.TYPE_CHECKER.is_type(value, "number") and (
        not isinstance(value, float) or math.isfinite(value)
    )


_FabricValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "number", _is_finite_number
    ),
)


@functools.cache
def _schema() -> dict[str, Any]:
    schema_file = resources.files("twin.ingest") / "schemas" / "twin-fabric.schema.json"
    return json.loads(schema_file.read_text(encoding="utf-8"))


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    return _FabricValidator(_schema())


@functools.cache
def _fast_validator():
    return fastjsonschema.compile(_schema())


_NON_FINITE = re.compile(r"\b(?:NaN|Infinity)\b")


def _passes_fast_schema_check(text: str, document: Any) -> bool:
    """Whether a JSON document surely passes the schema, checked by the compiled validator.

    YAML documents and JSON with NaN or Infinity anywhere (which only the full validator's
    finite-number rule rejects) always take the full path.
    """
    if not text.lstrip().startswith(("{", "[")) or _NON_FINITE.search(text):
        return False
    try:
        _fast_validator()(document)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def _describe(error: jsonschema.ValidationError) -> tuple[tuple[PathPart, ...], Words]:
    """Path to point at and message for a schema error.

    jsonschema's own text repeats the allowed values, which ``expected`` (the
    schema's description) says better, and it blames the object that holds an
    unknown field rather than the field.
    """
    path = tuple(error.absolute_path)
    if error.validator in ("const", "enum"):
        return path, LATER.gettext("unexpected value %(value)s") % {"value": json.dumps(error.instance, default=str)}
    if error.validator == "additionalProperties":
        unknown = next(key for key in error.instance if key not in error.schema["properties"])
        return (*path, unknown), LATER.gettext("unknown field %(field)s") % {"field": repr(unknown)}
    return path, error.message


class _LineFinder:
    """1-based line where the value at a path (or its deepest existing parent) starts.

    The YAML node tree is composed once, on the first error, and reused for the others.
    """

    def __init__(self, text: str) -> None:
        self.text = text

    @functools.cached_property
    def root(self) -> yaml.Node | None:
        try:
            return yaml.compose(self.text, Loader=_YAML_LOADER)
        except yaml.YAMLError:
            return None  # JSON that YAML cannot read, e.g. tabs where YAML forbids them

    def line_of(self, path: tuple[PathPart, ...]) -> int | None:
        return None if self.root is None else _line_in(self.root, path)


def _line_in(node: yaml.Node, path: tuple[PathPart, ...]) -> int:
    for part in path:
        if isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
        elif isinstance(node, yaml.MappingNode):
            # The last duplicate key wins, as in json.loads.
            matches = [value for key, value in node.value if key.value == part]
            if not matches:
                break
            node = matches[-1]
        else:
            break
    return node.start_mark.line + 1
