"""Every error the core raises for a user reads in the reader's language: trace, telemetry, fabric,
simulation and failure errors carry words (``TwinCoreError.words``), the services render them in
the request's language, and the English (``str()``, the API's ``problems``) stays as it was."""
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import translation

from tests.test_i18n_coverage import english_words
from twin.common.errors import core_error_text
from twin.simcore.errors import TwinCoreError

CJK = re.compile(r"[\u4e00-\u9fff]")
KEPT_TERMS = ("trace", "id", "None")  # the catalogue keeps these as they are (总线 id, 无法判断这是哪种 trace)


def untranslated(text: str, *identifiers: str) -> list[str]:
    """The English words left in ``text``, but for ``identifiers`` (names the user typed or reads
    in the data, such as a label in braces)."""
    return [word for word in english_words(text) if word not in (*KEPT_TERMS, *identifiers)]


def assert_chinese(text: str, *identifiers: str) -> None:
    assert CJK.search(text), text
    assert untranslated(text, *identifiers) == [], text


def raised(call) -> TwinCoreError:
    with pytest.raises(TwinCoreError) as caught:
        call()
    return caught.value


def bad_label_mapping():
    from twin.replay.prometheus import prometheus_mapping

    prometheus_mapping({"colour": "red", "selector": "$$", "xmit_wait_bytes": -1, "errors": [1]}, preset="node_exporter_infiniband")


def bad_telemetry_batch():
    from twin.replay.telemetry import check_batch

    check_batch([{"port": 3, "timestamp": "yesterday", "tx_bytes": -1}, "sample", {"port": {"node": "a", "port": "1"}, "timestamp": 1, "utilization": 2}])


def trace_on_other_cards():
    from twin.replay import bind_trace
    from twin.simcore.generate import supernode
    from twin.traces.model import CollectiveEvent, RankBinding, Trace

    ranks = [RankBinding(0, "card-9999"), RankBinding(1, host="elsewhere", device=3), RankBinding(2)]
    bind_trace(supernode(cards=8, switch_radix=8), Trace("step", ranks, [CollectiveEvent(0.0, "allreduce", (0, 1, 2), 1024)]))


def inconsistent_trace():
    from twin.traces.model import CollectiveEvent, FlowEvent, RankBinding, Trace

    Trace("t", (RankBinding(0), RankBinding(0)), (FlowEvent(1, 0, 5, 3), CollectiveEvent(0.5, "scan", (), -1))).validate()


def impossible_training_step():
    from twin.traces import training_step

    training_step(model_params=175e9, tp=2, pp=4, dp=6, ep=4, layers=6, placement=[f"card{n}" for n in range(10)])


def too_many_cards_for_the_radix():
    from twin.simcore.generate import supernode

    supernode(cards=1000, switch_radix=8)


def inconsistent_fabric():
    from dataclasses import replace

    from twin.simcore.generate import supernode

    fabric = supernode(cards=8, switch_radix=8)
    replace(fabric, links=(replace(fabric.links[0], b="ghost", bandwidth_gbps=-1), *fabric.links[1:])).validate()


def unknown_collective():
    from twin.simcore.generate import supernode
    from twin.simcore.simulate import Simulator

    Simulator(supernode(cards=8, switch_radix=8)).run("scan", 1024, "auto")


def unknown_elements_to_fail():
    from twin.operations.failures import fail_elements
    from twin.simcore.generate import supernode

    fail_elements(supernode(cards=8, switch_radix=8), ["link:9999", "nowhere"])


def unreadable_size():
    from twin.simcore.units import parse_size

    parse_size("lots")


def non_physical_calibration():
    from tests.simcore.fabrics import eight_h100
    from twin.simcore.calibrate import calibrate

    calibrate(eight_h100(), [(2**20, 40.0), (2**30, 4000.0)], algorithm="ring", fit=["scale_up.efficiency"])


