"""Close codes our websockets use (4000-4999 is the application range), so pages can tell why."""

__all__ = ("CLOSE_UNAUTHENTICATED", "CLOSE_NOT_FOUND", "CLOSE_LAYER_UNAVAILABLE")

CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_LAYER_UNAVAILABLE = 4503
