"""API plumbing shared by all apps: one error shape, `{"detail": message, ...}`, and the JSON
bodies every endpoint accepts."""
from django.utils import translation
from rest_framework import parsers
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from twin.ingest import IngestError
from twin.ingest.errors import in_language

from .errors import ApplicationError
from .params import TOO_DEEP, json_value_problem

__all__ = ("JSONParser", "exception_handler")


def _json_parse_error(problem) -> str:
    return translation.gettext("JSON parse error - %(problem)s.") % {"problem": problem.render(translation)}


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing what would otherwise be a 500 further on: nesting deep
    enough to exhaust Python's recursion limit, and anything `json_value_problem` finds."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(_json_parse_error(TOO_DEEP)) from None
        problem = json_value_problem(data)
        if problem:
            raise ParseError(_json_parse_error(problem))
        return data


def exception_handler(exc, context):
    if isinstance(exc, IngestError):
        return Response(in_language(exc.as_dict(), translation), status=400)
    if isinstance(exc, ApplicationError):
        return Response({"detail": exc.message, **exc.extra}, status=exc.status_code)
    response = drf_exception_handler(exc, context)
    if isinstance(exc, ValidationError) and isinstance(response.data, dict) and "detail" not in response.data:
        # Field errors keep DRF's {field: [messages]} shape, plus the one-sentence detail every error has.
        response.data = {"detail": "; ".join(f"{field}: {' '.join(flatten(messages))}" for field, messages in response.data.items()), **response.data}
    return response


def flatten(messages) -> list[str]:
    if isinstance(messages, dict):
        return [text for value in messages.values() for text in flatten(value)]
    if isinstance(messages, list):
        return [text for value in messages for text in flatten(value)]
    return [str(messages)]
