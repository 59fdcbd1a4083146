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
