"""End to end in headless Chromium against the whole product on the configured database
(PostgreSQL in CI) and a Redis this test controls: log in, open the demo fabric, start a run,
watch progress and result arrive over the websocket; then lose Redis and get it back."""
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.stack import ADMIN_PASSWORD, ROOT, Stack
from twin.common.embedded import EmbeddedRedis

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.stack,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"Chromium not found at {CHROMIUM}: install it with `apt-get install chromium` to run the browser tests"),
]


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        yield browser
        browser.close()


def wait_until(page, expression: str, timeout_ms: int) -> None:
    """Poll a JavaScript expression until it is true. Playwright's wait_for_function compiles its
    predicate with eval, which the pages' Content-Security-Policy forbids; evaluate is exempt."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout_ms} ms: {expression}")
        page.wait_for_timeout(100)


def chart_texts(page, selector: str) -> list[str]:
    """The texts an ECharts chart under `selector` draws (axis names, ticks, legend), as a user reads them."""
    return page.eval_on_selector(selector, "el => [...el.querySelectorAll('svg text')].map((text) => text.textContent.trim()).filter(Boolean)")


def log_in(page, base_url: str) -> None:
    page.goto(base_url + "/")
    assert "/login/" in page.url
    page.fill("#id_username", "admin")
    page.fill("#id_password", ADMIN_PASSWORD)
    page.click("button[type=submit]")


def open_panel(page, panel: str) -> None:
    """Expands a workspace panel as a user would, from its heading's toggle (panels start collapsed)."""
    toggle = page.locator(f"#{panel} .dock-toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()


def test_login_run_and_redis_outage(tmp_path, stack_database_url, browser):
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    stack = Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url})
    try:
        with stack:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            frames: list[str] = []
            page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)))
            refused = []  # what the Content-Security-Policy blocked, as Chromium reports it
            page.on("console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None)
            # What the pages asked for and did not get (Chromium reports the icon's 404 only here).
            missing = []
            page.on("console", lambda message: missing.append(message.text) if "Failed to load resource" in message.text else None)

            log_in(page, stack.base_url)
            page.click("text=demo-supernode")
            page.wait_for_selector("#snapshot-summary")
            assert "1,024" in page.inner_text("#snapshot-summary")
            wait_until(page, "document.querySelector('#fabric-map').dataset.nodes === '1072'", timeout_ms=20000)

            page.click("#start-hop-stats")
            page.wait_for_selector(".run-widget[data-status=succeeded]", timeout=60000)
            assert page.get_attribute(".run-widget .run-progress", "value") == "100"
            assert "523,776" in page.inner_text(".run-widget .run-result").replace("\u202f", ",").replace(" ", ",")
            assert int(page.get_attribute(".run-widget", "data-frames")) >= 1
            histogram = chart_texts(page, ".run-widget .hop-histogram")
            assert {"Hops (switches crossed)", "Card pairs", "1", "3"} <= set(histogram), histogram
            assert any('"status": "succeeded"' in f or '"status":"succeeded"' in f for f in frames), frames
            page.wait_for_timeout(500)  # let the progress bar finish its CSS transition for the picture
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "fabric-page.png"), full_page=True)
            assert missing == [], missing

            # Redis goes away: pages still load and say that live work is unavailable.
            redis.stop()
            page.reload()
            page.wait_for_selector("#live-status:not([hidden])", timeout=20000)
            assert "Redis" in page.inner_text("#live-status")
            page.click("#start-hop-stats")
            page.wait_for_selector("#run-slot .error", timeout=20000)
            assert "unavailable" in page.inner_text("#run-slot .error")

            # Redis comes back on the same port: the page notices by itself, and work runs again.
            redis.start()
            page.wait_for_selector("#live-status", state="hidden", timeout=60000)
            page.click("#start-hop-stats")
            page.wait_for_selector("#run-slot .run-widget[data-status=succeeded]", timeout=90000)
            assert refused == []
    finally:
        redis.stop()
        shutil.rmtree(tmp_path / "redis", ignore_errors=True)


