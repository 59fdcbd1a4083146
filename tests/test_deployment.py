"""docker-compose.yml (no Docker engine here: the file is parsed and checked) and settings from
the environment."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_has_the_full_stack(compose):
    services = compose["services"]
    assert {"postgres", "redis", "migrate", "web", "worker"} <= set(services)
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    assert "daphne" in services["web"]["command"] and "twin.asgi:application" in services["web"]["command"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "twin", "worker"]
    assert services["migrate"]["command"][-1] == "bootstrap" and services["migrate"]["restart"] == "no"


def test_compose_health_checks_and_order(compose):
    services = compose["services"]
    for name in ("postgres", "redis", "web", "worker"):
        assert services[name]["healthcheck"]["test"], name
    for name in ("web", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert services[name]["depends_on"]["redis"]["condition"] == "service_healthy"
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_web_and_worker_read_the_same_settings(compose):
    services = compose["services"]
    web, worker, migrate = services["web"], services["worker"], services["migrate"]
    assert web["environment"] == worker["environment"] == migrate["environment"]
    assert web["image"] == worker["image"]
    env = web["environment"]
    assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in env["DATABASE_URL"]
    assert env["REDIS_URL"] == "redis://redis:6379/0"
    assert "SECRET_KEY" in env


def test_worker_can_scale(compose):
    worker = compose["services"]["worker"]
    # `--scale worker=N` fails for services with a fixed container name or host port.
    assert "container_name" not in worker and "ports" not in worker
    assert set(compose["volumes"]) >= {"postgres-data", "redis-data", "twin-data"}


def test_compose_consumes_both_queues_runs_one_beat_and_keeps_redis_on_disk(compose):
    from django.conf import settings

    services = compose["services"]
    queues = {service["command"][service["command"].index("-Q") + 1] for service in services.values() if "-Q" in service.get("command", [])}
    assert queues == {settings.TWIN_QUEUE_LIVE, settings.TWIN_QUEUE_HEAVY}
    assert [name for name, service in services.items() if "beat" in service.get("command", [])] == ["beat"]
    assert services["worker-live"]["environment"] == services["beat"]["environment"] == services["web"]["environment"]
    redis = services["redis"]["command"]
    assert redis[redis.index("--appendonly") + 1] == "yes" and redis[redis.index("--appendfsync") + 1] == "everysec"


@pytest.mark.skipif(not shutil.which("docker-compose"), reason="docker-compose (Debian package) not installed: only the YAML checks ran")
def test_docker_compose_validates_the_file():
    result = subprocess.run(["docker-compose", "-f", "docker-compose.yml", "config", "-q"], cwd=ROOT, capture_output=True, text=True, env={**os.environ, "SECRET_KEY": "x"})
    assert result.returncode == 0, result.stderr


def settings_in_fresh_process(env: dict[str, str], expression: str) -> str:
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS", "SECRET_KEY"}}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**clean, "DJANGO_SETTINGS_MODULE": "twin.settings", **env}, capture_output=True, text=True, check=True)
    return result.stdout.strip()


def test_safe_defaults(tmp_path):
    out = settings_in_fresh_process({"TWIN_DATA_DIR": str(tmp_path)}, "settings.DEBUG, settings.DATABASES['default']['ENGINE'], bool(settings.SECRET_KEY)")
    assert out == "False django.db.backends.sqlite3 True"
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0  # private to its owner


def test_settings_from_environment(tmp_path):
    out = settings_in_fresh_process(
        {
            "TWIN_DATA_DIR": str(tmp_path),
            "DEBUG": "1",
            "SECRET_KEY": "s3cret",
            "ALLOWED_HOSTS": "twin.example,10.0.0.5",
            "DATABASE_URL": "postgres://u:p@db:5432/fabric",
            "REDIS_URL": "redis://cache:6380/2",
        },
        "settings.DEBUG, settings.SECRET_KEY, settings.ALLOWED_HOSTS, settings.DATABASES['default']['NAME'], "
        "settings.CELERY_BROKER_URL, settings.CHANNEL_LAYERS['default']['CONFIG']['hosts'][0]['address']",
    )
    assert out == "True s3cret ['twin.example', '10.0.0.5'] fabric redis://cache:6380/2 redis://cache:6380/2"
