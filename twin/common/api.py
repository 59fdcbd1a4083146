"""API plumbing shared by all apps: one error shape, `{"detail": message, ...}`."""
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from twin.ingest import IngestError

from .errors import ApplicationError

__all__ = ("exception_handler",)


def exception_handler(exc, context):
    if isinstance(exc, IngestError):
        return Response(exc.as_dict(), status=400)
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
