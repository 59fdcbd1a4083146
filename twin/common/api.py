"""API plumbing shared by all apps: one error shape, `{"detail": message, ...}`."""
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
    return drf_exception_handler(exc, context)
