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
                expected=LATER.gettext(schema_error.schema["description"]) if "description" in schema_error.schema else None,
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
    if error.validator in _WRONG_VALUE:
        value = json.dumps(error.instance, default=str)
        return path, LATER.gettext("unexpected value %(value)s") % {"value": value if len(value) <= 60 else value[:59] + "…"}
    if error.validator == "additionalProperties":
        unknown = next(key for key in error.instance if key not in error.schema["properties"])
        return (*path, unknown), LATER.gettext("unknown field %(field)s") % {"field": repr(unknown)}
    missing = _REQUIRED.match(error.message) if error.validator == "required" else None
    if missing:
        return path, LATER.gettext("missing field %(field)s") % {"field": missing[1]}
    # A check the schema may gain later: jsonschema's own (English) sentence, quoted.
    return path, LATER.gettext("does not fit the schema (%(detail)s)") % {"detail": error.message}


_WRONG_VALUE = {"const", "enum", "type", "minLength", "minimum", "exclusiveMinimum", "format"}
"""Checks whose failure the value itself shows; ``expected`` (the description) says what would do."""
_REQUIRED = re.compile(r"('[^']*') is a required property$")  # jsonschema names the missing field only in its text
SCHEMA_DESCRIPTIONS = (
    gettext_noop("an object with format, version, name, nodes and links (attrs optional)"),
    gettext_noop('"twin-fabric"'),
    gettext_noop("1, the only version this build reads"),
    gettext_noop("the fabric's name, a non-empty string"),
    gettext_noop("a list of node objects"),
    gettext_noop("a list of link objects"),
    gettext_noop("a node object with id, kind and name (tier, radix, host, attrs optional)"),
    gettext_noop("the node's stable identity: GUID, bus id or normalised name"),
    gettext_noop('one of "card", "nic", "switch", "host", "aggregation"'),
    gettext_noop("a display name (a string)"),
    gettext_noop('one of "leaf", "spine", "core" for a switch, nothing otherwise'),
    gettext_noop("the number of ports, an integer of at least 1"),
    gettext_noop("the id or name of the host the node sits in"),
    gettext_noop("a link object with a, a_port, b, b_port, bandwidth_gbps and latency_ns (state, domain, attrs optional)"),
    gettext_noop('the id of a node declared in "nodes"'),
    gettext_noop('the port on node a, as text ("7", not 7)'),
    gettext_noop('the port on node b, as text ("7", not 7)'),
    gettext_noop("the bandwidth per direction in Gb/s, a number above 0"),
    gettext_noop("the cable latency in ns, a number of at least 0"),
    gettext_noop('one of "up", "down", "degraded"'),
    gettext_noop('one of "scale-up", "scale-out"'),
    gettext_noop("an object of free-form JSON values"),
    gettext_noop("a JSON value: string, finite number, boolean, null, list or object"),
)
"""The schema's descriptions (what a value should be), listed for makemessages: the JSON file is
not scanned. tests/test_i18n_errors.py checks that the list and the schema agree."""


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
