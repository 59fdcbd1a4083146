"""The staged scale-out what-if as a fanned-out run: one cell per stage x alternative x part
(bill of materials and structure, one per collective, the training step), assembled into a
report stored with the run."""
import functools
import json

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext

from twin.fabrics.selectors import snapshot_spec_get
from twin.runs.fanout import CellPlan, FanOutKind, register_fanout
from twin.runs.handlers import RunOutput
from twin.runs.models import Run, RunKind
from twin.simcore.translation import LATER
from twin.whatif.bom import DEFAULT_ITEMS, bill_of_materials
from twin.whatif.errors import WhatIfError
from twin.whatif.performance import ARTICLE_TP, DEFAULT_COLLECTIVES, DEFAULT_SIZES, check_sizes, performance_cell, training_step_cell, training_tp
from twin.whatif.render import render_html
from twin.whatif.report import assemble_report, report_summary
from twin.whatif.rules import design_rules
from twin.whatif.stages import ALTERNATIVES, DEFAULT_FACTORS, StageSpec, build_stage, plan_stages
from twin.whatif.structure import structure

__all__ = ("whatif_defaults", "whatif_cells", "whatif_cell", "whatif_report", "whatif_report_html", "whatif_report_translated")


def whatif_defaults() -> dict:
    return {
        "factors": list(DEFAULT_FACTORS), "alternatives": list(ALTERNATIVES), "k": 2, "collectives": list(DEFAULT_COLLECTIVES),
        "sizes": list(DEFAULT_SIZES), "algorithms": ["auto"], "overrides": {}, "items": {}, "threshold_points": 10.0,
    }


def rules_of(spec, params: dict):
    rules = design_rules(spec)
    return rules.with_overrides(**params.get("overrides", {})) if params.get("overrides") else rules


# The snapshot itself, simulated next to the designs rebuilt from its rules at 1x: how far the
# rebuilt model is from the fabric as it is cabled (down links, odd ports, missing hosts).
AS_UPLOADED = "as-uploaded"
SNAPSHOT_GENERATOR = "snapshot"


def whatif_cells(spec, params: dict, *, snapshot_id: int | None = None) -> tuple[list[CellPlan], dict]:
    """Check everything up front (WhatIfError lists every problem) and name the cells. With
    the snapshot's id and a first factor of 1, the snapshot itself is one more stage."""
    params = {**whatif_defaults(), **params}
    rules = rules_of(spec, params)
    stages = plan_stages(rules, params["factors"], params["alternatives"], k=params["k"])
    if snapshot_id is not None and params["factors"][0] == 1:
        stages.append(StageSpec(
            alternative=AS_UPLOADED, factor=1.0, cards=rules.cards, generator=SNAPSHOT_GENERATOR,
            parameters={"snapshot": snapshot_id}, tiers=rules.tiers,
        ))
    check_sizes(params["sizes"])
    unknown = [name for name in params["collectives"] if name not in DEFAULT_COLLECTIVES + ("broadcast", "reduce")]
    if unknown:
        raise WhatIfError(LATER.gettext("unknown collectives %(collectives)s") % {"collectives": repr(unknown)})
    DEFAULT_ITEMS.updated(params["items"])
    plans = []
    for stage in stages:
        plain = stage.to_dict()
        prefix = f"{stage.alternative}:{stage.factor:g}"
        label = stage.label_phrase
        plans.append(CellPlan(f"{prefix}:structure", {"stage": plain, "part": "structure"}, LATER.gettext("%(stage)s: bill of materials and structure") % {"stage": label}))
        for collective in params["collectives"]:
            plans.append(CellPlan(f"{prefix}:perf:{collective}", {"stage": plain, "part": "performance", "collective": collective}, LATER.gettext("%(stage)s: %(collective)s") % {"stage": label, "collective": collective}))
        plans.append(CellPlan(f"{prefix}:training", {"stage": plain, "part": "training", "tp": training_tp(rules.cards)}, LATER.gettext("%(stage)s: training step") % {"stage": label}))
    return plans, {"rules": rules.to_dict(), **params}


