"""Telemetry from a real Prometheus: the fabric page's form checks the server and the label
mapping, a real Celery worker polls rate() of the byte and error counters, and viewers of the
fabric get the same live frames as from the POST endpoint. Prometheus scrapes recorded
node_exporter and dcgm-exporter text (tests/prometheus_stack.py)."""
import base64
import json
import re
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from django.core.files.uploadedfile import SimpleUploadedFile

from tests.prometheus_stack import DCGM_EXPORTER_TEXT, NODE_EXPORTER_TEXT, PROMETHEUS, RecordedHosts, free_port, run_prometheus, serve_hosts
from tests.test_consumers import session_headers
from tests.test_runs import wait_for
from twin.accounts.models import Role
from twin.asgi import application
from twin.fabrics.services import snapshot_create
from twin.ingest.registry import parse_fabric
from twin.fabrics.models import Fabric
from twin.simulations.models import TelemetrySource

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(PROMETHEUS is None, reason="needs Debian's prometheus binary on PATH (apt-get install prometheus)"),
]
DUMP = Path(__file__).parent / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"
HOSTS = ["node01", "node02", "node03"]
NODE01_TX = 25e9  # bytes/s: half of node01's 400 Gb/s port
NODE02_RX = 10e9
NODE02_LINK_DOWNS_PER_S = 1.0  # node02's cable flaps: link_downed grows by one a second
WINDOW_S = 2


@pytest.fixture
def ib_fabric(db):
    spec = parse_fabric(DUMP.read_text(), source_name=DUMP.name)
    return snapshot_create(fabric_name="ib", spec=spec, source_name=DUMP.name, source_format="ibnetdiscover", checksum="1" * 64).fabric


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    rates = {
        "node01": {("node_infiniband_port_data_transmitted_bytes_total", (("device", "mlx5_0"),)): NODE01_TX},
        "node02": {
            ("node_infiniband_port_data_received_bytes_total", (("device", "mlx5_0"),)): NODE02_RX,
            ("node_infiniband_symbol_error_total", (("device", "mlx5_0"),)): 5.0,
            ("node_infiniband_link_downed_total", (("device", "mlx5_0"),)): NODE02_LINK_DOWNS_PER_S,
        },
    }
    hosts = RecordedHosts(NODE_EXPORTER_TEXT.read_text(), rates)
    with serve_hosts(hosts.metrics_text) as exporter_port, run_prometheus(tmp_path_factory.mktemp("prometheus"), exporter_port, HOSTS, scrape_interval="250ms") as url:
        query = urllib.parse.urlencode({"query": f"rate(node_infiniband_port_data_transmitted_bytes_total[{WINDOW_S}s])"})
        wait_for(lambda: len(json.load(urllib.request.urlopen(f"{url}/api/v1/query?{query}"))["data"]["result"]) == 2 * len(HOSTS), timeout_s=60, interval_s=0.2)
        yield {"url": url, "exporter": f"http://127.0.0.1:{exporter_port}"}


def source_form(**changes):
    form = {"url": "", "preset": "node_exporter_infiniband", "mapping": "", "interval_s": "0.5", "rate_window_s": str(WINDOW_S), "enabled": "on"}
    return {**form, **changes}


