"""The report's plots as matplotlib figures, shared by the HTML (SVG) and PDF renderings.

Figures are built with ``matplotlib.figure.Figure`` directly (no pyplot, no
global state, safe in worker threads); nothing is fetched from the network.
Every function takes the assembled report dict (``assemble_report``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib import font_manager
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from twin.whatif.report import CAUSE_NAMES
from twin.whatif.rules import tier_name
from twin.simcore.translation import ENGLISH, Translations, gettext_noop

__all__ = ["FIGURES", "cards_text", "font_settings", "metric_name", "figure_bom", "figure_busbw_by_size", "figure_scaling", "figure_structure", "size_text"]

_KNEE_COLOUR = "#c0392b"
_NAN = float("nan")
_WIDE = (10.0, 3.8)


# Chinese glyphs come from the first of these fonts found (Debian packages fonts-droid-fallback,
# fonts-noto-cjk, fonts-wqy-microhei); matplotlib falls back to it for what DejaVu Sans lacks.
_CJK_FONT_FILES = (
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
)


@functools.cache
def font_settings() -> dict[str, Any]:
    """matplotlib settings that draw Latin text in DejaVu Sans and Chinese in a CJK font."""
    for path in _CJK_FONT_FILES:
        if Path(path).exists():
            font_manager.fontManager.addfont(path)
            cjk = font_manager.FontProperties(fname=path).get_name()
            return {"font.family": ["sans-serif", cjk]}
    return {}


def size_text(size: float) -> str:
    """1024 -> ``"1 KiB"``, 2**30 -> ``"1 GiB"``: the binary unit nccl-tests sweeps in.

    >>> size_text(1024), size_text(3 * 2**20), size_text(512)
    ('1 KiB', '3 MiB', '512 B')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size:g} B"


def figure_scaling(report: Mapping[str, Any], tr: Translations = ENGLISH) -> Figure:
    """Efficiency vs cards (every alternative) and reference busbw vs cards (primary)."""
    figure = _figure(_WIDE)
    efficiency, busbw = figure.subplots(1, 2)
    first_metric = report["collectives"][0] if report["collectives"] else None
    for alternative in report["alternatives"]:
        stages = _stages(report, alternative)
        cards = [stage["cards"] for stage in stages]
        width = 2.4 if alternative == report["primary"] else 1.2
        for metric, style in ((first_metric, "-"), ("training_step", "--")):
            if metric is None:
                continue
            values = [_percent(stage["efficiency"].get(metric)) for stage in stages]
            if any(value == value for value in values):  # not all NaN
                efficiency.plot(cards, values, style, marker="o", linewidth=width, label=f"{alternative}: {metric_name(metric, tr)}")
    primary = _stages(report, report["primary"])
    for collective in report["collectives"]:
        busbw.plot(
            [stage["cards"] for stage in primary],
            [_known(stage["reference_busbw_GBps"].get(collective)) for stage in primary],
            marker="o",
            label=collective,
        )
    knee = report["knee"]
    for axes in (efficiency, busbw):
        _cards_axis(axes, tr)
        if knee:
            axes.axvline(knee["cards"], color=_KNEE_COLOUR, linestyle=":", linewidth=1.5)
    if knee:
        _knee_label(efficiency, knee, [stage["cards"] for stage in primary], tr)
    efficiency.set_ylabel(tr.gettext("efficiency vs first stage (%)"))
    efficiency.set_title(tr.gettext("Scaling efficiency"), fontsize=10)
    efficiency.legend(fontsize=7)
    reference = report["reference_size"]
    busbw.set_ylabel(tr.gettext("busbw (GB/s)"))
    busbw.set_title(
        tr.gettext("busbw at %(size)s: %(alternative)s") % {"size": size_text(reference) if reference else "?", "alternative": report["primary"]},
        fontsize=10,
    )
    if report["collectives"]:
        busbw.legend(fontsize=7)
    return figure


