"""Benchmark of the staged what-if core against issue 6's speed target.

Run from the repository root: ``.venv/bin/python bench/bench_whatif.py``
(``--alternatives`` adds k-supernodes and rail; ``--factors 1,2,4`` for a
shorter run).

Case: the demo super-node (1,024 cards, radix 64) grown 1x..16x (16,384
cards), 4 collectives x 21 sizes (1 KiB..1 GiB) x ``auto``, the training
step, BOM and structure, all run SERIALLY in this process, each cell as a
Celery worker would run it: the stage's fabric rebuilt from its
``StageSpec`` and compiled afresh. Printed: each cell's time, the total,
an estimate of the 2-worker wall time (longest-first scheduling of the
measured cells), the report assembly and render times, and the baseline
ratio: the congestion-aware sweep vs the closed-form-only time of the same
algorithm (``algorithms.closed_form_time``), with how far the closed form's
busbw is off. Figures are printed, not asserted (target: < 60 s with 2
workers, report page < 1 s).
"""

from __future__ import annotations

import argparse
import gettext
import heapq
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from twin.simcore.algorithms import BUS_FACTORS, closed_form_time, phases_for  # noqa: E402
from twin.simcore.compile import _compile_cached  # noqa: E402
from twin.simcore.generate import supernode  # noqa: E402
from twin.simcore.transport import PROTOCOLS, Transport  # noqa: E402
from twin.whatif.bom import bill_of_materials  # noqa: E402
from twin.whatif.performance import DEFAULT_COLLECTIVES, DEFAULT_SIZES, performance_cell, training_step_cell  # noqa: E402
from twin.whatif.render import render_csv, render_html, render_pdf, report_json  # noqa: E402
from twin.whatif.report import assemble_report  # noqa: E402
from twin.whatif.rules import design_rules  # noqa: E402
from twin.whatif.stages import StageSpec, build_stage, plan_stages  # noqa: E402
from twin.whatif.structure import structure as fabric_structure  # noqa: E402


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return time.perf_counter() - start, value


def fresh_cell(stage: StageSpec, cell, *args, **kwargs):
    """A cell as a fresh worker runs it: rebuild the fabric, compile afresh, run."""
    _compile_cached.cache_clear()
    start = time.perf_counter()
    spec = build_stage(StageSpec.from_dict(stage.to_dict()))
    value = cell(spec, *args, **kwargs)
    return time.perf_counter() - start, value


def makespan(durations: list[float], workers: int) -> float:
    """Wall time of running ``durations`` on ``workers``, longest first (a good Celery fan-out)."""
    loads = [0.0] * workers
    for duration in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + duration)
    return max(loads)


