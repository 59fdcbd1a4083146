"""Forms that start runs from the fabric page (the API takes the same parameters as JSON)."""
import json

from django import forms
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from twin.common.errors import core_error_text
from twin.common.params import TOO_DEEP, json_value_problem
from twin.simcore.algorithms import COLLECTIVES
from twin.simcore.errors import TwinCoreError
from twin.simcore.units import format_count, largest_power_of_two, parse_count, parse_size
from twin.simulations.services import SEARCHED_STRATEGIES
from twin.whatif.errors import WhatIfError
from twin.whatif.rules import DesignRules
from twin.whatif.stages import plannable_choice

__all__ = ("PlacementForm", "FailureForm", "ReplayForm", "WhatIfForm", "job_shape_fitting", "whatif_choice_fitting")


class ParameterCountField(forms.CharField):
    """A model's parameter count written as people do (175B, 175e9, 1.5T), shown back as 175B."""

    def prepare_value(self, value):
        return format_count(value) if isinstance(value, (int, float)) else value

    def to_python(self, value):
        text = super().to_python(value)
        if not text:
            return None
        try:
            return parse_count(text)
        except TwinCoreError as error:
            raise forms.ValidationError(core_error_text(error)) from error


def job_shape_fitting(card_count: int) -> dict[str, int]:
    """A TP x DP job that fits the fabric, as the placement and replay forms first offer it: TP of
    8 (a server's GPUs) or the largest power of two below the card count, DP to fill the rest, so
    that the form as shown runs on a lab fabric of 8 cards as on a super-node."""
    tp = largest_power_of_two(min(8, card_count))
    return {"tp": tp, "dp": max(1, card_count // tp)}


def whatif_choice_fitting(snapshot) -> dict:
    """The designs and k the what-if form first offers for `snapshot`: those that plan at the
    form's growth factors from the design stored with it, so that the form as shown runs (a real
    dump of 89 cards splits into no 2 super-nodes). Nothing chosen when it has no usable design:
    the form then says why it is disabled."""
    design = (snapshot.summary.get("design") or {}) if snapshot is not None else {}
    try:
        rules = DesignRules.from_dict({name: value for name, value in design.items() if name != "inferred"})
    except (WhatIfError, TypeError, ValueError):
        return {}
    alternatives, k = plannable_choice(rules)
    return {"alternatives": alternatives, "k": k} if alternatives else {}


class PlacementForm(forms.Form):
    tp = forms.IntegerField(label="TP", min_value=1)
    pp = forms.IntegerField(label="PP", min_value=1, initial=1)
    dp = forms.IntegerField(label="DP", min_value=1)
    ep = forms.IntegerField(label="EP", min_value=1, initial=1)
    model_params = ParameterCountField(label=_("Model parameters"), required=False, help_text=_("e.g. 175B or 175e9; empty: the article's 175B"))
    strategies = forms.MultipleChoiceField(
        label=_("Strategies"), initial=list(SEARCHED_STRATEGIES), widget=forms.CheckboxSelectMultiple,
        choices=[("naive", _("naive")), ("random", _("random")), ("aware", _("topology-aware"))],
    )
    busy_cards = forms.CharField(label=_("Busy cards"), required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text=_("Cards other jobs use, separated by commas or lines"))
    mapping = forms.FileField(label=_("Your own placement (CSV: rank,card)"), required=False)

    def params(self, mapping: dict[str, str]) -> dict:
        data = self.cleaned_data
        busy = [card.strip() for card in data["busy_cards"].replace(",", "\n").splitlines() if card.strip()]
        return {
            "job": {"tp": data["tp"], "pp": data["pp"], "dp": data["dp"], "ep": data["ep"], "model_params": data["model_params"]},
            "strategies": data["strategies"],
            "busy_cards": busy,
            "mapping": mapping,
        }


class FailureForm(forms.Form):
    worst = forms.ChoiceField(label=_("Search the worst single failure of"), required=False, initial="switch", choices=[("", _("— or fail the elements below —")), ("switch", _("any switch")), ("leaf", _("a leaf switch")), ("link", _("a link"))])
    elements = forms.CharField(label=_("Elements to fail together"), required=False, help_text=_("Switch names (as on the map) or ids, or link:<index>, separated by commas"))
    collective = forms.ChoiceField(label=_("Workload"), choices=[(c, c) for c in COLLECTIVES], initial="allreduce")
    size = forms.CharField(label=_("Size per rank"), initial="1GiB")

    def clean_size(self) -> float:
        try:
            return parse_size(self.cleaned_data["size"])
        except TwinCoreError as error:
            raise forms.ValidationError(core_error_text(error)) from error

    def clean(self):
        data = super().clean()
        elements = [element.strip() for element in data.get("elements", "").split(",") if element.strip()]
        if bool(elements) == bool(data.get("worst")):
            raise forms.ValidationError(_("Choose a kind of failure to search, or list elements to fail together (not both)."))
        data["element_list"] = elements
        return data

    def params(self) -> dict:
        data = self.cleaned_data
        workload = {"collective": data["collective"], "size_bytes": data["size"], "algorithm": "ring" if data["collective"] == "allreduce" else "auto"}
        return {"worst": data["worst"], "workload": workload} if data["worst"] else {"elements": data["element_list"], "workload": workload}


class ReplayForm(forms.Form):
    trace = forms.FileField(label=_("Trace file"), required=False, help_text=_("Our trace format, an NCCL debug log (NCCL_DEBUG=INFO) or nccl-tests output. Empty: a generated training step."))
    model_params = ParameterCountField(label=_("Model parameters"), initial=175e9, help_text=_("e.g. 175B or 175e9"))
    tp = forms.IntegerField(label="TP", min_value=1)
    pp = forms.IntegerField(label="PP", min_value=1, initial=1)
    dp = forms.IntegerField(label="DP", min_value=1)
    layers = forms.IntegerField(label=_("Layers"), min_value=1, required=False, help_text=_("Divisible by PP; empty: from the model size"))
    ordering = forms.ChoiceField(label=_("One collective at a time per"), choices=[("communicator", _("communicator")), ("rank", _("rank"))], initial="rank")

    def params(self, trace_file_id: int | None) -> dict:
        data = self.cleaned_data
        if trace_file_id:
            return {"trace_file": trace_file_id, "ordering": data["ordering"]}
        training = {"model_params": data["model_params"], "tp": data["tp"], "pp": data["pp"], "dp": data["dp"], "hidden_size": 12288, "seq_len": 2048}
        if data["layers"]:
            training["layers"] = data["layers"]
        return {"training": training, "ordering": data["ordering"]}


class WhatIfForm(forms.Form):
    factors = forms.CharField(label=_("Growth factors"), initial="1,2,4,8", help_text=_("The first is the reference stage"))
    alternatives = forms.MultipleChoiceField(
        label=_("Designs"), initial=["one-supernode", "k-supernodes", "rail"], widget=forms.CheckboxSelectMultiple,
        choices=[("one-supernode", _("one super-node")), ("k-supernodes", _("k super-nodes + scale-out")), ("rail", _("rail-optimised"))],
    )
    k = forms.IntegerField(label="k", min_value=2, initial=2)
    threshold_points = forms.FloatField(label=_("Knee threshold (points)"), min_value=0.1, max_value=100, initial=10)
    overrides = forms.CharField(
        label=_("Design rule overrides (JSON)"), required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 40}),
        help_text=_('Rules inferred from the snapshot are shown in the report; override any, e.g. {"switch_radix": 128, "oversubscription": 2}'),
    )
    items = forms.CharField(
        label=_("Power and cost per item (JSON)"), required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 40}),
        help_text=_('e.g. {"card_w": 1000, "switch_usd": 30000}; see docs/whatif.md for every item'),
    )

    @staticmethod
    def json_object(text: str) -> dict:
        if not text.strip():
            return {}
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise forms.ValidationError(_("Not JSON: %(error)s") % {"error": error}) from None
        except RecursionError:
            raise forms.ValidationError(_("Not JSON: %(error)s") % {"error": TOO_DEEP.render(translation)}) from None
        if not isinstance(value, dict):
            raise forms.ValidationError(_('Expected a JSON object like {"name": value}.'))
        problem = json_value_problem(value)
        if problem:
            raise forms.ValidationError(_("Not JSON: %(error)s") % {"error": problem.render(translation)})
        return value

    def clean_overrides(self) -> dict:
        return self.json_object(self.cleaned_data["overrides"])

    def clean_items(self) -> dict:
        return self.json_object(self.cleaned_data["items"])

    def clean_factors(self) -> list[float]:
        try:
            return [float(value) for value in self.cleaned_data["factors"].replace(" ", "").split(",") if value]
        except ValueError:
            raise forms.ValidationError(_("Expected numbers separated by commas, like 1,2,4,8.")) from None

    def params(self) -> dict:
        data = self.cleaned_data
        return {
            "factors": data["factors"], "alternatives": data["alternatives"], "k": data["k"], "threshold_points": data["threshold_points"],
            "overrides": data["overrides"], "items": data["items"],
        }
