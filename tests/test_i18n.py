"""English and Simplified Chinese, chosen by the browser's language or the switch in the header."""
import pytest

pytestmark = pytest.mark.django_db


def test_chinese_by_browser_language(viewer_client, small_snapshot):
    page = viewer_client.get("/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    content = page.content.decode()
    assert 'lang="zh-hans"' in content and "互联网络" in content and 'data-lang="zh-hans"' in content


def test_english_by_default_and_the_switch(viewer_client, small_snapshot):
    assert "Fabrics" in viewer_client.get("/", HTTP_ACCEPT_LANGUAGE="en-US").content.decode()
    switched = viewer_client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"}, HTTP_ACCEPT_LANGUAGE="en-US")
    assert switched.status_code == 302
    assert "互联网络" in viewer_client.get("/", HTTP_ACCEPT_LANGUAGE="en-US").content.decode()


def test_a_runs_progress_reads_in_each_readers_language(viewer_client, small_snapshot):
    """Stored once as a Phrase: the API answers in the request's language, the frame pushed to
    every viewer carries each language, and a row from before phrases keeps its English msgid."""
    from twin.runs.models import Run, RunKind, RunStatus
    from twin.runs.progress import progress_update
    from twin.runs.realtime import run_state_payload
    from twin.simcore.translation import LATER

    run = Run.objects.create(kind=RunKind.WHATIF, snapshot=small_snapshot, status=RunStatus.RUNNING)
    progress_update(run.pk, LATER.ngettext("%(done)s of %(count)s cell done", "%(done)s of %(count)s cells done", 1200) % {"done": 1100, "count": 1200}, 0.5)
    english = viewer_client.get(f"/api/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE="en").json()
    chinese = viewer_client.get(f"/api/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE="zh-Hans").json()
    assert english["message"] == "1,100 of 1,200 cells done" and chinese["message"] == "已完成 1,100/1,200 个单元"
    assert english["messages"] == chinese["messages"] == {"en": "1,100 of 1,200 cells done", "zh-hans": "已完成 1,100/1,200 个单元"}
    assert run_state_payload(Run.objects.get(pk=run.pk))["messages"] == english["messages"]
    page = viewer_client.get(f"/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert '<span class="run-message">已完成 1,100/1,200 个单元</span>' in page
    Run.objects.filter(pk=run.pk).update(message="Finished", message_phrase=None)
    assert viewer_client.get(f"/api/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE="zh-Hans").json()["message"] == "已完成"
