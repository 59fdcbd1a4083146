"""Errors the services raise for the edges (views, API, commands) to report to the user."""
from typing import Any

from django.utils import translation

from twin.simcore.errors import TwinCoreError
from twin.simcore.translation import rendered

__all__ = ("ApplicationError", "PayloadTooLarge", "ServiceUnavailable", "UnsupportedEncoding", "core_error_text")


def core_error_text(error: TwinCoreError) -> str:
    """What the core says went wrong, in the active language (a request's, a command's)."""
    return str(rendered(error.words, translation))


class ApplicationError(Exception):
    """A request that cannot be done as asked; `extra` carries details for the API. The message is
    text, or words (twin.simcore.translation) when it is also kept to be shown later in another
    language (`words`); `message` is it in the active language."""

    status_code = 400

    def __init__(self, message: Any, *, extra: dict | None = None):
        self.message = str(rendered(message, translation))
        super().__init__(self.message)
        self.words = message
        self.extra = extra or {}


class ServiceUnavailable(ApplicationError):
    """A backing service (Redis, the workers) cannot be reached; trying again later may work."""

    status_code = 503


class PayloadTooLarge(ApplicationError):
    """A body over the limit of what it is sent to; nothing of it was used."""

    status_code = 413


class UnsupportedEncoding(ApplicationError):
    """A body sent in a content encoding the endpoint does not read; nothing of it was used."""

    status_code = 415
