"""End to end in headless Chromium: a measured run typed into the demo fabric's journal, then the
journal page's calibration form, fitting chosen parameters and then validating on a held-out
size, each result read off the page the form leads to."""
from tests.stack import Stack
from tests.test_browser_e2e import ARTIFACTS, browser, log_in, pytestmark  # noqa: F401  (fixture, marks)
from twin.common.embedded import EmbeddedRedis
from twin.simcore.generate import supernode
from twin.simcore.simulate import Simulator

# The demo's first 8 cards (one leaf) in a Simple ring, with a slower link and hop than the defaults.
SLOWER = {"scale_up": {"efficiency": 0.6, "Simple": {"hop_latency_ns": 5000.0}}}
SIZES = [2**20, 2**22, 2**24, 2**26, 2**28, 2**30]


def measured_points() -> str:
    demo = supernode(cards=1024, name="demo-supernode")
    ring = Simulator(demo, ranks=[card.id for card in demo.cards()][:8], transport=SLOWER)
    return "\n".join(f"{size} {ring.run('allreduce', size, 'ring', 'Simple')['busbw_GBps']:.6f}" for size in SIZES)


def test_calibration_form_fits_chosen_parameters_and_validates(tmp_path, stack_database_url, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            log_in(page, stack.base_url)
            page.click("text=demo-supernode")
            page.click("text=Experiment journal")
            page.click("text=Record a run")
            page.select_option("#id_collective", "allreduce")
            page.fill("#id_card_count", "8")
            page.fill("#id_manual_points", measured_points())
            page.fill("#id_algorithm", "Ring")
            page.fill("#id_protocol", "Simple")
            page.fill("#id_title", "slow ring")
            page.click("#experiment-form button[type=submit]")
            page.wait_for_selector("#experiment-points")
            journal_url = page.get_attribute("h2 a", "href")

            # Fit the two parameters the form offers first (the link efficiency and Simple's hop).
            page.goto(stack.base_url + journal_url)
            assert page.is_checked("input[name=fit][value='scale_up.efficiency']") and page.is_checked("input[name=fit][value='scale_up.Simple.hop_latency_ns']")
            page.check("input[name=experiment]")
            page.click("#calibrate-button")
            page.wait_for_selector("#calibration-result")
            page.screenshot(path=str(ARTIFACTS / "journal-calibration.png"), full_page=True)
            assert "Calibrated: simulations of demo-supernode now use the fitted transport." in page.inner_text("#calibration-outcome")
            rows = {row.split("\t")[0]: row.split("\t")[1:] for row in page.inner_text("#calibration-parameters tbody").splitlines()}
            assert rows["scale_up.efficiency"][0] == "0.6000" and rows["scale_up.efficiency"][1].startswith("±")
            assert abs(float(rows["scale_up.Simple.hop_latency_ns"][0].replace(",", "")) - 5000) < 50
            assert page.locator("#calibration-points tbody tr").count() == len(SIZES)

            # Validation: the efficiency alone, 16 MiB held out; the fabric's transport stays as fitted.
            page.goto(stack.base_url + journal_url)
            page.check("input[name=experiment]")
            page.uncheck("input[name=fit][value='scale_up.Simple.hop_latency_ns']")
            page.fill("#id_held_out", "16MiB")
            page.click("#calibrate-button")
            page.wait_for_selector("#calibration-result")
            page.screenshot(path=str(ARTIFACTS / "journal-validation.png"), full_page=True)
            assert "Validation: at the held-out sizes" in page.inner_text("#calibration-outcome")
            held_out = page.locator("#calibration-points tr.held-out")
            assert held_out.count() == 1 and "16777216" in held_out.inner_text() and "held out" in held_out.inner_text()

            # A refused fit goes back to the journal with its reason.
            page.goto(stack.base_url + journal_url)
            page.check("input[name=experiment]")
            page.uncheck("input[name=fit][value='scale_up.efficiency']")
            page.uncheck("input[name=fit][value='scale_up.Simple.hop_latency_ns']")
            page.check("input[name=fit][value='in_switch_efficiency']")
            page.click("#calibrate-button")
            page.wait_for_selector(".banner-error")
            assert "in_switch_efficiency changes no prediction of these runs" in page.inner_text(".banner-error")
    finally:
        redis.stop()
