from django import forms
from django.utils import translation
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from twin.ingest import registered_parsers
from twin.ingest.options import DEFAULT_NON_COMPUTE_PATTERN, pattern_problem
from twin.simcore.model import MAX_LINK_GBPS

from .models import SnapshotRole

__all__ = ("ScaleUpCorrectionForm", "SnapshotUploadForm")


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
    non_compute_hca_pattern = forms.CharField(
        label=_("Not compute HCAs (pattern)"), required=False, initial=DEFAULT_NON_COMPUTE_PATTERN, max_length=500,
        help_text=_("Where no file names the GPUs, each HCA stands for one card, except those whose host name or description matches this regular expression (storage, management). Empty: every HCA."),
    )
    compute_hcas_per_host = forms.IntegerField(
        label=_("Compute HCAs per host"), required=False, min_value=1, max_value=64,
        help_text=_("Only the first N HCAs of each host (in name order) stand for cards. Empty: all."),
    )
    scale_up = forms.ChoiceField(
        label=_("Scale-up a file leaves out"), required=False, initial="auto",
        choices=[("auto", _("complete it (the GPUs' NVSwitch)")), ("none", _("leave it out"))],
        help_text=_("Cloud NCCL hint files leave out the NVLink fabric; the twin adds the NVSwitch of the GPUs' generation."),
    )
    nvlink_gbps = forms.FloatField(
        label=_("NVLink per GPU (Gb/s)"), required=False, min_value=1, max_value=MAX_LINK_GBPS,
        help_text=_("Bandwidth of the completed scale-up per GPU and direction. Empty: by GPU generation (H100 3,600)."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = [("", _("Detect from content"))] + [(parser.name, gettext(parser.label)) for parser in registered_parsers()]

    def clean_non_compute_hca_pattern(self) -> str:
        pattern = self.cleaned_data["non_compute_hca_pattern"]
        problem = pattern_problem(pattern)
        if problem:
            raise forms.ValidationError(problem.render(translation))
        return pattern

    def clean_scale_up(self) -> str:
        return self.cleaned_data["scale_up"] or "auto"


class ScaleUpCorrectionForm(forms.Form):
    """The NVLink per GPU of the scale-up the twin completed; empty leaves it out."""

    nvlink_gbps = forms.FloatField(
        label=_("NVLink per GPU (Gb/s)"), required=False, min_value=1, max_value=MAX_LINK_GBPS,
        help_text=_("Empty: leave the completed scale-up out."),
    )
