"""Health endpoints and error pages."""
import sys

from django.contrib.auth.decorators import login_not_required
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from .health import database_ok, redis_ok

__all__ = ("liveness", "health", "page_not_found", "server_error", "permission_denied")


@login_not_required
def liveness(request):
    """For load balancers and container health checks: says nothing but that the app answers."""
    return HttpResponse("ok", content_type="text/plain")


@extend_schema(
    responses=inline_serializer(
        "Health", {"database": serializers.ChoiceField(["ok", "unavailable"]), "redis": serializers.ChoiceField(["ok", "unavailable"])}
    )
)
@api_view(["GET"])
def health(request):
    """Which backing services answer; the pages use it to say when live updates are down."""
    state = lambda ok: "ok" if ok else "unavailable"  # noqa: E731
    return Response({"database": state(database_ok()), "redis": state(redis_ok())})


def wants_json(request) -> bool:
    return request.path_info.startswith("/api/") or "application/json" in request.headers.get("Accept", "")


def error_page(request, status: int, message: str):
    if wants_json(request):
        return JsonResponse({"detail": message}, status=status)
    return render(request, "error.html", {"status": status, "message": message}, status=status)


def page_not_found(request, exception=None):
    return error_page(request, 404, gettext("Not found: nothing lives at this address."))


def permission_denied(request, exception=None):
    return error_page(request, 403, str(exception) if exception and str(exception) else gettext("Your role does not allow this."))


def server_error(request):
    """Django's last resort for an exception nothing else answered. A database that went away
    (restarted, its connections killed) is no bug of ours: a 503 that says to try again."""
    if isinstance(sys.exc_info()[1], (OperationalError, InterfaceError)):
        message = gettext("The database cannot be reached just now; nothing was changed. Try again in a moment.")
        try:
            return error_page(request, 503, message)
        except DatabaseError:  # the page itself asks the database (the user of the session)
            return HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
    return error_page(request, 500, "Something went wrong on our side; the error has been logged.")
