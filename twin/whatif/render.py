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
import textwrap
from collections.abc import Iterator, Mapping
from typing import Any

from matplotlib import rc_context
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from twin.whatif.plots import FIGURES, size_text

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


def render_html(report: Mapping[str, Any], *, full_page: bool = True) -> str:
    """The report as HTML with inline SVG plots: a whole page, or a fragment to embed."""
    parts = [f'<div class="whatif"><h1>{_e(report["title"])}</h1>', _intro(report), _knee_html(report["knee"])]
    figures = {name: (caption, function) for name, caption, function in FIGURES}
    parts.append(_figure_html("scaling", *figures["scaling"], report))
    parts.append("<h2>Stages</h2>" + _stage_table(report))
    parts += [
        f'<p class="text">{_e(stage["label"])}, {_e(metric)}: {_e(note)}</p>'
        for stage in report["stages"]
        for metric, note in stage["efficiency_notes"].items()
    ]
    if len(report["alternatives"]) > 1:
        parts.append("<h2>Alternatives side by side</h2>" + _side_by_side_html(report))
        other_knees = [knee for name, knee in report["knees"].items() if name != report["primary"] and knee]
        parts += [f'<p class="text"><b>{_e(knee["alternative"])}</b>: {_e(knee["explanation"])}</p>' for knee in other_knees]
    parts.append(_figure_html("busbw-by-size", *figures["busbw-by-size"], report))
    parts.append("<h2>Bill of materials</h2>" + _bom_table(report))
    parts.append(_figure_html("bom", *figures["bom"], report))
    parts.append("<h2>Structure and fault domain</h2>" + _structure_table(report))
    parts.append(_figure_html("structure", *figures["structure"], report))
    if report["rules"]:
        parts.append("<h2>Design rules</h2>" + _rules_table(report["rules"]))
    parts.append(_details_html(report))
    parts.append("</div>")
    body = "\n".join(parts)
    if not full_page:
        return f"<style>{_STYLE}</style>\n{body}"
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(report["title"])}</title>'
        f"<style>{_STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def render_pdf(report: Mapping[str, Any]) -> bytes:
    """A printable PDF: a title page with the knee, the plots, then the stage tables."""
    buffer = io.BytesIO()
    with PdfPages(buffer, metadata={"Title": report["title"], "Creator": "twin.whatif", "CreationDate": None}) as pdf:
        pdf.savefig(_title_page(report))
        for _, caption, function in FIGURES:
            figure = function(report)
            figure.suptitle(caption, fontsize=11)
            pdf.savefig(figure)
        for title, header, rows in _pdf_tables(report):
            for start in range(0, max(1, len(rows)), 28):
                pdf.savefig(_table_page(title, header, rows[start : start + 28]))
    return buffer.getvalue()


