"""Writers: a ``FabricSpec`` out as the text of a format the twin also reads."""

from twin.ingest.writers.ibnetdiscover import export_ibnetdiscover

__all__ = ["export_ibnetdiscover"]