def test_prometheus_counters_become_live_frames_for_viewers(prometheus, ib_fabric, celery_worker, make_user):
    from tests.conftest import logged_in_client

    operator = logged_in_client(make_user(Role.OPERATOR))
    saved = operator.post(f"/fabrics/{ib_fabric.pk}/telemetry/source/", source_form(url=prometheus["url"]), follow=True)
    assert saved.status_code == 200, saved.content
    page = saved.content.decode()
    # The check: HCAs mlx5_0 of the three hosts name ports of the fabric, their storage HCAs mlx5_1 do not.
    assert "3 of 6 series name ports of ib" in page, page
    assert 'id="telemetry-mapping"' in page and "{host}/{device}" in page
    source = TelemetrySource.objects.get(fabric=ib_fabric)
    assert source.last_report["check"]["query"] == f"rate(node_infiniband_port_data_transmitted_bytes_total[{WINDOW_S}s])"

    spec_links = {(link.a.key, link.b.key): index for index, link in enumerate(ib_fabric.latest_snapshot().links.select_related("a", "b").order_by("pk"))}
    node01_link = next(index for (a, b), index in spec_links.items() if a == "ib:0c42a10300860100" or b == "ib:0c42a10300860100")

    headers = session_headers(make_user(Role.VIEWER))

    async def watch():
        communicator = WebsocketCommunicator(application, f"/ws/fabrics/{ib_fabric.pk}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline:  # rate() settles once the window is covered by scrapes
                message = json.loads(await communicator.receive_from(timeout=30))
                assert message["type"] == "fabric.telemetry"
                frame = message["frame"]
                utilization = base64.b64decode(frame["utilization"])
                if abs(utilization[node01_link] / 255 - 0.5) <= 2 / 255 and frame["telemetry"]["ports_with_errors"]:
                    return frame
            raise AssertionError("no frame showed node01 at half its line rate")
        finally:
            await communicator.disconnect()

    frame = async_to_sync(watch)()
    report = frame["telemetry"]
    assert frame["source"] == "telemetry" and report["source"] == "prometheus"
    assert report["unknown_ports"] == 3 and all("mlx5_1" in reason for reason in report["unknown"])  # the storage HCAs, named
    assert report["errors"][0]["node"] == "ib:0c42a10300860200" and report["errors"][0]["counters"]["symbol_errors"] > 0
    top = {(record["from"], record["to"]): record["utilization"] for record in frame["top"]}
    assert top[("ib:0c42a10300860100", "ib:b8599f0300a01240")] == pytest.approx(0.5, abs=0.02)  # node01 sends
    assert any(abs(value - 0.2) < 0.02 for (a, b), value in top.items() if b == "ib:0c42a10300860200")  # node02 receives 10 GB/s

    source.refresh_from_db()
    assert source.last_error == "" and source.last_polled_at is not None and source.last_report["poll"]["links_measured"] >= 2
    stopped = operator.post(f"/fabrics/{ib_fabric.pk}/telemetry/source/", source_form(url=prometheus["url"], enabled=""), follow=True)
    assert b"Polling of ib&#x27;s Prometheus is off." in stopped.content
    generation = TelemetrySource.objects.get(fabric=ib_fabric).generation
    assert generation == source.generation + 1 and not TelemetrySource.objects.get(fabric=ib_fabric).enabled


def test_prometheus_error_counters_feed_the_diagnosis(prometheus, ib_fabric, celery_worker, make_user):
    """The polled error counters land where the POST endpoint's error readings land: node02's
    growing symbol errors and link downs make Diagnose report its link, as posted counters would."""
    from tests.conftest import logged_in_client
    from twin.simulations.models import TelemetryState

    operator = logged_in_client(make_user(Role.OPERATOR))
    diagnosis = f"/fabrics/{ib_fabric.pk}/diagnosis/"
    before = operator.get(diagnosis).content.decode()
    assert 'data-rule="link-flapping"' not in before and 'data-rule="error-counters"' not in before
    assert operator.post(f"/fabrics/{ib_fabric.pk}/telemetry/source/", source_form(url=prometheus["url"])).status_code == 302

    def node02_link_readings() -> list[dict]:
        history = TelemetryState.objects.filter(fabric=ib_fabric).values_list("history", flat=True).first() or []
        return [entry for entry in history if entry["counters"].get("symbol_errors", 0) > 3]

    def grown(name: str) -> int:
        readings = node02_link_readings()
        return readings[-1]["counters"][name] - readings[0]["counters"][name] if len(readings) >= 2 else 0

    # Enough polls for link_downed to grow by 2 and symbol errors by more than their threshold (10).
    wait_for(lambda: grown("link_downed") >= 2 and grown("symbol_errors") > 10, timeout_s=60, interval_s=0.5)
    readings = node02_link_readings()
    assert {entry["link"] for entry in readings} == {readings[0]["link"]}  # one link: node02's HCA cable
    # Only the counters that are not zero come from Prometheus; those at rest at zero are read as zero.
    assert set(readings[-1]["counters"]) == {"symbol_errors", "link_downed"}
    page = operator.get(diagnosis).content.decode()
    assert 'data-rule="link-flapping"' in page and 'data-rule="error-counters"' in page, page[-3000:]
    assert "symbol_errors" in page


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"url": "ftp://prometheus.example/"}, "give an http:// or https:// URL"),
        ({"url": "not a url at all"}, "Enter a valid URL"),
        ({"url": "UNREACHABLE"}, "Could not reach Prometheus at http://127.0.0.1:"),
        ({"url": "EXPORTER"}, "refused /api/v1/status/buildinfo (HTTP 404)"),
        ({"url": "PROMETHEUS", "mapping": '{"node": "{device}"}'}, "none names a port of ib"),
        ({"url": "PROMETHEUS", "mapping": '{"tx_bytes": "node_infiniband_no_such_metric_total"}'}, "Prometheus has no series for rate(node_infiniband_no_such_metric_total[2s])"),
        ({"url": "PROMETHEUS", "mapping": '{"node": "{host!r}", "colour": 1}'}, "colour: unknown key"),
        ({"url": "PROMETHEUS", "mapping": "[1, 2"}, "The label mapping is not JSON"),
        ({"url": "PROMETHEUS", "interval_s": "0.01"}, "greater than or equal to 0.1"),
    ],
)
def test_a_source_that_cannot_work_is_refused_with_the_reason_and_nothing_is_stored(prometheus, ib_fabric, make_user, changes, expected):
    from tests.conftest import logged_in_client

    urls = {"UNREACHABLE": f"http://127.0.0.1:{free_port()}", "EXPORTER": prometheus["exporter"], "PROMETHEUS": prometheus["url"]}
    form = source_form(**{**changes, "url": urls.get(changes["url"], changes["url"])})
    response = logged_in_client(make_user(Role.OPERATOR)).post(f"/fabrics/{ib_fabric.pk}/telemetry/source/", form)
    assert response.status_code == 400
    assert expected in response.content.decode(), response.content.decode()[-3000:]
    assert b'id="telemetry-source-form"' in response.content
    assert not TelemetrySource.objects.exists()



