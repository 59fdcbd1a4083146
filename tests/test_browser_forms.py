"""Every form no other browser test submits, submitted from its page in headless Chromium as an
ops engineer would, on an uploaded InfiniBand fabric, and each outcome read off the page it leads
to: the language switch, the list filters (fabrics, runs, users, journal, cabling findings), the
what-if comparison, a perfquery reading, real nccl-tests files recorded in the journal, a user
created, edited and logged in, and log out. (The run forms, the upload, the calibration and the
telemetry source have their own browser tests.)"""
import json

from tests.stack import ROOT, Session, Stack
from tests.test_browser_e2e import ADMIN_PASSWORD, browser, log_in, open_panel, pytestmark  # noqa: F401  (fixture, marks)
from tests.test_browser_tour import VIEWPORT, start_run, upload, wait_for_runs
from twin.common.embedded import EmbeddedRedis

DATA = ROOT / "tests" / "data"
DUMP = DATA / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"
NCCL_TESTS = [DATA / "traces" / "nccl-tests_all_reduce_perf_8gpu_classic.txt", DATA / "traces" / "nccl-tests_all_gather_perf_8gpu_v2.17.txt"]


def rows(page, table: str) -> list[str]:
    return page.locator(f"{table} tbody tr").all_inner_texts()


def test_every_other_form_from_its_page(tmp_path, stack_database_url, browser):
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            session = Session(stack.base_url)
            dump = DUMP.read_text()
            v1 = upload(session, "lab", dump)
            # In the second discovery node01's cable is in leaf01:9, not :1, and node04's trained at
            # HDR: findings on two cards, for the filter to tell apart.
            moved = (dump.replace('[1]\t"H-0c42a10300860100"', '[9]\t"H-0c42a10300860100"')
                     .replace('"S-b8599f0300a01240"[1]\t\t# lid 11', '"S-b8599f0300a01240"[9]\t\t# lid 11')
                     .replace('"node04 mlx5_0" lid 14 4xNDR', '"node04 mlx5_0" lid 14 4xHDR')
                     .replace('[4]\t\t# lid 14 lmc 0 "MF0;leaf01:MQM9700/U1" lid 2 4xNDR', '[4]\t\t# lid 14 lmc 0 "MF0;leaf01:MQM9700/U1" lid 2 4xHDR'))
            assert moved.count("[9]") == 2 and moved.count("4xHDR") == 2
            v2 = upload(session, "lab", moved)
            lab = v2["fabric"]
            whatifs = [start_run(session, v2["id"], "whatif", {"factors": [1, 2], "collectives": ["allreduce"], "sizes": [2**20], "alternatives": ["one-supernode"]})
                       for _ in range(2)]  # fmt: skip
            wait_for_runs(session, {f"whatif-{n}": run for n, run in enumerate(whatifs)})

            page = browser.new_page(viewport=VIEWPORT)
            problems: list[str] = []
            page.on("pageerror", lambda error: problems.append(f"{page.url}: script error {error}"))
            page.goto(stack.base_url + "/")
            page.wait_for_load_state("networkidle")  # the live status has asked /api/health/ by now
            assert page.is_hidden("#live-status"), f"the login page shows a banner: {page.inner_text('#live-status')}"
            log_in(page, stack.base_url)

            # The language switch in the top bar: the same page in Chinese, then back.
            page.select_option("header select[name=language]", "zh-hans")
            page.wait_for_selector("html[lang=zh-hans]")
            assert "互联网络" in page.inner_text("main")
            page.select_option("header select[name=language]", "en")
            page.wait_for_selector("html[lang=en]")

            # Fabric list: filter by name.
            page.fill("#fabric-filter input[name=q]", "lab")
            page.click("#fabric-filter button[type=submit]")
            assert [row.split("\t")[0] for row in rows(page, "#fabric-table")] == ["lab"]

            # Runs: only what-ifs, newest first by default.
            page.goto(stack.base_url + "/runs/")
            page.select_option("#run-filter select[name=kind]", "whatif")
            page.click("#run-filter button[type=submit]")
            listed = rows(page, "#run-table")
            assert sorted(int(row.split("\t")[0]) for row in listed) == sorted(whatifs), listed

            # The what-if report's comparison with the other run.
            page.goto(stack.base_url + f"/runs/{whatifs[1]}/report/")
            page.select_option("select[name=b]", str(whatifs[0]))
            page.click("form[action$='compare/'] button[type=submit]")
            assert page.url.split("?")[1].split("&")[0:2] == [f"a={whatifs[1]}", f"b={whatifs[0]}"], page.url
            assert f"#{whatifs[0]}" in page.inner_text("main") and f"#{whatifs[1]}" in page.inner_text("main")

            # Cabling findings between the two discoveries, filtered to the moved cable.
            page.goto(stack.base_url + f"/fabrics/{lab}/diff/")
            page.select_option("#diff-form select[name=expected]", str(v1["id"]))
            page.select_option("#diff-form select[name=found]", str(v2["id"]))
            page.click("#diff-form button[type=submit]")
            everything = rows(page, "#diff-table")
            page.fill("#diff-filter input[name=q]", "node01")
            page.click("#diff-filter button[type=submit]")
            filtered = rows(page, "#diff-table")
            assert filtered and all("node01" in row for row in filtered) and len(filtered) < len(everything), (everything, filtered)

            # A one-off perfquery reading, then the same ports 10 s later: the links are measured.
            page.goto(stack.base_url + f"/fabrics/{lab}/")
            open_panel(page, "live-telemetry")
            for name, taken_at in (("perfquery_x_leaf01_node01.txt", "2026-12-01 10:00:00"), ("perfquery_x_leaf01_node01_later.txt", "2026-12-01 10:00:10")):
                page.set_input_files("#telemetry-reading-form input[type=file]", str(DATA / "telemetry" / name))
                page.fill("#telemetry-reading-form input[name=taken_at]", taken_at)
                page.click("#telemetry-reading-form button[type=submit]")
                page.wait_for_load_state("networkidle")
                open_panel(page, "live-telemetry")
            assert "3 links measured" in page.inner_text("body"), page.inner_text("main")[:2000]

            # Two real nccl-tests reports recorded in the journal, then filtered by collective.
            page.goto(stack.base_url + f"/fabrics/{lab}/journal/new/")
            page.set_input_files("#experiment-form input[type=file]", [str(path) for path in NCCL_TESTS])
            page.fill("#id_title", "lab nccl-tests")
            page.click("#experiment-form button[type=submit]")
            page.wait_for_load_state("networkidle")
            page.goto(stack.base_url + f"/fabrics/{lab}/journal/")
            recorded = rows(page, "#journal-table")
            assert len(recorded) == 2 and all("\t8\t" in row for row in recorded), recorded
            page.select_option("#journal-filter select[name=collective]", "allgather")
            page.click("#journal-filter button[type=submit]")
            assert [row.split("\t")[2] for row in rows(page, "#journal-table")] == ["allgather"]

            # Users: add an operator, find them, log in as them, then take their account away.
            page.goto(stack.base_url + "/users/")
            page.fill("#id_username", "night-shift")
            page.fill("#id_password1", "a long passphrase 42")
            page.fill("#id_password2", "a long passphrase 42")
            page.select_option("#id_role", "operator")
            page.click("form.stacked button[type=submit]")
            page.goto(stack.base_url + "/users/")
            page.fill("#user-filter input[name=q]", "night")
            page.click("#user-filter button[type=submit]")
            found = rows(page, "#user-table")
            assert len(found) == 1 and found[0].startswith("night-shift"), found
            page.click("#user-table >> text=night-shift")
            page.uncheck("#id_is_active")
            page.click("form.stacked button[type=submit]")
            page.goto(stack.base_url + "/users/?q=night-shift")
            assert rows(page, "#user-table")[0].split("\t")[1:3] == ["Operator", "no"], rows(page, "#user-table")

            # Log out from the top bar: back to the login page, which the deactivated user cannot pass.
            page.click("header form[action$='logout/'] button[type=submit]")
            page.goto(stack.base_url + "/")
            assert "/login/" in page.url
            page.fill("#id_username", "night-shift")
            page.fill("#id_password", "a long passphrase 42")
            page.click("button[type=submit]")
            assert "/login/" in page.url and page.locator(".errorlist, .error, .banner-error").count()
            page.fill("#id_username", "admin")
            page.fill("#id_password", ADMIN_PASSWORD)
            page.click("button[type=submit]")
            assert "/login/" not in page.url
            assert problems == [], problems
            snapshots = json.loads(session.get(f"/api/fabrics/{lab}/"))
            assert snapshots["name"] == "lab"
            page.close()
    finally:
        redis.stop()
