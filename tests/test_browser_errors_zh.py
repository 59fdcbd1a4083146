"""The refusals a Chinese reader meets, walked in headless Chromium as they would: a topology file
that does not read on the upload page, a label mapping the telemetry source form cannot use, and a
trace for a replay that names cards the fabric does not have. Each is said in Chinese: CJK text and
no English sentence left (file names, identifiers, numbers and units aside)."""
import re
import shutil

from tests.stack import Stack
from tests.test_browser_e2e import browser, log_in, open_panel, pytestmark  # noqa: F401  (fixture, marks)
from tests.test_i18n_errors import CJK, untranslated
from tests.test_i18n_ingest_errors import BAD_SLURM
from twin.common.embedded import EmbeddedRedis

TRACE_OF_OTHER_CARDS = b"""{"format": "twin-trace", "version": 1, "name": "elsewhere"}
{"type": "rank", "rank": 0, "card": "elsewhere/gpu0"}
{"type": "rank", "rank": 1, "card": "elsewhere/gpu1"}
{"type": "collective", "t_s": 0.0, "op": "allreduce", "bytes": 1048576}
"""


def assert_chinese(text: str, *identifiers: str) -> None:
    assert CJK.search(text), text
    assert untranslated(text, *identifiers) == [], text


def test_a_chinese_reader_is_told_why_in_chinese(tmp_path, stack_database_url, browser):
    bad_slurm = tmp_path / "topology.conf"
    bad_slurm.write_bytes(BAD_SLURM)
    trace = tmp_path / "elsewhere.jsonl"
    trace.write_bytes(TRACE_OF_OTHER_CARDS)
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            context = browser.new_context(viewport={"width": 1400, "height": 1000}, extra_http_headers={"Accept-Language": "zh-Hans"})
            page = context.new_page()
            script_errors: list[str] = []
            page.on("pageerror", lambda error: script_errors.append(str(error)))
            log_in(page, stack.base_url)

            # The upload page: a Slurm topology file that lists a switch twice.
            page.goto(stack.base_url + "/upload/")
            assert page.get_attribute("html", "lang") == "zh-hans"
            page.set_input_files("input[name=file]", [str(bad_slurm)])
            page.click("#upload-form button[type=submit]")
            page.wait_for_selector("[data-file-list] .errorlist", timeout=30000)
            refused = page.inner_text("[data-file-list] .errorlist")
            assert "topology.conf 第 2 行：交换机 'leaf01' 已在第 1 行定义" in refused, refused
            assert_chinese(refused, "SwitchName", "Switches")

            # The demo fabric's telemetry source: a label mapping with an unknown key and a bad selector.
            page.goto(stack.base_url + "/")
            page.click("text=demo-supernode")
            page.wait_for_selector("#replay-form")
            fabric_url = page.url
            open_panel(page, "live-telemetry")
            form = page.locator("#telemetry-source-form")
            form.locator("[name=url]").fill("http://127.0.0.1:9")
            form.locator("[name=mapping]").fill('{"colour": "red", "selector": "$$"}')
            form.locator("button[type=submit]").click()
            page.wait_for_load_state()
            open_panel(page, "live-telemetry")  # the refused form comes back on a new page
            mapping = page.inner_text("#telemetry-source-form .errorlist")
            assert mapping.startswith("标签映射中有 2 个问题"), mapping
            assert_chinese(mapping)

            # A replay of a trace whose ranks are cards of another cluster.
            page.goto(fabric_url)
            open_panel(page, "replay-panel")
            page.set_input_files("#replay-form input[name=trace]", str(trace))
            page.fill("#replay-form [name=tp]", "1")
            page.fill("#replay-form [name=dp]", "2")
            page.click("#replay-form button[type=submit]")
            page.wait_for_selector("#replay-slot .error", timeout=30000)
            replay = page.inner_text("#replay-slot .error")
            assert re.match(r"elsewhere\.jsonl：该 trace 与 demo-supernode v\d+ 不符", replay), replay
            assert "已尝试：卡 'elsewhere/gpu0'" in replay, replay
            assert_chinese(replay)
            assert script_errors == [], script_errors
            context.close()
    finally:
        redis.stop()
        shutil.rmtree(tmp_path / "redis", ignore_errors=True)
