from django import forms
from django.utils.translation import gettext_lazy as _

from twin.ingest import registered_parsers
from twin.simcore.model import MAX_LINK_GBPS

from .models import SnapshotRole

__all__ = ("SnapshotUploadForm",)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented recipe)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        kwargs.setdefault("allow_empty_file", True)  # the service says "the file is empty", naming it
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single_clean = super().clean
        if isinstance(data, (list, tuple)):
            return [single_clean(item, initial) for item in data]
        return [single_clean(data, initial)]


class SnapshotUploadForm(forms.Form):
    file = MultipleFileField(
        label=_("Topology files"),
        help_text=_("One file, or several that describe one fabric (e.g. the InfiniBand dump plus each node's NCCL XML): they are merged."),
    )
    fabric = forms.CharField(
        label=_("Fabric name"), max_length=200, required=False,
        help_text=_("Leave empty to use the name inside the file. An existing name adds a new snapshot to that fabric."),
    )
    format = forms.ChoiceField(label=_("Format"), required=False)
    role = forms.ChoiceField(label=_("This is"), choices=SnapshotRole.choices, initial=SnapshotRole.DISCOVERED, required=False)
    default_bandwidth_gbps = forms.FloatField(
        label=_("Default link bandwidth (Gb/s)"), required=False, min_value=0.001, max_value=MAX_LINK_GBPS,
        help_text=_("For formats that carry none (Slurm topology.conf; per NVLink for nvidia-smi). Empty: the format's documented default."),
    )
    default_latency_ns = forms.FloatField(label=_("Default link latency (ns)"), required=False, min_value=0, max_value=1e9)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = [("", _("Detect from content"))] + [(parser.name, parser.label) for parser in registered_parsers()]
