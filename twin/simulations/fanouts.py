"""Runs fanned out over the workers: the worst-single-failure search (one cell per chunk of
candidates) and failing a chosen set of elements together (one cell)."""
import math

from twin.fabrics.selectors import snapshot_spec_get
from twin.operations.failures import (
    FailureBaseline,
    FailureError,
    Workload,
    evaluate_failure,
    fail_elements,
    failure_candidates,
    link_impact,
    rank_failures,
)
from twin.runs.fanout import CellPlan, FanOutKind, register_fanout
from twin.runs.handlers import RunOutput
from twin.runs.models import Run, RunKind
from twin.simcore.translation import LATER

__all__ = ("FAILURE_CHUNK", "MAX_FAILURE_CELLS")

FAILURE_CHUNK = 8  # candidates per cell at least: small enough to spread over the workers
MAX_FAILURE_CELLS = 64  # and cells per search at most: 12,288 links make 64 cells of 192, not 1,536 of 8
FAILURE_CELL_LABELS = {  # every FAILURE_KINDS
    "link": LATER.gettext("link failures %(first)s-%(last)s of %(count)s"),
    "switch": LATER.gettext("switch failures %(first)s-%(last)s of %(count)s"),
    "leaf": LATER.gettext("leaf switch failures %(first)s-%(last)s of %(count)s"),
}


def workload_of(run: Run) -> Workload:
    return Workload(**run.params.get("workload", {}))


def plan_failures(run: Run) -> list[CellPlan]:
    spec = snapshot_spec_get(snapshot_id=run.snapshot_id)
    elements = run.params.get("elements") or []
    if elements:
        fail_elements(spec, elements)  # raises FailureError naming unknown elements, before any task
        together = LATER.ngettext("%(count)s element failed", "%(count)s elements failed together", len(elements)) % {"count": len(elements)}
        return [CellPlan(key="together", params={"elements": elements}, label=together)]
    kind = run.params["worst"]
    candidates = failure_candidates(spec, kind)
    if not candidates:
        nothing = {"link": LATER.gettext("%(fabric)s has no link to fail"), "switch": LATER.gettext("%(fabric)s has no switch to fail"), "leaf": LATER.gettext("%(fabric)s has no leaf switch to fail")}
        raise FailureError(nothing[kind] % {"fabric": spec.name})
    chunk = max(FAILURE_CHUNK, math.ceil(len(candidates) / MAX_FAILURE_CELLS))
    label = FAILURE_CELL_LABELS[kind]
    return [
        CellPlan(
            key=f"{kind}:{start}", params={"candidates": candidates[start:start + chunk]},
            label=label % {"first": start + 1, "last": min(start + chunk, len(candidates)), "count": len(candidates)},
        )
        for start in range(0, len(candidates), chunk)
    ]  # fmt: skip


def execute_failures(run: Run, params: dict) -> dict:
    spec = snapshot_spec_get(snapshot_id=run.snapshot_id)
    workload = workload_of(run)
    baseline = FailureBaseline.of(spec, workload)
    if "elements" in params:
        return {"results": [evaluate_failure(spec, params["elements"], workload, baseline=baseline)]}
    return {"results": [evaluate_failure(spec, [element], workload, baseline=baseline) for element in params["candidates"]]}


def assemble_failures(run: Run, results: dict[str, dict]) -> RunOutput:
    evaluated = [result for cell in results.values() for result in cell["results"]]
    spec = snapshot_spec_get(snapshot_id=run.snapshot_id)
    ranking = rank_failures(evaluated, top=20)
    impact = link_impact(spec, workload_of(run), top=50)
    return RunOutput(
        {"kind": run.params.get("worst", "chosen"), "workload": workload_of(run).to_dict(), **ranking, "link_impact": impact[:20]},
        {"evaluated": evaluated, "link_impact": impact},
    )


register_fanout(RunKind.FAILURES, FanOutKind(plan=plan_failures, execute=execute_failures, assemble=assemble_failures))
