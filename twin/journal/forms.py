from django import forms
from django.utils.translation import gettext_lazy as _

from twin.common.errors import core_error_text
from twin.fabrics.forms import MultipleFileField
from twin.simcore.algorithms import COLLECTIVES
from twin.simcore.calibrate import DEFAULT_FIT, FITTABLE
from twin.simcore.errors import TwinCoreError
from twin.simcore.units import parse_size

from .models import Experiment
from .services import JOURNAL_FIELDS

__all__ = ("CalibrationForm", "ExperimentForm", "JournalFilterForm")


class ExperimentForm(forms.ModelForm):
    """A measured run: nccl-tests output files, or points typed in by hand."""

    files = MultipleFileField(label=_("nccl-tests output"), required=False, help_text=_("One or more all_reduce_perf (or other *_perf) outputs; one entry per report."))
    collective = forms.ChoiceField(label=_("Collective (for points by hand)"), choices=[(c, c) for c in COLLECTIVES], required=False)
    card_count = forms.IntegerField(label=_("Cards"), min_value=1, required=False, help_text=_("Needed for points by hand, or when the report does not list its devices."))
    manual_points = forms.CharField(
        label=_("Points by hand"), required=False, widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_("One per line: size in bytes, measured busbw in GB/s (e.g. 1048576 43.7)."),
    )

    class Meta:
        model = Experiment
        fields = JOURNAL_FIELDS
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}
        labels = {
            "title": _("Title"), "comm_library": _("Communication library"), "library_version": _("Library version"),
            "algorithm": _("Algorithm"), "protocol": _("Protocol"), "chunk_size_bytes": _("Chunk size (bytes)"),
            "model_name": _("Model name"), "tp": _("Tensor parallel (TP)"), "pp": _("Pipeline parallel (PP)"),
            "dp": _("Data parallel (DP)"), "ep": _("Expert parallel (EP)"), "notes": _("Notes"),
        }
        help_texts = {
            "algorithm": _("As configured for the run (e.g. NCCL_ALGO); empty = library default"),
            "protocol": _("As configured for the run (NCCL_PROTO: LL, LL128 or Simple); empty = library default"),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["title"].required = False

    def clean_manual_points(self) -> list[tuple[float, float]]:
        points = []
        for number, line in enumerate(self.cleaned_data["manual_points"].splitlines(), start=1):
            if not line.strip():
                continue
            parts = line.replace(",", " ").split()
            try:
                size, busbw = float(parts[0]), float(parts[1])
            except (IndexError, ValueError):
                raise forms.ValidationError(_("Line %(n)s: expected a size in bytes and a busbw in GB/s, got %(line)r.") % {"n": number, "line": line}) from None
            if size <= 0 or busbw <= 0:
                raise forms.ValidationError(_("Line %(n)s: size and busbw must be positive.") % {"n": number})
            points.append((size, busbw))
        return points

    def clean(self):
        data = super().clean()
        if not data.get("files") and not data.get("manual_points"):
            raise forms.ValidationError(_("Upload nccl-tests output or type points by hand."))
        if data.get("manual_points") and not (data.get("collective") and data.get("card_count")):
            raise forms.ValidationError(_("Points by hand need the collective and the number of cards."))
        return data


class JournalFilterForm(forms.Form):
    q = forms.CharField(required=False, label=_("Search"))
    collective = forms.ChoiceField(required=False, choices=[("", _("any collective"))] + [(c, c) for c in COLLECTIVES])
    library = forms.CharField(required=False, label=_("Library"))
    sort = forms.ChoiceField(required=False, choices=[
        ("-created_at", _("Newest first")), ("created_at", _("Oldest first")), ("title", _("Title (A-Z)")),
        ("-peak_busbw_GBps", _("Peak busbw (highest first)")), ("-max_abs_error", _("Twin's error (largest first)")),
        ("card_count", _("Cards (fewest first)")), ("-card_count", _("Cards (most first)")),
    ])


class CalibrationForm(forms.Form):
    """Which entries to fit, which transport parameters, and the sizes to hold out (validation)."""

    experiment = forms.ModelMultipleChoiceField(queryset=Experiment.objects.none(), label=_("Entries"), error_messages={"required": _("Choose at least one journal entry to calibrate against.")})
    fit = forms.MultipleChoiceField(
        label=_("Parameters to fit"), choices=[(name, name) for name in FITTABLE], initial=list(DEFAULT_FIT),
        widget=forms.CheckboxSelectMultiple, error_messages={"required": _("Choose at least one parameter to fit.")},
        help_text=_("Latencies are fitted between 0 and 1 ms, efficiencies above 0 and at most 1; give at least as many measured sizes as parameters."),
    )
    held_out = forms.CharField(
        label=_("Hold out sizes (validation)"), required=False,
        help_text=_("Measured sizes to leave out of the fit, e.g. 16MiB, 256MiB: the twin reports its error there and the fabric's transport stays as it is."),
    )

    def __init__(self, *args, fabric, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["experiment"].queryset = fabric.experiments.select_related("fabric", "snapshot")

    def clean_held_out(self) -> list[float]:
        sizes = []
        for text in self.cleaned_data["held_out"].replace(",", " ").split():
            try:
                sizes.append(parse_size(text))
            except TwinCoreError as error:
                raise forms.ValidationError(core_error_text(error)) from None
        return sizes
