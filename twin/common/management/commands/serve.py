"""Run the whole product on this machine: Redis (embedded unless REDIS_URL is set), the web
server (HTTP + websockets; one or more processes on one port, IPv4 and IPv6) and two Celery workers: a live one (replay player, run bookkeeping and
the sweeper's beat, in threads) and a heavy one (whole runs and fanned-out cells, one process per
core by default). A child that exits is started again; Ctrl-C stops everything it started, and
if this process is killed outright its children get SIGTERM from the kernel (Linux)."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils.translation import gettext, gettext_lazy as _, ngettext

from twin.common.cli import TwinCommand
from twin.common.embedded import EmbeddedRedis, dies_with_this_process
from twin.common.management.commands.web import upload_temp_dir_empty, web_server_environment

STOP_GRACE_S = 10
LIVE_WORKER_THREADS = 8  # replay players sleep between frames: threads, not processes
RESTARTS_ALLOWED = 5  # a child that exits more often than this within RESTART_WINDOW_S stops serve
RESTART_WINDOW_S = 60


def stop_on_signal(signum, frame):
    """SIGTERM (from a supervisor or a test) stops the stack like Ctrl-C does."""
    raise KeyboardInterrupt


def port_in_use(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=0.5).close()
    except OSError:
        return False
    return True


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


# The IPv6 twin of an IPv4 loopback or wildcard host, listened on too when this host has IPv6.
IPV6_COMPANION = {"127.0.0.1": "::1", "0.0.0.0": "::"}  # noqa: S104 - the operator's --host
# daphne finds the `listener:` endpoint (a socket inherited from serve, of either family) here.
WEBSERVER_PLUGINS = Path(__file__).resolve().parents[2] / "webserver"


def listen_addresses(host: str, port: int) -> tuple[list[tuple], list[tuple]]:
    """(addresses the host names, their IPv6 companions): `localhost` names 127.0.0.1 and ::1,
    127.0.0.1 gets ::1 as a companion, 0.0.0.0 gets ::; a companion this host cannot listen on
    (no IPv6) is left out, a named address that fails is an error."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except socket.gaierror as error:
        # The resolver's reason (strerror) is the system's, in English.
        unknown = gettext("--host %(host)s: %(reason)s; expected an address (127.0.0.1, ::1, 0.0.0.0, ::) or a name with one.")
        raise CommandError(unknown % {"host": host, "reason": error.strerror}) from None
    named = list(dict.fromkeys((family, address[:2]) for family, _, _, _, address in found if family in (socket.AF_INET, socket.AF_INET6)))
    hosts = {address[0] for _, address in named}
    companions = [(socket.AF_INET6, (IPV6_COMPANION[ip], port)) for family, (ip, _) in named if family == socket.AF_INET and IPV6_COMPANION.get(ip) not in hosts | {None}]
    return named, companions if socket.has_ipv6 else []


def reuse_port_socket(family: int, address: tuple) -> socket.socket:
    """A listening socket on the address that other sockets may bind too (SO_REUSEPORT). Each web
    process gets one per address and the kernel spreads new connections across them evenly, so
    one address serves many processes with no proxy in front; a websocket stays on the process
    that accepted it, and the channel layer (Redis) brings every group message to every process.
    (One socket shared by all would wake every process per connection and let the first awake
    take bursts.) An IPv6 socket takes IPv6 only: the IPv4 address has a socket of its own."""
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if family == socket.AF_INET6:
            listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        listener.bind(address)
        listener.listen(1024)
    except OSError:
        listener.close()
        raise
    listener.set_inheritable(True)
    return listener


def shown_address(listener: socket.socket) -> str:
    host, port = listener.getsockname()[:2]
    return f"[{host}]:{port}" if listener.family == socket.AF_INET6 else f"{host}:{port}"