def render_csv(report: Mapping[str, Any]) -> str:
    """Every number of the report, one per row (columns in the module docstring)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(_csv_rows(report))
    return buffer.getvalue()


def render_comparison_html(comparison: Mapping[str, Any]) -> str:
    """``compare_reports`` as an HTML fragment: both knees, then one table row per stage."""
    a, b = comparison["a"], comparison["b"]
    parts = [f'<div class="whatif"><style>{_STYLE}</style><h1>{_e(a["title"])} vs {_e(b["title"])}</h1>']
    for side, data in (("A", a), ("B", b)):
        knee = data["knee"]
        text = knee["explanation"] if knee else "no knee: efficiency never drops suddenly"
        parts.append(f'<p class="text"><b>{side}</b> ({_e(data["title"])}): {_e(text)}</p>')
    header = "".join(f'<th colspan="3">{_e(label)}</th>' for label in comparison["metrics"].values())
    sub = "<th>A</th><th>B</th><th>change</th>" * len(comparison["metrics"])
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
    parts.append(
        f'<table><tr><th class="text" rowspan="2">alternative</th><th rowspan="2">factor</th>{header}</tr>'
        f"<tr>{sub}</tr>{''.join(rows)}</table></div>"
    )
    return "\n".join(parts)


# -- HTML pieces -------------------------------------------------------------------------------


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


def _intro(report: Mapping[str, Any]) -> str:
    primary = [stage for stage in report["stages"] if stage["alternative"] == report["primary"]]
    sizes = report["sizes"]
    sweep = f"{size_text(sizes[0])} to {size_text(sizes[-1])} ({len(sizes)} sizes)" if sizes else "no sizes"
    reference = size_text(report["reference_size"]) if report["reference_size"] else "–"
    return (
        f'<p class="text">{len(primary)} stages of <b>{_e(report["primary"])}</b> from '
        f"{primary[0]['cards']:,} to {primary[-1]['cards']:,} cards"
        + (f"; alternatives: {_e(', '.join(report['alternatives'][1:]))}" if len(report["alternatives"]) > 1 else "")
        + f". Collectives {_e(', '.join(report['collectives']) or 'none')} over {sweep}; efficiencies at "
        f"{reference}; a knee is a drop of more than {report['threshold_points']:g} points from one stage to the next.</p>"
    )


def _knee_html(knee: Mapping[str, Any] | None) -> str:
    if knee is None:
        return '<div class="ok-box">No knee: efficiency never drops suddenly from one stage to the next.</div>'
    remedy = knee["remedy"]
    return (
        f'<div class="knee-box"><b>Knee at {knee["cards"]:,} cards ({knee["factor"]:g}x).</b> {_e(knee["explanation"])}'
        "<table><tr><th class='text'>symptom</th><th class='text'>likely cause</th><th class='text'>how to check</th>"
        "<th class='text'>fix</th></tr>"
        f"<tr><td class='text'>{_e(remedy['symptom'])}</td><td class='text'>{_e(remedy['likely_cause'])}</td>"
        f"<td class='text'>{_e(remedy['check'])}</td><td class='text'>{_e(remedy['fix'])}</td></tr></table></div>"
    )


def _figure_html(name: str, caption: str, function: Any, report: Mapping[str, Any]) -> str:
    return f'<figure id="plot-{name}">{_svg(function(report))}<figcaption>{_e(caption)}</figcaption></figure>'


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "twin-whatif"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})  # same report, same bytes
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE: inline SVG


def _table(header: list[str], rows: list[list[Any]], *, highlight: set[int] = frozenset()) -> str:
    head = "".join(f'<th class="{"text" if position == 0 else ""}">{_e(name)}</th>' for position, name in enumerate(header))
    body = []
    for number, row in enumerate(rows):
        cells = "".join(
            f'<td class="text">{_e(cell)}</td>' if isinstance(cell, str) else f"<td>{_number(cell)}</td>" for cell in row
        )
        body.append(f'<tr class="{"knee" if number in highlight else ""}">{cells}</tr>')
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _stage_rows(report: Mapping[str, Any]) -> tuple[list[str], list[list[Any]], set[int]]:
    collectives = report["collectives"]
    header = ["stage", "tiers", "switches", "power kW", "diameter", "bisection GB/s"]
    header += [f"{name} busbw" for name in collectives] + [f"{name} eff." for name in collectives]
    header += ["step comm s", "step eff."]
    rows, highlight = [], set()
    for number, stage in enumerate(report["stages"]):
        knee = report["knees"].get(stage["alternative"])
        if knee and knee["factor"] == stage["factor"]:
            highlight.add(number)
        rows.append(
            [stage["label"], stage["tiers"], stage["switches_total"], stage["power_kw"], stage["diameter_hops"], stage["bisection_GBps"]]
            + [stage["reference_busbw_GBps"].get(name) for name in collectives]
            + [_percent(stage["efficiency"].get(name)) for name in collectives]
            + [stage["step_comm_time_s"], _percent(stage["efficiency"].get("training_step"))]
        )
    return header, rows, highlight


def _stage_table(report: Mapping[str, Any]) -> str:
    header, rows, highlight = _stage_rows(report)
    # Percentages are text: keep them right-aligned like numbers.
    return _table(header, rows, highlight=highlight).replace('<td class="text">–</td>', "<td>–</td>")


def _side_by_side_html(report: Mapping[str, Any]) -> str:
    collectives = report["collectives"]
    header = ["factor / alternative", "cards", "tiers", "switches", "power kW", "cost USD", "bisection GB/s", "mean hops"]
    header += [f"{name} busbw" for name in collectives] + ["step comm s"]
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


def _bom_rows(report: Mapping[str, Any]) -> tuple[list[str], list[list[Any]]]:
    tiers = list(dict.fromkeys(tier for stage in report["stages"] for tier in stage["bom"]["switches"]))
    header = ["stage", "cards"] + [f"{tier} switches" for tier in tiers]
    header += ["cables", "transceivers", "power kW", "cost USD", "added switches", "added kW"]
    rows = []
    for stage in report["stages"]:
        bom, delta = stage["bom"], stage["bom_delta"]
        rows.append(
            [stage["label"], bom["cards"]]
            + [bom["switches"].get(tier, 0) for tier in tiers]
            + [bom["cables_total"], bom["transceivers_total"], bom["power_kw"]["total"], bom["cost_usd"]["total"],
               delta["switches_total"] if delta else None, delta["power_kw"]["total"] if delta else None]
        )
    return header, rows


def _bom_table(report: Mapping[str, Any]) -> str:
    header, rows = _bom_rows(report)
    return _table(header, rows)


def _structure_rows(report: Mapping[str, Any]) -> tuple[list[str], list[list[Any]]]:
    tiers = list(dict.fromkeys(tier for stage in report["stages"] for tier in stage["structure"]["fault_domain"]))
    header = ["stage", "mean hops", "bisection per card GB/s"]
    header += [f"lose one {tier}: cut off / degraded" for tier in tiers]
    rows = []
    for stage in report["stages"]:
        structure = stage["structure"]
        faults = structure["fault_domain"]
        rows.append(
            [stage["label"], structure["mean_hops"], structure["bisection_per_card_GBps"]]
            + [
                f"{faults[tier]['cut_off_cards']:,} / {faults[tier]['degraded_cards']:,}" if tier in faults else "–"
                for tier in tiers
            ]
        )
    return header, rows


def _structure_table(report: Mapping[str, Any]) -> str:
    header, rows = _structure_rows(report)
    return _table(header, rows)


def _rules_table(rules: Mapping[str, Any]) -> str:
    inferred = rules.get("inferred", {})
    rows = [[name, _number(value), inferred.get(name, "")] for name, value in rules.items() if name != "inferred"]
    return _table(["rule", "value", "how it was found"], rows)


def _details_html(report: Mapping[str, Any]) -> str:
    """Per stage, busbw per size and collective (collapsed): the numbers behind the plots."""
    parts = ["<h2>busbw per size</h2>"]
    for stage in report["stages"]:
        collectives = list(stage["busbw_GBps"])
        sizes = sorted({size for series in stage["busbw_GBps"].values() for size in series}, key=int)
        rows = [[size_text(int(size))] + [stage["busbw_GBps"][name].get(size) for name in collectives] for size in sizes]
        parts.append(f"<details><summary>{_e(stage['label'])}</summary>{_table(['size', *collectives], rows)}</details>")
    return "\n".join(parts)


# -- PDF pieces --------------------------------------------------------------------------------


def _title_page(report: Mapping[str, Any]) -> Figure:
    figure = Figure(figsize=(8.27, 11.69))  # A4 portrait
    figure.text(0.08, 0.93, report["title"], fontsize=18, weight="bold")
    knee = report["knee"]
    if knee:
        heading = f"Knee at {knee['cards']:,} cards ({knee['factor']:g}x {knee['alternative']})"
        body = f"{knee['explanation']}\n\nSymptom: {knee['remedy']['symptom']}. Check: {knee['remedy']['check']}. Fix: {knee['remedy']['fix']}."
    else:
        heading, body = "No knee", "Efficiency never drops suddenly from one stage to the next."
    figure.text(0.08, 0.87, heading, fontsize=13, color="#c0392b" if knee else "#27ae60", weight="bold")
    figure.text(0.08, 0.84, _wrap(body), fontsize=10, va="top")
    lines = [f"{stage['label']}: {stage['tiers']} tiers, {stage['switches_total']:,} switches, "
             f"{stage['power_kw']:,.0f} kW, bisection {stage['bisection_GBps']:,.0f} GB/s" for stage in report["stages"]]
    figure.text(0.08, 0.62, "Stages", fontsize=12, weight="bold")
    figure.text(0.08, 0.60, "\n".join(lines[:40]), fontsize=8, va="top", family="monospace")
    return figure


def _table_page(title: str, header: list[str], rows: list[list[Any]]) -> Figure:
    figure = Figure(figsize=(11.69, 8.27))  # A4 landscape
    axes = figure.add_axes((0.03, 0.05, 0.94, 0.85))
    axes.axis("off")
    figure.text(0.03, 0.94, title, fontsize=13, weight="bold")
    cells = [[cell if isinstance(cell, str) else _number(cell) for cell in row] for row in rows] or [["–"] * len(header)]
    table = axes.table(cellText=cells, colLabels=[textwrap.fill(name, 14) for name in header], loc="upper left", cellLoc="right")
    table.auto_set_font_size(False)
    table.set_fontsize(6.5)
    table.scale(1.0, 1.5)
    return figure


def _pdf_tables(report: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[Any]]]]:
    header, rows, _ = _stage_rows(report)
    return [
        ("Stages", header, rows),
        ("Bill of materials", *_bom_rows(report)),
        ("Structure and fault domain", *_structure_rows(report)),
    ]


def _wrap(text: str) -> str:
    return "\n".join(textwrap.fill(paragraph, 95) for paragraph in text.split("\n"))


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
