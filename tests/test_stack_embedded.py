"""Smoke test of the embedded default: `manage.py serve` with neither DATABASE_URL nor REDIS_URL
starts SQLite, its own Redis, the web server and a worker; serves the dashboard; accepts a
websocket that delivers a run's result; and Ctrl-C stops everything it started."""
import contextlib
import json
import re
import signal
import socket
import time

import psutil
import pytest
from websockets.sync.client import connect

from tests.stack import Session, Stack, port_is_open

pytestmark = pytest.mark.stack


def test_embedded_default_serves_dashboard_and_websocket(tmp_path):
    # A sweep every second: the console must still show only the lines of real work.
    stack = Stack(data_dir=tmp_path, env_overrides={"TWIN_SWEEP_INTERVAL_S": "1"}, drop_env=("DATABASE_URL", "REDIS_URL"))
    with stack:
        output = stack.output()
        assert "Started embedded Redis" in output and "sqlite3" in output
        redis_port = int(re.search(r"Started embedded Redis at redis://127\.0\.0\.1:(\d+)", output).group(1))
        session = Session(stack.base_url)
        dashboard = session.get("/").decode()
        assert "demo-supernode" in dashboard and "/static/frontend/app.js" in dashboard
        assert session.get("/static/frontend/app.js")  # assets come from the app itself

        fabric = json.loads(session.get("/api/fabrics/"))["results"][0]
        assert fabric["latest_snapshot"]["card_count"] == 1024
        status, body = session.post_json("/api/runs/", json.dumps({"kind": "hop_stats", "snapshot": fabric["latest_snapshot"]["id"]}).encode())
        assert status == 201, body
        run = json.loads(body)

        ws_url = stack.base_url.replace("http://", "ws://") + run["ws_url"]
        headers = {"Cookie": f"sessionid={session.cookie('sessionid')}", "Origin": stack.base_url}
        with connect(ws_url, additional_headers=headers, open_timeout=10) as socket:
            frame = json.loads(socket.recv(timeout=30))
            while frame["run"]["status"] not in ("succeeded", "failed"):
                frame = json.loads(socket.recv(timeout=30))
        assert frame["run"]["status"] == "succeeded", frame
        assert frame["run"]["result"]["cards"] == 1024
        assert frame["run"]["result"]["histogram"] == {"1": 32 * 32 * 31 // 2, "3": 1024 * 1023 // 2 - 32 * 32 * 31 // 2}

        deadline = time.monotonic() + 60
        while "beat: Starting" not in stack.output() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(3.5)  # three sweeps or more
        output = stack.output()
        assert "beat: Starting" in output and "Task twin.runs.execute[" in output
        assert "Task twin.runs.sweep[" not in output and "Sending due task sweep" not in output

        assert stack.stop(signal.SIGINT) == 0
        assert "Stopping" in stack.output()
        assert not port_is_open(stack.port) and not port_is_open(redis_port)



def test_two_web_processes_share_the_port_and_every_viewer_hears_a_change(tmp_path):
    """`serve --web-processes 2`: two daphne processes accept on one port (the kernel spreads the
    connections), and a change published once by the worker reaches the viewers on both."""
    stack = Stack(data_dir=tmp_path, env_overrides={}, drop_env=("DATABASE_URL", "REDIS_URL"), serve_args=("--web-processes", "2"))
    with stack:
        assert "web:      2 processes" in stack.output()
        web = [child for child in psutil.Process(stack.process.pid).children() if "daphne" in " ".join(child.cmdline())]
        assert len(web) == 2
        session = Session(stack.base_url)
        snapshot = json.loads(session.get("/api/fabrics/"))["results"][0]["latest_snapshot"]["id"]
        status, body = session.post_json("/api/runs/", json.dumps({"kind": "hop_stats", "snapshot": snapshot}).encode())
        assert status == 201, body
        run = json.loads(body)
        ws_url = stack.base_url.replace("http://", "ws://") + run["ws_url"]
        headers = {"Cookie": f"sessionid={session.cookie('sessionid')}", "Origin": stack.base_url}
        with contextlib.ExitStack() as sockets:
            viewers = [sockets.enter_context(connect(ws_url, additional_headers=headers, open_timeout=10)) for _ in range(24)]

            def viewers_of(process) -> int:
                return sum(1 for c in process.net_connections("tcp") if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == stack.port)

            # 24 connections spread by the kernel's hash: all on one process has odds of 2 in 2**24.
            assert all(viewers_of(process) >= 1 for process in web), [viewers_of(process) for process in web]
            finals = []
            for socket in viewers:
                frame = json.loads(socket.recv(timeout=30))
                while frame["run"]["status"] not in ("succeeded", "failed"):
                    frame = json.loads(socket.recv(timeout=30))
                finals.append(frame)
        assert all(frame["run"]["status"] == "succeeded" and frame["run"]["result"]["cards"] == 1024 for frame in finals)
        assert len({json.dumps(frame, sort_keys=True) for frame in finals}) == 1  # the same final frame for all


def host_has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not host_has_ipv6_loopback(), reason="this host has no IPv6 loopback")
def test_serve_listens_on_ipv6_loopback_too(tmp_path):
    """The default host 127.0.0.1 is listened on as ::1 too, by every web process (each has its
    own SO_REUSEPORT socket per address), and the product answers and logs in over IPv6."""
    stack = Stack(data_dir=tmp_path, env_overrides={}, drop_env=("DATABASE_URL", "REDIS_URL"), serve_args=("--web-processes", "2", "--no-demo"))
    with stack:
        assert f"on 127.0.0.1:{stack.port}, [::1]:{stack.port}" in stack.output()
        web = [child for child in psutil.Process(stack.process.pid).children() if "daphne" in " ".join(child.cmdline())]
        listening = [{c.laddr.ip for c in process.net_connections("tcp") if c.status == psutil.CONN_LISTEN and c.laddr.port == stack.port} for process in web]
        assert listening == [{"127.0.0.1", "::1"}] * 2, listening
        session = Session(f"http://[::1]:{stack.port}")
        assert json.loads(session.get("/api/fabrics/"))["results"] == []
        assert "::1:" in stack.output()  # daphne saw an IPv6 client, not an address adopted as IPv4