def test_upload_with_progress_and_live_news_for_other_viewers(tmp_path, stack_database_url, browser):
    """Upload an ibnetdiscover dump in one tab (file list, progress, summary, per-file errors) and
    see its map, while another tab shows the fabric and hears about the next snapshot over its
    websocket."""

    good = ROOT / "tests" / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"  # a real discovery format
    ARTIFACTS.mkdir(exist_ok=True)
    bad = tmp_path / "broken.json"
    bad.write_text('{"format": "twin-fabric",\n "version": 1,\n "name": "lab",\n "nodes": [}')
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}, drop_env=()) as stack:
            uploader = browser.new_page()
            log_in(uploader, stack.base_url)
            uploader.goto(stack.base_url + "/upload/")
            uploader.set_input_files("input[name=file]", [str(bad)])
            assert "broken.json" in uploader.inner_text("[data-file-list]")
            uploader.click("#upload-form button[type=submit]")
            uploader.wait_for_selector("[data-file-list] .errorlist", timeout=30000)
            assert "broken.json line 4" in uploader.inner_text("[data-file-list]")

            uploader.set_input_files("input[name=file]", [str(good)])
            uploader.fill("#id_fabric", "lab")
            uploader.click("#upload-form button[type=submit]")
            uploader.wait_for_selector("#upload-open", timeout=60000)
            result = uploader.inner_text("[data-upload-result]")
            assert "v1" in result and "ibnetdiscover" in result

            watcher = browser.new_page()
            log_in(watcher, stack.base_url)
            watcher.goto(stack.base_url + uploader.get_attribute("#upload-open", "href"))
            watcher.wait_for_selector("#snapshot-summary")
            # Its map: 8 HCAs with the card each stands for, 3 switches and 3 SHARP aggregation nodes.
            wait_until(watcher, "document.querySelector('#fabric-map').dataset.nodes === '22'", timeout_ms=20000)
            watcher.screenshot(path=str(ARTIFACTS / "upload-ibnetdiscover-map.png"))
            watcher.wait_for_timeout(1000)  # let the fabric socket connect before the next upload

            uploader.goto(stack.base_url + "/upload/")
            uploader.set_input_files("input[name=file]", [str(good)])
            uploader.fill("#id_fabric", "lab")
            uploader.click("#upload-form button[type=submit]")
            uploader.wait_for_selector("#upload-open", timeout=60000)
            watcher.wait_for_selector("#fabric-live:not([hidden])", timeout=20000)
            news = watcher.inner_text("#fabric-live")
            assert "v2" in news and "admin" in news
    finally:
        redis.stop()


