"""The formats a snapshot can be exported in: name -> (content type, file suffix, writer)."""
from twin.ingest import export_canonical
from twin.ingest.writers.graphml import export_graphml

__all__ = ("EXPORT_FORMATS",)

EXPORT_FORMATS = {
    "json": ("application/json", "json", export_canonical),
    "graphml": ("application/graphml+xml", "graphml", export_graphml),
}
