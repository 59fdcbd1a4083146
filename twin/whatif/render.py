"""Render an assembled what-if report: HTML with inline SVG plots, PDF, CSV and JSON.

Every function is pure: the report dict (``assemble_report``) in, text or
bytes out; plots are drawn by matplotlib's SVG and PDF backends, so nothing
is fetched from the network. ``render_comparison_html`` renders
``compare_reports``.

CSV (``render_csv``): one row per number, columns ``CSV_COLUMNS``:

- ``performance``: one row per stage x alternative x collective x size x
  algorithm with ``collective``, ``size_bytes``, ``algorithm``,
  ``chosen_algorithm``, ``chosen_protocol``, ``time_s``, ``busbw_GBps``, ``algbw_GBps``, ``bound``,
  ``bottleneck_link_class`` (an algorithm that cannot run: ``item`` = ``error``,
  ``value`` = why);
- ``efficiency``: ``collective`` = the metric (a collective or
  ``training_step``), ``value`` = the fraction of the first stage's;
- ``ecmp``: the hash-vs-spray check of a collective (``item``, ``value``);
- ``bom``, ``bom_delta``, ``structure``, ``training``: ``item`` is the
  dotted key of the number in that part of the report (``switches.leaf``,
  ``power_kw.total``, ``fault_domain.spine.degraded_cards``), ``value`` the
  number, ``unit`` its unit.

Every row carries ``section``, ``alternative``, ``factor`` and ``cards``;
cells that do not apply are empty.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from matplotlib import rc_context
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.table import Table

from twin.whatif.plots import FIGURES, font_settings, metric_name, size_text
from twin.whatif.report import efficiency_note, knee_explanation
from twin.whatif.rules import reason_text, tier_name
from twin.simcore.translation import ENGLISH, Translations

__all__ = ["CSV_COLUMNS", "render_comparison_html", "render_csv", "render_html", "render_pdf", "report_json"]

CSV_COLUMNS = (
    "section",
    "alternative",
    "factor",
    "cards",
    "collective",
    "size_bytes",
    "algorithm",
    "chosen_algorithm",
    "chosen_protocol",
    "time_s",
    "busbw_GBps",
    "algbw_GBps",
    "bound",
    "bottleneck_link_class",
    "item",
    "value",
    "unit",
)

_UNITS = (("_kw", "kW"), ("_usd", "USD"), ("_GBps", "GB/s"), ("_s", "s"), ("_hops", "hops"), ("_bytes", "bytes"))

_STYLE = """
.whatif{font-family:system-ui,sans-serif;font-size:14px;color:#222;max-width:1100px}
.whatif table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:12px}
.whatif th,.whatif td{border:1px solid #ccc;padding:3px 6px;text-align:right;vertical-align:top}
.whatif th{background:#f3f3f3}.whatif td.text,.whatif th.text{text-align:left}
.whatif tr.knee td{background:#fdecea}
.whatif .knee-box{border-left:5px solid #c0392b;background:#fdecea;padding:.6em 1em;margin:1em 0}
.whatif .ok-box{border-left:5px solid #27ae60;background:#eafaf1;padding:.6em 1em;margin:1em 0}
.whatif figure{margin:1em 0}.whatif figure svg{max-width:100%;height:auto}
.whatif .up{color:#c0392b}.whatif .down{color:#27ae60}
"""


def report_json(report: Mapping[str, Any]) -> str:
    """The report as JSON text; ``json.loads`` gives back an equal dict."""
    return json.dumps(report, indent=1, allow_nan=False)


def render_html(report: Mapping[str, Any], *, full_page: bool = True, translations: Translations = ENGLISH) -> str:
    """The report as HTML with inline SVG plots: a whole page, or a fragment to embed."""
    tr = translations
    parts = [f'<div class="whatif"><h1>{_e(report["title"])}</h1>', _intro(report, tr), _knee_html(report["knee"], tr)]
    figures = {name: (caption, function) for name, caption, function in FIGURES}
    parts.append(_figure_html("scaling", *figures["scaling"], report, tr))
    parts.append(_heading(tr.gettext("Stages")) + _stage_table(report, tr))
    parts += [
        f'<p class="text">{_e(_stage_label(stage, tr))}, {_e(metric_name(metric, tr))}: {_e(efficiency_note(note, tr))}</p>'
        for stage in report["stages"]
        for metric, note in stage["efficiency_notes"].items()
    ]
    if len(report["alternatives"]) > 1:
        parts.append(_heading(tr.gettext("Alternatives side by side")) + _side_by_side_html(report, tr))
        other_knees = [knee for name, knee in report["knees"].items() if name != report["primary"] and knee]
        parts += [
            f'<p class="text"><b>{_e(knee["alternative"])}</b>: {_e(knee_explanation(knee, tr))}</p>' for knee in other_knees
        ]
    parts.append(_figure_html("busbw-by-size", *figures["busbw-by-size"], report, tr))
    parts.append(_heading(tr.gettext("Bill of materials")) + _table(*_bom_rows(report, tr)))
    parts.append(_figure_html("bom", *figures["bom"], report, tr))
    parts.append(_heading(tr.gettext("Structure and fault domain")) + _table(*_structure_rows(report, tr)))
    parts.append(_figure_html("structure", *figures["structure"], report, tr))
    if report["rules"]:
        parts.append(_heading(tr.gettext("Design rules")) + _rules_table(report["rules"], tr))
    parts.append(_details_html(report, tr))
    parts.append("</div>")
    body = "\n".join(parts)
    if not full_page:
        return f"<style>{_STYLE}</style>\n{body}"
    language = tr.pgettext("language code of the page", "en")
    return (
        f'<!DOCTYPE html>\n<html lang="{_e(language)}"><head><meta charset="utf-8"><title>{_e(report["title"])}</title>'
        f"<style>{_STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def render_pdf(report: Mapping[str, Any], *, translations: Translations = ENGLISH) -> bytes:
    """A printable A4 PDF: a title page with the knee, one landscape page per plot, then the tables.

    Every page keeps ``_MARGIN_IN`` free at its edges and its title above everything else
    (tests/whatif/test_whatif_pdf_layout.py checks the word boxes of every page). TrueType
    fonts (``pdf.fonttype`` 42) keep the text searchable and its boxes tight.
    """
    tr = translations
    buffer = io.BytesIO()
    with rc_context({"pdf.fonttype": 42, **font_settings()}):
        with PdfPages(buffer, metadata={"Title": report["title"], "Creator": "twin.whatif", "CreationDate": None}) as pdf:
            pdf.savefig(_title_page(report, tr))
            for _, caption, function in FIGURES:
                pdf.savefig(_plot_page(function(report, tr), tr.gettext(caption)))
            for title, header, rows in _pdf_tables(report, tr):
                for start in range(0, max(1, len(rows)), _ROWS_PER_PAGE):
                    pdf.savefig(_table_page(title, header, rows[start : start + _ROWS_PER_PAGE]))
    return buffer.getvalue()


def render_csv(report: Mapping[str, Any]) -> str:
    """Every number of the report, one per row (columns in the module docstring)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(_csv_rows(report))
    return buffer.getvalue()


def render_comparison_html(comparison: Mapping[str, Any], *, translations: Translations = ENGLISH) -> str:
    """``compare_reports`` as an HTML fragment: both knees, then one table row per stage."""
    tr = translations
    a, b = comparison["a"], comparison["b"]
    title = tr.gettext("%(a)s vs %(b)s") % {"a": a["title"], "b": b["title"]}
    parts = [f'<div class="whatif"><style>{_STYLE}</style><h1>{_e(title)}</h1>']
    for side, data in (("A", a), ("B", b)):
        knee = data["knee"]
        text = knee_explanation(knee, tr) if knee else tr.gettext("no knee: efficiency never drops suddenly")
        parts.append(f'<p class="text"><b>{side}</b> ({_e(data["title"])}): {_e(text)}</p>')
    header = "".join(f'<th colspan="3">{_e(_compared_label(metric, label, tr))}</th>' for metric, label in comparison["metrics"].items())
    change = tr.gettext("change")
    sub = f"<th>A</th><th>B</th><th>{_e(change)}</th>" * len(comparison["metrics"])
    rows = []
    for row in comparison["rows"]:
        cells = []
        for metric in comparison["metrics"]:
            values = row[metric]
            change = values["change"]
            css = "" if change is None or change == 0 else ("up" if change > 0 else "down")
            cells.append(
                f"<td>{_number(values['a'])}</td><td>{_number(values['b'])}</td>"
                f'<td class="{css}">{"" if change is None else f"{change:+.1%}"}</td>'
            )
        rows.append(f'<tr><td class="text">{_e(row["alternative"])}</td><td>{row["factor"]:g}x</td>{"".join(cells)}</tr>')
    alternative, factor = tr.gettext("alternative"), tr.gettext("factor")
    parts.append(
        f'<table><tr><th class="text" rowspan="2">{_e(alternative)}</th>'
        f'<th rowspan="2">{_e(factor)}</th>{header}</tr>'
        f"<tr>{sub}</tr>{''.join(rows)}</table></div>"
    )
    return "\n".join(parts)


# -- words -------------------------------------------------------------------------------------


def _stage_label(stage: Mapping[str, Any], tr: Translations) -> str:
    """``"4x one-supernode (4,096 cards)"`` in the reader's language (stored labels are English)."""
    return tr.ngettext(
        "%(factor)sx %(alternative)s (%(count)s card)", "%(factor)sx %(alternative)s (%(count)s cards)", stage["cards"]
    ) % {"factor": f"{stage['factor']:g}", "alternative": stage["alternative"], "count": f"{stage['cards']:,}"}


def _compared_label(metric: str, label: str, tr: Translations) -> str:
    if metric == "cards":  # a column, not "N cards"
        return tr.pgettext("column or axis", "cards")
    if metric.startswith("busbw "):
        return tr.gettext("%(collective)s busbw (GB/s)") % {"collective": metric.removeprefix("busbw ")}
    return tr.gettext(label)


# -- HTML pieces -------------------------------------------------------------------------------


class _Code(str):
    """A table cell that is an identifier (a design rule's name, as the overrides spell it)."""


def _heading(text: str) -> str:
    return f"<h2>{_e(text)}</h2>"


def _e(value: Any) -> str:
    return html.escape(str(value))


def _number(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _e(value)
    if isinstance(value, int) or float(value).is_integer() and abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.1f}"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _intro(report: Mapping[str, Any], tr: Translations) -> str:
    primary = [stage for stage in report["stages"] if stage["alternative"] == report["primary"]]
    sizes = report["sizes"]
    if sizes:
        sweep = tr.ngettext("%(first)s to %(last)s (%(count)s size)", "%(first)s to %(last)s (%(count)s sizes)", len(sizes)) % {
            "first": size_text(sizes[0]), "last": size_text(sizes[-1]), "count": len(sizes)
        }
    else:
        sweep = tr.gettext("no sizes")
    values = {
        "stages": len(primary),
        "primary": f"<b>{_e(report['primary'])}</b>",
        "first": f"{primary[0]['cards']:,}",
        "last": f"{primary[-1]['cards']:,}",
        "collectives": _e(", ".join(report["collectives"]) or tr.gettext("none")),
        "sweep": _e(sweep),
        "reference": _e(size_text(report["reference_size"]) if report["reference_size"] else "–"),
        "threshold": f"{report['threshold_points']:g}",
    }
    text = tr.ngettext(
        "%(stages)s stage of %(primary)s from %(first)s to %(last)s cards.",
        "%(stages)s stages of %(primary)s from %(first)s to %(last)s cards.",
        len(primary),
    ) % values
    if len(report["alternatives"]) > 1:
        text += " " + tr.gettext("Alternatives: %(alternatives)s.") % {"alternatives": _e(", ".join(report["alternatives"][1:]))}
    text += " " + tr.gettext(
        "Collectives %(collectives)s over %(sweep)s; efficiencies at %(reference)s; a knee is a drop of more than "
        "%(threshold)s points from one stage to the next."
    ) % values
    return f'<p class="text">{text}</p>'


def _knee_html(knee: Mapping[str, Any] | None, tr: Translations) -> str:
    if knee is None:
        no_knee = tr.gettext("No knee: efficiency never drops suddenly from one stage to the next.")
        return f'<div class="ok-box">{_e(no_knee)}</div>'
    remedy = knee["remedy"]
    heading = tr.ngettext("Knee at %(count)s card (%(factor)sx).", "Knee at %(count)s cards (%(factor)sx).", knee["cards"]) % {
        "count": f"{knee['cards']:,}", "factor": f"{knee['factor']:g}"
    }
    columns = (tr.gettext("symptom"), tr.gettext("likely cause"), tr.gettext("how to check"), tr.gettext("fix"))
    cells = (remedy["symptom"], remedy["likely_cause"], remedy["check"], remedy["fix"])
    return (
        f'<div class="knee-box"><b>{_e(heading)}</b> {_e(knee_explanation(knee, tr))}<table><tr>'
        + "".join(f"<th class='text'>{_e(column)}</th>" for column in columns)
        + "</tr><tr>"
        + "".join(f"<td class='text'>{_e(tr.gettext(cell))}</td>" for cell in cells)
        + "</tr></table></div>"
    )


def _figure_html(name: str, caption: str, function: Any, report: Mapping[str, Any], tr: Translations) -> str:
    # The fonts are set while the figure is built: its texts take their font (and the room it
    # needs) when they are made, so Chinese labels are measured in the CJK font, not DejaVu.
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "twin-whatif", **font_settings()}):
        svg = _svg(function(report, tr))
    return f'<figure id="plot-{name}">{svg}<figcaption>{_e(tr.gettext(caption))}</figcaption></figure>'


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})  # same report, same bytes
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE: inline SVG


def _table(header: list[str], rows: list[list[Any]], highlight: set[int] = frozenset()) -> str:
    head = "".join(f'<th class="{"text" if position == 0 else ""}">{_e(name)}</th>' for position, name in enumerate(header))
    body = []
    for number, row in enumerate(rows):
        cells = "".join(
            f'<td class="text"><code>{_e(cell)}</code></td>' if isinstance(cell, _Code)
            else f'<td class="text">{_e(cell)}</td>' if isinstance(cell, str) else f"<td>{_number(cell)}</td>"
            for cell in row
        )
        body.append(f'<tr class="{"knee" if number in highlight else ""}">{cells}</tr>')
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _stage_rows(report: Mapping[str, Any], tr: Translations) -> tuple[list[str], list[list[Any]], set[int]]:
    collectives = report["collectives"]
    header = [tr.gettext("stage"), tr.gettext("tiers"), tr.gettext("switches"), tr.gettext("power kW"),
              tr.gettext("diameter"), tr.gettext("bisection GB/s")]
    header += [tr.gettext("%(collective)s busbw") % {"collective": name} for name in collectives]
    header += [tr.gettext("%(collective)s eff.") % {"collective": name} for name in collectives]
    header += [tr.gettext("step comm s"), tr.gettext("step eff.")]
    rows, highlight = [], set()
    for number, stage in enumerate(report["stages"]):
        knee = report["knees"].get(stage["alternative"])
        if knee and knee["factor"] == stage["factor"]:
            highlight.add(number)
        rows.append(
            [_stage_label(stage, tr), stage["tiers"], stage["switches_total"], stage["power_kw"], stage["diameter_hops"],
             stage["bisection_GBps"]]
            + [stage["reference_busbw_GBps"].get(name) for name in collectives]
            + [_percent(stage["efficiency"].get(name)) for name in collectives]
            + [stage["step_comm_time_s"], _percent(stage["efficiency"].get("training_step"))]
        )
    return header, rows, highlight


def _stage_table(report: Mapping[str, Any], tr: Translations) -> str:
    # Percentages are text: keep them right-aligned like numbers.
    return _table(*_stage_rows(report, tr)).replace('<td class="text">–</td>', "<td>–</td>")


def _side_by_side_html(report: Mapping[str, Any], tr: Translations) -> str:
    collectives = report["collectives"]
    header = [tr.gettext("factor / alternative"), tr.pgettext("column or axis", "cards"), tr.gettext("tiers"), tr.gettext("switches"),
              tr.gettext("power kW"), tr.gettext("cost USD"), tr.gettext("bisection GB/s"), tr.gettext("mean hops")]
    header += [tr.gettext("%(collective)s busbw") % {"collective": name} for name in collectives] + [tr.gettext("step comm s")]
    rows = []
    for group in report["side_by_side"]:
        for alternative, values in group["alternatives"].items():
            rows.append(
                [f"{group['factor']:g}x {alternative}", values["cards"], values["tiers"], values["switches_total"],
                 values["power_kw"], values["cost_usd"], values["bisection_GBps"], values["mean_hops"]]
                + [values["reference_busbw_GBps"].get(name) for name in collectives]
                + [values["step_comm_time_s"]]
            )
    return _table(header, rows)


def _bom_rows(report: Mapping[str, Any], tr: Translations) -> tuple[list[str], list[list[Any]]]:
    tiers = list(dict.fromkeys(tier for stage in report["stages"] for tier in stage["bom"]["switches"]))
    header = [tr.gettext("stage"), tr.pgettext("column or axis", "cards")]
    header += [tr.gettext("%(tier)s switches") % {"tier": tier_name(tier, tr)} for tier in tiers]
    header += [tr.gettext("cables"), tr.gettext("transceivers"), tr.gettext("power kW"), tr.gettext("cost USD"),
               tr.gettext("added switches"), tr.gettext("added kW")]
    rows = []
    for stage in report["stages"]:
        bom, delta = stage["bom"], stage["bom_delta"]
        rows.append(
            [_stage_label(stage, tr), bom["cards"]]
            + [bom["switches"].get(tier, 0) for tier in tiers]
            + [bom["cables_total"], bom["transceivers_total"], bom["power_kw"]["total"], bom["cost_usd"]["total"],
               delta["switches_total"] if delta else None, delta["power_kw"]["total"] if delta else None]
        )
    return header, rows


def _structure_rows(report: Mapping[str, Any], tr: Translations) -> tuple[list[str], list[list[Any]]]:
    tiers = list(dict.fromkeys(tier for stage in report["stages"] for tier in stage["structure"]["fault_domain"]))
    header = [tr.gettext("stage"), tr.gettext("mean hops"), tr.gettext("bisection per card GB/s")]
    header += [tr.gettext("lose one %(tier)s: cut off / degraded") % {"tier": tier_name(tier, tr)} for tier in tiers]
    rows = []
    for stage in report["stages"]:
        structure = stage["structure"]
        faults = structure["fault_domain"]
        rows.append(
            [_stage_label(stage, tr), structure["mean_hops"], structure["bisection_per_card_GBps"]]
            + [
                f"{faults[tier]['cut_off_cards']:,} / {faults[tier]['degraded_cards']:,}" if tier in faults else "–"
                for tier in tiers
            ]
        )
    return header, rows


def _rules_table(rules: Mapping[str, Any], tr: Translations) -> str:
    inferred = rules.get("inferred", {})
    rows = [[_Code(name), _number(value), reason_text(inferred.get(name, ""), tr)] for name, value in rules.items() if name != "inferred"]
    return _table([tr.gettext("rule"), tr.gettext("value"), tr.gettext("how it was found")], rows)


def _details_html(report: Mapping[str, Any], tr: Translations) -> str:
    """Per stage, busbw per size and collective (collapsed): the numbers behind the plots."""
    parts = [_heading(tr.gettext("busbw per size"))]
    for stage in report["stages"]:
        collectives = list(stage["busbw_GBps"])
        sizes = sorted({size for series in stage["busbw_GBps"].values() for size in series}, key=int)
        rows = [[size_text(int(size))] + [stage["busbw_GBps"][name].get(size) for name in collectives] for size in sizes]
        table = _table([tr.gettext("size"), *collectives], rows)
        parts.append(f"<details><summary>{_e(_stage_label(stage, tr))}</summary>{table}</details>")
    return "\n".join(parts)


# -- PDF pieces --------------------------------------------------------------------------------

_A4_PORTRAIT = (8.27, 11.69)
_A4_LANDSCAPE = (11.69, 8.27)
_MARGIN_IN = 0.5
"""Free space at every edge of a PDF page."""
_TITLE_IN = 0.75
"""The band under the top margin that holds a page's title, above everything else."""
_ROWS_PER_PAGE = 24
_TABLE_FONT_PT = 7.0


def _title_page(report: Mapping[str, Any], tr: Translations) -> Figure:
    figure = Figure(figsize=_A4_PORTRAIT)
    width, height = _A4_PORTRAIT
    left = _MARGIN_IN / width
    columns = int((width - 2 * _MARGIN_IN) * 72 / 5.6)  # DejaVu Sans at 10 pt: about 5.6 pt per Latin letter
    top = 1 - _MARGIN_IN / height
    title = figure.text(left, top, _wrap(report["title"], columns * 10 // 18), fontsize=18, weight="bold", va="top")
    knee = report["knee"]
    if knee:
        heading = tr.ngettext(
            "Knee at %(count)s card (%(factor)sx %(alternative)s)", "Knee at %(count)s cards (%(factor)sx %(alternative)s)", knee["cards"]
        ) % {"count": f"{knee['cards']:,}", "factor": f"{knee['factor']:g}", "alternative": knee["alternative"]}
        remedy = knee["remedy"]
        body = knee_explanation(knee, tr) + "\n\n" + tr.gettext("Symptom: %(symptom)s. Check: %(check)s. Fix: %(fix)s.") % {
            "symptom": tr.gettext(remedy["symptom"]), "check": tr.gettext(remedy["check"]), "fix": tr.gettext(remedy["fix"])
        }
    else:
        heading = tr.gettext("No knee")
        body = tr.gettext("Efficiency never drops suddenly from one stage to the next.")
    lines = [
        tr.gettext("%(stage)s: %(tiers)s tiers, %(switches)s switches, %(power)s kW, bisection %(bisection)s GB/s") % {
            "stage": _stage_label(stage, tr), "tiers": stage["tiers"], "switches": f"{stage['switches_total']:,}",
            "power": f"{stage['power_kw']:,.0f}", "bisection": f"{stage['bisection_GBps']:,.0f}",
        }
        for stage in report["stages"]
    ]
    # Each block starts under the one before (its drawn height, not a guess).
    blocks = [
        (_wrap(heading, columns * 10 // 13), {"fontsize": 13, "weight": "bold", "color": "#c0392b" if knee else "#27ae60"}),
        (_wrap(body, columns), {"fontsize": 10}),
        (tr.gettext("Stages"), {"fontsize": 12, "weight": "bold"}),
        ("\n".join(_wrap(line, columns * 10 // 8) for line in lines[:40]), {"fontsize": 8}),
    ]
    below = title.get_window_extent().y0 / figure.dpi / height
    for text, style in blocks:
        # Chinese glyphs stand taller than Latin ones: more line spacing keeps lines apart.
        drawn = figure.text(left, below - 0.2 / height, text, va="top", linespacing=1.5, **style)
        below = drawn.get_window_extent().y0 / figure.dpi / height
    return figure


def _plot_page(figure: Figure, title: str) -> Figure:
    """A report plot on its own A4 landscape page, under the page's title."""
    figure.set_size_inches(*_A4_LANDSCAPE)
    width, height = _A4_LANDSCAPE
    figure.text(_MARGIN_IN / width, 1 - _MARGIN_IN / height, title, fontsize=13, weight="bold", va="top")
    plots_top = 1 - (_MARGIN_IN + _TITLE_IN) / height
    figure.set_layout_engine(
        ConstrainedLayoutEngine(rect=(_MARGIN_IN / width, _MARGIN_IN / height, 1 - 2 * _MARGIN_IN / width, plots_top - _MARGIN_IN / height))
    )
    return figure


def _table_page(title: str, header: list[str], rows: list[list[Any]]) -> Figure:
    """One page of a table, its columns as wide as their longest cell (headers wrapped to fit)."""
    figure = Figure(figsize=_A4_LANDSCAPE)
    width, height = _A4_LANDSCAPE
    figure.text(_MARGIN_IN / width, 1 - _MARGIN_IN / height, title, fontsize=13, weight="bold", va="top")
    left, bottom = _MARGIN_IN / width, _MARGIN_IN / height
    axes = figure.add_axes((left, bottom, 1 - 2 * left, 1 - bottom - (_MARGIN_IN + _TITLE_IN) / height))
    axes.axis("off")
    cells = [[cell if isinstance(cell, str) else _number(cell) for cell in row] for row in rows] or [["–"] * len(header)]
    widths = [max([_text_columns(row[column]) for row in cells] + [8]) for column in range(len(header))]
    available = (width - 2 * _MARGIN_IN) * 72 / (_TABLE_FONT_PT * 0.62)  # columns of text the page holds
    # Headers wrap to their column, or to a share of what the cells leave free when that is wider.
    spare = max(0.0, available - sum(widths) - 2 * len(header)) / len(header)
    labels = [_wrap(name, int(widths[column] + spare)) for column, name in enumerate(header)]
    widths = [max(widths[column], *(_text_columns(line) for line in labels[column].split("\n"))) + 2 for column in range(len(header))]
    total = sum(widths)
    share = 1 - 2 * Table.AXESPAD  # "upper left" sets the table in by AXESPAD of the axes' width
    table = axes.table(
        cellText=cells, colLabels=labels, colWidths=[share * value / total for value in widths], loc="upper left", cellLoc="right"
    )
    table.auto_set_font_size(False)
    table.set_fontsize(_TABLE_FONT_PT * min(1.0, available / total))
    row_height = 1.6 * _TABLE_FONT_PT / 72 / (axes.get_position().height * height)
    header_lines = max(label.count("\n") + 1 for label in labels)
    for (row, column), cell in table.get_celld().items():
        cell.set_height(row_height * (header_lines if row == 0 else 1))
        if column == 0:
            cell.get_text().set_horizontalalignment("left")
            cell.PAD = 0.03
    return figure


def _pdf_tables(report: Mapping[str, Any], tr: Translations) -> list[tuple[str, list[str], list[list[Any]]]]:
    header, rows, _ = _stage_rows(report, tr)
    return [
        (tr.gettext("Stages"), header, rows),
        (tr.gettext("Bill of materials"), *_bom_rows(report, tr)),
        (tr.gettext("Structure and fault domain"), *_structure_rows(report, tr)),
    ]


def _text_columns(text: str) -> int:
    """How wide ``text`` prints, in Latin letters: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(character) in "WF" else 1 for character in text)


_NO_LINE_START = set("，。；：、！？）》」")
"""Chinese punctuation that stays at the end of the line before rather than start a line."""


def _wrap(text: str, columns: int) -> str:
    """Lines of at most ``columns`` (``_text_columns``), broken at spaces or between Chinese characters."""
    lines = []
    for paragraph in text.split("\n"):
        line = ""
        for token in re.findall(r"\S+\s*|\s+", paragraph) if paragraph else [""]:
            for piece in re.findall(r"[\u2e80-\u9fff\uff00-\uffef]|[^\u2e80-\u9fff\uff00-\uffef]+", token) or [token]:
                if line and _text_columns(line + piece.rstrip()) > columns and piece.strip() not in _NO_LINE_START:
                    lines.append(line.rstrip())
                    line = piece.lstrip()
                else:
                    line += piece
        lines.append(line.rstrip())
    return "\n".join(lines)


# -- CSV pieces --------------------------------------------------------------------------------


def _csv_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for stage in report["stages"]:
        base = {"alternative": stage["alternative"], "factor": stage["factor"], "cards": stage["cards"]}
        for collective, cell in stage["performance"].items():
            for point in cell["points"]:
                row = {**base, "section": "performance", "collective": collective, "size_bytes": point["size_bytes"],
                       "algorithm": point["algorithm"]}
                if point["error"]:
                    yield {**row, "item": "error", "value": point["error"]}
                    continue
                yield {**row, **{key: point[key] for key in ("chosen_algorithm", "chosen_protocol", "time_s", "busbw_GBps", "algbw_GBps", "bound", "bottleneck_link_class")}}
            if cell.get("ecmp"):
                ecmp = cell["ecmp"]
                for item in ("hash_busbw_GBps", "spray_busbw_GBps", "collision_loss"):
                    if ecmp[item] is not None:
                        yield {**base, "section": "ecmp", "collective": collective, "size_bytes": ecmp["size_bytes"],
                               "algorithm": ecmp["algorithm"], "item": item, "value": ecmp[item], "unit": _unit(item)}
        for metric, value in stage["efficiency"].items():
            if value is not None:
                yield {**base, "section": "efficiency", "collective": metric, "value": value, "unit": "fraction"}
        for section in ("bom", "bom_delta", "structure", "training"):
            for item, value in _numbers(stage[section], ""):
                yield {**base, "section": section, "item": item, "value": value, "unit": _unit(item)}


def _numbers(value: Any, prefix: str) -> Iterator[tuple[str, float]]:
    """Every number in a nested mapping, with its dotted key."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _numbers(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield prefix, value


def _unit(item: str) -> str:
    leaf = item.rsplit(".", 1)[-1]
    if item.startswith(("power_kw", "cost_usd")):
        leaf = item.split(".", 1)[0]
    return next((unit for suffix, unit in _UNITS if leaf.endswith(suffix)), "")
