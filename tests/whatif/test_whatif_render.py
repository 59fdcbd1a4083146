"""A small what-if end to end: every cell, the report, and its HTML, PDF, CSV and JSON renderings."""

import csv
import io
import json

import pytest

from twin.simcore.generate import fat_tree
from twin.whatif.bom import bill_of_materials
from twin.whatif.performance import performance_cell, training_step_cell
from twin.whatif.render import CSV_COLUMNS, render_comparison_html, render_csv, render_html, render_pdf, report_json
from twin.whatif.report import assemble_report, compare_reports
from twin.whatif.rules import design_rules
from twin.whatif.stages import ALTERNATIVES, StageSpec, build_stage, plan_stages
from twin.whatif.structure import structure

SIZES = (2**10, 2**20)
COLLECTIVES = ("allreduce", "alltoall")


def run_cells(stage: StageSpec) -> dict:
    """What the web layer's tasks do: each cell from the stage's plain data alone."""
    spec = build_stage(StageSpec.from_dict(json.loads(json.dumps(stage.to_dict()))))
    return {
        "stage": stage.to_dict(),
        "bom": bill_of_materials(spec),
        "structure": structure(spec),
        "performance": [performance_cell(spec, collective, SIZES) for collective in COLLECTIVES],
        "training": training_step_cell(spec, tp=4, layers=2, hidden_size=1024, sequence_length=256, model_params=1e8),
    }


@pytest.fixture(scope="module")
def report():
    rules = design_rules(fat_tree(endpoints=16, radix=8, cards_per_host=4))
    stages = plan_stages(rules, (1, 2, 4), ALTERNATIVES)
    results = [json.loads(json.dumps(run_cells(stage))) for stage in stages]  # as stored in the database
    return assemble_report(results, rules=rules.to_dict(), title="radix-8 test fabric")


def test_report_covers_every_stage_and_alternative(report):
    assert report["alternatives"] == list(ALTERNATIVES)
    assert [(stage["alternative"], stage["cards"]) for stage in report["stages"]] == [
        (alternative, cards) for alternative in ALTERNATIVES for cards in (16, 32, 64)
    ]
    first = report["stages"][0]
    assert first["efficiency"]["allreduce"] == 1.0 and first["bom_delta"] is None
    # Radix 8, 4 cards per leaf: 2 tiers hold 8 leaves (32 cards); 64 cards need a core tier.
    assert [stage["tiers"] for stage in report["stages"][:3]] == [2, 2, 3]


def test_json_round_trip(report):
    assert json.loads(report_json(report)) == report


def test_html_has_the_plots_tables_and_knee(report):
    page = render_html(report)
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 4
    for plot in ("scaling", "busbw-by-size", "bom", "structure"):
        assert f'id="plot-{plot}"' in page
    assert "Alternatives side by side" in page and "Design rules" in page
    for external in ('src="http', 'href="http', "<script", "<link", "@import"):
        assert external not in page  # nothing fetched from the network
    assert render_html(report) == page  # deterministic: no dates in the SVGs
    if report["knee"]:
        assert 'class="knee-box"' in page and 'class="knee"' in page
    else:
        assert "No knee" in page
    fragment = render_html(report, full_page=False)
    assert not fragment.startswith("<!DOCTYPE") and "<svg" in fragment


def test_pdf_is_a_pdf(report):
    document = render_pdf(report)
    assert document.startswith(b"%PDF") and len(document) > 10_000


def test_csv_has_every_number_in_the_documented_columns(report):
    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    assert tuple(rows[0]) == CSV_COLUMNS
    performance = [row for row in rows if row["section"] == "performance"]
    # stage x alternative x collective x size x algorithm
    assert len(performance) == 9 * len(COLLECTIVES) * len(SIZES)
    ring = next(row for row in performance if row["collective"] == "allreduce" and row["cards"] == "64")
    stage = next(stage for stage in report["stages"] if stage["cards"] == 64)
    assert float(ring["busbw_GBps"]) == pytest.approx(stage["busbw_GBps"]["allreduce"][ring["size_bytes"]])
    sections = {row["section"] for row in rows}
    assert sections >= {"performance", "efficiency", "bom", "bom_delta", "structure", "training"}
    power = next(row for row in rows if row["section"] == "bom" and row["item"] == "power_kw.total")
    assert (power["unit"], float(power["value"])) == ("kW", pytest.approx(report["stages"][0]["power_kw"]))


def test_two_runs_compare_side_by_side(report):
    comparison = compare_reports(report, report)
    assert all(row["cards"]["change"] == 0 for row in comparison["rows"])
    page = render_comparison_html(comparison)
    assert page.count("<tr>") >= len(report["stages"]) and "radix-8 test fabric vs radix-8 test fabric" in page
