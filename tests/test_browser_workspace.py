"""The fabric workspace in headless Chromium against the whole product (real worker, Redis,
database): the map fills the view with the panels docked beside and below it; a panel is resized
and collapsed and the layout is found again after a reload (it is kept on the server); a run form
is submitted from its panel and its result is shown there and drawn on the map, which stays in
view; the address bar's deep link opens the same node selected and centred and the same run."""
import re
import shutil
from urllib.parse import parse_qs, urlsplit

from tests.stack import Stack
from tests.test_browser_e2e import ARTIFACTS, browser, log_in, pytestmark, wait_until  # noqa: F401  (fixture, marks)
from twin.common.embedded import EmbeddedRedis

VIEWPORT = {"width": 1440, "height": 900}
MAP_READY = "document.querySelector('#fabric-map')?.dataset.nodes === '1072'"


def box(page, selector: str) -> dict:
    return page.eval_on_selector(selector, "el => { const r = el.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; }")


def assert_map_fills_the_view(page) -> None:
    """The map's canvas is on screen, below the top bar, and takes the larger part of the window."""
    stage = box(page, "#fabric-map .tmap-stage")
    assert stage["y"] >= 44 and stage["y"] + stage["height"] <= VIEWPORT["height"], stage
    assert stage["width"] >= 0.4 * VIEWPORT["width"] and stage["height"] >= 0.3 * VIEWPORT["height"], stage
    assert page.evaluate("document.documentElement.scrollHeight") <= VIEWPORT["height"] + 1  # the page itself does not scroll


def layout_of(page) -> dict:
    return page.evaluate(
        """() => ({
            right: Number(document.querySelector('.dock-handle-right').getAttribute('aria-valuenow')),
            bottom: Number(document.querySelector('.dock-handle-bottom').getAttribute('aria-valuenow')),
            rightWidth: Math.round(document.querySelector('#dock-right').getBoundingClientRect().width),
            collapsed: [...document.querySelectorAll('.dock-panel[data-collapsed=true]')].map((panel) => panel.dataset.panel).sort(),
            order: [...document.querySelectorAll('#dock-right > .dock-panel')].map((panel) => panel.dataset.panel),
        })"""
    )


def saved_after(page, action) -> None:
    """Do `action` and wait for the layout to reach the server."""
    with page.expect_response(lambda response: "/api/preferences/workspace/" in response.url and response.request.method == "PUT") as saved:
        action()
    assert saved.value.status == 200