def test_map_search_details_path_and_diff_overlay(tmp_path, stack_database_url, browser):
    """The demo super-node's map: search a card, open its details, pick two cards and see the
    hop path, then upload a re-cabled snapshot and see the diff overlay; a screenshot per step."""
    import json

    from twin.ingest import export_canonical
    from twin.simcore.generate import supernode

    recabled = json.loads(export_canonical(supernode(cards=1024, name="demo-supernode")))
    first, second = recabled["links"][0], recabled["links"][1]
    first["b_port"], second["b_port"] = second["b_port"], first["b_port"]  # two cables swapped on leaf-01
    recabled["links"][5]["state"] = "down"
    upload = tmp_path / "recabled.json"
    upload.write_text(json.dumps(recabled))
    ARTIFACTS.mkdir(exist_ok=True)
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            log_in(page, stack.base_url)
            page.click("text=demo-supernode")
            wait_until(page, "document.querySelector('#fabric-map').dataset.nodes === '1072'", timeout_ms=20000)
            page.screenshot(path=str(ARTIFACTS / "map-1-demo.png"))

            search = page.locator(".tmap-search-input")
            search.fill("card-0005")
            page.wait_for_selector(".tmap-results li[role=option] strong:text('card-0005')", timeout=10000)
            search.press("Enter")
            page.wait_for_selector(".tmap-details h3:text('card-0005')", timeout=10000)
            page.wait_for_selector(".tmap-details :text('leaf-01')", timeout=10000)
            page.screenshot(path=str(ARTIFACTS / "map-2-details.png"))

            page.click(".tmap-details button:text('Path from here')")
            search.fill("card-1000")
            page.wait_for_selector(".tmap-results li[role=option] strong:text('card-1000')", timeout=10000)
            search.press("Enter")
            wait_until(page, "document.querySelector('#fabric-map').dataset.pathHops === '3'", timeout_ms=15000)
            page.screenshot(path=str(ARTIFACTS / "map-3-path.png"))

            if page.get_attribute(".tmap-path", "aria-pressed") == "true":
                page.click(".tmap-path")  # leave path mode, then pick a switch to fail in the what-if form
            search.fill("leaf-07")
            page.wait_for_selector(".tmap-results li[role=option] strong:text('leaf-07')", timeout=10000)
            search.press("Enter")
            page.wait_for_selector(".tmap-details h3:text('leaf-07')", timeout=10000)
            page.click(".tmap-details button:text('Fail it in the what-if below')")
            assert page.input_value("#failure-form input[name=elements]") == "leaf-07"

            page.goto(stack.base_url + "/upload/")
            page.set_input_files("input[name=file]", [str(upload)])
            page.fill("#id_fabric", "demo-supernode")
            page.click("#upload-form button[type=submit]")
            page.wait_for_selector("#upload-open", timeout=60000)
            page.click("#upload-open")
            page.click("#snapshot-table a:text('on the map')")
            wait_until(page, "Number(document.querySelector('#fabric-map').dataset.diffFindings) >= 2", timeout_ms=30000)
            page.screenshot(path=str(ARTIFACTS / "map-4-diff.png"))
    finally:
        redis.stop()


def test_replay_player_and_whatif_report_from_the_fabric_page(tmp_path, stack_database_url, browser):
    """Start a traffic replay and a what-if from the demo fabric's page, play the replay in the
    shared player (frames move the timeline and fill the hottest-links table), and open the
    what-if report with its plots; a screenshot per step."""
    ARTIFACTS.mkdir(exist_ok=True)
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            log_in(page, stack.base_url)
            page.click("text=demo-supernode")
            fabric_url = page.url

            page.fill("#replay-form [name=model_params]", "1e9")
            page.fill("#replay-form [name=tp]", "8")
            page.fill("#replay-form [name=dp]", "16")
            page_errors: list[str] = []
            page.on("pageerror", lambda error: page_errors.append(str(error)))
            replay_payloads: list[str | bytes] = []  # what the replay socket brought the page
            page.on("websocket", lambda socket: socket.on("framereceived", lambda payload: replay_payloads.append(payload)) if "/ws/replays/" in socket.url else None)
            page.click("#replay-form button[type=submit]")
            page.wait_for_selector(".run-widget:is([data-status=succeeded], [data-status=failed])", timeout=240000)
            assert page.get_attribute(".run-widget", "data-status") == "succeeded", (page.inner_text(".run-widget"), page_errors)
            # No reload: the player mounts itself when the replay is computed.
            page.wait_for_selector("#replay-player .replay-play", timeout=20000)
            operations = chart_texts(page, ".run-result .replay-operations-chart")
            assert {"Time", "In the replay", "Alone on the fabric"} <= set(operations), operations
            page.select_option("#replay-player .replay-speed", value="0")  # every frame, 10 a second
            page.click("#replay-player .replay-play")
            wait_until(page, "Number(document.querySelector('#replay-player .replay-timeline').value) >= 5", timeout_ms=30000)
            page.click("#replay-player .replay-play")  # pause
            page.wait_for_timeout(500)
            paused_at = int(page.eval_on_selector("#replay-player .replay-timeline", "el => el.value"))
            page.wait_for_timeout(1000)
            # Paused: the shared player stays where it is (how far it got depends on the machine's load).
            assert 5 <= paused_at == int(page.eval_on_selector("#replay-player .replay-timeline", "el => el.value"))
            # The frames it drew came as binary messages (docs/replay.md), the states as JSON text.
            binary = [payload for payload in replay_payloads if isinstance(payload, bytes)]
            assert len(binary) >= 5 and {payload[0] for payload in binary} == {1}, len(binary)
            assert not any('"replay.frame"' in payload for payload in replay_payloads if isinstance(payload, str))
            assert page.locator("#replay-player .replay-top tbody tr").count() > 0
            # 48 switches x 64 ports draw on a canvas (its axes and banded scale: utilisationViews.test.ts).
            assert page.locator("#replay-player .util-heatmap canvas").count() >= 1
            hottest = chart_texts(page, "#replay-player .util-series-chart")
            assert {"Frame received", "Utilisation", "warning", "critical"} <= set(hottest) and any("→" in text for text in hottest), hottest
            page.evaluate("window.scrollTo(0, 0)")  # sticky table headers keep a scrolled page's offset in full-page pictures
            page.screenshot(path=str(ARTIFACTS / "replay-player.png"), full_page=True)

            page.goto(fabric_url)
            page.fill("#whatif-form [name=factors]", "1,2")
            for design in ("k-supernodes", "rail"):
                page.uncheck(f"#whatif-form input[value={design}]")
            page.click("#whatif-form button[type=submit]")
            page.wait_for_selector(".run-widget[data-status=succeeded]", timeout=240000)
            # The result view, live: the knee or its absence, busbw against cards, the stages; no JSON dump.
            assert page.inner_text(".run-result .whatif-headline")
            assert page.locator(".run-result .whatif-stages tbody tr").count() == 3  # 1x and 2x rebuilt, and as uploaded
            busbw = chart_texts(page, ".run-result .whatif-busbw")
            assert {"Cards", "busbw (GB/s)", "one-supernode"} <= set(busbw), busbw
            assert page.evaluate("document.documentElement.scrollHeight") < 4000
            page.screenshot(path=str(ARTIFACTS / "whatif-result.png"), full_page=True)
            page.click(".run-result .whatif-links a:text('Open the report')")
            page.wait_for_selector("#whatif-report svg", timeout=20000)
            page.screenshot(path=str(ARTIFACTS / "whatif-report.png"), full_page=True)
    finally:
        redis.stop()


