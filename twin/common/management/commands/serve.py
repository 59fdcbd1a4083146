"""Run the whole product on this machine: Redis (embedded unless REDIS_URL is set), the web
server (HTTP + websockets; one or more processes) and a Celery worker. Ctrl-C stops everything
it started."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from twin.common.embedded import EmbeddedRedis

STOP_GRACE_S = 10


def stop_on_signal(signum, frame):
    """SIGTERM (from a supervisor or a test) stops the stack like Ctrl-C does."""
    raise KeyboardInterrupt


def port_in_use(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) == 0


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """A listening socket on host:port that other sockets may bind too (SO_REUSEPORT). Each web
    process gets one and the kernel spreads new connections across them evenly, so one address
    serves many processes with no proxy in front; a websocket stays on the process that accepted
    it, and the channel layer (Redis) brings every group message to every process. (One socket
    shared by all would wake every process per connection and let the first awake take bursts.)"""
    try:
        address = socket.getaddrinfo(host, port, family=socket.AF_INET, type=socket.SOCK_STREAM)[0][4]
    except socket.gaierror:
        # daphne adopts a listening socket as IPv4 only (its fd endpoint cannot name another family)
        raise CommandError(f"{host} is not an IPv4 address or a name with one: serve listens on IPv4.") from None
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    listener.bind(address)
    listener.listen(1024)
    listener.set_inheritable(True)
    return listener


class Command(BaseCommand):
    help = "Start Redis (if needed), the web server and a Celery worker; Ctrl-C stops them all."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("TWIN_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("TWIN_PORT", "8000")))
        parser.add_argument("--concurrency", type=int, default=1, help="Celery worker processes.")
        parser.add_argument("--web-processes", type=int, default=1, help="Web server processes sharing the port (websocket fan-out scales with them).")
        parser.add_argument("--no-demo", action="store_true", help="Do not load the demo fabric.")

    def handle(self, *args, host: str, port: int, concurrency: int, web_processes: int, no_demo: bool, **options):
        self.children: list[tuple[str, subprocess.Popen]] = []
        self.redis: EmbeddedRedis | None = None
        signal.signal(signal.SIGTERM, stop_on_signal)
        if port_in_use(host, port):
            raise CommandError(f"Port {port} on {host} is already in use; choose another with --port.")
        if web_processes < 1:
            raise CommandError("--web-processes must be at least 1.")
        try:
            env = self.prepare_environment()
            call_command("bootstrap", no_demo=no_demo, verbosity=options["verbosity"])
            self.spawn_web(host, port, web_processes, env)
            self.spawn("worker", [sys.executable, "-m", "celery", "-A", "twin", "worker", "--loglevel=INFO",
                                  f"--concurrency={concurrency}", "--without-gossip", "--without-mingle"], env)
            self.wait_until_serving(host, port)
            database = settings.DATABASES["default"]
            self.stdout.write(self.style.SUCCESS(
                f"\nFabric twin is ready: http://{host}:{port}/\n"
                f"  database: {database['ENGINE'].rsplit('.', 1)[-1]} {database['NAME']}\n"
                f"  redis:    {env['REDIS_URL']}{' (embedded)' if self.redis else ''}\n"
                f"  web:      {web_processes} process{'es' if web_processes > 1 else ''} on port {port}\n"
                "  Log in as the admin user (its password was printed when it was created, or set\n"
                "  TWIN_ADMIN_PASSWORD before the first start). Ctrl-C stops everything.\n"
            ))
            self.supervise()
        except KeyboardInterrupt:
            self.stdout.write("\nStopping…")
        finally:
            self.stop_all()

    def prepare_environment(self) -> dict[str, str]:
        env = dict(os.environ)
        if not env.get("REDIS_URL"):
            self.redis = EmbeddedRedis(workdir=settings.DATA_DIR / "redis").start()
            env["REDIS_URL"] = self.redis.url
            self.stdout.write(f"Started embedded Redis at {self.redis.url}")
        env.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
        return env

    def spawn(self, name: str, command: list[str], env: dict[str, str], pass_fds: tuple[int, ...] = ()) -> None:
        # Own process group: the terminal's Ctrl-C reaches only us, and we stop children in order.
        process = subprocess.Popen(command, env=env, start_new_session=True, pass_fds=pass_fds)
        self.children.append((name, process))

    def spawn_web(self, host: str, port: int, processes: int, env: dict[str, str]) -> None:
        """`processes` daphne servers, each on its own SO_REUSEPORT socket of host:port."""
        for number in range(processes):
            listener = reuse_port_socket(host, port)
            self.spawn(f"web {number + 1}", [sys.executable, "-m", "daphne", "-e", f"fd:fileno={listener.fileno()}", "twin.asgi:application"],
                       env, pass_fds=(listener.fileno(),))
            listener.close()  # the child holds it now: if that child dies, the kernel stops sending it connections

    def wait_until_serving(self, host: str, port: int, timeout_s: float = 60.0) -> None:
        url = f"http://{host}:{port}/healthz"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check_children()
            try:
                with urllib.request.urlopen(url, timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise CommandError(f"The web server did not answer on {url} within {timeout_s:.0f} s.")

    def check_children(self) -> None:
        for name, process in self.children:
            if process.poll() is not None:
                raise CommandError(f"The {name} process exited with code {process.returncode}.")
        if self.redis and self.redis.process.poll() is not None:
            raise CommandError("The embedded Redis exited.")

    def supervise(self) -> None:
        while True:
            self.check_children()
            time.sleep(0.5)

    def stop_all(self) -> None:
        for _, process in reversed(self.children):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for _, process in self.children:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self.redis:
            self.redis.stop()
