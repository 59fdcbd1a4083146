"""Every feature on every real file: each file of ../shared/samples that describes cards (kept in
tests/data) is uploaded, and on its fabric page every run the page offers is started from its form
as shown, in headless Chromium against a real worker: hop statistics, a collective, placement,
failures, the what-if and a replay. Each must finish with a result, or the page must say why it
is not offered. (A real dump that parsed and then had 0 cards shipped once: this is the walk that
would have caught it.)"""
import pytest

from tests.stack import ROOT, Session, Stack
from tests.test_browser_e2e import browser, log_in, pytestmark  # noqa: F401  (fixture, marks)
from tests.test_browser_tour import VIEWPORT, upload
from twin.common.embedded import EmbeddedRedis

DATA = ROOT / "tests" / "data"
# file -> the cards the upload must find in it (the page and the forms are then judged on them).
REAL_FILES = {
    "ib/X5.topofile": 89,
    "ib/ibnetdiscover_2leaf_1spine_8hca.txt": 8,
    "nccl_xml/azure-ndv4-topo.xml": 8,
    "nccl_xml/azure-ndv5-topo.xml": 8,
    "nccl_xml/nccl_topo_dump_8xH100.xml": 8,
    "nvidia_smi/nvidia-smi_topo_m_8xH100.txt": 8,
}
# (form or button, the slot its run shows in)
RUN_FORMS = [
    ("#start-hop-stats", "#run-slot"),
    ("#collective-form button[type=submit]", "#collective-slot"),
    ("#placement-form button[type=submit]", "#placement-slot"),
    ("#failure-form button[type=submit]", "#failures-slot"),
    ("#whatif-form button[type=submit]", "#whatif-slot"),
    ("#replay-form button[type=submit]", "#replay-slot"),
]


@pytest.fixture(scope="module")
def real_stack(tmp_path_factory, stack_database_url_module):
    tmp_path = tmp_path_factory.mktemp("real-files")
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url_module, "REDIS_URL": redis.url}) as stack:
            session = Session(stack.base_url)
            fabrics = {}
            for number, name in enumerate(REAL_FILES):
                snapshot = upload(session, f"real-{number}", (DATA / name).read_bytes(), filename=(DATA / name).name)
                assert snapshot["card_count"] == REAL_FILES[name], (name, snapshot["card_count"])
                fabrics[name] = snapshot["fabric"]
            yield stack, fabrics
    finally:
        redis.stop()


@pytest.mark.parametrize("name", REAL_FILES)
def test_every_run_the_page_offers_finishes_on_a_real_file(real_stack, browser, name):
    stack, fabrics = real_stack
    page = browser.new_page(viewport=VIEWPORT)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"script error {error}"))
    log_in(page, stack.base_url)
    fabric_page = f"{stack.base_url}/fabrics/{fabrics[name]}/"
    outcomes = {}
    for trigger, slot in RUN_FORMS:
        page.goto(fabric_page)
        button = page.locator(trigger)
        if button.is_disabled():
            reason = button.get_attribute("title")
            assert reason, f"{name}: {trigger} is disabled without saying why"
            outcomes[trigger] = f"not offered: {reason}"
            continue
        button.click()
        # A finished run, or the slot's error when the server refused to start it.
        page.wait_for_selector(f"{slot} .run-widget[data-status=succeeded], {slot} .run-widget[data-status=failed], {slot} .error, .field-error", timeout=300000)
        widget = page.locator(f"{slot} .run-widget")
        assert widget.count() and widget.get_attribute("data-status") == "succeeded", (name, trigger, page.inner_text("main")[:3000])
        outcomes[trigger] = "succeeded"
    page.close()
    assert problems == [], (name, problems)
    # Every file with cards runs the card-level work; only the what-if may need a design to grow.
    assert all(outcome == "succeeded" for trigger, outcome in outcomes.items() if "whatif" not in trigger), (name, outcomes)
