"""Errors the services raise for the edges (views, API, commands) to report to the user."""

__all__ = ("ApplicationError", "PayloadTooLarge", "ServiceUnavailable", "UnsupportedEncoding")


class ApplicationError(Exception):
    """A request that cannot be done as asked; `extra` carries details for the API."""

    status_code = 400

    def __init__(self, message: str, *, extra: dict | None = None):
        super().__init__(message)
        self.message = message
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
