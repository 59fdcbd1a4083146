"""End to end in headless Chromium on a fabric an operator uploads, not one the twin made: a
SuperPOD-style ibnetdiscover dump plus an archive of per-host NCCL XMLs and the Slurm block
topology, sent from the Upload page; then every kind of run started from the fabric page's own forms, each finishing with
numbers that fit that fabric."""
import io
import re
import shutil
import tarfile

from tests.stack import ROOT, Stack
from tests.test_browser_e2e import ARTIFACTS, browser, log_in, pytestmark  # noqa: F401  (fixture, marks)
from twin.common.embedded import EmbeddedRedis
from twin.ingest.writers.superpod import superpod_files

# One scalable unit of 32 DGX H100: dgx032 is out for service (its ports carry a storage
# server and the UFM), dgx005's HCAs kept their default description; XMLs for dgx001-016.
HOSTS, XML_HOSTS = 31, 16
CARDS = HOSTS * 8


def write_upload(tmp_path):
    files = superpod_files(units=1, missing={32}, nameless={5}, storage_hosts=1, xml_hosts=range(1, XML_HOSTS + 1))
    dump = tmp_path / "superpod.ibnetdiscover"
    dump.write_text(files.pop("superpod.ibnetdiscover"))
    archive = tmp_path / "hosts.tar.gz"
    with tarfile.open(archive, "w:gz") as packed:
        for name, text in files.items():
            data = text.encode()
            member = tarfile.TarInfo(f"topo/{name}")
            member.size = len(data)
            packed.addfile(member, io.BytesIO(data))
    topology = tmp_path / "topology.conf"  # topology/block: dgx001-008, dgx009-016, ...
    topology.write_text("".join(f"BlockName=b{block + 1} Nodes=dgx[{block * 8 + 1:03d}-{block * 8 + 8:03d}]\n" for block in range(4)))
    return dump, archive, topology