HGX_DUMP = Path(__file__).parent / "data" / "nccl_xml" / "nccl_topo_dump_8xH100.xml"  # = samples/nccl_topo_dump_8xH100.xml
NVLINK_GBS = 18 * 25  # an H100's 18 NVLinks, 25 GB/s each way
GPU3_LANE7_CRC_PER_S = 5.0  # GPU3's NVLink 7 carries nothing and its flit CRC errors grow


@pytest.fixture(scope="module")
def dcgm_prometheus(tmp_path_factory):
    """dcgm-exporter's text on node01 (the uploaded HGX) and node02 (not in the fabric), scraped as
    dcgm-exporter is: job dcgm, port 9400."""
    rates = {"node01": {("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L7", (("gpu", "3"),)): GPU3_LANE7_CRC_PER_S}}
    hosts = RecordedHosts(DCGM_EXPORTER_TEXT.read_text(), rates, host_label="Hostname")
    directory = tmp_path_factory.mktemp("prometheus-dcgm")
    with serve_hosts(hosts.metrics_text) as exporter_port, run_prometheus(directory, exporter_port, ["node01", "node02"], scrape_interval="250ms", job="dcgm", target_port=9400) as url:
        query = urllib.parse.urlencode({"query": '{__name__=~"DCGM_FI_PROF_NVLINK_L[0-9]+_TX_BYTES"}'})
        wait_for(lambda: len(json.load(urllib.request.urlopen(f"{url}/api/v1/query?{query}"))["data"]["result"]) == 2 * 8 * 18, timeout_s=60, interval_s=0.2)
        yield url