class Command(TwinCommand):
    help = _("Start Redis (if needed), the web server and the live and heavy Celery workers; Ctrl-C stops them all.")

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("TWIN_HOST", "127.0.0.1"),
                            help=_("Address or name to listen on; 127.0.0.1 also listens on ::1, 0.0.0.0 on :: (when this host has IPv6)."))
        parser.add_argument("--port", type=int, default=int(os.environ.get("TWIN_PORT", "8000")))
        parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 1,
                            help=_("Processes of the heavy worker (whole runs and cells); default: one per core."))
        parser.add_argument("--web-processes", type=int, default=1, help=_("Web server processes sharing the port (websocket fan-out scales with them)."))
        parser.add_argument("--no-demo", action="store_true", help=_("Do not load the demo fabric."))

    def handle(self, *args, host: str, port: int, concurrency: int, web_processes: int, no_demo: bool, **options):
        self.children: dict[str, subprocess.Popen] = {}
        self.commands: dict[str, list[str]] = {}
        self.listeners: dict[str, list[socket.socket]] = {}  # kept open here, so that a web process started again reuses its sockets
        self.restarts: dict[str, list[float]] = {}  # each child's exits: Redis going also takes the workers' connections
        self.redis: EmbeddedRedis | None = None
        signal.signal(signal.SIGTERM, stop_on_signal)
        # Ctrl-C (SIGINT) stops everything even when serve was started from a script's background
        # job, which starts with SIGINT ignored.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if port_in_use(host, port):
            raise CommandError(gettext("Port %(port)s on %(host)s is already in use; choose another with --port.") % {"port": port, "host": host})
        if web_processes < 1:
            raise CommandError(gettext("--web-processes must be at least 1."))
        addresses = self.addresses_to_listen_on(host, port)
        try:
            self.env = self.prepare_environment()
            call_command("bootstrap", no_demo=no_demo, verbosity=options["verbosity"])
            celery = [sys.executable, "-m", "celery", "-A", "twin", "worker", "--loglevel=INFO", "--without-gossip", "--without-mingle"]
            upload_temp_dir_empty()  # before any web process: none is writing there yet
            for number in range(web_processes):
                name = f"web {number + 1}" if web_processes > 1 else "web"
                self.listeners[name] = [reuse_port_socket(family, address) for family, address in addresses]
                endpoints = [f"listener:fileno={listener.fileno()}:family={listener.family.name.removeprefix('AF_')}" for listener in self.listeners[name]]
                self.commands[name] = [sys.executable, "-m", "daphne", *(f"-e={endpoint}" for endpoint in endpoints), "twin.asgi:application"]
            self.commands |= {
                "live worker": [*celery, "-n", "live@%h", "-Q", settings.TWIN_QUEUE_LIVE, "--pool=threads",
                                f"--concurrency={LIVE_WORKER_THREADS}", "--beat", f"--schedule={settings.DATA_DIR / 'celerybeat-schedule'}"],
                "heavy worker": [*celery, "-n", "heavy@%h", "-Q", settings.TWIN_QUEUE_HEAVY, "--pool=prefork", f"--concurrency={concurrency}"],
            }
            for name in self.commands:
                self.spawn(name)
            self.wait_until_serving(host, port)
            database = settings.DATABASES["default"]
            redis = (
                gettext("%(url)s (embedded, append-only file in %(directory)s)") % {"url": self.env["REDIS_URL"], "directory": self.redis.workdir}
                if self.redis
                else self.env["REDIS_URL"]
            )
            lines = [
                "",
                gettext("Fabric twin is ready: %(url)s") % {"url": f"http://{url_host(host)}:{port}/"},
                "  " + gettext("database: %(engine)s %(name)s") % {"engine": database["ENGINE"].rsplit(".", 1)[-1], "name": database["NAME"]},
                "  " + gettext("redis:    %(redis)s") % {"redis": redis},
                "  " + gettext("workers:  live (replay player, run bookkeeping, sweeper; %(threads)s threads) and heavy (%(heavy)s)") % {
                    "threads": LIVE_WORKER_THREADS,
                    "heavy": ngettext(
                        "runs and cells; %(count)s process on %(cores)s cores, --concurrency to change",
                        "runs and cells; %(count)s processes on %(cores)s cores, --concurrency to change", concurrency,
                    ) % {"count": concurrency, "cores": os.cpu_count()},
                },
                "  " + ngettext("web:      %(count)s process on %(addresses)s", "web:      %(count)s processes on %(addresses)s", web_processes) % {
                    "count": web_processes, "addresses": ", ".join(map(shown_address, next(iter(self.listeners.values())))),
                },
                "  " + gettext(
                    "Log in as the admin user (its password was printed when it was created, or set\n"
                    "  TWIN_ADMIN_PASSWORD before the first start). Ctrl-C stops everything."
                ),
                "",
            ]  # fmt: skip
            self.stdout.write(self.style.SUCCESS("\n".join(lines)))
            self.supervise()
        except KeyboardInterrupt:
            self.stdout.write("\n" + gettext("Stopping…"))
        finally:
            self.stop_all()

    def addresses_to_listen_on(self, host: str, port: int) -> list[tuple]:
        """The host's addresses, and their IPv6 companions this host can listen on."""
        named, companions = listen_addresses(host, port)
        for family, address in named:  # fails now, with the reason, rather than in a web process
            try:
                reuse_port_socket(family, address).close()
            except OSError as error:
                raise CommandError(gettext("Cannot listen on %(address)s port %(port)s: %(reason)s.") % {"address": address[0], "port": port, "reason": error.strerror}) from None
        usable = []
        for family, address in companions:
            try:
                reuse_port_socket(family, address).close()
            except OSError as error:
                self.stdout.write(gettext("Not listening on %(address)s too: %(reason)s.") % {"address": f"[{address[0]}]:{port}", "reason": error.strerror})
            else:
                usable.append((family, address))
        return named + usable

    def prepare_environment(self) -> dict[str, str]:
        env = dict(os.environ)
        if not env.get("REDIS_URL"):
            self.redis = EmbeddedRedis(workdir=settings.DATA_DIR / "redis", persistent=True).start()
            env["REDIS_URL"] = self.redis.url
            self.stdout.write(gettext("Started embedded Redis at %(url)s") % {"url": self.redis.url})
        env.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
        return env

    def spawn(self, name: str) -> None:
        # Own process group: the terminal's Ctrl-C reaches only us, and we stop children in order.
        # The kernel stops them should we be killed (a Celery worker: cold shutdown, as nobody
        # is left to wait for it; its unacknowledged tasks go to the next worker).
        death_signal = signal.SIGQUIT if "worker" in name else signal.SIGTERM
        listeners = self.listeners.get(name, [])
        env = self.env
        if listeners:
            plugins = os.pathsep.join(filter(None, [str(WEBSERVER_PLUGINS), self.env.get("PYTHONPATH")]))
            env = {**web_server_environment(self.env), "PYTHONPATH": plugins}
        self.children[name] = subprocess.Popen(
            self.commands[name], env=env, start_new_session=True, preexec_fn=dies_with_this_process(death_signal),
            pass_fds=tuple(listener.fileno() for listener in listeners),
        )

    def wait_until_serving(self, host: str, port: int, timeout_s: float = 60.0) -> None:
        url = f"http://{url_host(host)}:{port}/healthz"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check_children()
            try:
                with urllib.request.urlopen(url, timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise CommandError(gettext("The web server did not answer on %(url)s within %(seconds)s s.") % {"url": url, "seconds": f"{timeout_s:.0f}"})

    def check_children(self) -> None:
        """Start again a child that exited (a killed worker, an out-of-memory web server), unless
        they keep exiting."""
        for name, process in list(self.children.items()):
            if process.poll() is None:
                continue
            self.count_restart(name, process.returncode)
            self.spawn(name)
        if self.redis and self.redis.process.poll() is not None:
            # Same port, same append-only file: the queued tasks come back with it.
            self.count_restart("embedded Redis", self.redis.process.returncode)
            self.redis.start()

    def count_restart(self, name: str, returncode: int) -> None:
        now = time.monotonic()
        exits = self.restarts[name] = [moment for moment in self.restarts.get(name, []) if now - moment < RESTART_WINDOW_S] + [now]
        if len(exits) > RESTARTS_ALLOWED:
            raise CommandError(gettext("The %(name)s exited with code %(code)s, its %(count)sth exit within %(seconds)s s; stopping.") % {
                "name": name, "code": returncode, "count": len(exits), "seconds": RESTART_WINDOW_S,
            })  # fmt: skip
        self.stdout.write(self.style.WARNING(gettext("The %(name)s exited with code %(code)s; starting it again.") % {"name": name, "code": returncode}))

    def supervise(self) -> None:
        while True:
            self.check_children()
            time.sleep(0.5)

    def stop_all(self) -> None:
        for process in reversed(self.children.values()):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.children.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for listeners in self.listeners.values():
            for listener in listeners:
                listener.close()
        if self.redis:
            self.redis.stop()
