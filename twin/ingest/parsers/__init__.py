"""Built-in parsers; importing this package registers them."""

from twin.ingest.parsers import canonical
from twin.ingest.parsers import infiniband

__all__ = ["canonical", "infiniband"]
