"""The map as the centre of the work, in headless Chromium against the whole product (real worker,
Redis, database), on a fabric uploaded from the Upload page (an ibnetdiscover dump: two leaves,
one spine, eight HCAs, one leaf-spine cable trained at 1x): a link clicked on the map shows its
ends, cables and state in the details panel and goes into the address bar, which restores it; a
link hovered shows them in a tooltip (with the utilisation while a replay colours the map), empty
space none; an aggregated edge of the demo super-node shows how many links it stands for; no two labels overlap at any zoom; hop
statistics colour the cards by their hops from one card; a replay's `frame` deep link opens the
player at that frame with the map coloured by it."""
import shutil
from urllib.parse import parse_qs, urlsplit

from tests.stack import ROOT, Stack
from tests.test_browser_e2e import ARTIFACTS, browser, log_in, open_panel, pytestmark, wait_until  # noqa: F401  (fixture, marks)
from twin.common.embedded import EmbeddedRedis

DUMP = ROOT / "tests" / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"
VIEWPORT = {"width": 1440, "height": 900}
MAP_READY = "document.querySelector('#fabric-map')?.dataset.nodes === '22'"

# Index of the layout link between two nodes named so (either way round), in layout order.
LINK_BETWEEN = """([a, b]) => {
    const m = window.__twinMap.model, found = [];
    for (let i = 0; i < m.linkCount; i += 1) {
        const names = [m.nodeName[m.linkA[i]], m.nodeName[m.linkB[i]]];
        if (names.includes(a) && names.includes(b)) found.push(i);
    }
    return found;
}"""

# Pairs of drawn labels whose boxes intersect.
OVERLAPS = """() => {
    const labels = window.__twinMap.labels(), pairs = [];
    labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => {
        if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) pairs.push([a.text, b.text]);
    }));
    return {count: labels.length, pairs};
}"""


def click_link(page, link: int) -> None:
    """Click the middle of the edge drawn for layout link `link`, as a user would."""
    point = page.evaluate("(link) => window.__twinMap.linkOnScreen(link)", link)
    assert point is not None, f"link {link} is not drawn"
    page.mouse.click(point["x"], point["y"])


def hover_link(page, link: int) -> None:
    """Move the pointer onto the middle of the edge drawn for layout link `link`, from just beside it."""
    point = page.evaluate("(link) => window.__twinMap.linkOnScreen(link)", link)
    assert point is not None, f"link {link} is not drawn"
    page.mouse.move(point["x"] - 2, point["y"] - 2)
    page.mouse.move(point["x"], point["y"])


