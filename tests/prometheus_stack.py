"""A real Prometheus (Debian's `prometheus` binary, a temporary config and storage on a free port)
scraping a small exporter that serves recorded metrics text with its counters advancing.

The recorded text is read with prometheus_client's parser and written back with its exposition
code, so what Prometheus scrapes is what the real exporter printed, counters moved on.
"""
from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

PROMETHEUS = shutil.which("prometheus")
NODE_EXPORTER_TEXT = Path(__file__).parent / "data" / "telemetry" / "node_exporter_1.5_infiniband.prom"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RecordedHosts:
    """Each host serves the recorded text at /<host>/metrics; a sample named in `rates[host]`
    (by sample name and its labels' `device`) grows at that many units per second."""

    def __init__(self, text: str, rates: Mapping[str, Mapping[tuple[str, str], float]]) -> None:
        self.families = list(text_string_to_metric_families(text))
        self.rates = rates
        self.started = time.time()

    def collect_for(self, host: str):
        elapsed = time.time() - self.started
        rates = self.rates.get(host, {})

        class Host:
            def collect(inner):  # noqa: N805 - generate_latest calls registry.collect()
                for family in self.families:
                    moved = Metric(family.name, family.documentation, family.type, family.unit)
                    for sample in family.samples:
                        grown = rates.get((sample.name, sample.labels.get("device", "")), 0.0) * elapsed
                        moved.add_sample(sample.name, sample.labels, sample.value + grown, sample.timestamp, sample.exemplar)
                    yield moved

        return Host()

    def metrics_text(self, host: str) -> bytes:
        return generate_latest(self.collect_for(host))


@contextlib.contextmanager
def serve_hosts(metrics_of: Callable[[str], bytes | None]) -> Iterator[int]:
    """Serve `metrics_of(host)` (exposition text, None: no such host) at /<host>/metrics; yields the port."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            parts = self.path.strip("/").split("/")
            body = metrics_of(parts[0]) if len(parts) == 2 and parts[1] == "metrics" else None
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE_LATEST)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def run_prometheus(directory: Path, exporter_port: int, hosts: list[str], *, scrape_interval: str = "500ms") -> Iterator[str]:
    """Prometheus scraping /<host>/metrics of the exporter as the target `<host>:9100` (the
    `instance` label a node_exporter on that host would get); yields its URL."""
    targets = "\n".join(
        f'      - targets: ["127.0.0.1:{exporter_port}"]\n        labels: {{instance: "{host}:9100", __metrics_path__: "/{host}/metrics"}}'
        for host in hosts
    )
    config = directory / "prometheus.yml"
    config.write_text(f"global:\n  scrape_interval: {scrape_interval}\n  evaluation_interval: 10s\nscrape_configs:\n  - job_name: infiniband\n    static_configs:\n{targets}\n")
    port = free_port()
    log = (directory / "prometheus.log").open("wb")
    process = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={directory / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "/-/ready", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"prometheus did not start: {(directory / 'prometheus.log').read_text()[-2000:]}")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
