"""Every page in Simplified Chinese has no English left, for every role and a run of every kind.

Besides a healthy fabric, the walker visits one with findings (an InfiniBand discovery with a
swapped and a moved cable, checked against the dump it was planned from, and a journal entry at
half the predicted bandwidth): its cabling check, punch list, diagnosis and map; and runs still
running, with the progress their producers write (hop statistics, cells of a what-if and of a
failure search), on their pages and in the frame pushed to viewers.

Rerun after makemessages and scripts/translations.py (see its docstring):

    DJANGO_SETTINGS_MODULE=twin.settings .venv/bin/python -m twin.common.embedded \
        .venv/bin/python -m pytest tests/test_i18n_coverage.py -q -p no:cacheprovider

A failure lists each English phrase with the page it is on. What stays English on purpose
(identifiers, units, product names) is in ALLOWED; data the test creates is named with digits or
hyphens, which count as identifiers.
"""
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.test import Client

from tests.conftest import logged_in_client
from tests.test_runs import wait_for
from twin.accounts.models import Role
from twin.accounts.services import user_create
from twin.fabrics.models import SnapshotRole
from twin.fabrics.selectors import snapshot_spec_get
from twin.fabrics.services import SourceFile, snapshot_create, snapshot_import
from twin.journal.services import experiment_create
from twin.runs.fanout import FANOUT_KINDS
from twin.runs.models import CellStatus, Run, RunCell, RunKind, RunStatus
from twin.runs.progress import ProgressReporter
from twin.runs.realtime import run_state_payload
from twin.runs.services import cell_counted, cells_create, run_create
from twin.simcore.generate import supernode
from twin.simcore.hops import hop_statistics

ROOT = Path(__file__).resolve().parent.parent
CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-Hans"}
IB_DUMP = ROOT / "tests" / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"

# Words that are the same in Chinese text: units, standards and products, collective and
# algorithm names (NCCL's), the language switch's own "English".
ALLOWED = {
    # units
    "B", "KiB", "MiB", "GiB", "KB", "MB", "GB", "TB", "Gb", "Tb", "kW", "W", "USD", "ns", "us", "µs", "ms", "s", "x",
    # standards, products and formats
    "AllReduce", "API", "CSV", "DGX", "ECMP", "English", "GPU", "GPUs", "GUID", "HCA", "HCAs", "ICN", "InfiniBand", "JSON",
    "LLDP", "NCCL", "NetBox", "NIC", "NVLink", "NVSwitch", "PCIe", "PDF", "Redis", "SHARP", "Slurm", "TP", "DP", "UFM",
    "XML", "YAML", "Celery", "v", "Pod", "Hostlist", "Hostfile",
    # simulator vocabulary shown as identifiers
    "busbw", "algbw", "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "ring", "tree",
    "direct", "hierarchical", "bruck", "rabenseifner", "sendrecv", "auto", "hash", "spray", "pinned", "Simple", "LL",
    "naive", "aware", "rank", "ranks",
    # tools and their options, as typed
    "ibnetdiscover", "iblinkinfo", "lldpctl", "json", "topo", "GraphML",
    # monitoring ops already run, by their own names
    "Prometheus", "DCGM", "Exporter", "exporter", "infiniband", "perfquery", "ibqueryerrors",
    "node", "nodes", "selector",  # keys of the telemetry label mapping, in its JSON example
    # what InfiniBand devices call themselves (the sample's HCA without a host name)
    "MT", "ConnectX", "Mellanox", "Technologies",
}
WORD = re.compile(r"[A-Za-z][A-Za-z']*")
TOKEN = re.compile(r"\S+")
SHOWN_ATTRIBUTES = ("title", "placeholder", "aria-label", "alt")
HIDDEN_TAGS = {"script", "style", "noscript", "metadata"}  # metadata: matplotlib's, in the SVG plots
IDENTIFIER_TAGS = {"code", "kbd", "samp"}


