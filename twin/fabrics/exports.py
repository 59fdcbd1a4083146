"""The formats a snapshot can be exported in: name -> (content type, file suffix, writer).
A writer raises ValueError for a fabric its format cannot express (ibnetdiscover: named ports),
its message words (twin.simcore.translation) to be said in the reader's language."""
from django.utils import translation
from django.utils.translation import gettext

from twin.common.errors import ApplicationError
from twin.simcore.translation import rendered
from twin.ingest import export_canonical
from twin.ingest.writers import export_ibnetdiscover
from twin.ingest.writers.graphml import export_graphml

from .selectors import snapshot_spec_get

__all__ = ("EXPORT_FORMATS", "snapshot_export")

EXPORT_FORMATS = {
    "json": ("application/json", "json", export_canonical),
    "graphml": ("application/graphml+xml", "graphml", export_graphml),
    "ibnetdiscover": ("text/plain", "topo", export_ibnetdiscover),
}


def snapshot_export(*, snapshot_id: int, fmt: str) -> str:
    """The snapshot written in `fmt`, or an ApplicationError saying why that format cannot hold it."""
    _, _, write = EXPORT_FORMATS[fmt]
    try:
        return write(snapshot_spec_get(snapshot_id=snapshot_id))
    except ValueError as error:
        reason = rendered(error.args[0], translation) if error.args else ""
        raise ApplicationError(gettext("This snapshot cannot be written as %(format)s: %(reason)s") % {"format": fmt, "reason": reason}) from error
