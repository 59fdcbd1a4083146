"""The report's plots as matplotlib figures, shared by the HTML (SVG) and PDF renderings.

Figures are built with ``matplotlib.figure.Figure`` directly (no pyplot, no
global state, safe in worker threads); nothing is fetched from the network.
Every function takes the assembled report dict (``assemble_report``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

__all__ = ["FIGURES", "figure_bom", "figure_busbw_by_size", "figure_scaling", "figure_structure", "size_text"]

_KNEE_COLOUR = "#c0392b"
_NAN = float("nan")
_WIDE = (10.0, 3.8)


def size_text(size: float) -> str:
    """1024 -> ``"1 KiB"``, 2**30 -> ``"1 GiB"``: the binary unit nccl-tests sweeps in.

    >>> size_text(1024), size_text(3 * 2**20), size_text(512)
    ('1 KiB', '3 MiB', '512 B')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size:g} B"


def figure_scaling(report: Mapping[str, Any]) -> Figure:
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
                efficiency.plot(cards, values, style, marker="o", linewidth=width, label=f"{alternative}: {_metric_name(metric)}")
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
        _cards_axis(axes)
        if knee:
            axes.axvline(knee["cards"], color=_KNEE_COLOUR, linestyle=":", linewidth=1.5)
    if knee:
        efficiency.annotate(
            f"knee: {knee['drop_points']:.0f} points\n{knee['cause']}",
            (knee["cards"], _percent(knee["efficiency"])),
            xytext=(8, -28),
            textcoords="offset points",
            color=_KNEE_COLOUR,
            fontsize=8,
        )
    efficiency.set_ylabel("efficiency vs first stage (%)")
    efficiency.set_title("Scaling efficiency", fontsize=10)
    efficiency.legend(fontsize=7)
    reference = report["reference_size"]
    busbw.set_ylabel("busbw (GB/s)")
    busbw.set_title(f"busbw at {size_text(reference) if reference else '?'}: {report['primary']}", fontsize=10)
    if report["collectives"]:
        busbw.legend(fontsize=7)
    return figure


def figure_busbw_by_size(report: Mapping[str, Any]) -> Figure:
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
                [int(size) for size in sizes], [_known(series[size]) for size in sizes], marker=".", label=f"{stage['cards']:,} cards"
            )
        axes.set_xscale("log", base=2)
        axes.minorticks_off()
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: size_text(value)))
        axes.set_title(f"{collective} busbw vs size ({report['primary']})", fontsize=10)
        axes.set_ylabel("busbw (GB/s)")
        axes.grid(True, alpha=0.3)
        axes.tick_params(axis="x", labelsize=7)
        axes.legend(fontsize=7)
    for position in range(len(collectives), rows * columns):
        axes_grid[position // columns][position % columns].set_visible(False)
    return figure


def figure_bom(report: Mapping[str, Any]) -> Figure:
    """Switches per tier (primary, stacked) and power vs cards (every alternative)."""
    figure = _figure(_WIDE)
    switches, power = figure.subplots(1, 2)
    primary = _stages(report, report["primary"])
    labels = [f"{stage['cards']:,}" for stage in primary]
    tiers = list(dict.fromkeys(tier for stage in primary for tier in stage["switches"]))
    bottom = [0] * len(primary)
    for tier in tiers:
        counts = [stage["switches"].get(tier, 0) for stage in primary]
        switches.bar(labels, counts, bottom=bottom, label=tier)
        bottom = [low + count for low, count in zip(bottom, counts)]
    switches.set_xlabel("cards")
    switches.set_ylabel("switches")
    switches.set_title(f"Switches per tier ({report['primary']})", fontsize=10)
    switches.legend(fontsize=7)
    for alternative in report["alternatives"]:
        stages = _stages(report, alternative)
        power.plot([stage["cards"] for stage in stages], [stage["power_kw"] for stage in stages], marker="o", label=alternative)
    _cards_axis(power)
    power.set_yscale("log")
    power.minorticks_off()
    power.set_ylabel("power (kW)")
    power.set_title("Power", fontsize=10)
    power.legend(fontsize=7)
    return figure


def figure_structure(report: Mapping[str, Any]) -> Figure:
    """Diameter and mean hops, and bisection bandwidth, vs cards (every alternative)."""
    figure = _figure(_WIDE)
    hops, bisection = figure.subplots(1, 2)
    for alternative in report["alternatives"]:
        stages = _stages(report, alternative)
        cards = [stage["cards"] for stage in stages]
        line = hops.plot(cards, [stage["diameter_hops"] for stage in stages], marker="o", label=f"{alternative} diameter")
        hops.plot(cards, [stage["mean_hops"] for stage in stages], "--", color=line[0].get_color(), label=f"{alternative} mean")
        bisection.plot(cards, [stage["bisection_GBps"] for stage in stages], marker="o", label=alternative)
    for axes in (hops, bisection):
        _cards_axis(axes)
        axes.legend(fontsize=7)
    hops.set_ylabel("switch hops between cards")
    hops.set_title("Hops", fontsize=10)
    bisection.set_yscale("log")
    bisection.minorticks_off()
    bisection.set_ylabel("bisection (GB/s)")
    bisection.set_title("Bisection bandwidth", fontsize=10)
    return figure


FIGURES = (
    ("scaling", "Scaling curve: efficiency and busbw vs cards (the knee dotted)", figure_scaling),
    ("busbw-by-size", "busbw vs message size per stage", figure_busbw_by_size),
    ("bom", "Bill of materials and power growth", figure_bom),
    ("structure", "Hop and bisection growth", figure_structure),
)
"""(id, caption, function) of every plot, in report order."""


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


def _metric_name(metric: str) -> str:
    return "training step" if metric == "training_step" else f"{metric} busbw"


def _cards_axis(axes: Any) -> None:
    axes.set_xscale("log", base=2)
    axes.minorticks_off()
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    axes.set_xlabel("cards")
    axes.grid(True, alpha=0.3)
