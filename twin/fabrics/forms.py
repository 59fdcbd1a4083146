from django import forms
from django.utils.translation import gettext_lazy as _

from twin.ingest import registered_parsers

__all__ = ("SnapshotUploadForm",)


class SnapshotUploadForm(forms.Form):
    file = forms.FileField(label=_("Topology file"))
    fabric = forms.CharField(
        label=_("Fabric name"), max_length=200, required=False,
        help_text=_("Leave empty to use the name inside the file. An existing name adds a new snapshot to that fabric."),
    )
    format = forms.ChoiceField(label=_("Format"), required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = [("", _("Detect from content"))] + [(parser.name, parser.label) for parser in registered_parsers()]
