"""A real Prometheus (Debian's `prometheus` binary, a temporary config and storage on a free port)
scraping a small exporter that serves recorded metrics text with its counters advancing.

The recorded text is read with prometheus_client's parser and written back as it was printed
(names, label order), so what Prometheus scrapes is what the exporter printed, counters moved on.
prometheus_client's own exposition code is not used: it renames counters to end in ``_total``
(dcgm-exporter's ``DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L7`` is a counter that does not).
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

from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.utils import floatToGoString

PROMETHEUS = shutil.which("prometheus")
NODE_EXPORTER_TEXT = Path(__file__).parent / "data" / "telemetry" / "node_exporter_1.5_infiniband.prom"
DCGM_EXPORTER_TEXT = Path(__file__).parent / "data" / "telemetry" / "dcgm-exporter_3.3_8xH100_nvlink.prom"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


Grows = Mapping[tuple[str, tuple[tuple[str, str], ...]], float]


class RecordedHosts:
    """Each host serves the recorded text at /<host>/metrics. A sample named in `rates[host]`
    (by its name and labels it has: `("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L7", (("gpu",
    "3"),))`) grows at that many units per second. `host_label` (dcgm-exporter's `Hostname`)
    is set to the host serving the text, as each host's exporter names its own host."""

    def __init__(self, text: str, rates: Mapping[str, Grows], *, host_label: str | None = None) -> None:
        printed = {line.split("{", 1)[0].split(" ", 1)[0] for line in text.splitlines() if line and not line.startswith("#")}
        self.families = []
        for family in text_string_to_metric_families(text):
            # The parser writes counters as OpenMetrics does (name_total): back to the printed name.
            samples = [(sample.name if sample.name in printed else sample.name.removesuffix("_total"), sample.labels, sample.value) for sample in family.samples]
            name = family.name + "_total" if family.type == "counter" and family.name + "_total" in printed else family.name
            self.families.append((name, family, samples))
        self.rates = rates
        self.host_label = host_label
        self.started = time.time()

    def metrics_text(self, host: str) -> bytes:
        elapsed = time.time() - self.started
        rates = self.rates.get(host, {})
        lines = []
        for name, family, samples in self.families:
            documentation = family.documentation.replace("\\", r"\\").replace("\n", r"\n")
            lines += [f"# HELP {name} {documentation}", f"# TYPE {name} {'untyped' if family.type == 'unknown' else family.type}"]
            for sample_name, labels, value in samples:
                grown = sum(rate for (grown_name, matches), rate in rates.items() if grown_name == sample_name and all(labels.get(k) == v for k, v in matches))
                shown = {**labels, self.host_label: host} if self.host_label in labels else labels
                label_text = ",".join(f'{key}="{_escaped(text)}"' for key, text in shown.items())
                lines.append(f"{sample_name}{{{label_text}}} {floatToGoString(value + grown * elapsed)}" if label_text else f"{sample_name} {floatToGoString(value + grown * elapsed)}")
        return ("\n".join(lines) + "\n").encode()


def _escaped(text: str) -> str:
    return text.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"')


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
def run_prometheus(
    directory: Path, exporter_port: int, hosts: list[str], *, scrape_interval: str = "500ms", job: str = "infiniband", target_port: int = 9100
) -> Iterator[str]:
    """Prometheus scraping /<host>/metrics of the exporter as the target `<host>:<target_port>`
    (the `instance` label the exporter on that host would get: node_exporter's 9100,
    dcgm-exporter's 9400); yields its URL."""
    targets = "\n".join(
        f'      - targets: ["127.0.0.1:{exporter_port}"]\n        labels: {{instance: "{host}:{target_port}", __metrics_path__: "/{host}/metrics"}}'
        for host in hosts
    )
    config = directory / "prometheus.yml"
    config.write_text(f"global:\n  scrape_interval: {scrape_interval}\n  evaluation_interval: 10s\nscrape_configs:\n  - job_name: {job}\n    static_configs:\n{targets}\n")
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