def closed_form_baseline(cards: int, collective: str, algorithm: str) -> tuple[float, list[float]]:
    """Seconds and busbw (GB/s) of the closed-form-only model over the sweep, each size with its
    fastest protocol (as the congestion-aware sweep picks)."""
    scale_up = Transport().scale_up
    start = time.perf_counter()
    busbw = []
    for size in DEFAULT_SIZES:
        phases = phases_for(collective, algorithm, size, cards)
        seconds = min(
            closed_form_time(
                phases,
                bandwidth=400e9 / 8 * protocol.efficiency,
                alpha=protocol.hop_latency_ns * 1e-9 + 3 * 100e-9 + 4 * 10e-9,
                chunk_bytes=protocol.chunk_bytes,
                chunks_in_flight=protocol.chunks_in_flight,
                base=protocol.base_latency_ns * 1e-9,
            )
            for protocol in (scale_up.protocol(name) for name in PROTOCOLS)
        )
        busbw.append(size / seconds / 1e9 * BUS_FACTORS[collective](cards))
    return time.perf_counter() - start, busbw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--factors", default="1,2,4,8,16")
    parser.add_argument("--alternatives", action="store_true", help="also k-supernodes and rail")
    parser.add_argument("--out", type=Path, help="write report.html, report.pdf, stages.csv and report.json here")
    arguments = parser.parse_args()
    factors = [int(factor) for factor in arguments.factors.split(",")]
    alternatives = ("one-supernode", "k-supernodes", "rail") if arguments.alternatives else ("one-supernode",)

    rules = design_rules(supernode())
    planning, stages = timed(plan_stages, rules, factors, alternatives)
    print(f"planned {len(stages)} stages in {planning * 1e3:.1f} ms: {', '.join(stage.label for stage in stages)}")
    cells: list[tuple[str, float]] = []
    results = []
    total_start = time.perf_counter()
    for stage in stages:
        build, _ = timed(build_stage, stage)
        print(f"\n{stage.label}: build {build:.2f} s")
        seconds, bom = fresh_cell(stage, bill_of_materials)
        seconds_structure, structure = fresh_cell(stage, fabric_structure)
        performance = []
        row = [("bom", seconds), ("structure", seconds_structure)]
        for collective in DEFAULT_COLLECTIVES:
            seconds, cell = fresh_cell(stage, performance_cell, collective)
            performance.append(cell)
            row.append((collective, seconds))
        seconds, training = fresh_cell(stage, training_step_cell)
        row.append(("training", seconds))
        for name, seconds in row:
            print(f"  {name:<14} {seconds:7.2f} s")
            cells.append((f"{stage.label} {name}", seconds))
        results.append({"stage": stage.to_dict(), "bom": bom, "structure": structure, "performance": performance, "training": training})
    serial = time.perf_counter() - total_start
    durations = [seconds for _, seconds in cells]
    print(f"\nserial total {serial:.1f} s over {len(cells)} cells (each rebuilding its fabric)")
    print(f"estimated wall time with 2 workers: {makespan(durations, 2):.1f} s; with 4: {makespan(durations, 4):.1f} s")
    print(f"longest cells: {', '.join(f'{name} {seconds:.1f} s' for name, seconds in sorted(cells, key=lambda c: -c[1])[:5])}")

    assembly, report = timed(assemble_report, results, rules=rules.to_dict())
    html_seconds, page = timed(render_html, report)
    warm_html_seconds, _ = timed(render_html, report)
    pdf_seconds, pdf = timed(render_pdf, report)
    with (ROOT / "twin/locale/zh_Hans/LC_MESSAGES/django.mo").open("rb") as catalogue:
        chinese_pdf_seconds, chinese_pdf = timed(render_pdf, report, translations=gettext.GNUTranslations(catalogue))
    csv_seconds, table = timed(render_csv, report)
    json_seconds, text = timed(report_json, report)
    print(f"\nassemble {assembly * 1e3:.0f} ms; render HTML {html_seconds:.2f} s first, {warm_html_seconds:.2f} s warm ({len(page) / 1e3:.0f} kB), "
          f"PDF {pdf_seconds:.2f} s ({len(pdf) / 1e3:.0f} kB), Chinese PDF {chinese_pdf_seconds:.2f} s ({len(chinese_pdf) / 1e3:.0f} kB), "
          f"CSV {csv_seconds * 1e3:.0f} ms "
          f"({table.count(chr(10)):,} rows), JSON {json_seconds * 1e3:.0f} ms ({len(text) / 1e6:.1f} MB)")
    knee = report["knee"]
    print("knee:", knee["explanation"] if knee else "none")
    if arguments.out:
        arguments.out.mkdir(parents=True, exist_ok=True)
        (arguments.out / "report.html").write_text(page)
        (arguments.out / "report.pdf").write_bytes(pdf)
        (arguments.out / "stages.csv").write_text(table)
        (arguments.out / "report.json").write_text(text)
        print(f"wrote {arguments.out}/report.html, report.pdf, stages.csv, report.json")

    print("\nbaseline: closed-form-only (non-blocking, no routing) vs congestion-aware, allreduce ring sweep")
    for result in results:
        stage = result["stage"]
        if stage["alternative"] != "one-supernode":
            continue
        spec = build_stage(StageSpec.from_dict(stage))
        seconds_sim, cell = timed(performance_cell, spec, "allreduce", algorithms=("ring",))
        seconds_closed, busbw = closed_form_baseline(stage["cards"], "allreduce", "ring")
        simulated = cell["points"][-1]["busbw_GBps"]
        print(f"  {stage['cards']:>6,} cards: congestion-aware {seconds_sim:6.2f} s, closed form {seconds_closed * 1e3:6.1f} ms "
              f"({seconds_sim / seconds_closed:,.0f}x slower); busbw at 1 GiB {simulated:.1f} vs closed form {busbw[-1]:.1f} GB/s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"\npeak resident memory {peak:.2f} GiB")


if __name__ == "__main__":
    main()
