"""End to end in headless Chromium: the fabric page's live telemetry panel against a real
Prometheus (tests/prometheus_stack.py) and the whole product (`manage.py serve`: web server and
a real worker polling). An operator configures the source from the form, sees it accepted with
its check, turns on Live telemetry and sees the frames the worker polls arrive on the map's
heatmap; a URL that cannot work is refused with the reason, and the saved source stays.

Elements are found by their ids, classes, names and roles, never by where they sit on the page."""
import json
import re
import shutil
import subprocess
import sys

import pytest

from tests.prometheus_stack import PROMETHEUS
from tests.stack import ROOT, Session, Stack
from tests.test_browser_e2e import ARTIFACTS, browser, log_in, open_panel, pytestmark as browser_marks, wait_until  # noqa: F401  (fixture)
from tests.test_telemetry_prometheus import DUMP, HGX_DUMP, WINDOW_S, dcgm_prometheus, prometheus  # noqa: F401  (fixtures)
from twin.common.embedded import EmbeddedRedis, free_port

pytestmark = [*browser_marks, pytest.mark.skipif(PROMETHEUS is None, reason="needs Debian's prometheus binary on PATH (apt-get install prometheus)")]


def save_source(page, url: str, preset: str = "node_exporter_infiniband") -> None:
    open_panel(page, "live-telemetry")
    form = page.locator("#telemetry-source-form")
    form.locator("[name=url]").fill(url)
    form.locator("[name=preset]").select_option(preset)
    form.locator("[name=interval_s]").fill("0.5")
    form.locator("[name=rate_window_s]").fill(str(WINDOW_S))
    form.locator("[name=enabled]").check()
    form.locator("button[type=submit]").click()
    page.wait_for_load_state()


def test_configure_prometheus_watch_live_frames_and_get_a_clear_refusal(tmp_path, stack_database_url, browser, prometheus):
    ARTIFACTS.mkdir(exist_ok=True)
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}, serve_args=("--no-demo",)) as stack:
            made = subprocess.run([sys.executable, "manage.py", "ingest", "--fabric", "ib", str(DUMP)], cwd=ROOT, env=stack.command_env(), capture_output=True, text=True, timeout=300)
            assert made.returncode == 0, made.stderr
            fabric = next(f for f in json.loads(Session(stack.base_url).get("/api/fabrics/"))["results"] if f["name"] == "ib")
            fabric_url = f"{stack.base_url}/fabrics/{fabric['id']}/"

            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            frames: list[str] = []
            page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload) if isinstance(payload, str) else None))
            log_in(page, stack.base_url)
            page.goto(fabric_url)
            wait_until(page, "document.querySelector('#fabric-map') && document.querySelector('#fabric-map').dataset.nodes !== undefined", timeout_ms=30000)

            save_source(page, prometheus["url"])
            assert "3 of 6 series name ports of this fabric" in page.inner_text("#telemetry-source-check")
            assert prometheus["url"] in page.inner_text("#telemetry-source-status")

            # Live telemetry on: the worker's polls reach this page and draw the heatmap.
            page.wait_for_selector("#telemetry-toggle", timeout=30000)
            page.click("#telemetry-toggle")
            assert page.get_attribute("#telemetry-toggle", "aria-pressed") == "true"
            wait_until(page, "/^Live: last sample at /.test(document.querySelector('#telemetry-note').textContent)", timeout_ms=60000)
            # The switch x port heatmap is drawn (SVG for a fabric this small), and node01's busy link is among the hottest.
            wait_until(page, "document.querySelector('.telemetry-views .util-heatmap svg, .telemetry-views .util-heatmap canvas') !== null", timeout_ms=30000)
            wait_until(page, "document.querySelector('.telemetry-views .util-series-empty').hidden", timeout_ms=30000)
            assert page.locator(".telemetry-views").is_visible()
            polled = [json.loads(text) for text in frames if '"fabric.telemetry"' in text]
            assert polled and all(message["frame"]["telemetry"]["source"] == "prometheus" for message in polled)
            seen = len(polled)
            page.wait_for_timeout(1500)  # polled every 0.5 s: more frames keep coming
            assert len([text for text in frames if '"fabric.telemetry"' in text]) > seen
            page.screenshot(path=str(ARTIFACTS / "fabric-live-telemetry.png"), full_page=True)

            # A URL that cannot work: refused on the page with the reason; the saved source stays.
            save_source(page, "ftp://prometheus.example/")
            errors = page.inner_text("#telemetry-source-form .errorlist")
            assert "give an http:// or https:// URL" in errors, errors
            unreachable = f"http://127.0.0.1:{free_port()}"
            save_source(page, unreachable)
            errors = page.inner_text("#telemetry-source-form .errorlist")
            assert re.search(r"Could not reach Prometheus at http://127\.0\.0\.1:\d+", errors), errors
            page.goto(fabric_url)
            assert prometheus["url"] in page.inner_text("#telemetry-source-status") and unreachable not in page.inner_text("#telemetry-source-status")
    finally:
        redis.stop()
        shutil.rmtree(tmp_path / "redis", ignore_errors=True)


def test_an_uploaded_hgx_gets_its_nvlink_heatmap_from_dcgm_exporter_per_link_fields(tmp_path, stack_database_url, browser, dcgm_prometheus):
    """The operator uploads node01's NCCL topology dump on the upload page, picks the per-link DCGM
    preset in the fabric's form, sees which labels name which GPU's NVLink, and the worker's polls
    draw the heatmap."""
    ARTIFACTS.mkdir(exist_ok=True)
    dump = tmp_path / "node01.xml"  # named after its host, as the upload page asks
    dump.write_bytes(HGX_DUMP.read_bytes())
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}, serve_args=("--no-demo",)) as stack:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            log_in(page, stack.base_url)
            page.goto(stack.base_url + "/upload/")
            page.set_input_files("input[name=file]", [str(dump)])
            page.fill("#id_fabric", "hgx")
            page.click("#upload-form button[type=submit]")
            page.wait_for_selector("#upload-open", timeout=60000)
            page.goto(stack.base_url + page.get_attribute("#upload-open", "href"))
            wait_until(page, "document.querySelector('#fabric-map') && document.querySelector('#fabric-map').dataset.nodes !== undefined", timeout_ms=30000)

            save_source(page, dcgm_prometheus, preset="dcgm_nvlink_links")
            assert "144 of 288 series name ports of this fabric" in page.inner_text("#telemetry-source-check")
            open_panel(page, "live-telemetry")  # the saved form reloads the page
            table = page.locator("#telemetry-series-ports")
            assert table.is_visible()
            rows = table.locator("tbody tr")
            assert rows.count() == 3
            for row in range(3):
                series, node, port, lane = (rows.nth(row).locator("td").nth(column).inner_text() for column in range(4))
                assert 'Hostname="node01"' in series and node.startswith("node01/gpu:0000:") and port == "node01/nvswitch"
                assert lane == "NVLink " + re.search(r'link="(\d+)"', series).group(1)

            page.wait_for_selector("#telemetry-toggle", timeout=30000)
            page.click("#telemetry-toggle")
            wait_until(page, "/^Live: last sample at /.test(document.querySelector('#telemetry-note').textContent)", timeout_ms=60000)
            wait_until(page, "document.querySelector('.telemetry-views .util-series-empty').hidden", timeout_ms=30000)
            page.screenshot(path=str(ARTIFACTS / "fabric-live-nvlink-dcgm.png"), full_page=True)
    finally:
        redis.stop()
        shutil.rmtree(tmp_path / "redis", ignore_errors=True)