def bad_transport_override():
    from twin.simcore.generate import supernode
    from twin.simcore.simulate import Simulator

    Simulator(supernode(cards=8, switch_radix=8), transport={"nccl_version": "latest"})


CORE_ERRORS = {  # the call, how its Chinese starts, the names it quotes (keys, parameters)
    "label mapping": (bad_label_mapping, "标签映射中有 4 个问题", ("errors",)),
    "telemetry batch": (bad_telemetry_batch, "遥测样本中有 6 个问题", ("port", "tx", "rx")),  # keys of the JSON examples
    "trace on other cards": (trace_on_other_cards, "trace 'step' 中有 rank 不对应互联网络 'demo-supernode' 的卡", ()),
    "inconsistent trace": (inconsistent_trace, "trace 't' 不一致", ()),
    "training step": (impossible_training_step, "无法生成训练步", ("tp", "pp", "dp", "ep", "layers")),
    "generator design rule": (too_many_cards_for_the_radix, "1000 张卡需要 250 台叶交换机", ()),
    "inconsistent fabric": (inconsistent_fabric, "互联网络 'demo-supernode' 不一致", ()),
    "simulation": (unknown_collective, "未知的集合通信 'scan'", ()),
    "failures": (unknown_elements_to_fail, "无法让这些元素失效", ()),
    "size": (unreadable_size, "无法读取大小 'lots'", ()),
    "calibration": (non_physical_calibration, "测量结果要求 scale_up.efficiency 超出其物理范围", ("scale_up", "efficiency")),
    "transport": (bad_transport_override, "NCCL 版本 'latest'", ("latest",)),
}


@pytest.mark.parametrize("call, chinese_start, identifiers", CORE_ERRORS.values(), ids=CORE_ERRORS.keys())
def test_each_core_error_reads_in_chinese_and_stays_english_for_logs(call, chinese_start, identifiers):
    error = raised(call)
    with translation.override("zh-hans"):
        chinese = core_error_text(error)
    with translation.override("en"):
        english = core_error_text(error)
    assert chinese.startswith(chinese_start), chinese
    assert_chinese(chinese, *identifiers)
    assert english == str(error) and not CJK.search(english)
    assert all(isinstance(problem, str) or not CJK.search(str(problem)) for problem in getattr(error, "problems", ()))


def test_the_english_of_a_trace_error_is_unchanged():
    error = raised(trace_on_other_cards)
    assert error.problems[0] == "rank 0: no card of fabric 'demo-supernode' matches card 'card-9999'"
    assert error.problems[2] == "rank 2: names no card, host, bus id or device; expected a card id or a host with a bus id or device index"
    assert str(error).splitlines()[0] == "trace 'step' names ranks that are not cards of fabric 'demo-supernode'"


def test_the_schema_descriptions_are_all_listed_for_translation():
    from twin.ingest.parsers.canonical import SCHEMA_DESCRIPTIONS, _schema

    def descriptions(value):
        if isinstance(value, dict):
            yield from ([value["description"]] if "description" in value else [])
            for item in value.values():
                yield from descriptions(item)
        elif isinstance(value, list):
            for item in value:
                yield from descriptions(item)

    assert set(descriptions(_schema())) == set(SCHEMA_DESCRIPTIONS)


# -- where users meet them -------------------------------------------------------------------


