"""docker-compose.yml (no Docker engine here: the file is parsed and checked) and settings from
the environment."""
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_has_the_full_stack(compose):
    services = compose["services"]
    assert {"postgres", "redis", "migrate", "web", "proxy", "worker"} <= set(services)
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    assert services["web"]["command"][:3] == ["python", "manage.py", "web"] and "twin.asgi:application" in services["web"]["command"]
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


def test_worker_and_web_can_scale(compose):
    # `--scale worker=N` fails for services with a fixed container name or host port.
    for name in ("worker", "web"):
        assert "container_name" not in compose["services"][name] and "ports" not in compose["services"][name], name
    assert compose["services"]["web"]["deploy"]["replicas"] == "${TWIN_WEB_REPLICAS:-2}"
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


def test_the_proxy_carries_http_and_websockets_to_every_web_replica(compose):
    proxy = compose["services"]["proxy"]
    assert proxy["image"].startswith("nginx:") and proxy["ports"] == ["${TWIN_PORT:-8000}:8000"]
    assert proxy["depends_on"]["web"]["condition"] == "service_healthy"
    source, target, mode = proxy["volumes"][0].split(":")
    assert target == "/etc/nginx/conf.d/default.conf" and mode == "ro"
    config = (ROOT / source).read_text()
    # Docker's DNS, re-asked: the name "web" gives every replica, scaled ones too.
    assert "resolver 127.0.0.11" in config and "set $web http://web:8000;" in config and "proxy_pass $web;" in config
    # The websocket upgrade goes through (HTTP/1.1 and the hop-by-hop headers passed on).
    assert "proxy_http_version 1.1;" in config
    assert "proxy_set_header Upgrade $http_upgrade;" in config and "proxy_set_header Connection $connection_upgrade;" in config
    assert "--proxy-headers" in compose["services"]["web"]["command"]
    upload_limit_mb = int(config.split("client_max_body_size ")[1].split("m;")[0])
    assert upload_limit_mb * 1024 * 1024 >= 200 * 1024 * 1024  # TWIN_MAX_UPLOAD_BYTES' default: the app answers 413 itself


def test_web_containers_empty_their_own_upload_temp_dir_before_serving(compose):
    """A killed web container's half-written uploads are removed when it starts again; the
    directory is the container's own: replicas share the data volume, and one emptying it would
    cut off another's uploads."""
    command = compose["services"]["web"]["command"]
    assert command[:4] == ["python", "manage.py", "web", "--"] and command[4:] == ["-b", "0.0.0.0", "-p", "8000", "--proxy-headers", "twin.asgi:application"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    temp_dir = dockerfile.split("TWIN_UPLOAD_TEMP_DIR=")[1].split()[0]
    data_volume = next(volume.split(":")[1] for volume in compose["services"]["web"]["volumes"] if volume.startswith("twin-data:"))
    assert not Path(temp_dir).is_relative_to(data_volume), temp_dir
    assert dockerfile.strip().splitlines()[-1] == 'CMD ["python", "manage.py", "web", "--", "-b", "0.0.0.0", "-p", "8000", "twin.asgi:application"]'


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_manage_py_web_empties_the_upload_temp_dir_then_serves(tmp_path):
    """The command compose runs, run for real: the leftover of a cut-off upload is gone once daphne answers."""
    temp_dir = tmp_path / "container-tmp" / "twin-uploads"
    temp_dir.mkdir(parents=True)
    leftover = temp_dir / "tmpa8d2k1.upload.xml"
    leftover.write_bytes(b"<system" * 1000)
    port = free_port()
    env = {**os.environ, "TWIN_DATA_DIR": str(tmp_path / "data"), "TWIN_UPLOAD_TEMP_DIR": str(temp_dir), "DJANGO_SETTINGS_MODULE": "twin.settings"}
    web = subprocess.Popen([sys.executable, "manage.py", "web", "--", "-b", "127.0.0.1", "-p", str(port), "twin.asgi:application"], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert web.poll() is None, "the web server exited"
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except urllib.error.HTTPError:  # answered (an empty database makes it unhealthy)
                break
            except OSError:
                assert time.monotonic() < deadline, "the web server did not answer"
                time.sleep(0.3)
        assert temp_dir.is_dir() and list(temp_dir.iterdir()) == []
        # exec: the process compose started is daphne itself, so it receives the container's signals.
        assert "daphne" in " ".join(Path(f"/proc/{web.pid}/cmdline").read_text().split("\0"))
    finally:
        web.terminate()
        web.wait(timeout=20)


@pytest.mark.skipif(not shutil.which("nginx"), reason="nginx (Debian package nginx-light) not installed: only the text checks ran")
def test_nginx_accepts_the_proxy_config(tmp_path):
    main = tmp_path / "nginx.conf"
    main.write_text(f"pid {tmp_path}/nginx.pid; error_log stderr; events {{}} http {{ include {ROOT / 'deploy' / 'nginx.conf'}; }}\n")
    result = subprocess.run(["nginx", "-t", "-c", str(main), "-p", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


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