def test_workspace_layout_run_in_a_panel_and_deep_link(tmp_path, stack_database_url, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page_errors: list[str] = []
            page.on("pageerror", lambda error: page_errors.append(str(error)))
            log_in(page, stack.base_url)
            page.click("text=demo-supernode")
            wait_until(page, MAP_READY, timeout_ms=30000)
            assert_map_fills_the_view(page)
            for panel in ("fabric", "details", "legend", "collective", "placement", "failures", "whatif", "replay", "hops", "snapshots"):
                assert page.locator(f"#dock-right > .dock-panel[data-panel={panel}]").count() == 1, panel
            assert page.locator("#dock-bottom > .dock-panel[data-panel=player]").count() == 1
            assert page.locator("#map-legend .legend li").count() >= 3  # the map's legend, in its panel
            page.screenshot(path=str(ARTIFACTS / "workspace-1-docked.png"))

            # Resize the side dock from the keyboard and the bottom dock with the mouse; collapse a panel.
            before = layout_of(page)
            page.focus(".dock-handle-right")
            saved_after(page, lambda: [page.keyboard.press("ArrowLeft") for _ in range(3)])
            # The player's panel is collapsed until there is a replay: the bottom dock is folded, the map has the height.
            assert page.get_attribute("#player-panel .dock-toggle", "aria-expanded") == "false" and page.locator(".dock-handle-bottom").is_hidden()
            saved_after(page, lambda: page.click("#player-panel .dock-toggle"))
            handle = box(page, ".dock-handle-bottom")
            saved_after(page, lambda: (
                page.mouse.move(handle["x"] + 200, handle["y"] + 3),
                page.mouse.down(),
                page.mouse.move(handle["x"] + 200, handle["y"] - 57, steps=4),
                page.mouse.up(),
            ))
            saved_after(page, lambda: page.click("#snapshots-panel .dock-toggle"))
            saved_after(page, lambda: page.click("#legend-panel .dock-move-up"))  # the legend above the details
            assert page.get_attribute("#snapshots-panel .dock-toggle", "aria-expanded") == "false"
            assert page.locator("#snapshot-table").is_hidden()
            changed = layout_of(page)
            assert changed["right"] == before["right"] + 48 and abs(changed["rightWidth"] - changed["right"]) <= 1, (before, changed)
            assert changed["bottom"] == before["bottom"] + 60, (before, changed)
            assert "snapshots" in changed["collapsed"] and "player" not in changed["collapsed"]
            assert changed["order"][:3] == ["fabric", "legend", "details"], changed
            # Not below the minimum: Home takes the dock to it and no further.
            page.focus(".dock-handle-right")
            page.keyboard.press("Home")
            assert layout_of(page)["right"] == 300
            page.keyboard.press("End")  # the widest leaves the map 30 % of the width
            widest = layout_of(page)
            assert abs(widest["right"] - box(page, "#workspace")["width"] * 0.7) <= 1 and abs(widest["rightWidth"] - widest["right"]) <= 1, widest
            saved_after(page, lambda: (page.keyboard.press("Home"), page.keyboard.press("Shift+ArrowLeft")))
            kept = layout_of(page)
            assert kept["right"] == 300 + 96, kept

            page.reload()
            wait_until(page, MAP_READY, timeout_ms=30000)
            assert layout_of(page) == kept
            assert page.locator("#snapshot-table").is_hidden()
            # Another browser of the same user finds the same layout: it is kept on the server.
            elsewhere = browser.new_context(viewport=VIEWPORT).new_page()
            log_in(elsewhere, stack.base_url)
            elsewhere.goto(page.url)
            wait_until(elsewhere, MAP_READY, timeout_ms=30000)
            assert layout_of(elsewhere) == kept
            elsewhere.context.close()

            # A run form in its panel: progress, then the result, there; the map stays in view and shows it.
            fabric_path = page.evaluate("location.pathname")
            page.fill("#placement-form [name=tp]", "8")
            page.fill("#placement-form [name=dp]", "16")
            page.fill("#placement-form [name=model_params]", "70B")
            page.uncheck("#placement-form input[name=strategies][value=random]")
            page.click("#placement-form button[type=submit]")
            page.wait_for_selector("#placement-slot .run-widget", timeout=20000)
            assert page.evaluate("location.pathname") == fabric_path  # no run page: the panel shows it
            page.wait_for_selector("#placement-slot .run-widget[data-status=succeeded]", timeout=120000)
            rows = page.locator("#placement-slot .placement-compare tbody tr").all_inner_texts()
            assert {row.split()[0] for row in rows} == {"naive", "aware"}, rows
            page.wait_for_selector("#placement-slot .marks-status:not([hidden])", timeout=20000)
            assert "ranks marked on the map" in page.inner_text("#placement-slot .marks-status")
            wait_until(page, "[...document.querySelectorAll('#map-legend li')].some((li) => li.textContent.includes('one colour per TP group'))", timeout_ms=10000)
            assert_map_fills_the_view(page)
            run_id = int(re.search(r"[?&]run=(\d+)", page.url).group(1))
            assert page.get_attribute("#placement-slot .run-widget", "data-run-url") == f"/api/runs/{run_id}/"
            page.screenshot(path=str(ARTIFACTS / "workspace-2-placement.png"))

            # Select a switch: its details open in their panel and the URL names it.
            search = page.locator(".tmap-search-input")
            search.fill("leaf-07")
            page.wait_for_selector(".tmap-results li[role=option] strong:text('leaf-07')", timeout=10000)
            search.press("Enter")
            page.wait_for_selector("#details-panel .tmap-details h3:text('leaf-07')", timeout=10000)
            wait_until(page, "new URLSearchParams(location.search).has('node')", timeout_ms=5000)
            deep_link = page.url
            query = {key: values[0] for key, values in parse_qs(urlsplit(deep_link).query).items()}
            assert query["run"] == str(run_id) and query["snapshot"] and query["node"], deep_link

            # The copied link in a fresh tab: the same node selected and centred, the same run shown.
            other = context.new_page()
            other.on("pageerror", lambda error: page_errors.append(str(error)))
            other.goto(deep_link)
            wait_until(other, MAP_READY, timeout_ms=30000)
            other.wait_for_selector("#details-panel .tmap-details h3:text('leaf-07')", timeout=15000)
            assert other.get_attribute("#details-panel .dock-toggle", "aria-expanded") == "true"
            centred = other.evaluate(
                """(id) => {
                    const map = window.__twinMap, node = map.model.indexOfId.get(id), view = map.view();
                    const x = map.model.nodeX[node], y = map.model.nodeY[node];
                    return {fx: (x - view.x0) / (view.x1 - view.x0), fy: (y - view.y0) / (view.y1 - view.y0)};
                }""",
                query["node"],
            )
            assert 0.3 <= centred["fx"] <= 0.7 and 0.3 <= centred["fy"] <= 0.7, centred
            other.wait_for_selector(f"#placement-slot .run-widget[data-run-url='/api/runs/{run_id}/'][data-status=succeeded]", timeout=20000)
            assert other.get_attribute("#placement-panel .dock-toggle", "aria-expanded") == "true"
            assert {row.split()[0] for row in other.locator("#placement-slot .placement-compare tbody tr").all_inner_texts()} == {"naive", "aware"}
            wait_until(other, "[...document.querySelectorAll('#map-legend li')].some((li) => li.textContent.includes('one colour per TP group'))", timeout_ms=10000)
            assert other.url == deep_link
            other.screenshot(path=str(ARTIFACTS / "workspace-3-deep-link.png"))
            assert page_errors == [], page_errors
    finally:
        redis.stop()
        shutil.rmtree(tmp_path / "redis", ignore_errors=True)