def hover_empty_space(page) -> None:
    """Move the pointer into the stage's top-left corner, inside the padding no link is drawn in."""
    box = page.locator("#fabric-map .tmap-stage").bounding_box()
    page.mouse.move(box["x"] + 4, box["y"] + 4)


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def test_links_labels_hops_and_frames_on_the_map_of_an_uploaded_fabric(tmp_path, stack_database_url, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page_errors: list[str] = []
            page.on("pageerror", lambda error: page_errors.append(str(error)))
            log_in(page, stack.base_url)
            page.goto(stack.base_url + "/upload/")
            page.set_input_files("input[name=file]", [str(DUMP)])
            page.fill("#id_fabric", "lab")
            page.click("#upload-form button[type=submit]")
            page.wait_for_selector("#upload-open", timeout=60000)
            page.click("#upload-open")
            wait_until(page, MAP_READY, timeout_ms=30000)
            fabric_url = stack.base_url + page.evaluate("location.pathname")

            # A link clicked on the map: its ends by name, its cable, highlighted, in the URL.
            [hca_link] = page.evaluate(LINK_BETWEEN, ["node01/mlx5_0", "leaf01"])
            click_link(page, hca_link)
            page.wait_for_selector("#details-panel .tmap-details h3:text('node01/mlx5_0 → leaf01')", timeout=10000)
            assert page.get_attribute("#details-panel .dock-toggle", "aria-expanded") == "true"
            assert page.get_attribute("#fabric-map", "data-picked-links") == "1"
            cables = page.locator("#map-details .tmap-cables tbody tr").all_inner_texts()
            assert len(cables) == 1 and "4x NDR" in cables[0] and "up" in cables[0], cables
            assert "Port of leaf01" in page.inner_text("#map-details .tmap-cables thead")
            assert "1 up, 0 degraded, 0 down" in page.inner_text("#map-details .tmap-link-summary")
            wait_until(page, "new URLSearchParams(location.search).has('link')", timeout_ms=5000)
            assert query_of(page.url)["link"] == str(hca_link)
            page.screenshot(path=str(ARTIFACTS / "map-link-picked.png"))

            # The same link hovered: a tooltip names both ends, then their ports and the cable's width
            # (from the node endpoint); empty space shows none, and a zoom hides it.
            hover_link(page, hca_link)
            page.wait_for_selector("#fabric-map .tooltip:has-text('node01/mlx5_0 → leaf01')", timeout=10000)
            page.wait_for_selector("#fabric-map .tooltip:has-text('4x NDR')", timeout=10000)
            tip = page.inner_text("#fabric-map .tooltip")
            assert all(line in tip for line in ("Port of node01/mlx5_0: 1", "Port of leaf01: 1", "Speed: 400 Gb/s", "State: Up")), tip
            page.screenshot(path=str(ARTIFACTS / "map-link-hovered.png"))
            hover_empty_space(page)
            page.wait_for_selector("#fabric-map .tooltip", state="hidden", timeout=5000)
            hover_link(page, hca_link)
            page.wait_for_selector("#fabric-map .tooltip:has-text('node01/mlx5_0 → leaf01')", timeout=5000)
            page.mouse.wheel(0, -120)
            page.wait_for_selector("#fabric-map .tooltip", state="hidden", timeout=5000)

            # The deep link of the leaf02-spine01 pair (two cables, one trained at 1x) in a fresh tab.
            uplinks = page.evaluate(LINK_BETWEEN, ["leaf02", "spine01"])
            assert len(uplinks) == 2, uplinks
            other = context.new_page()
            other.on("pageerror", lambda error: page_errors.append(str(error)))
            other.goto(f"{fabric_url}?link={uplinks[0]}")
            wait_until(other, MAP_READY, timeout_ms=30000)
            other.wait_for_selector("#details-panel .tmap-details h3:text('leaf02 → spine01')", timeout=15000)
            cables = other.locator("#map-details .tmap-cables tbody tr").all_inner_texts()
            assert len(cables) == 2 and any("1x NDR" in row and "degraded" in row for row in cables), cables
            assert "1 up, 1 degraded, 0 down" in other.inner_text("#map-details .tmap-link-summary")
            assert query_of(other.url)["link"] == str(uplinks[0])
            # Hovered, the pair says it stands for two cables, of two widths and states.
            hover_link(other, uplinks[0])
            other.wait_for_selector("#fabric-map .tooltip:has-text('leaf02 → spine01'):has-text('1x NDR')", timeout=10000)
            tip = other.inner_text("#fabric-map .tooltip")
            assert "Parallel cables: 2" in tip and "1 up, 1 degraded, 0 down" in tip, tip

            # On the 1,024-card demo at 1x, leaves and spines are closed groups: a leaf-spine edge stands
            # for every link between the two, and says how many.
            other.goto(stack.base_url + "/")
            other.click("text=demo-supernode")
            wait_until(other, "document.querySelector('#fabric-map')?.dataset.nodes === '1072'", timeout_ms=30000)
            uplink = other.evaluate(LINK_BETWEEN, ["leaf-01", "spine-01"])[0]
            click_link(other, uplink)
            other.wait_for_selector("#map-details .tmap-link-summary", timeout=10000)
            heading = other.inner_text("#map-details h3")
            assert heading.startswith("leaf-01 (33) → spine"), heading  # from the lower end up
            summary = other.inner_text("#map-details")
            assert "drawn as one" in summary and "0 degraded, 0 down" in summary, summary
            links = int(other.inner_text("#map-details .tmap-link-summary dd").replace(",", ""))
            assert links > 1 and other.get_attribute("#fabric-map", "data-picked-links") == str(links)
            assert not other.evaluate("new URLSearchParams(location.search).has('link')")  # an aggregate has no deep link
            other.screenshot(path=str(ARTIFACTS / "map-link-aggregate.png"))
            other.close()
            # Labels: at every zoom, no two drawn labels overlap.
            for ratio in (4, 1, 0.5, 0.25, 0.1):
                page.evaluate("(ratio) => { window.__twinMap.setCamera(ratio); window.__twinMap.updateLod(); }", ratio)
                placed = page.evaluate(OVERLAPS)
                assert placed["count"] > 0 and placed["pairs"] == [], (ratio, placed)
            page.evaluate("() => { window.__twinMap.setCamera(1); window.__twinMap.updateLod(); }")

            # Hop statistics: the result in its panel, the cards coloured by their hops from one card.
            open_panel(page, "hops-panel")
            page.click("#start-hop-stats")
            page.wait_for_selector("#run-slot .run-widget[data-status=succeeded]", timeout=90000)
            assert "28" in page.inner_text("#run-slot .run-result")  # 8 cards: 28 pairs
            wait_until(page, "document.querySelector('#fabric-map').dataset.hopCounts !== undefined", timeout_ms=10000)
            # From a card under leaf01: its 3 neighbours 1 hop away, leaf02's 4 cards 3 hops (through spine01).
            assert page.get_attribute("#fabric-map", "data-hop-counts") == "1:3,3:4"
            legend = page.inner_text("#map-legend")
            assert "Cards by hops from" in legend and "1 hop: 3" in legend and "3 hops: 4" in legend, legend
            assert "coloured by their hops" in page.inner_text("#run-slot .marks-status")
            first_source = page.get_attribute("#fabric-map", "data-hop-source")
            # Another card picked on the map becomes the source.
            # Another card picked on the map becomes the source: node01's, under leaf01 (the first card is on leaf02).
            card_of_node01 = page.evaluate(
                """() => { const m = window.__twinMap.model, nic = m.nodeName.indexOf('node01/mlx5_0');
                    const peers = m.linksOfNode(nic).map((l) => (m.linkA[l] === nic ? m.linkB[l] : m.linkA[l]));
                    return m.nodeId[peers.find((n) => m.nodeKind[n] === 'card')]; }"""
            )
            page.evaluate("(id) => window.__twinMap.selectNode(id)", card_of_node01)
            wait_until(page, f"document.querySelector('#fabric-map').dataset.hopSource === {card_of_node01!r}", timeout_ms=10000)
            assert first_source != card_of_node01 and page.get_attribute("#fabric-map", "data-hop-counts") == "1:3,3:4"
            page.screenshot(path=str(ARTIFACTS / "map-hops.png"))
            # Clear hops: the normal colours back, the hop legend gone.
            page.click(".tmap-hops-clear")
            wait_until(page, "document.querySelector('#fabric-map').dataset.hopSource === undefined", timeout_ms=10000)
            assert page.get_attribute("#fabric-map", "data-hop-counts") is None
            assert page.query_selector(".tmap-hops-clear") is None

            # A replay, then its frame deep link: the player at that frame, the map coloured by it.
            open_panel(page, "replay-panel")
            page.fill("#replay-form [name=model_params]", "1e9")
            page.fill("#replay-form [name=tp]", "4")  # TP within a leaf, DP across the spine
            page.fill("#replay-form [name=dp]", "2")
            page.click("#replay-form button[type=submit]")
            page.wait_for_selector("#replay-slot .run-widget:is([data-status=succeeded], [data-status=failed])", timeout=240000)
            assert page.get_attribute("#replay-slot .run-widget", "data-status") == "succeeded", page.inner_text("#replay-slot .run-widget")
            run_id = int(query_of(page.url)["run"])
            frame = page.evaluate(
                """async (run) => {
                    const get = async (index) => (await (await fetch(`/api/runs/${run}/frames/?index=${index}`)).json()).frame;
                    const first = await get(0);
                    for (let index = 1; index <= 100; index += 1) {
                        const frame = await get(index);
                        if (frame === undefined) break;
                        if (frame.utilization !== first.utilization) return {index, utilization: frame.utilization};
                    }
                    return null;
                }""",
                run_id,
            )
            assert frame is not None, "the replay's first frames all look alike"
            linked = context.new_page()
            linked.on("pageerror", lambda error: page_errors.append(str(error)))
            linked.goto(f"{fabric_url}?run={run_id}&frame={frame['index']}")
            wait_until(linked, MAP_READY, timeout_ms=30000)
            linked.wait_for_selector("#replay-player .replay-play", timeout=20000)
            wait_until(linked, f"Number(document.querySelector('#replay-player .replay-timeline').value) === {frame['index']}", timeout_ms=20000)
            assert linked.get_attribute("#player-panel .dock-toggle", "aria-expanded") == "true"
            # The map shows that frame's utilisation, link for link (bytes of 1/255).
            wait_until(
                linked,
                f"""(() => {{
                    const shown = window.__twinMap.linkUtilisation();
                    const bytes = atob({frame['utilization']!r});
                    return shown !== null && shown.length === bytes.length
                        && [...bytes].every((c, i) => Math.abs(shown[i] - c.charCodeAt(0) / 255) < 1e-6);
                }})()""",
                timeout_ms=20000,
            )
            # The address bar is written a moment after the frame shows (the player may show frame 0 first).
            wait_until(linked, f"new URLSearchParams(location.search).get('frame') === '{frame['index']}'", timeout_ms=5000)
            # A link hovered while the replay colours the map: its utilisation in the frame. (With the
            # player docked the map is smaller and the leaves closed: selecting the link opens them.)
            assert linked.evaluate("(link) => window.__twinMap.selectLink(link)", hca_link)
            shown = linked.evaluate(
                """(link) => new Intl.NumberFormat('en', {style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1})
                    .format(window.__twinMap.linkUtilisation()[link])""",
                hca_link,
            )
            hover_link(linked, hca_link)
            linked.wait_for_selector(f"#fabric-map .tooltip:has-text('Utilisation: {shown}')", timeout=10000)
            linked.screenshot(path=str(ARTIFACTS / "map-frame-deep-link.png"))
            assert page_errors == [], page_errors
    finally:
        redis.stop()
        shutil.rmtree(tmp_path / "redis", ignore_errors=True)
