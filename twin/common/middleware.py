"""Requests refused at the door, before any view reads them."""
from .views import error_page

__all__ = ("NulInQueryMiddleware",)


class NulInQueryMiddleware:
    """Answers 400 to a NUL character (%00) in a query parameter's name or value. No field
    holds one, and PostgreSQL refuses it inside a query, which would be a 500 wherever a
    parameter reaches the database."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        texts = (text for name, values in request.GET.lists() for text in (name, *values))
        if any("\x00" in text for text in texts):
            return error_page(request, 400, "A query parameter contains a NUL character (%00), which no field accepts.")
        return self.get_response(request)
