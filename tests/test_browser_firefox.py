"""The product in Firefox (Debian's ESR, over WebDriver BiDi; see tests/firefox.py) at 1280 px:
log in, see the demo super-node's map drawn with WebGL, search a card by typing, start a run and
watch its progress arrive over the websocket, open a snapshot diff; every page fits the window and
none may throw."""
import pytest

from tests.firefox import ENTER, MISSING, TAB, Firefox
from tests.stack import ADMIN_PASSWORD, ROOT, Stack
from twin.common.embedded import EmbeddedRedis

ARTIFACTS = ROOT / "test-artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.stack,
    pytest.mark.skipif(bool(MISSING), reason=f"{', '.join(MISSING)} not found: `apt-get install firefox-esr xvfb` to run the Firefox tests"),
]


def test_firefox_map_search_run_and_diff(tmp_path, stack_database_url):
    ARTIFACTS.mkdir(exist_ok=True)
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack, Firefox(width=1280) as firefox:
            firefox.goto(stack.base_url + "/")
            assert "/login/" in firefox.url
            firefox.fill("#id_username", "admin")
            firefox.fill("#id_password", ADMIN_PASSWORD + ENTER)
            firefox.wait_for("!location.pathname.startsWith('/login/')")

            firefox.goto(firefox.evaluate("[...document.querySelectorAll('a')].find(a => a.textContent.trim() === 'demo-supernode').href"))
            firefox.wait_for("document.querySelector('#fabric-map')?.dataset.nodes === '1072'", timeout_s=30)
            assert firefox.evaluate("!!document.querySelector('#fabric-map canvas').getContext") and firefox.evaluate(
                "[...document.querySelectorAll('#fabric-map canvas')].some(c => c.width > 0)"
            )
            # Nothing wider than the window at 1280 px.
            assert firefox.evaluate("document.documentElement.scrollWidth") <= 1280
            firefox.screenshot(ARTIFACTS / "firefox-1-map.png")

            # The keyboard alone reaches the map's search: Tab from the top of the page.
            firefox.evaluate("document.activeElement?.blur()")
            for _ in range(40):
                firefox.type(TAB)
                if firefox.evaluate("document.activeElement.classList.contains('tmap-search-input')"):
                    break
            else:
                pytest.fail(f"40 Tabs never reached the map search; focus ended on {firefox.evaluate('document.activeElement.outerHTML.slice(0, 120)')}")
            firefox.type("card-0005")
            firefox.wait_for("[...document.querySelectorAll('.tmap-results li[role=option] strong')].some(s => s.textContent === 'card-0005')")
            firefox.type(ENTER)
            firefox.wait_for("document.querySelector('.tmap-details h3')?.textContent === 'card-0005'")
            firefox.wait_for("document.querySelector('.tmap-details').textContent.includes('leaf-01')")  # its port's peer
            assert firefox.evaluate("document.querySelector('.tmap-ports').offsetWidth <= document.querySelector('.tmap-details').clientWidth")
            firefox.screenshot(ARTIFACTS / "firefox-2-details.png")

            firefox.click("#start-hop-stats")
            firefox.wait_for("document.querySelector('.run-widget')?.dataset.status === 'succeeded'", timeout_s=90)
            assert firefox.evaluate("document.querySelector('.run-widget .run-progress').value") == 100
            assert int(firefox.evaluate("document.querySelector('.run-widget').dataset.frames")) >= 1
            firefox.screenshot(ARTIFACTS / "firefox-3-run.png", full_page=True)

            fabric_id = firefox.evaluate("location.pathname.split('/')[2]")
            firefox.goto(f"{stack.base_url}/fabrics/{fabric_id}/diff/")
            firefox.click("#diff-form button[type=submit]")
            firefox.wait_for("!!document.querySelector('#diff-counts')")
            firefox.screenshot(ARTIFACTS / "firefox-4-diff.png")

            # Every other page fits the 1280 px window too.
            firefox.goto(stack.base_url + "/runs/")
            run_path = firefox.evaluate("new URL(document.querySelector('#run-table a').href).pathname")
            for path in ("/", "/runs/", run_path, "/upload/", "/users/", f"/fabrics/{fabric_id}/journal/", f"/fabrics/{fabric_id}/diagnosis/"):
                firefox.goto(stack.base_url + path)
                assert not firefox.evaluate("!!document.querySelector('main p.error, section.panel > p.error')"), path
                assert firefox.evaluate("document.documentElement.scrollWidth") <= 1280, path
            assert firefox.errors == [], firefox.errors
    finally:
        redis.stop()


def test_the_client_reports_page_exceptions_but_not_network_failures():
    """The check above can fail: thrown errors are caught, a refused websocket is not an error."""
    page = "data:text/html,<script>setTimeout(() => { throw new Error('late') }, 10); new WebSocket('ws://127.0.0.1:1/'); throw new Error('early')</script>"
    with Firefox() as firefox:
        firefox.goto(page)
        firefox.wait_for("new Promise(done => setTimeout(() => done(true), 200))")
        assert [error.split(" (")[0] for error in firefox.errors] == ["Error: early", "Error: late"]
