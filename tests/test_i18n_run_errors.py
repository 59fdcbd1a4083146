"""Why a run failed or was refused, in the reader's language: stored as words, rendered per reader
(the API in the request's language, the pushed frame in every language), English as before."""
import pytest
from django.utils import translation

from twin.runs.models import Run, RunStatus
from twin.runs.realtime import run_state_payload
from twin.runs.services import run_execute

NEEDS_MORE_CARDS_THAN_FREE = {"job": {"tp": 8, "dp": 8}, "busy_cards": ["card-0001"], "strategies": ["naive"]}
ENGLISH_REASON = "the job needs 64 cards (tp 8 x pp 1 x dp 8) but only 63 of the 64 cards of 'small' are free"
CHINESE_REASON = "该作业需要 64 张卡（tp 8 x pp 1 x dp 8），但 'small' 的 64 张卡中只有 63 张空闲"


@pytest.mark.django_db
def test_a_placement_that_fails_in_the_worker_says_why_in_each_readers_language(operator_client, small_snapshot):
    created = operator_client.post(
        "/api/runs/", {"kind": "placement", "snapshot": small_snapshot.pk, "params": NEEDS_MORE_CARDS_THAN_FREE}, content_type="application/json",
    )  # fmt: skip
    assert created.status_code == 201, created.content
    run_id = created.json()["id"]
    run_execute(run_id=run_id)  # what the worker does with the queued task

    english = operator_client.get(f"/api/runs/{run_id}/", HTTP_ACCEPT_LANGUAGE="en").json()
    chinese = operator_client.get(f"/api/runs/{run_id}/", HTTP_ACCEPT_LANGUAGE="zh-Hans").json()
    assert english["status"] == chinese["status"] == "failed"
    assert english["error"] == ENGLISH_REASON and chinese["error"] == CHINESE_REASON
    assert english["errors"] == chinese["errors"] == {"en": ENGLISH_REASON, "zh-hans": CHINESE_REASON}
    run = Run.objects.get(pk=run_id)
    assert run.error == ENGLISH_REASON  # logs, the admin
    with translation.override("zh-hans"):
        frame = run_state_payload(run)
    assert frame["error"] == CHINESE_REASON and frame["errors"]["en"] == ENGLISH_REASON


