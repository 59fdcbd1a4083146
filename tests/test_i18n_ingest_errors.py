"""Why an upload was refused, in the reader's language: the parse runs in a child process without
Django, its errors come back as words, and the page, the API and the CLI render them."""
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from twin.fabrics.models import Fabric, Snapshot
from twin.ingest import export_canonical
from twin.simcore.generate import supernode

pytestmark = pytest.mark.django_db

DATA = Path(__file__).parent / "data"
# Line 2 lists a switch twice, line 3 names a switch that is never defined.
BAD_SLURM = b"SwitchName=leaf01 Nodes=node[01-04]\nSwitchName=leaf01 Nodes=node[05-08]\nSwitchName=spine01 Switches=leaf[01-02]\n"


def post(client, url: str, name: str, data: bytes, language: str, **headers):
    return client.post(url, {"file": [SimpleUploadedFile(name, data)]}, HTTP_ACCEPT_LANGUAGE=language, **headers)


def test_a_bad_slurm_file_is_explained_in_chinese_on_the_page_and_nothing_is_stored(operator_client):
    page = post(operator_client, "/upload/", "topology.conf", BAD_SLURM, "zh-Hans").content.decode()
    assert "topology.conf 第 2 行：交换机 &#x27;leaf01&#x27; 已在第 1 行定义；应为互不相同的交换机名称" in page
    assert "topology.conf 第 3 行：交换机 &#x27;spine01&#x27; 列出了未知的交换机 &#x27;leaf02&#x27;" in page
    assert "already defined" not in page
    assert Fabric.objects.count() == 0 and Snapshot.objects.count() == 0


def test_the_page_answers_its_script_in_chinese_and_in_english(operator_client):
    chinese = post(operator_client, "/upload/", "topology.conf", BAD_SLURM, "zh-Hans", HTTP_ACCEPT="application/json")
    assert chinese.status_code == 400
    problems = chinese.json()["files"][0]["problems"]
    assert problems[0]["detail"] == "topology.conf 第 2 行：交换机 'leaf01' 已在第 1 行定义；应为互不相同的交换机名称"
    assert problems[0]["message"] == "交换机 'leaf01' 已在第 1 行定义" and problems[0]["line"] == 2
    english = post(operator_client, "/upload/", "topology.conf", BAD_SLURM, "en", HTTP_ACCEPT="application/json").json()
    assert english["files"][0]["problems"][0]["detail"] == "topology.conf line 2: switch 'leaf01' is already defined on line 1; expected unique switch names"
    assert english["files"][0]["detail"].endswith("(and 1 more problem)")
    assert "words" not in english["files"][0]
    assert Snapshot.objects.count() == 0


def test_the_api_explains_a_bad_slurm_file_in_chinese(operator_client):
    response = post(operator_client, "/api/snapshots/", "topology.conf", BAD_SLURM, "zh-Hans")
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "topology.conf 第 2 行：交换机 'leaf01' 已在第 1 行定义；应为互不相同的交换机名称（另有 1 个问题）"
    assert body["files"][0]["problems"][1]["expected"] == "Switches= 中列出的交换机须各有自己的 SwitchName= 行"
    english = post(operator_client, "/api/snapshots/", "topology.conf", BAD_SLURM, "en").json()
    assert english["detail"] == "topology.conf line 2: switch 'leaf01' is already defined on line 1; expected unique switch names (and 1 more problem)"
    assert Snapshot.objects.count() == 0


def test_an_empty_file_is_refused_in_chinese(operator_client):
    body = post(operator_client, "/api/snapshots/", "empty.conf", b"\n", "zh-Hans").json()
    assert body["detail"] == "empty.conf：文件为空；应为一个拓扑文件"


def test_a_bad_ibnetdiscover_dump_is_explained_in_chinese_on_the_page_and_the_api(operator_client):
    dump = (DATA / "ib/ibnetdiscover_2leaf_1spine_8hca.txt").read_bytes()
    bad = dump.replace(b'"node03 mlx5_0" lid 13 4xNDR', b'"node03 mlx5_0" lid 13 5xNDR', 1)
    line = bad[: bad.index(b"5xNDR")].count(b"\n") + 1
    page = post(operator_client, "/upload/", "fabric.txt", bad, "zh-Hans").content.decode()
    assert f"fabric.txt 第 {line} 行：&#x27;5xNDR&#x27; 中的链路宽度 &#x27;5x&#x27; 未知；应为以下之一：1x、2x、4x、8x、12x（未知时为 ??）" in page
    body = post(operator_client, "/api/snapshots/", "fabric.txt", bad, "zh-Hans").json()
    assert body["files"][0]["problems"][0]["detail"].startswith(f"fabric.txt 第 {line} 行：'5xNDR' 中的链路宽度 '5x' 未知")
    english = post(operator_client, "/api/snapshots/", "fabric.txt", bad, "en").json()
    assert english["detail"] == f"fabric.txt line {line}: unknown link width '5x' in '5xNDR'; expected one of 1x, 2x, 4x, 8x, 12x (?? when unknown) (and 1 more problem)"
    assert Snapshot.objects.count() == 0