DURATION = re.compile(r"\d[\d.,]*\s*(ns|µs|ms|s)\b")


def test_placement_failure_and_collective_forms_from_the_fabric_page(tmp_path, stack_database_url, browser):
    """The login page is quiet (no banner, no health checks before signing in). Then the
    placement, failure and collective forms of the demo fabric's page are filled and submitted as
    a user would, and each run finishes with figures in its result (hop statistics, replay and
    what-if are submitted by the tests above)."""
    ARTIFACTS.mkdir(exist_ok=True)
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            health_checks: list[str] = []
            page.on("request", lambda request: health_checks.append(request.url) if "/api/health/" in request.url else None)
            page.goto(stack.base_url + "/login/")
            page.wait_for_timeout(1500)  # the first health check would have been made at once
            assert page.locator("#live-status").is_hidden() and health_checks == []
            page.screenshot(path=str(ARTIFACTS / "login.png"))

            log_in(page, stack.base_url)
            page.wait_for_selector("#live-status", state="hidden")
            page.click("text=demo-supernode")
            fabric_url = page.url

            page.fill("#placement-form [name=tp]", "8")
            page.fill("#placement-form [name=dp]", "16")
            page.fill("#placement-form [name=model_params]", "70B")
            page.uncheck("#placement-form input[name=strategies][value=random]")
            page.click("#placement-form button[type=submit]")
            page.wait_for_selector(".run-widget[data-status=succeeded]", timeout=120000)
            rows = page.locator(".run-result .placement-compare tbody tr").all_inner_texts()
            assert [row.split()[0] for row in rows] and {row.split()[0] for row in rows} == {"naive", "aware"}, rows
            assert all(DURATION.search(row) for row in rows), rows
            assert DURATION.search(page.inner_text(".run-result .placement-headline"))
            per_dimension = chart_texts(page, ".run-result .placement-chart")
            assert {"Time per step", "naive", "aware", "TP", "DP"} <= set(per_dimension), per_dimension
            page.screenshot(path=str(ARTIFACTS / "placement-result.png"), full_page=True)

            page.goto(fabric_url)
            page.select_option("#failure-form [name=worst]", "")  # the form searches any switch by default; fail these instead
            page.fill("#failure-form [name=elements]", "leaf-07")
            page.fill("#failure-form [name=size]", "64MiB")
            page.click("#failure-form button[type=submit]")
            page.wait_for_selector(".run-widget[data-status=succeeded]", timeout=180000)
            worst = page.inner_text(".run-result .failures-worst")
            assert "leaf-07" in worst and re.search(r"\d", worst), worst
            assert page.locator(".run-result .failures-ranking tbody tr").count() == 1
            page.screenshot(path=str(ARTIFACTS / "failures-result.png"), full_page=True)

            page.goto(fabric_url)
            page.fill("#collective-form [name=size]", "64MB")
            page.click("#collective-form button[type=submit]")
            page.wait_for_selector("#collective-slot .run-widget[data-status=succeeded]", timeout=120000)
            assert DURATION.search(page.inner_text("#collective-slot .coll-headline"))
            assert page.locator("#collective-slot .coll-links tbody tr").count() > 0
            algorithms = chart_texts(page, "#collective-slot .coll-candidates")
            assert {"Algorithm", "Time", "ring"} <= set(algorithms), algorithms
            assert not any(re.search(r"\de[+-]\d", text) for text in algorithms), algorithms
            page.screenshot(path=str(ARTIFACTS / "collective-result.png"), full_page=True)
            assert page.locator(".banner-error").count() == 0
    finally:
        redis.stop()


