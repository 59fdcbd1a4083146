"""Benchmark of the WebGL fabric map on a 16,384-card 3-tier fat-tree, in headless Chromium.

Run from the repository root after ``(cd frontend && npm run build)``:
``.venv/bin/python bench/bench_map.py`` (``--cards N --radix K`` for another size).

No Django: it builds ``fat_tree(endpoints=16384, radix=64)``, computes
``fabric_layout`` (printing its time and JSON size), writes the layout and a
tiny harness page that loads the built ``frontend/dist/app.js`` into a temp
directory, serves it with ``http.server`` on 127.0.0.1 (a thread, stopped at
the end) and drives Chromium through Playwright (Debian's /usr/bin/chromium,
software WebGL). Through the map's ``window.__twinMap`` hook it prints the
first-draw time (from navigation start), then for each zoom level the elements
drawn, the level-of-detail update time (scene + sigma rebuild + render) and
the redraw time (a synchronous sigma render waiting for the GPU, median of
five). The same is measured with the map in the fabric workspace, as the fabric
page shows it: the right-hand and bottom docks open around it, their panels
expanded (frontend/src/workspace/), and for the naive baseline: every node and
link in sigma, no level of detail (``data-lod="off"``). Figures are printed,
not asserted.
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from bench.measure import keep_figure  # noqa: E402
from twin.simcore.generate import fat_tree  # noqa: E402
from twin.simcore.layout import fabric_layout  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Camera ratios: 1 shows the whole fabric; smaller zooms in (0.01 is 100x).
ZOOMS = (1.0, 0.5, 0.25, 0.1, 0.05, 0.02, 0.01)
REDRAWS = 5
VIEWPORT = {"width": 1400, "height": 900}

HARNESS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>map bench</title>
<link rel="stylesheet" href="app.css"></head>
<body data-lang="en" data-health-url="health.json">
<main style="padding:8px">
<div id="fabric-map" data-layout-url="layout.json" data-lod="{lod}"></div>
</main>
<script src="app.js" defer></script>
</body></html>
"""

