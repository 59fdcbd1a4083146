"""Forms of a fabric's live telemetry: its Prometheus source and one-off counter readings."""
import json

from django import forms
from django.utils.translation import gettext_lazy as _

from twin.common.errors import core_error_text
from twin.replay import TelemetryError
from twin.replay.prometheus import PRESETS, prometheus_mapping

from .telemetry import MAX_INTERVAL_S, MIN_INTERVAL_S

__all__ = ("TelemetrySourceForm", "TelemetryReadingForm", "PRESET_LABELS")

PRESET_LABELS = {  # every PRESETS key
    "node_exporter_infiniband": _("node_exporter, infiniband collector (InfiniBand ports)"),
    "dcgm_nvlink": _("DCGM exporter (NVLink of each GPU)"),
    "dcgm_nvlink_links": _("DCGM exporter, per-link fields (each NVLink of each GPU)"),
}


class TelemetrySourceForm(forms.Form):
    url = forms.URLField(
        label=_("Prometheus URL"), max_length=500, assume_scheme="http",
        help_text=_("The server's base URL, e.g. http://prometheus.example:9090; it is asked once when you save."),
    )
    preset = forms.ChoiceField(label=_("Exporter"), choices=[(name, PRESET_LABELS[name]) for name in PRESETS])
    mapping = forms.CharField(
        label=_("Label mapping (JSON)"), required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=_('Changes to the exporter\'s defaults, e.g. {"node": "{host}/{device}", "selector": "job=\\"ib\\"", "nodes": {"gpu-01/mlx5_0": "ib:0c42a10300860100"}}. Empty: the defaults.'),
    )
    interval_s = forms.FloatField(label=_("Every (s)"), min_value=MIN_INTERVAL_S, max_value=MAX_INTERVAL_S, initial=10)
    rate_window_s = forms.IntegerField(
        label=_("Rate window (s)"), min_value=1, max_value=86400, initial=60,
        help_text=_("rate() over this window: at least twice the scrape interval."),
    )
    enabled = forms.BooleanField(label=_("Poll"), required=False, initial=True)

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        if not url.lower().startswith(("http://", "https://")):
            raise forms.ValidationError(_("Prometheus is asked over HTTP: give an http:// or https:// URL."))
        return url

    def clean_mapping(self) -> dict:
        text = self.cleaned_data["mapping"].strip()
        if not text:
            return {}
        try:
            mapping = json.loads(text)
        except ValueError as error:
            raise forms.ValidationError(_("The label mapping is not JSON: %(error)s") % {"error": error}) from error
        if not isinstance(mapping, dict):
            raise forms.ValidationError(_("The label mapping must be a JSON object."))
        return mapping

    def clean(self):
        cleaned = super().clean()
        if "mapping" in cleaned and "preset" in cleaned:
            try:
                prometheus_mapping(cleaned["mapping"], preset=cleaned["preset"])
            except TelemetryError as error:
                self.add_error("mapping", core_error_text(error))
        return cleaned


class TelemetryReadingForm(forms.Form):
    file = forms.FileField(label=_("Counter reading"), allow_empty_file=True, help_text=_("perfquery -x or ibqueryerrors output."))
    taken_at = forms.DateTimeField(
        label=_("Taken at (UTC)"), required=False,
        help_text=_("When the counters were read. Empty: now. Utilisation is measured against the previous reading."),
    )