@pytest.mark.django_db
def test_a_cancelled_runs_reason_names_who_in_each_language(make_user, small_snapshot):
    from tests.conftest import logged_in_client
    from twin.accounts.models import Role
    from twin.runs.models import RunKind

    alice = make_user(Role.OPERATOR, "alice")
    run = Run.objects.create(kind=RunKind.HOP_STATS, snapshot=small_snapshot, created_by=alice)
    cancelled = logged_in_client(alice).post(f"/api/runs/{run.pk}/cancel/", HTTP_ACCEPT_LANGUAGE="zh-Hans").json()
    assert cancelled["status"] == RunStatus.CANCELLED
    assert cancelled["error"] == "已被 alice 取消。" and cancelled["errors"] == {"en": "Cancelled by alice.", "zh-hans": "已被 alice 取消。"}
    again = logged_in_client(alice).post(f"/api/runs/{run.pk}/cancel/", HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert again.status_code == 400 and again.json()["detail"] == f"任务 {run.pk} 已经结束（已取消）。"


@pytest.mark.django_db
def test_impossible_whatif_factors_posted_from_the_fabric_page_are_refused_in_chinese(operator_client, small_snapshot):
    form = {"factors": "1,1000000", "alternatives": ["one-supernode"], "k": 2, "threshold_points": 10}
    url = f"/snapshots/{small_snapshot.pk}/whatif/"
    chinese = operator_client.post(url, form, HTTP_ACCEPT="application/json", HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert chinese.status_code == 400
    assert chinese.json()["detail"] == "无法规划推演\n  - 倍数 1e+06：6.4e+07 张卡；至多应为 131,072 张"
    english = operator_client.post(url, form, HTTP_ACCEPT="application/json", HTTP_ACCEPT_LANGUAGE="en")
    assert english.json()["detail"] == "cannot plan the what-if\n  - factor 1e+06: 6.4e+07 cards; expected at most 131,072"
    assert not Run.objects.exists()


def test_a_placement_errors_problems_are_listed_in_the_readers_language():
    from twin.common.errors import core_error_text
    from twin.operations.placement import Job, PlacementError, user_placement
    from twin.simcore.generate import supernode

    with pytest.raises(PlacementError) as raised:
        user_placement(supernode(cards=64, switch_radix=16), Job(tp=1, dp=2), {0: "card-0001", 1: "card-0001"})
    assert str(raised.value) == (
        "the rank mapping cannot be used for 2 ranks\n  - rank 1: card 'card-0001' is already used by rank 0; expected one rank per card"
    )
    assert raised.value.problems == ("rank 1: card 'card-0001' is already used by rank 0; expected one rank per card",)
    with translation.override("zh-hans"):
        assert core_error_text(raised.value) == (
            "该 rank 映射不能用于 2 个 rank 的作业\n  - rank 1：卡 'card-0001' 已被 rank 0 使用；每张卡只能对应一个 rank"
        )


@pytest.mark.django_db
def test_a_whatif_cell_that_fails_names_its_stage_and_reason_in_each_language(small_snapshot, monkeypatch):
    from dataclasses import replace

    from twin.runs.fanout import FANOUT_KINDS
    from twin.runs.models import RunKind
    from twin.runs.services import cell_execute, run_create
    from twin.whatif.performance import check_sizes

    def impossible_sizes(run, params):
        return check_sizes([0])

    run = run_create(kind=RunKind.WHATIF, snapshot=small_snapshot, params={"factors": [1, 2], "alternatives": ["one-supernode"], "collectives": ["allreduce"], "sizes": [2**16]})
    monkeypatch.setitem(FANOUT_KINDS, RunKind.WHATIF, replace(FANOUT_KINDS[RunKind.WHATIF], execute=impossible_sizes))
    cell = run.cells.first()
    cell_execute(cell_id=cell.pk)
    run.refresh_from_db()
    english = f"{cell.label}: impossible message sizes\n  - size 0: expected a whole number of bytes from 1 to 68,719,476,736 (64 GiB)"
    assert run.status == RunStatus.FAILED and run.error == english
    with translation.override("zh-hans"):
        chinese = run.error_text()
    assert chinese.endswith("：消息大小无法使用\n  - 消息大小 0：应为 1 到 68,719,476,736（64 GiB）之间的整数字节数")
    assert chinese != english and run_state_payload(run)["errors"] == {"en": english, "zh-hans": chinese}


@pytest.mark.django_db
def test_a_run_that_crashes_says_so_in_each_readers_language(operator_client, small_snapshot, monkeypatch):
    """An exception nobody wrote words for (a bug) still reads as a sentence in the reader's
    language around the exception's own text, and the traceback goes to the worker's log."""
    from twin.runs import services

    def crashes(run, progress):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setitem(services.RUN_HANDLERS, "hop_stats", crashes)
    created = operator_client.post("/api/runs/", {"kind": "hop_stats", "snapshot": small_snapshot.pk, "params": {}}, content_type="application/json")
    assert created.status_code == 201, created.content
    run_execute(run_id=created.json()["id"])
    chinese = operator_client.get(f"/api/runs/{created.json()['id']}/", HTTP_ACCEPT_LANGUAGE="zh-Hans").json()
    assert chinese["status"] == "failed"
    assert chinese["error"] == "内部错误（ZeroDivisionError: division by zero）；工作进程的日志中有其调用栈"
    assert chinese["errors"]["en"] == "internal error (ZeroDivisionError: division by zero); the worker's log has its traceback"