def test_an_inconsistent_fabric_json_is_explained_in_chinese(operator_client):
    document = json.loads(export_canonical(supernode(cards=8, switch_radix=8, name="lab")))
    document["links"][0]["b"] = "ghost"
    body = post(operator_client, "/api/snapshots/", "fabric.json", json.dumps(document, indent=1).encode(), "zh-Hans").json()
    problem = body["files"][0]["problems"][0]
    assert problem["detail"].startswith(f"fabric.json 第 {problem['line']} 行 (links[0].b)：未知节点 'ghost'；应为在 \"nodes\" 中声明的节点 id")


def test_the_cli_explains_a_bad_file_in_the_shells_language(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "topology.conf"
    bad.write_bytes(BAD_SLURM)
    monkeypatch.setenv("LANGUAGE", "zh_CN")
    with pytest.raises(CommandError, match="未存储任何内容：1 个文件无法读取"):
        call_command("ingest", str(bad), "--fabric", "cli-lab")
    assert "topology.conf 第 2 行：交换机 'leaf01' 已在第 1 行定义" in capsys.readouterr().err
    monkeypatch.setenv("LANGUAGE", "en")
    with pytest.raises(CommandError, match="nothing was stored"):
        call_command("ingest", str(bad), "--fabric", "cli-lab")
    assert "topology.conf line 2: switch 'leaf01' is already defined on line 1" in capsys.readouterr().err
    assert Snapshot.objects.count() == 0


def test_an_uploads_warnings_and_a_refusal_read_in_chinese(operator_client):
    lone = b'vendid=0x2c9\ndevid=0x1021\ncaguid=0x0c42a10300860100\nCa\t1 "H-0c42a10300860100"\t\t# "node01 mlx5_0"\n'
    refused = post(operator_client, "/api/snapshots/", "lone.ibnetdiscover", lone, "zh-Hans").json()
    assert refused["detail"].startswith("lone.ibnetdiscover：这些文件描述了 1 块网卡，但任意两者之间都没有链路：无法绘制成互联网络，也无法仿真")
    tree = (DATA / "slurm/topograph-tree.conf").read_bytes()
    assert post(operator_client, "/api/snapshots/", "topology.conf", tree, "zh-Hans").status_code == 201
    page = operator_client.get(f"/fabrics/{Fabric.objects.get().pk}/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "没有卡：没有任何文件或计算 HCA 指明加速器" in page and "no cards:" not in page


def test_a_parsers_warning_reads_in_chinese_on_the_fabric_page(operator_client):
    dump = (DATA / "nccl_xml/nccl_topo_dump_8xH100.xml").read_bytes()
    assert post(operator_client, "/api/snapshots/", "dump.xml", dump, "zh-Hans").status_code == 201
    page = operator_client.get(f"/fabrics/{Fabric.objects.get().pk}/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "文件名 &#x27;dump.xml&#x27; 没有指明主机，因此其节点以 &#x27;host&#x27; 命名" in page
    english = operator_client.get(f"/fabrics/{Fabric.objects.get().pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "the file name &#x27;dump.xml&#x27; names no host" in english


def test_a_bad_nccl_tests_report_in_the_journal_is_explained_in_chinese(operator_client, small_snapshot):
    report = b"# nThread 1 nGpus 8 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
    page = operator_client.post(
        f"/fabrics/{small_snapshot.fabric_id}/journal/new/", {"files": SimpleUploadedFile("ar.txt", report)}, HTTP_ACCEPT_LANGUAGE="zh-Hans",
    ).content.decode()
    assert "ar.txt 第 1 行：报告中没有结果行" in page


def test_an_unreadable_trace_for_a_replay_is_explained_in_chinese(operator_client, small_snapshot):
    form = {"trace": SimpleUploadedFile("step.txt", b"hello\n"), "model_params": "175B", "tp": 8, "pp": 1, "dp": 8, "ordering": "rank"}
    answer = operator_client.post(f"/snapshots/{small_snapshot.pk}/replay/", form, HTTP_ACCEPT="application/json", HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert answer.status_code == 400 and answer.json()["detail"].startswith("step.txt：无法判断这是哪种 trace")