@functools.lru_cache(maxsize=2)
def stage_fabric(stage_json: str):
    """A stage's fabric, kept while one worker does several cells of the same stage."""
    stage = StageSpec.from_dict(json.loads(stage_json))
    if stage.generator == SNAPSHOT_GENERATOR:
        return snapshot_spec_get(snapshot_id=stage.parameters["snapshot"])
    return build_stage(stage)


def whatif_cell(params: dict, cell: dict) -> dict:
    spec = stage_fabric(json.dumps(cell["stage"], sort_keys=True))
    if cell["part"] == "structure":
        return {"bom": bill_of_materials(spec, DEFAULT_ITEMS.updated(params.get("items", {}))), "structure": structure(spec)}
    if cell["part"] == "performance":
        return performance_cell(spec, cell["collective"], params.get("sizes", DEFAULT_SIZES), params.get("algorithms", ["auto"]))
    return training_step_cell(spec, tp=cell.get("tp", ARTICLE_TP))  # cells queued before "tp" was planned


def whatif_report(params: dict, results: dict[str, dict], cells: dict[str, dict], title: str) -> dict:
    """Group the cells' results by stage and assemble the report."""
    stages: dict[str, dict] = {}
    for key, cell in cells.items():
        stage_key = key.rsplit(":", 2)[0] if ":perf:" in key else key.rsplit(":", 1)[0]
        entry = stages.setdefault(stage_key, {"stage": cell["stage"], "performance": [], "training": None})
        result = results[key]
        if cell["part"] == "structure":
            entry.update(result)
        elif cell["part"] == "performance":
            entry["performance"].append(result)
        else:
            entry["training"] = result
    return assemble_report(list(stages.values()), rules=params["rules"], threshold_points=params.get("threshold_points", 10.0), title=title)


def plan(run: Run) -> list[CellPlan]:
    plans, _ = whatif_cells(snapshot_spec_get(snapshot_id=run.snapshot_id), run.params, snapshot_id=run.snapshot_id)
    return plans


def execute(run: Run, params: dict) -> dict:
    return whatif_cell({**whatif_defaults(), **run.params}, params)


def assemble(run: Run, results: dict[str, dict]) -> RunOutput:
    spec = snapshot_spec_get(snapshot_id=run.snapshot_id)
    params = {**whatif_defaults(), **run.params, "rules": rules_of(spec, run.params).to_dict()}
    cells = dict(run.cells.values_list("key", "params"))
    with translation.override("en"):
        report = whatif_report(params, results, cells, title=whatif_title(run))
    # Rendered once here in every language: the report page then serves stored HTML (rendering
    # takes about a second).
    html = {}
    for language, _ in settings.LANGUAGES:
        with translation.override(language):
            html[language] = render_html(whatif_report_translated(run, report), full_page=False, translations=translation)
    return RunOutput(report_summary(report), {"report": report, "html": html})


def whatif_title(run: Run) -> str:
    return gettext("Staged scale-out of %(fabric)s v%(version)s") % {"fabric": run.snapshot.fabric.name, "version": run.snapshot.version}


def whatif_report_translated(run: Run, report: dict) -> dict:
    """The stored report with its title in the active language (the rest is translated as it is rendered)."""
    return {**report, "title": whatif_title(run)}


def whatif_report_html(run: Run) -> str:
    """The report's HTML fragment in the active language: stored with the run, or rendered now
    for a run stored before the report was rendered per language."""
    stored = run.detail["html"]
    language = translation.get_language()
    if isinstance(stored, dict) and language in stored:
        return stored[language]
    return render_html(whatif_report_translated(run, run.detail["report"]), full_page=False, translations=translation)


register_fanout(RunKind.WHATIF, FanOutKind(plan=plan, execute=execute, assemble=assemble))