@pytest.mark.django_db
def test_a_bad_label_mapping_on_the_fabric_page_is_explained_in_chinese(operator_client, small_snapshot):
    form = {"url": "http://127.0.0.1:9", "preset": "node_exporter_infiniband", "mapping": '{"colour": "red", "selector": "$$"}', "interval_s": 10, "rate_window_s": 60, "enabled": "on"}
    url = f"/fabrics/{small_snapshot.fabric_id}/telemetry/source/"
    page = operator_client.post(url, form, HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert page.status_code == 400
    shown = page.context["telemetry_source_form"].errors["mapping"][0]
    assert shown.startswith("标签映射中有 2 个问题\n  - colour：未知的键；应为以下之一：")
    assert_chinese(shown)
    english = operator_client.post(url, form, HTTP_ACCEPT_LANGUAGE="en").context["telemetry_source_form"].errors["mapping"][0]
    assert english.startswith("2 problems in the label mapping\n  - colour: unknown key; expected one of")


@pytest.mark.django_db
def test_a_malformed_telemetry_post_is_refused_in_chinese_with_the_problems_in_english(operator_client, small_snapshot):
    url = f"/api/fabrics/{small_snapshot.fabric_id}/telemetry/"
    body = json.dumps({"samples": [{"port": 3, "timestamp": "yesterday", "tx_bytes": 1}]})
    chinese = operator_client.post(url, body, content_type="application/json", HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert chinese.status_code == 400
    assert chinese.json()["detail"] == (
        "遥测样本中有 2 个问题\n  - samples[0].port：3；应为{\"node\": \"<node id>\", \"port\": \"<port>\"}\n"
        "  - samples[0].timestamp：'yesterday'；应为ISO 8601 时间或自纪元起的秒数"
    )
    assert chinese.json()["problems"][1] == "samples[0].timestamp: 'yesterday'; expected an ISO 8601 time or seconds since the epoch"
    english = operator_client.post(url, body, content_type="application/json", HTTP_ACCEPT_LANGUAGE="en").json()
    assert english["detail"].startswith("2 problems in the telemetry samples\n  - samples[0].port: 3; expected")


TRACE_OF_OTHER_CARDS = b"""{"format": "twin-trace", "version": 1, "name": "elsewhere"}
{"type": "rank", "rank": 0, "card": "elsewhere/gpu0"}
{"type": "rank", "rank": 1, "card": "elsewhere/gpu1"}
{"type": "collective", "t_s": 0.0, "op": "allreduce", "bytes": 1048576}
"""


@pytest.mark.django_db
def test_a_trace_that_does_not_fit_the_snapshot_is_refused_in_chinese(operator_client, small_snapshot):
    url = f"/snapshots/{small_snapshot.pk}/replay/"

    def post(language):
        form = {"trace": SimpleUploadedFile("step.jsonl", TRACE_OF_OTHER_CARDS), "model_params": "175B", "tp": 8, "pp": 1, "dp": 8, "ordering": "rank"}
        return operator_client.post(url, form, HTTP_ACCEPT="application/json", HTTP_ACCEPT_LANGUAGE=language)

    chinese = post("zh-Hans")
    assert chinese.status_code == 400, chinese.content
    detail = chinese.json()["detail"]
    assert detail.startswith(f"step.jsonl：该 trace 与 {small_snapshot.fabric.name} v{small_snapshot.version} 不符：trace ")
    assert "互联网络 'small' 中找不到对应的卡（已尝试：卡 'elsewhere/gpu0'）" in detail
    assert_chinese(detail, "small")
    english = post("en").json()["detail"]
    assert "rank 0: no card of fabric 'small' matches card 'elsewhere/gpu0'" in english


@pytest.mark.django_db
def test_a_training_step_that_cannot_be_replayed_is_refused_in_chinese(operator_client, small_snapshot):
    training = {"model_params": 175e9, "tp": 2, "pp": 4, "dp": 2, "layers": 6, "hidden_size": 12288, "seq_len": 2048}
    body = {"kind": "replay", "snapshot": small_snapshot.pk, "params": {"training": training}}
    answer = operator_client.post("/api/runs/", body, content_type="application/json", HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert answer.status_code == 400, answer.content
    detail = answer.json()["detail"]
    assert detail == "无法回放此训练步\n  - 6 层无法均分到 4 个流水线阶段；应为能被 pp 整除的层数（请给出 layers，例如 4）"
    assert answer.json()["problems"] == ["6 layers do not split into 4 pipeline stages; expected layers divisible by pp (give layers, e.g. 4)"]


@pytest.mark.django_db
def test_the_design_the_twin_cannot_infer_is_explained_in_chinese_and_old_snapshots_keep_their_english(operator_client):
    from twin.fabrics.models import Snapshot
    from twin.ingest.writers.superpod import superpod_host_xml

    upload = SimpleUploadedFile("dgx001.xml", superpod_host_xml(1).encode())
    assert operator_client.post("/api/snapshots/", {"file": [upload]}).status_code == 201
    snapshot = Snapshot.objects.get()
    page = operator_client.get(f"/fabrics/{snapshot.fabric_id}/", HTTP_ACCEPT_LANGUAGE="zh-Hans")
    design = page.context["design_rules"]
    assert design["problems"]
    for line in design["problems"]:
        assert_chinese(line, "tiers", "oversubscription")  # names of design rules
    assert CJK.search(page.context["whatif_unavailable"])
    english = snapshot.summary["design"]
    assert english["error"].startswith("cannot read the design rules") and not CJK.search(json.dumps(english["problems"]))

    # A snapshot stored before the words were kept shows its English as it is.
    snapshot.summary["design"] = {"error": english["error"], "problems": english["problems"]}
    snapshot.save(update_fields=["summary"])
    old = operator_client.get(f"/fabrics/{snapshot.fabric_id}/", HTTP_ACCEPT_LANGUAGE="zh-Hans").context
    assert old["design_rules"]["problems"] == english["problems"] and old["whatif_unavailable"] == english["error"]


@pytest.mark.django_db
def test_a_fabric_json_that_breaks_the_schema_is_explained_in_chinese(operator_client):
    from twin.ingest import export_canonical
    from twin.simcore.generate import supernode

    document = json.loads(export_canonical(supernode(cards=8, switch_radix=8, name="lab")))
    document["nodes"][0]["radix"] = 0
    del document["links"][0]["latency_ns"]
    upload = SimpleUploadedFile("fabric.json", json.dumps(document, indent=1).encode())
    body = operator_client.post("/api/snapshots/", {"file": [upload]}, HTTP_ACCEPT_LANGUAGE="zh-Hans").json()
    details = [problem["detail"] for problem in body["files"][0]["problems"]]
    assert any("(nodes[0].radix)：意外的值 0；应为端口数，至少为 1 的整数" in detail for detail in details), details
    assert any("(links[0])：缺少字段 'latency_ns'；应为一个包含 a、a_port、b、b_port" in detail for detail in details), details
    for detail in details:
        assert_chinese(detail, "state", "domain", "attrs")  # field names


@pytest.mark.django_db
def test_a_poll_that_fails_in_the_worker_reads_in_each_readers_language_on_the_fabric_page(operator_client, small_snapshot, monkeypatch):
    from twin.common.embedded import free_port
    from twin.simulations import telemetry
    from twin.simulations.models import TelemetrySource

    url = f"http://127.0.0.1:{free_port()}"
    TelemetrySource.objects.create(fabric=small_snapshot.fabric, url=url, preset="node_exporter_infiniband", interval_s=1)
    monkeypatch.setattr(telemetry, "POLL_SLICE_S", 0)  # one poll, as the worker's task makes
    telemetry.telemetry_poller(fabric_id=small_snapshot.fabric_id, generation=0)

    source = TelemetrySource.objects.get()
    assert source.last_error.startswith(f"Could not reach Prometheus at {url}: ")  # logs, the admin
    page = f"/fabrics/{small_snapshot.fabric_id}/"
    chinese = operator_client.get(page, HTTP_ACCEPT_LANGUAGE="zh-Hans").context["telemetry_source"]["error"]
    assert chinese.startswith(f"无法连接 {url} 上的 Prometheus：") and chinese.endswith("。"), chinese  # the system's reason between, as it says it
    assert operator_client.get(page, HTTP_ACCEPT_LANGUAGE="en").context["telemetry_source"]["error"] == source.last_error


@pytest.mark.django_db
def test_why_auto_left_an_algorithm_out_reads_in_each_readers_language(operator_client, small_snapshot):
    from twin.runs.realtime import run_state_payload
    from twin.runs.models import Run
    from twin.runs.services import run_execute

    params = {"collective": "allreduce", "size_bytes": 2**20, "algorithm": "auto"}
    created = operator_client.post("/api/runs/", {"kind": "collective", "snapshot": small_snapshot.pk, "params": params}, content_type="application/json")
    assert created.status_code == 201, created.content
    run_execute(run_id=created.json()["id"])
    run_url = f"/api/runs/{created.json()['id']}/"
    english = operator_client.get(run_url, HTTP_ACCEPT_LANGUAGE="en").json()["result"]["choice"]["skipped"]
    chinese = operator_client.get(run_url, HTTP_ACCEPT_LANGUAGE="zh-Hans").json()["result"]["choice"]
    assert english and set(chinese["skipped"]) == set(english)
    for algorithm, why in chinese["skipped"].items():
        assert_chinese(why, "hierarchical", "nccl", "tuner", "any", "attrs"), algorithm  # names of algorithms, tuners and settings
        assert not CJK.search(english[algorithm])
    assert chinese["skipped_by_language"] == {"en": english, "zh-hans": chinese["skipped"]}
    assert "skipped_words" not in chinese
    with translation.override("zh-hans"):
        assert run_state_payload(Run.objects.get())["result"]["choice"]["skipped_by_language"]["en"] == english


def test_a_whatif_stage_whose_algorithm_is_not_simulated_says_why_in_chinese(monkeypatch):
    from twin.simcore import simulate as simulate_module
    from twin.simcore.generate import fat_tree
    from twin.simcore.simulate import Simulator
    from twin.simcore.translation import plain_words
    from twin.whatif.report import efficiency_note

    monkeypatch.setattr(simulate_module, "MAX_CLASS_ENTRIES", 1_000)  # as tests/simcore/test_simcore_classes.py
    why = Simulator(fat_tree(endpoints=128, radix=16), ecmp="pinned", max_pattern_flows=1000).too_large("alltoall")["direct"]
    note = {"algorithm": "direct", "cards": 1024, "reason": plain_words(why)}  # as the stored report keeps it
    with translation.override("zh-hans"):
        chinese = efficiency_note(note, translation)
    assert "全对模式有 16,256 条流" in chinese
    assert_chinese(chinese, "direct")  # the algorithm's name
    assert efficiency_note({**note, "reason": str(why)}).endswith(f"({why})")  # a report stored before: its English


@pytest.mark.django_db
def test_a_snapshot_ibnetdiscover_cannot_hold_is_refused_in_chinese(viewer_client):
    from dataclasses import replace

    from twin.fabrics.services import snapshot_create
    from twin.simcore.generate import supernode

    fabric = supernode(cards=8, switch_radix=8, name="named")
    named_port = replace(fabric, links=(replace(fabric.links[0], a_port="eth0"), *fabric.links[1:]))
    snapshot = snapshot_create(fabric_name="named", spec=named_port, source_name="generated", source_format="generated", checksum="1" * 64)
    url = f"/api/snapshots/{snapshot.pk}/export/"
    chinese = viewer_client.get(url, {"format": "ibnetdiscover"}, HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert chinese.status_code == 400
    detail = chinese.json()["detail"]
    assert detail.startswith("此快照无法导出为 ibnetdiscover：节点 ") and "的端口 'eth0' 不是端口号" in detail, detail
    assert_chinese(detail, "InfiniBand")
    english = viewer_client.get(url, {"format": "ibnetdiscover"}, HTTP_ACCEPT_LANGUAGE="en").json()["detail"]
    assert "port 'eth0' of node" in english and "is not a port number" in english