# The fabric page's workspace: the map's panel and docked panels as the template renders them,
# every panel expanded (the stored layout collapses none); the legend and details in their panels.
PANEL = """<section class="panel" data-dock="{dock}" data-panel="{name}"><h2>{title}</h2>{body}</section>"""
FORM = "<form class='inline-form'>" + "".join(f"<label>Field {i} <input value='{i}'></label>" for i in range(6)) + "<button class='btn btn-primary' type='button'>Start</button></form>"
WORKSPACE_PANELS = "".join(
    PANEL.format(dock=dock, name=name, title=title, body=body)
    for dock, name, title, body in (
        ("right", "fabric", "bench fat-tree", "<dl class='kv'>" + "".join(f"<dt>Key {i}</dt><dd>{i * 1024:,}</dd>" for i in range(8)) + "</dl>"),
        ("right", "details", "Details", "<div id='map-details'><p class='muted map-details-empty'>Pick a node.</p></div>"),
        ("right", "legend", "Legend", "<div id='map-legend'></div>"),
        ("right", "collective", "Collective simulation", FORM),
        ("right", "placement", "Place a job", FORM),
        ("right", "failures", "What if something fails?", FORM),
        ("bottom", "player", "Replay player", "<p class='muted'>" + "The player appears here. " * 20 + "</p>"),
    )
)
WORKSPACE_HARNESS = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>map bench, workspace</title>
<link rel="stylesheet" href="app.css"></head>
<body data-lang="en" data-health-url="health.json">
<header class="topbar"><span class="brand">Fabric twin</span></header>
<main class="page">
<div class="workspace" id="workspace" data-layout='{{"right": 460, "bottom": 300, "collapsed": []}}' data-layout-url="preference.json">
<section class="panel workspace-map" id="map-panel"><h2>Map</h2>
<div id="fabric-map" data-layout-url="layout.json" data-lod="on" data-details-host="map-details" data-legend-host="map-legend"></div></section>
{WORKSPACE_PANELS}
</div>
</main>
<script src="app.js" defer></script>
</body></html>
"""


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def serve(directory: Path) -> tuple[ThreadingHTTPServer, threading.Thread]:
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


def write_site(directory: Path, layout: dict) -> int:
    dist = ROOT / "frontend" / "dist"
    if not (dist / "app.js").exists():
        raise SystemExit("frontend/dist/app.js is missing: run (cd frontend && npm run build) first")
    for name in ("app.js", "app.css"):
        shutil.copy(dist / name, directory / name)
    payload = json.dumps(layout, separators=(",", ":"))
    (directory / "layout.json").write_text(payload)
    (directory / "health.json").write_text('{"status": "ok", "redis": "ok"}')
    (directory / "lod.html").write_text(HARNESS.replace("{lod}", "on"))
    (directory / "naive.html").write_text(HARNESS.replace("{lod}", "off"))
    (directory / "workspace.html").write_text(WORKSPACE_HARNESS)
    return len(payload)


def measure(page, url: str, centre: tuple[float, float], zooms: tuple[float, ...]) -> dict:
    page.goto(url)
    page.wait_for_function("window.__twinMap !== undefined && window.__twinMap.firstDrawAt > 0", timeout=120_000)
    first_draw = page.evaluate("window.__twinMap.firstDrawAt")
    levels = []
    for ratio in zooms:
        update = page.evaluate(
            "([ratio, x, y]) => { const m = window.__twinMap; m.setCamera(ratio, x, y); return m.updateLod(); }",
            [ratio, *centre],
        )
        redraws = page.evaluate(
            f"() => Array.from({{length: {REDRAWS}}}, () => window.__twinMap.redraw())"
        )
        drawn = page.evaluate("window.__twinMap.drawn()")
        levels.append({"ratio": ratio, "update_ms": update, "redraw_ms": statistics.median(redraws), **drawn})
    return {"first_draw_ms": first_draw, "levels": levels}


def print_run(title: str, run: dict) -> None:
    print(f"\n{title}: first frame {run['first_draw_ms']:.0f} ms after navigation start")
    print(f"  {'zoom':>6} {'markers':>8} {'links':>7} {'frames':>7} {'total':>7} {'LOD update':>11} {'redraw':>8}")
    for level in run["levels"]:
        print(
            f"  {1 / level['ratio']:>5.0f}x {level['nodes']:>8} {level['edges']:>7} {level['frames']:>7} "
            f"{level['total']:>7} {level['update_ms']:>8.0f} ms {level['redraw_ms']:>5.0f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=16384)
    parser.add_argument("--radix", type=int, default=64)
    parser.add_argument("--screenshots", type=Path, default=None, help="save a PNG per zoom level here")
    args = parser.parse_args()

    fabric = fat_tree(endpoints=args.cards, radix=args.radix)
    started = time.perf_counter()
    layout = fabric_layout(fabric)
    layout_seconds = time.perf_counter() - started
    print(
        f"fabric: {len(fabric.cards())} cards, {len(fabric.switches())} switches, {len(fabric.links)} links"
    )

    with tempfile.TemporaryDirectory(prefix="bench-map-") as temp:
        site = Path(temp)
        size = write_site(site, layout)
        print(f"layout: computed in {layout_seconds * 1000:.0f} ms, {size / 1e6:.2f} MB of JSON "
              f"({len(layout['groups']['id'])} groups)")
        # Zoom towards the middle of the first pod's first leaf group, where every level has detail.
        groups = layout["groups"]
        leaf = groups["kind"].index(layout["codes"]["group_kind"].index("leaf"))
        centre = (groups["x"][leaf] + groups["w"][leaf] / 2, groups["y"][leaf] + groups["h"][leaf] / 2)
        server, thread = serve(site)
        base = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page(viewport=VIEWPORT)
                    lod = measure(page, f"{base}/lod.html", centre, ZOOMS)
                    if args.screenshots:
                        args.screenshots.mkdir(parents=True, exist_ok=True)
                        page.evaluate("window.__twinMap.setCamera(1); window.__twinMap.updateLod()")
                        page.screenshot(path=str(args.screenshots / "map-lod.png"))
                    page.close()
                    page = browser.new_page(viewport=VIEWPORT)
                    docked = measure(page, f"{base}/workspace.html", centre, ZOOMS)
                    stage = page.evaluate("(() => { const r = document.querySelector('#fabric-map .tmap-stage').getBoundingClientRect(); return [r.width, r.height]; })()")
                    if args.screenshots:
                        page.evaluate("window.__twinMap.setCamera(1); window.__twinMap.updateLod()")
                        page.screenshot(path=str(args.screenshots / "map-workspace.png"))
                    page.close()
                    page = browser.new_page(viewport=VIEWPORT)
                    naive = measure(page, f"{base}/naive.html", centre, (1.0, 0.1))
                    page.close()
                finally:
                    browser.close()
        finally:
            server.shutdown()
            thread.join()
            server.server_close()

    print_run("level of detail (budget 3,000 elements)", lod)
    print_run(f"in the workspace, side and bottom docks open (map stage {stage[0]:.0f} x {stage[1]:.0f} px)", docked)
    print_run("naive baseline (every node and link in sigma)", naive)
    worst = max(level["redraw_ms"] for level in lod["levels"] + docked["levels"])
    most = max(level["total"] for level in lod["levels"] + docked["levels"])
    first = max(lod["first_draw_ms"], docked["first_draw_ms"])
    print(
        f"\ntargets: first draw < 3000 ms (got {first:.0f}); at most ~3,000 elements "
        f"(got {most}); redraw < 200 ms (worst {worst:.0f}); layout < 1 s and < 5 MB "
        f"(got {layout_seconds * 1000:.0f} ms, {size / 1e6:.2f} MB)"
    )
    cards = f"{args.cards:,}-card map"
    keep_figure(f"{cards}: first draw (level of detail, and in the workspace)", first, "ms", target="< 3,000 ms", met=first < 3000)
    keep_figure(f"{cards}: worst redraw at any zoom, docks open or not", worst, "ms", target="< 200 ms", met=worst < 200)
    keep_figure(f"{cards}: most elements drawn", most, "", target="<= ~3,000", met=most <= 3000)
    keep_figure(f"{cards}: layout computed", layout_seconds * 1000, "ms", target="< 1,000 ms", met=layout_seconds < 1)
    keep_figure(f"{cards}: layout size", size / 1e6, "MB", target="< 5 MB", met=size < 5e6)


if __name__ == "__main__":
    main()
