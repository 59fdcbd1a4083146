"""Start the whole product (`manage.py serve`) as a subprocess for the smoke and browser tests."""
import contextlib
import http.cookiejar
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

from twin.common.embedded import free_port

ROOT = Path(__file__).resolve().parent.parent
ADMIN_PASSWORD = "stack-test-admin-password"
READY_LINE = "Fabric twin is ready"


class Stack:
    """`manage.py serve` on a free port with its own data directory; stopped with SIGTERM."""

    def __init__(self, *, data_dir: Path, env_overrides: dict[str, str], drop_env: tuple[str, ...] = (), serve_args: tuple[str, ...] = ()):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = data_dir / "serve.log"
        env = {k: v for k, v in os.environ.items() if k not in drop_env}
        self.env = {**env, "TWIN_DATA_DIR": str(data_dir), "TWIN_ADMIN_PASSWORD": ADMIN_PASSWORD, **env_overrides}
        self.serve_args = serve_args
        self.process: subprocess.Popen | None = None

    def start(self, timeout_s: float = 180.0) -> "Stack":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(self.port), *self.serve_args],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if READY_LINE in self.output():
                return self
            if self.process.poll() is not None:
                raise AssertionError(f"serve exited with {self.process.returncode}:\n{self.output()[-4000:]}")
            time.sleep(0.3)
        self.stop()
        raise AssertionError(f"serve was not ready in {timeout_s} s:\n{self.output()[-4000:]}")

    def command_env(self) -> dict[str, str]:
        """The environment for a command run against this stack (`manage.py generate-fabric`...):
        its database and its Redis, so that tasks the command queues reach the stack's worker."""
        embedded = re.search(r"Started embedded Redis at (redis://\S+)", self.output())
        return {**self.env, "REDIS_URL": embedded.group(1)} if embedded else dict(self.env)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def __enter__(self) -> "Stack":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class Session:
    """A logged-in HTTP session against a running stack (urllib, with cookies and CSRF)."""

    def __init__(self, base_url: str, username: str = "admin", password: str = ADMIN_PASSWORD):
        self.base_url = base_url
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))
        page = self.get("/login/").decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        form = urllib.parse.urlencode({"username": username, "password": password, "csrfmiddlewaretoken": token}).encode()
        self.opener.open(urllib.request.Request(base_url + "/login/", data=form, headers={"Referer": base_url + "/login/"}))
        assert self.cookie("sessionid"), "login failed"

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.cookies if c.name == name), None)

    def get(self, path: str) -> bytes:
        with self.opener.open(self.base_url + path, timeout=30) as response:
            return response.read()

    def post_json(self, path: str, body: bytes) -> tuple[int, bytes]:
        request = urllib.request.Request(
            self.base_url + path, data=body,
            headers={"Content-Type": "application/json", "X-CSRFToken": self.cookie("csrftoken"), "Referer": self.base_url + "/"},
        )
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


def port_is_open(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def scratch_database(directory: Path, prefix: str = "twin_scratch") -> Iterator[str]:
    """A database of its own for a stack or a benchmark, dropped afterwards: a fresh PostgreSQL
    database when DATABASE_URL names a PostgreSQL server, else an SQLite file in `directory`."""
    configured = os.environ.get("DATABASE_URL", "")
    if not configured.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{Path(directory) / f'{prefix}.sqlite3'}"
        return
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(configured, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield configured.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(configured, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
