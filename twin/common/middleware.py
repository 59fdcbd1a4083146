"""What every request meets at the door: limits checked before any view reads it, and the
security headers of every answer."""
from django.conf import settings

from .views import error_page

__all__ = ("ContentSecurityPolicyMiddleware", "RequestBodyLimitMiddleware", "NulInQueryMiddleware")

# Room for the form fields and multipart boundaries around a file of the largest allowed size.
FORM_OVERHEAD_BYTES = 1024 * 1024


class RequestBodyLimitMiddleware:
    """Answers 413 when the declared body (Content-Length) is over the upload limit, for every
    user, signed in or not: nothing reads the body, so nothing parses it into memory. A body
    sent without a Content-Length (chunked) still meets the per-file check of the upload
    service."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0  # Django then reads no body either
        limit = settings.TWIN_MAX_UPLOAD_BYTES
        if declared > limit + FORM_OVERHEAD_BYTES:
            return error_page(
                request,
                413,
                f"The request is {declared:,} bytes, larger than the {limit:,}-byte upload limit (TWIN_MAX_UPLOAD_BYTES); nothing was read.",
            )
        return self.get_response(request)


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


class ContentSecurityPolicyMiddleware:
    """Sends TWIN_CONTENT_SECURITY_POLICY with every answer (Django 5.2 has no CSP of its own)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.TWIN_CONTENT_SECURITY_POLICY)
        return response