class ShownText(HTMLParser):
    """The text a reader sees: element text (SVG text included) and the attributes shown to them;
    not what <code> and its kin show, which are identifiers."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in HIDDEN_TAGS or tag in IDENTIFIER_TAGS:
            self._hidden += 1
        attributes = dict(attrs)
        self.texts += [attributes[name] for name in SHOWN_ATTRIBUTES if attributes.get(name)]
        if tag == "input" and attributes.get("type") in ("submit", "button") and attributes.get("value"):
            self.texts.append(attributes["value"])

    def handle_endtag(self, tag):
        if tag in HIDDEN_TAGS or tag in IDENTIFIER_TAGS:
            self._hidden = max(0, self._hidden - 1)

    def handle_data(self, data):
        if not self._hidden and data.strip():
            self.texts.append(data.strip())


def english_words(text: str) -> list[str]:
    """The words of ``text`` that are English, not identifiers: a token with a digit, a hyphen,
    an underscore, a dot, a slash, a comma or a colon inside is a name (leaf-17, two_shot, v2,
    GB/s, rank,card, attrs["design"]), and text in single quotes is a value from the data."""
    words = []
    text = re.sub(r"'[^']*'", " ", text)  # quoted (Python's repr): a value from the data
    for token in TOKEN.findall(text):
        core = token.strip(".,;:!?()[]{}\"'“”‘’«»…—–")
        if not core or re.search(r"[\d_./:@=#<>,\[\]-]", core) or core.isupper() or token.startswith("."):
            continue
        words += [word for word in WORD.findall(core) if len(word) > 1 and word not in ALLOWED]
    return words


def untranslated(html: str) -> list[str]:
    parser = ShownText()
    parser.feed(html)
    return sorted({text for text in parser.texts if english_words(text)})


@pytest.fixture
def site(celery_worker):
    """A fabric with two snapshots, a journal entry and a finished run of every kind (on the real
    worker), and a user of each role."""
    users = {role: user_create(username=f"{role.value}-1", password="a-long-test-password-7", role=role) for role in Role}
    first = snapshot_create(fabric_name="fabric-1", spec=supernode(cards=64, switch_radix=16, name="fabric-1"),
                            source_name="fabric-1.json", source_format="twin-fabric", checksum="1" * 64)
    second = snapshot_create(fabric_name="fabric-1", spec=supernode(cards=128, switch_radix=16, name="fabric-1"),
                             source_name="fabric-1.json", source_format="twin-fabric", checksum="2" * 64)
    experiment = experiment_create(fabric=first.fabric, snapshot=second, collective="allreduce", card_count=128,
                                   points=[(2**20, 10.0), (2**26, 80.0)], meta={"title": "nccl-run-1"}, user=users[Role.OPERATOR])
    whatif = {"factors": [1, 2], "alternatives": ["one-supernode"], "collectives": ["allreduce"], "sizes": [2**16, 2**22]}
    run_params = {
        RunKind.HOP_STATS: {},
        RunKind.COLLECTIVE: {"collective": "allreduce", "size_bytes": 2**24, "algorithm": "auto", "ecmp": "hash", "channels": 1,
                             "in_switch_reduction": None},
        RunKind.PLACEMENT: {"job": {"tp": 8, "dp": 2}, "strategies": ["naive", "aware"]},
        RunKind.FAILURES: {"elements": ["spine-01"], "workload": {}},
        RunKind.REPLAY: {"training": {"model_params": 1e9, "tp": 8, "dp": 16, "hidden_size": 2048, "seq_len": 1024}, "max_frames": 10},
        RunKind.WHATIF: whatif,
    }
    runs = {kind: run_create(kind=kind, snapshot=second, user=users[Role.OPERATOR], params=params) for kind, params in run_params.items()}
    other_whatif = run_create(kind=RunKind.WHATIF, snapshot=second, params={**whatif, "threshold_points": 5})
    for run in [*runs.values(), other_whatif]:
        wait_for(lambda: Run.objects.get(pk=run.pk).is_terminal, timeout_s=600)
    failed = {run.kind: run.error for run in Run.objects.all() if run.status != RunStatus.SUCCEEDED}
    assert not failed, failed
    return {
        "users": users, "first": first, "second": second, "experiment": experiment, "runs": runs, "other_whatif": other_whatif,
        **miswired_fabric(users[Role.OPERATOR]), "running": running_runs(second),
    }  # fmt: skip


def miswired(dump: str) -> str:
    """The dump as found after recabling mistakes on leaf01: node01 and node02 swapped between ports 1
    and 2, node03 moved from port 3 to the free port 5 (each link is listed at both of its ends)."""
    lines = dump.splitlines()
    port_1, port_2, port_3 = (next(line for line in lines if line.startswith(f'[{port}]\t"H-0c42a1030086{port:02d}00"')) for port in (1, 2, 3))
    changed = {
        port_1: port_1.replace("0c42a10300860100", "0c42a10300860200").replace("c42a10300860100", "c42a10300860200").replace("node01", "node02"),
        port_2: port_2.replace("0c42a10300860200", "0c42a10300860100").replace("c42a10300860200", "c42a10300860100").replace("node02", "node01"),
        port_3: port_3.replace("[3]", "[5]", 1),
    }
    found = []
    for line in lines:
        line = changed.get(line, line)
        for card, was, now in (("0100", "[1]", "[2]"), ("0200", "[2]", "[1]"), ("0300", "[3]", "[5]")):
            if line.startswith(f"[1](c42a1030086{card})"):
                line = line.replace(f'"S-b8599f0300a01240"{was}', f'"S-b8599f0300a01240"{now}')
        found.append(line)
    assert found != lines
    return "\n".join(found) + "\n"


def miswired_fabric(user) -> dict:
    """fabric-2: its plan, the miswired discovery, and a journal entry at half the predicted busbw."""
    dump = IB_DUMP.read_text()
    plan = snapshot_import(fabric_name="fabric-2", files=[SourceFile("plan-1.txt", dump.encode())], role=SnapshotRole.PLAN)
    found = snapshot_import(fabric_name="fabric-2", files=[SourceFile("found-1.txt", miswired(dump).encode())])
    sizes = [2**22, 2**24, 2**26]
    probe = experiment_create(fabric=found.fabric, snapshot=found, collective="allreduce", card_count=found.card_count,
                              points=[(size, 1.0) for size in sizes], meta={"title": "probe-1"}, user=user)
    halved = [(size, 0.5 * twin["busbw_GBps"]) for size, twin in zip(sizes, probe.predicted, strict=True)]
    probe.delete()
    experiment_create(fabric=found.fabric, snapshot=found, collective="allreduce", card_count=found.card_count,
                      points=halved, meta={"title": "nccl-run-2"}, user=user)
    return {"plan": plan, "found": found}


def running_runs(snapshot) -> list[Run]:
    """Runs still running, left with the progress their real producers report: hop statistics part
    way, and one finished cell of a what-if and of a failure search (no task is queued for them)."""
    hops = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=snapshot, status=RunStatus.RUNNING)
    hop_statistics(snapshot_spec_get(snapshot_id=snapshot.pk), on_progress=ProgressReporter(hops.pk), chunk=1)
    fanned = []
    for kind, params in ((RunKind.WHATIF, {"factors": [1, 2], "alternatives": ["one-supernode"], "collectives": ["allreduce"], "sizes": [2**20]}),
                         (RunKind.FAILURES, {"worst": "link", "workload": {}})):
        run = Run.objects.create(kind=kind, snapshot=snapshot, status=RunStatus.RUNNING, params=params)
        cells_create(run, FANOUT_KINDS[kind].plan(run))
        cell = run.cells.order_by("position").first()
        RunCell.objects.filter(pk=cell.pk).update(status=CellStatus.DONE)
        cell_counted(run, cell)
        fanned.append(run)
    return [hops, *fanned]


def pages(site) -> list[tuple[Role | None, str]]:
    fabric = site["first"].fabric_id
    runs = site["runs"]
    everyone = [
        "/", f"/fabrics/{fabric}/", f"/fabrics/{fabric}/diff/?expected={site['first'].pk}&found={site['second'].pk}",
        f"/fabrics/{fabric}/journal/", f"/fabrics/{fabric}/journal/{site['experiment'].pk}/", f"/fabrics/{fabric}/diagnosis/",
        "/runs/", *(f"/runs/{run.pk}/" for run in runs.values()), f"/runs/{runs[RunKind.WHATIF].pk}/report/",
        f"/whatif/compare/?a={runs[RunKind.WHATIF].pk}&b={site['other_whatif'].pk}",
        "/runs/999999/",  # not found
        f"/runs/{runs[RunKind.HOP_STATS].pk}/report/",  # not a what-if: not found
        f"/fabrics/{site['found'].fabric_id}/", f"/fabrics/{site['found'].fabric_id}/diagnosis/",
        f"/fabrics/{site['found'].fabric_id}/diff/?expected={site['plan'].pk}&found={site['found'].pk}",
        *(f"/runs/{run.pk}/" for run in site["running"]),
    ]
    operators = ["/upload/", f"/fabrics/{fabric}/journal/new/"]
    admins = ["/users/", f"/users/{site['users'][Role.VIEWER].pk}/"]
    return (
        [(None, "/login/")]
        + [(Role.VIEWER, url) for url in everyone + operators + admins]  # operators' and admins' pages refused
        + [(Role.OPERATOR, url) for url in everyone + operators]
        + [(Role.ADMIN, url) for url in everyone + operators + admins]
    )


@pytest.mark.django_db(transaction=True)
def test_every_page_and_the_report_pdf_in_chinese_have_no_english_left(site):
    clients = {role: logged_in_client(user) for role, user in site["users"].items()}
    clients[None] = Client()
    found: dict[str, set[str]] = {}
    for role, url in pages(site):
        response = clients[role].get(url, **CHINESE)
        assert response.status_code in (200, 403, 404), (role, url, response.status_code)
        assert 'lang="zh-hans"' in response.content.decode(), (role, url)
        for text in untranslated(response.content.decode()):
            found.setdefault(text, set()).add(url)
    # The miswired fabric shows what the walker came for.
    fabric_2 = site["found"].fabric_id
    diagnosis = clients[Role.VIEWER].get(f"/fabrics/{fabric_2}/diagnosis/", **CHINESE).content.decode()
    assert all(f'data-rule="{rule}"' in diagnosis for rule in ("link-degraded", "plan-mismatch", "chunk-size")), diagnosis
    diff = clients[Role.VIEWER].get(f"/fabrics/{fabric_2}/diff/", {"expected": site["plan"].pk, "found": site["found"].pk}, **CHINESE).content.decode()
    assert 'data-class="SWAPPED"' in diff and 'data-class="MISWIRED"' in diff, diff
    # Files and frames read as text: the punch list's words (not its header of column names) and
    # the progress pushed to viewers, in Chinese.
    punch_list = clients[Role.VIEWER].get(f"/api/snapshots/{site['plan'].pk}/diff/{site['found'].pk}/", {"format": "csv"}, **CHINESE)
    assert punch_list.status_code == 200
    for line in punch_list.content.decode().splitlines()[1:]:
        if english_words(line):
            found.setdefault(line, set()).add("the punch list CSV")
    for run in site["running"]:
        frame = run_state_payload(Run.objects.get(pk=run.pk))
        assert frame["status"] == "running" and frame["messages"]["zh-hans"] != frame["messages"]["en"], frame
        if english_words(frame["messages"]["zh-hans"]):
            found.setdefault(frame["messages"]["zh-hans"], set()).add(f"the frame pushed to viewers of run {run.pk}")
    # The PDF is drawn by matplotlib: its text is read back from the file itself.
    if shutil.which("pdftotext"):
        run = site["runs"][RunKind.WHATIF]
        pdf = clients[Role.VIEWER].get(f"/runs/{run.pk}/report.pdf", **CHINESE).content
        text = subprocess.run(["pdftotext", "-raw", "-", "-"], input=pdf, check=True, capture_output=True).stdout.decode()
        for line in text.splitlines():
            if english_words(line):
                found.setdefault(line, set()).add(f"/runs/{run.pk}/report.pdf")
    report = "\n".join(f"{text!r} on {', '.join(sorted(urls))}" for text, urls in sorted(found.items()))
    assert not found, f"{len(found)} texts still in English:\n{report}"


def test_the_frontend_catalogue_is_chinese():
    """The browser code's own strings (frontend/src/core/i18n.ts): every Chinese entry has no English
    left (its typing and unit test already make the two tables have the same keys)."""
    source = (ROOT / "frontend/src/core/i18n.ts").read_text(encoding="utf-8")
    table = source[source.index("const zhHans"):]
    entries = dict(re.findall(r'^\s*"([\w.]+)":\s*\n?\s*"((?:[^"\\]|\\.)*)",?$', table, flags=re.M))
    assert len(entries) > 100
    left = {key: text for key, text in entries.items() if english_words(re.sub(r"\{\w+\}", "", json.loads(f'"{text}"')))}
    assert not left, left