def numbers(text: str) -> list[float]:
    return [float(value.replace(",", "")) for value in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


def finish(page, fabric_url: str, form: str, fill: dict[str, str], timeout: int = 180000, select: dict[str, str] | None = None) -> str:
    """Fill and submit one of the fabric page's run forms; the finished run's widget text."""
    page.goto(fabric_url)
    for field, value in (select or {}).items():
        page.select_option(f"{form} [name={field}]", value)
    for field, value in fill.items():
        page.fill(f"{form} [name={field}]", value)
    page.click(f"{form} button[type=submit]")
    try:
        page.wait_for_selector(".run-widget[data-status=succeeded]", timeout=timeout)
    finally:
        page.screenshot(path=str(ARTIFACTS / f"uploaded-superpod-{form.strip('#')}.png"), full_page=True)
    return page.inner_text(".run-widget")


def test_an_uploaded_superpod_runs_every_kind_of_run_from_its_page(tmp_path, stack_database_url, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    dump, archive, topology = write_upload(tmp_path)
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            log_in(page, stack.base_url)
            page.goto(stack.base_url + "/upload/")
            page.set_input_files("input[name=file]", [str(dump), str(archive), str(topology)])
            page.fill("#id_fabric", "superpod")
            page.click("#upload-form button[type=submit]")
            page.wait_for_selector("#upload-open", timeout=60000)
            page.click("#upload-open")
            page.wait_for_selector("#snapshot-summary")
            fabric_url = page.url.split("?")[0]

            # Who communicates: the XMLs name 16 hosts' GPUs, the other hosts' compute HCAs
            # stand for one card each; storage and UFM HCAs are left out by the shown rule.
            assert f"{CARDS:,}" in page.inner_text("#card-count").replace("\u202f", ",")
            sources = page.inner_text("#card-sources")
            assert f"{XML_HOSTS * 8} from NCCL topology XML" in sources and f"{(HOSTS - XML_HOSTS) * 8} from HCAs" in sources
            assert "stor01" in page.inner_text("#card-rule") and "ufm01" in page.inner_text("#card-rule")
            assert "SHARP" in page.inner_text("#in-switch-reduction")
            assert "31 hosts placed in 4 blocks" in page.inner_text("#slurm-topology")
            assert page.locator("#runs-unavailable").count() == 0
            page.screenshot(path=str(ARTIFACTS / "uploaded-superpod.png"), full_page=True)

            page.click("#start-hop-stats")
            page.wait_for_selector("#run-slot .run-widget[data-status=succeeded]", timeout=60000)
            assert f"{CARDS * (CARDS - 1) // 2:,}" in page.inner_text("#run-slot .run-result").replace("\u202f", ",")

            page.fill("#collective-form [name=size]", "256MB")
            page.select_option("#collective-form [name=algorithm]", "ring")
            page.click("#collective-form button[type=submit]")
            page.wait_for_selector("#collective-slot .run-widget[data-status=succeeded]", timeout=60000)
            collective = page.inner_text("#collective-slot .run-widget")
            assert "GB/s" in collective

            placement = finish(page, fabric_url, "#placement-form", {"tp": "8", "dp": "16", "model_params": "7B"})
            assert "aware" in placement and numbers(placement)

            # The form searches any switch by default: fail leaf-1 instead.
            failure = finish(page, fabric_url, "#failure-form", {"elements": "leaf-1", "size": "64MB"}, select={"worst": ""})
            assert numbers(failure)

            replay = finish(page, fabric_url, "#replay-form", {"model_params": "1e9", "tp": "8", "dp": str(CARDS // 8)})
            assert numbers(replay)

            page.goto(fabric_url)
            page.fill("#whatif-form [name=factors]", "1,2")
            page.uncheck("#whatif-form input[value=k-supernodes]")
            page.click("#whatif-form button[type=submit]")
            page.wait_for_selector(".run-widget[data-status=succeeded]", timeout=300000)
            page.screenshot(path=str(ARTIFACTS / "uploaded-superpod-whatif.png"), full_page=True)
    finally:
        redis.stop()
        shutil.rmtree(tmp_path / "redis", ignore_errors=True)


def test_a_cloud_hint_files_scale_up_is_set_at_upload_and_corrected_from_the_fabric_page(tmp_path, stack_database_url, browser):
    """An Azure ND A100 v4 hint file leaves NVLink out: the Upload page's NVLink field sets
    the completed NVSwitch's bandwidth, and the fabric page's form corrects it afterwards."""
    hint = tmp_path / "ndv4-host01.xml"
    hint.write_bytes((ROOT / "tests" / "data" / "nccl_xml" / "azure-ndv4-topo.xml").read_bytes())
    redis = EmbeddedRedis(workdir=tmp_path / "redis").start()
    try:
        with Stack(data_dir=tmp_path, env_overrides={"DATABASE_URL": stack_database_url, "REDIS_URL": redis.url}) as stack:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            log_in(page, stack.base_url)
            page.goto(stack.base_url + "/upload/")
            page.set_input_files("input[name=file]", [str(hint)])
            page.fill("#id_fabric", "ndv4")
            page.fill("#id_nvlink_gbps", "1200")
            page.click("#upload-form button[type=submit]")
            page.wait_for_selector("#upload-open", timeout=60000)
            page.click("#upload-open")
            page.wait_for_selector("#scale-up-completed")
            assert "1,200 Gb/s per GPU (set at upload)" in page.inner_text("#scale-up-completed")

            page.fill("#scale-up-form [name=nvlink_gbps]", "2400")
            page.click("#scale-up-form button[type=submit]")
            page.wait_for_selector("#scale-up-completed")
            assert "v2" in page.inner_text("h2") and "2,400 Gb/s per GPU" in page.inner_text("#scale-up-completed")
            page.screenshot(path=str(ARTIFACTS / "uploaded-hint-scale-up.png"), full_page=True)
    finally:
        redis.stop()
        shutil.rmtree(tmp_path / "redis", ignore_errors=True)