def test_a_playing_replay_page_goes_on_by_itself_after_redis_restarts_empty(tmp_path, stack_database_url, browser):
    """Redis stopped under a playing replay and started again without its data: the page, not
    reloaded, shows the replay moving again (its socket kept, the relay joining its group anew,
    the sweeper resuming the player whose next task Redis lost)."""
    from tests.test_recovery import FAST_LEASES

    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()  # keeps nothing across a restart
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url, **FAST_LEASES}) as stack:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page_errors: list[str] = []
            page.on("pageerror", lambda error: page_errors.append(str(error)))
            log_in(page, stack.base_url)
            page.click("text=demo-supernode")
            page.fill("#replay-form [name=model_params]", "1e9")
            page.fill("#replay-form [name=tp]", "8")
            page.fill("#replay-form [name=dp]", "16")
            page.click("#replay-form button[type=submit]")
            page.wait_for_selector(".run-widget:is([data-status=succeeded], [data-status=failed])", timeout=240000)
            page.wait_for_selector("#replay-player .replay-play", timeout=20000)
            page.check("#replay-player .replay-loop")
            page.select_option("#replay-player .replay-speed", value="0")
            page.click("#replay-player .replay-play")
            timeline = "Number(document.querySelector('#replay-player .replay-timeline').value)"
            wait_until(page, f"{timeline} >= 5", timeout_ms=30000)
            page.evaluate("window.notReloaded = true")

            redis.stop()
            page.wait_for_timeout(3000)
            stood_at = page.evaluate(timeline)
            redis.start()
            # First the frame it stands at now (the player went on while its frames had nowhere to
            # go), then moving again once the sweeper has resumed the player.
            wait_until(page, f"{timeline} != {stood_at}", timeout_ms=90000)
            caught_up = page.evaluate(timeline)
            wait_until(page, f"{timeline} != {caught_up}", timeout_ms=90000)
            moving = page.evaluate(timeline)
            wait_until(page, f"{timeline} != {moving}", timeout_ms=10000)
            assert page.evaluate("window.notReloaded === true")
            assert page_errors == []
    finally:
        redis.stop()
        shutil.rmtree(tmp_path / "redis", ignore_errors=True)
