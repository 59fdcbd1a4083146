"""A small what-if end to end: every cell, the report, and its HTML, PDF, CSV and JSON renderings."""

import csv
import gettext
import io
import json
import shutil
import subprocess
import warnings
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
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


# -- the PDF's layout, read back from the PDF itself with poppler (Debian poppler-utils) --------

CJK_FONT = "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"  # what CI installs
POINTS_PER_INCH = 72
MARGIN_IN = 0.4  # the renderer keeps 0.5 in; text boxes may reach a little past the glyphs
poppler = pytest.mark.skipif(
    not (shutil.which("pdftotext") and shutil.which("pdftoppm")), reason="needs poppler-utils (apt-get install poppler-utils)"
)


def chinese() -> gettext.GNUTranslations:
    """The product's own Simplified Chinese catalogue, read without Django."""
    with (Path(__file__).parents[2] / "twin/locale/zh_Hans/LC_MESSAGES/django.mo").open("rb") as catalogue:
        return gettext.GNUTranslations(catalogue)


@pytest.fixture(scope="module", params=["en", "zh-hans"])
def pdf_pages(request, report, tmp_path_factory):
    """(language, path of the PDF, its pages as [(width, height, [(x0, y0, x1, y1, word)])])."""
    translations = chinese() if request.param == "zh-hans" else gettext.NullTranslations()
    path = tmp_path_factory.mktemp(request.param) / "report.pdf"
    path.write_bytes(render_pdf(report, translations=translations))
    xhtml = subprocess.run(["pdftotext", "-bbox", str(path), "-"], check=True, capture_output=True, text=True).stdout
    pages = []
    for page in ElementTree.fromstring(xhtml).iter("{http://www.w3.org/1999/xhtml}page"):
        words = [
            (*(float(word.get(key)) for key in ("xMin", "yMin", "xMax", "yMax")), word.text)
            for word in page.iter("{http://www.w3.org/1999/xhtml}word")
        ]
        pages.append((float(page.get("width")), float(page.get("height")), words))
    return request.param, path, pages


@pytest.mark.skipif(not Path(CJK_FONT).exists(), reason="needs a CJK font (apt-get install fonts-droid-fallback)")
def test_chinese_html_plots_measure_their_labels_in_a_cjk_font(report):
    """matplotlib warns of every glyph its font lacks: none may be missing from the Chinese plots."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="Glyph .* missing from font")
        page = render_html(report, translations=chinese())
    assert "<svg" in page


@poppler
def test_pdf_pages_are_a4_with_every_word_inside_the_margins(pdf_pages):
    _, _, pages = pdf_pages
    assert len(pages) >= 8  # title, four plots, three tables
    margin = MARGIN_IN * POINTS_PER_INCH
    for number, (width, height, words) in enumerate(pages, 1):
        assert sorted((round(width), round(height))) == [595, 842], f"page {number} is not A4"
        outside = [word for word in words if word[0] < margin or word[1] < margin or word[2] > width - margin or word[3] > height - margin]
        assert words and not outside, f"page {number}: words in the margin or off the page: {outside[:5]}"


@poppler
def test_pdf_text_boxes_never_overlap_and_titles_sit_above_the_charts(pdf_pages):
    _, _, pages = pdf_pages
    for number, (_, _, words) in enumerate(pages, 1):
        overlaps = [
            (a[4], b[4])
            for position, a in enumerate(words)
            for b in words[position + 1 :]
            if min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5
        ]
        assert not overlaps, f"page {number}: overlapping words {overlaps[:5]}"
        first = min(words, key=lambda word: word[1])
        title = [word for word in words if first[1] <= (word[1] + word[3]) / 2 <= first[3]]  # the top line
        title_bottom = max(word[3] for word in title)
        below = [word for word in words if word not in title]
        assert all(word[1] >= title_bottom for word in below), f"page {number}: text above or beside the page title"


@poppler
def test_pdf_pages_draw_nothing_in_the_margins(pdf_pages, tmp_path):
    """The rendered pages' ink (anything not white) stays inside the margins: no clipped label or line."""
    _, path, pages = pdf_pages
    dpi = 36
    subprocess.run(["pdftoppm", "-gray", "-r", str(dpi), str(path), str(tmp_path / "page")], check=True)
    images = sorted(tmp_path.glob("page-*.pgm"))
    assert len(images) == len(pages)
    margin = int(MARGIN_IN * dpi)
    for image in images:
        pixels = read_pgm(image)
        rows, columns = np.nonzero(pixels < 250)
        assert rows.size, f"{image.name} is blank"
        height, width = pixels.shape
        assert rows.min() >= margin and columns.min() >= margin, image.name
        assert rows.max() < height - margin and columns.max() < width - margin, image.name


@poppler
def test_pdf_keeps_whole_stage_labels_and_the_knee_label(pdf_pages, report):
    language, path, _ = pdf_pages
    text = subprocess.run(["pdftotext", "-raw", str(path), "-"], check=True, capture_output=True, text=True).stdout
    for alternative in report["alternatives"]:
        assert alternative in text
    if report["knee"]:
        points = f"{report['knee']['drop_points']:.0f}"
        assert (f"knee: {points} points" if language == "en" else f"拐点：下降 {points} 个百分点") in text
    if language == "zh-hans":
        assert "阶段" in text and "物料清单" in text  # the Chinese glyphs are embedded, not boxes


def read_pgm(path: Path) -> np.ndarray:
    """A binary PGM (what ``pdftoppm -gray`` writes) as a 2-D array."""
    data = path.read_bytes()
    magic, width, height, maximum = data.split(maxsplit=4)[:4]
    assert magic == b"P5" and int(maximum) < 256
    width, height = int(width), int(height)
    return np.frombuffer(data[len(data) - width * height :], dtype=np.uint8).reshape(height, width)