def test_dcgm_per_link_nvlink_counters_become_the_heatmap_of_an_uploaded_hgx(dcgm_prometheus, celery_worker, make_user):
    """An operator uploads node01's NCCL topology dump, points the fabric at Prometheus with the
    per-link DCGM preset and sees how the labels name ports; viewers get frames in which each
    GPU's NVLink shows the sum of its 18 per-link rates, node02's series are reported as naming
    no port, and GPU3's growing CRC errors are listed on its NVLink 7."""
    from tests.conftest import logged_in_client

    operator = logged_in_client(make_user(Role.OPERATOR))
    uploaded = operator.post("/upload/", {"file": [SimpleUploadedFile("node01.xml", HGX_DUMP.read_bytes())], "fabric": "hgx", "format": "", "role": "discovered"}, HTTP_ACCEPT="application/json")
    assert uploaded.status_code == 201, uploaded.content
    fabric = Fabric.objects.get(name="hgx")
    assert 'value="dcgm_nvlink_links"' in operator.get(f"/fabrics/{fabric.pk}/").content.decode()

    saved = operator.post(f"/fabrics/{fabric.pk}/telemetry/source/", source_form(url=dcgm_prometheus, preset="dcgm_nvlink_links"), follow=True)
    assert saved.status_code == 200, saved.content
    page = saved.content.decode()
    assert "144 of 288 series name ports" in page, page[-4000:]  # node01's 8 GPUs x 18 NVLinks; node02's are not in the fabric
    assert page.count(" / node02/gpu") == 5  # the first five GPUs of node02, each once (not once per NVLink)
    shown = page[page.index('id="telemetry-series-ports"') :]
    rows = re.findall(r"<tr><td><code>(\{.*?\})</code></td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>", shown[: shown.index("</table>")])
    assert len(rows) == 3
    for series, node, port, lane in rows:  # the series' bus id names the card, the number in its name the NVLink
        bus, link = re.search(r"pci_bus_id=&quot;00000000:(\w\w):00.0&quot;", series).group(1), re.search(r"link=&quot;(\d+)&quot;", series).group(1)
        assert series.startswith("{Hostname=&quot;node01&quot;, pci_bus_id=&quot;") and (node, port, lane) == (f"node01/gpu:0000:{bus.lower()}:00.0", "node01/nvswitch", f"NVLink {link}")
    assert "{Hostname}/gpu:{bus_id}" in page and "&quot;lane&quot;: &quot;{link}&quot;" in page  # the mapping in effect

    links = {(link.a.key, link.b.key): position for position, link in enumerate(fabric.latest_snapshot().links.select_related("a", "b").order_by("pk"))}
    gpu0, gpu3 = links[("node01/gpu:0000:18:00.0", "node01/nvswitch")], links[("node01/gpu:0000:5d:00.0", "node01/nvswitch")]
    headers = session_headers(make_user(Role.VIEWER))

    async def watch():
        communicator = WebsocketCommunicator(application, f"/ws/fabrics/{fabric.pk}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline:  # the CRC errors' growth needs a second poll
                message = json.loads(await communicator.receive_from(timeout=30))
                if message["type"] == "fabric.telemetry" and message["frame"]["telemetry"]["ports_with_errors"]:
                    return message["frame"]
            raise AssertionError("no frame listed GPU3's NVLink errors")
        finally:
            await communicator.disconnect()

    frame = async_to_sync(watch)()
    utilization = base64.b64decode(frame["utilization"])
    # GPU0's NVLink L sends (L + 1) GB/s (and receives 5 GB/s each): 171 of 450 GB/s.
    assert utilization[gpu0] / 255 == pytest.approx(sum(range(1, 19)) / NVLINK_GBS, abs=1 / 255)
    # GPU3's 17 working NVLinks carry 12.5 GB/s each way, its NVLink 7 nothing: 212.5 of 450.
    assert utilization[gpu3] / 255 == pytest.approx(17 * 12.5 / NVLINK_GBS, abs=1 / 255)
    report = frame["telemetry"]
    assert report["source"] == "prometheus" and report["links_measured"] == 8
    assert report["unknown_ports"] == 8 * 18 and all(reason.startswith("node02/") for reason in report["unknown"])  # reported, not dropped
    (errors,) = report["errors"]
    assert errors["node"] == "node01/gpu:0000:5d:00.0" and errors["lanes"] == ["7"] and errors["counters"]["nvlink_crc_flit_errors"] >= 1

    source = TelemetrySource.objects.get(fabric=fabric)
    assert source.last_error == "" and source.last_report["poll"]["unknown_ports"] == 8 * 18
    page = operator.get(f"/fabrics/{fabric.pk}/").content.decode()
    assert "8 links measured, 144 series naming no port" in page
