"""Built-in parsers; importing this package registers them."""

from twin.ingest.parsers import canonical

__all__ = ["canonical"]
