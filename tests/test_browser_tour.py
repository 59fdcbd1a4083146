"""A tour of every page in headless Chromium at 1440x900, in English and in Simplified Chinese, on
the demo fabric and an uploaded InfiniBand fabric with a run of every kind: each page answers
200 in the reader's language, draws without a script error, loads every resource it asks for,
and fits the window's width (nothing pushes the page sideways). A full-page screenshot of each
goes to test-artifacts/tour/<language>/ for people to look at."""
import json
import shutil
import time
import urllib.request

from tests.stack import ROOT, Session, Stack
from tests.test_browser_e2e import ARTIFACTS, browser, log_in, pytestmark  # noqa: F401  (fixture, marks)
from twin.common.embedded import EmbeddedRedis

SAMPLE = ROOT / "tests" / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"  # from ../shared/samples
LANGUAGES = {"en": "en", "zh-hans": "zh-Hans"}  # <html lang> -> Accept-Language
VIEWPORT = {"width": 1440, "height": 900}
# The deepest elements that stick out past the window's right edge: what pushes a page sideways.
WIDEST = """[...document.querySelectorAll('body *')]
  .filter((el) => el.getBoundingClientRect().right > window.innerWidth && ![...el.children].some((child) => child.getBoundingClientRect().right > window.innerWidth))
  .slice(0, 5).map((el) => `${el.tagName.toLowerCase()}.${el.className} (${Math.round(el.getBoundingClientRect().right)} px)`)"""


def upload(session: Session, name: str, text: str | bytes, filename: str | None = None) -> dict:
    """Stores `text` as a new snapshot of fabric `name` through the API, as a collector would,
    under `filename` (formats are told apart by content and name; default `<name>.txt`)."""
    boundary = "tour-boundary"
    data = text.encode() if isinstance(text, str) else text
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="fabric"\r\n\r\n{name}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename or name + ".txt"}"\r\n'
        f"Content-Type: application/octet-stream\r\n\r\n"
    ).encode() + data + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(
        session.base_url + "/api/snapshots/", data=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "X-CSRFToken": session.cookie("csrftoken"),
                 "Referer": session.base_url + "/"},
    )  # fmt: skip
    with session.opener.open(request, timeout=120) as response:
        return json.loads(response.read())


def start_run(session: Session, snapshot: int, kind: str, params: dict) -> int:
    status, body = session.post_json("/api/runs/", json.dumps({"kind": kind, "snapshot": snapshot, "params": params}).encode())
    assert status == 201, (kind, body)
    return json.loads(body)["id"]


def wait_for_runs(session: Session, runs: dict[str, int], timeout_s: float = 600) -> None:
    deadline = time.monotonic() + timeout_s
    pending = dict(runs)
    while pending:
        for kind, run in list(pending.items()):
            status = json.loads(session.get(f"/api/runs/{run}/"))["status"]
            if status in ("succeeded", "failed", "cancelled"):
                assert status == "succeeded", (kind, json.loads(session.get(f"/api/runs/{run}/")).get("error"))
                del pending[kind]
        assert time.monotonic() < deadline, f"runs not finished: {pending}"
        time.sleep(1)


def submit_as_shown(page, base_url: str, fabric_path: str, form: str) -> str:
    """Submits one of the fabric page's run forms without touching a field: the form as the page
    offers it must run on the fabric it is shown for. Returns the path that shows the finished run:
    the fabric page's deep link to it (the form's panel shows the run; docs/workspace.md)."""
    page.goto(base_url + fabric_path)
    page.click(f"{form} button[type=submit]")
    page.wait_for_selector(".run-widget[data-status=succeeded], .run-widget[data-status=failed], .errorlist", timeout=300000)
    assert page.query_selector(".run-widget[data-status=succeeded]"), (form, page.url, page.inner_text("main"))
    return page.url.removeprefix(base_url)


