"""Security headers on every answer, a Content-Security-Policy the pages satisfy, and a production
configuration (TWIN_HTTPS) that `manage.py check --deploy` finds nothing wrong with."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A <script> element with content instead of a src, or an on...= event handler attribute.
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>|\son[a-z]+\s*=\s*[\"']", re.IGNORECASE)

pytestmark = pytest.mark.django_db


def production_process(*arguments: str) -> subprocess.CompletedProcess:
    """Run Python with `arguments` in a fresh process with the production settings (TWIN_HTTPS)."""
    env = {key: value for key, value in os.environ.items() if key not in {"DEBUG", "DATABASE_URL", "ALLOWED_HOSTS"}}
    env |= {"DJANGO_SETTINGS_MODULE": "twin.settings", "TWIN_HTTPS": "1", "SECRET_KEY": "k" * 60 + "-not-a-real-one-but-long-enough"}
    return subprocess.run([sys.executable, *arguments], cwd=ROOT, env=env, capture_output=True, text=True)


@pytest.mark.parametrize("path", ["/", "/api/fabrics/", "/api/docs/", "/login/"])
def test_every_answer_carries_the_policy_and_the_other_headers(viewer_client, settings, path):
    response = viewer_client.get(path)
    assert response.status_code == 200
    policy = response.headers["Content-Security-Policy"]
    assert policy == settings.TWIN_CONTENT_SECURITY_POLICY
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy
    assert response.headers["X-Content-Type-Options"] == "nosniff" and response.headers["X-Frame-Options"] == "DENY"


def test_the_api_docs_load_their_set_up_script_as_a_file(viewer_client):
    page = viewer_client.get("/api/docs/").content.decode()
    assert not INLINE_SCRIPT.search(page), INLINE_SCRIPT.search(page)
    script_url = re.search(r'<script src="(/api/docs/\?[^"]*script[^"]*)"', page).group(1).replace("&amp;", "&")
    script = viewer_client.get(script_url)
    assert script.status_code == 200 and script.headers["Content-Type"].startswith("application/javascript")
    assert b"SwaggerUIBundle" in script.content


def test_no_template_or_bundle_has_inline_scripts_or_handlers():
    sources = [*ROOT.glob("twin/templates/**/*.html"), *ROOT.glob("twin/*/templates/**/*.html")]
    assert len(sources) > 10
    offenders = {str(path.relative_to(ROOT)): match.group(0) for path in sources if (match := INLINE_SCRIPT.search(path.read_text()))}
    assert offenders == {}
    bundle = (ROOT / "frontend/src").rglob("*.ts")
    uses_eval = [str(path) for path in bundle if re.search(r"\beval\(|new Function\(", path.read_text())]
    assert uses_eval == []


def test_production_settings_send_hsts_and_pass_the_deploy_check():
    code = (
        "import django; django.setup(); from django.test import Client; "
        "response = Client().get('/healthz', secure=True); print(response.headers['Strict-Transport-Security'])"
    )
    result = production_process("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "max-age=31536000; includeSubDomains; preload"
    check = production_process("manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert check.returncode == 0, check.stderr
    assert "System check identified no issues" in check.stdout