def figure_busbw_by_size(report: Mapping[str, Any], tr: Translations = ENGLISH) -> Figure:
    """busbw vs message size, one panel per collective, one line per stage (primary)."""
    collectives = report["collectives"] or ["allreduce"]
    columns = min(2, len(collectives))
    rows = (len(collectives) + columns - 1) // columns
    figure = _figure((10.0, 3.2 * rows))
    axes_grid = figure.subplots(rows, columns, squeeze=False)
    for position, collective in enumerate(collectives):
        axes = axes_grid[position // columns][position % columns]
        for stage in _stages(report, report["primary"]):
            series = stage["busbw_GBps"].get(collective, {})
            sizes = sorted(series, key=int)
            axes.plot(
                [int(size) for size in sizes], [_known(series[size]) for size in sizes], marker=".", label=cards_text(stage["cards"], tr)
            )
        axes.set_xscale("log", base=2)
        axes.minorticks_off()
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: size_text(value)))
        axes.set_title(
            tr.gettext("%(collective)s busbw vs message size (%(alternative)s)") % {"collective": collective, "alternative": report["primary"]},
            fontsize=10,
        )
        axes.set_xlabel(tr.gettext("message size"))
        axes.set_ylabel(tr.gettext("busbw (GB/s)"))
        axes.grid(True, alpha=0.3)
        axes.tick_params(axis="x", labelsize=7)
        axes.legend(fontsize=7)
    for position in range(len(collectives), rows * columns):
        axes_grid[position // columns][position % columns].set_visible(False)
    return figure


def figure_bom(report: Mapping[str, Any], tr: Translations = ENGLISH) -> Figure:
    """Switches per tier (primary, stacked) and power vs cards (every alternative)."""
    figure = _figure(_WIDE)
    switches, power = figure.subplots(1, 2)
    primary = _stages(report, report["primary"])
    labels = [f"{stage['cards']:,}" for stage in primary]
    tiers = list(dict.fromkeys(tier for stage in primary for tier in stage["switches"]))
    bottom = [0] * len(primary)
    for tier in tiers:
        counts = [stage["switches"].get(tier, 0) for stage in primary]
        switches.bar(labels, counts, bottom=bottom, label=tier_name(tier, tr))
        bottom = [low + count for low, count in zip(bottom, counts)]
    switches.set_xlabel(tr.pgettext("column or axis", "cards"))
    switches.set_ylabel(tr.gettext("switches"))
    switches.set_title(tr.gettext("Switches per tier (%(alternative)s)") % {"alternative": report["primary"]}, fontsize=10)
    switches.legend(fontsize=7)
    for alternative in report["alternatives"]:
        stages = _stages(report, alternative)
        power.plot([stage["cards"] for stage in stages], [stage["power_kw"] for stage in stages], marker="o", label=alternative)
    _cards_axis(power, tr)
    power.set_yscale("log")
    power.minorticks_off()
    power.set_ylabel(tr.gettext("power (kW)"))
    power.set_title(tr.gettext("Power"), fontsize=10)
    power.legend(fontsize=7)
    return figure


def figure_structure(report: Mapping[str, Any], tr: Translations = ENGLISH) -> Figure:
    """Diameter and mean hops, and bisection bandwidth, vs cards (every alternative)."""
    figure = _figure(_WIDE)
    hops, bisection = figure.subplots(1, 2)
    for alternative in report["alternatives"]:
        stages = _stages(report, alternative)
        cards = [stage["cards"] for stage in stages]
        line = hops.plot(cards, [stage["diameter_hops"] for stage in stages], marker="o", label=tr.gettext("%(alternative)s: diameter") % {"alternative": alternative})
        hops.plot(
            cards, [stage["mean_hops"] for stage in stages], "--", color=line[0].get_color(),
            label=tr.gettext("%(alternative)s: mean") % {"alternative": alternative},
        )
        bisection.plot(cards, [stage["bisection_GBps"] for stage in stages], marker="o", label=alternative)
    for axes in (hops, bisection):
        _cards_axis(axes, tr)
        axes.legend(fontsize=7)
    hops.set_ylabel(tr.gettext("switch hops between cards"))
    hops.set_title(tr.gettext("Hops"), fontsize=10)
    bisection.set_yscale("log")
    bisection.minorticks_off()
    bisection.set_ylabel(tr.gettext("bisection (GB/s)"))
    bisection.set_title(tr.gettext("Bisection bandwidth"), fontsize=10)
    return figure


FIGURES = (
    ("scaling", gettext_noop("Scaling curve: efficiency and busbw vs cards (the knee dotted)"), figure_scaling),
    ("busbw-by-size", gettext_noop("busbw vs message size per stage"), figure_busbw_by_size),
    ("bom", gettext_noop("Bill of materials and power growth"), figure_bom),
    ("structure", gettext_noop("Hop and bisection growth"), figure_structure),
)
"""(id, caption in English, function(report, translations)) of every plot, in report order."""

def cards_text(cards: int, tr: Translations = ENGLISH) -> str:
    """``"1,024 cards"``, with the plural of the reader's language."""
    return tr.ngettext("%(count)s card", "%(count)s cards", cards) % {"count": f"{cards:,}"}


def _figure(size: tuple[float, float]) -> Figure:
    # Fixed margins: constrained layout would double the drawing time (the page must render in < 1 s).
    figure = Figure(figsize=size)
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.14, top=0.9, wspace=0.22, hspace=0.45)
    return figure


def _stages(report: Mapping[str, Any], alternative: str) -> list[Mapping[str, Any]]:
    return [stage for stage in report["stages"] if stage["alternative"] == alternative]


def _percent(value: float | None) -> float:
    return _NAN if value is None else value * 100


def _known(value: float | None) -> float:
    """Missing values as NaN, which matplotlib leaves out of a line."""
    return _NAN if value is None else value


def metric_name(metric: str, tr: Translations) -> str:
    if metric == "training_step":
        return tr.gettext("training step")
    return tr.gettext("%(collective)s busbw") % {"collective": metric}


def _knee_label(axes: Any, knee: Mapping[str, Any], cards: list[int], tr: Translations) -> None:
    """The knee's drop and cause next to its point, on the side with room: a knee in the right
    half is labelled to its left, so the text never runs off the figure."""
    on_right = bool(cards) and knee["cards"] >= cards[len(cards) // 2] and len(cards) > 1
    points = tr.ngettext("knee: %(points)s point", "knee: %(points)s points", round(knee["drop_points"]))
    axes.annotate(
        points % {"points": f"{knee['drop_points']:.0f}"} + "\n" + tr.gettext(CAUSE_NAMES.get(knee["cause"], knee["cause"])),
        (knee["cards"], _percent(knee["efficiency"])),
        xytext=(-8 if on_right else 8, -12),
        textcoords="offset points",
        ha="right" if on_right else "left",
        va="top",
        color=_KNEE_COLOUR,
        fontsize=8,
        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": _KNEE_COLOUR, "alpha": 0.9},
    )


def _cards_axis(axes: Any, tr: Translations) -> None:
    axes.set_xscale("log", base=2)
    axes.minorticks_off()
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    axes.set_xlabel(tr.pgettext("column or axis", "cards"))
    axes.grid(True, alpha=0.3)