def test_every_page_in_both_languages(tmp_path, stack_database_url, browser):
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            session = Session(stack.base_url)
            dump = SAMPLE.read_text()
            first = upload(session, "lab", dump)
            # In the second discovery node01's cable trained at HDR: the diff has something to say.
            slower = "\n".join(line.replace("4xNDR", "4xHDR") if "c42a10300860100" in line else line for line in dump.splitlines())
            second = upload(session, "lab", slower + "\n")
            lab, v1, v2 = second["fabric"], first["id"], second["id"]
            demo = next(fabric for fabric in json.loads(session.get("/api/fabrics/"))["results"] if fabric["name"] == "demo-supernode")
            demo_snapshot = demo["latest_snapshot"]["id"]
            runs = {
                "hop_stats": start_run(session, v2, "hop_stats", {}),
                "collective": start_run(session, v2, "collective", {"collective": "allreduce", "size_bytes": 2**24}),
                "placement": start_run(session, demo_snapshot, "placement", {"job": {"tp": 8, "dp": 4}, "strategies": ["naive", "aware"]}),
                "failures": start_run(session, demo_snapshot, "failures", {"worst": "leaf", "workload": {}}),
                "replay": start_run(session, demo_snapshot, "replay", {"training": {"model_params": 1e9, "tp": 8, "dp": 8}, "max_frames": 10}),
                "whatif": start_run(session, demo_snapshot, "whatif", {"factors": [1, 2], "alternatives": ["one-supernode"],
                                                                       "collectives": ["allreduce"], "sizes": [2**16, 2**22]}),
            }  # fmt: skip
            wait_for_runs(session, runs)
            # Every run form of the uploaded fabric's page, submitted as it is shown.
            page = browser.new_page(viewport=VIEWPORT)
            log_in(page, stack.base_url)
            shown = {form: submit_as_shown(page, stack.base_url, f"/fabrics/{lab}/", f"#{form}")
                     for form in ("placement-form", "failure-form", "whatif-form", "replay-form")}
            page.close()
            pages = {
                "fabrics": "/",
                "fabric-uploaded": f"/fabrics/{lab}/",
                "fabric-demo": f"/fabrics/{demo['id']}/",
                "diff": f"/fabrics/{lab}/diff/?expected={v1}&found={v2}",
                "diagnosis": f"/fabrics/{lab}/diagnosis/",
                "journal": f"/fabrics/{lab}/journal/",
                "journal-new": f"/fabrics/{lab}/journal/new/",
                "upload": "/upload/",
                "runs": "/runs/",
                **{f"run-{kind}": f"/runs/{run}/" for kind, run in runs.items()},
                **{f"lab-{form}": url for form, url in shown.items()},
                "whatif-report": f"/runs/{runs['whatif']}/report/",
                "users": "/users/",
            }

            for lang, accept in LANGUAGES.items():
                shots = ARTIFACTS / "tour" / lang
                shutil.rmtree(shots, ignore_errors=True)
                shots.mkdir(parents=True)
                context = browser.new_context(viewport=VIEWPORT, extra_http_headers={"Accept-Language": accept})
                page = context.new_page()
                problems: list[str] = []
                page.on("pageerror", lambda error: problems.append(f"{page.url}: script error {error}"))
                page.on("console", lambda message: problems.append(f"{page.url}: {message.text}") if "Failed to load resource" in message.text else None)
                log_in(page, stack.base_url)
                page.wait_for_selector("text=lab")
                for name, url in pages.items():
                    response = page.goto(stack.base_url + url)
                    assert response.status == 200, (lang, url, response.status)
                    page.wait_for_load_state("networkidle")
                    assert page.get_attribute("html", "lang") == lang, (lang, url)
                    page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
                    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                    assert overflow <= 0, f"{url} in {lang} is {overflow} px wider than the window: {page.evaluate(WIDEST)}"
                assert problems == [], problems
                assert len(list(shots.glob("*.png"))) == len(pages)
                context.close()
    finally:
        redis.stop()
