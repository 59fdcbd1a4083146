"""Benchmark: what one Prometheus poll of 16,384 ports costs, against a real Prometheus.

Run from the repository root (needs Debian's `prometheus` on PATH):
    .venv/bin/python bench/bench_prometheus_poll.py [--cards 16384] [--ports 16384] [--polls 5]
        [--scrape-interval 5] [--window 60] [--targets 16] [--erring 0.01]

Steps: generate a fat-tree of --cards cards (radix 64); write, with prometheus_client's exposition
code, node_exporter's infiniband families of the recorded text (tests/data/telemetry) that the
`node_exporter_infiniband` preset reads (three byte/wait counters, five error counters) for
--ports link ends, labelled `node` and `port` as an IB exporter that sees the whole fabric labels
them, spread over --targets scrape targets, the error counters of a share --erring of the ports
not zero (1 %: most ports of a working fabric have never counted an error; 1 for the worst case);
start Prometheus scraping them every
--scrape-interval s; once the window holds two scrapes, poll --polls times in two ways, alternating:

- before: the queries of the poller before this change, 13 a poll: rate() of the 3 readings,
  rate() of each of the 5 error counters, and each error counter's current value;
- now: `PrometheusMapping.queries` (rate() of the 3 readings) and `errors_query` (every error
  counter that is not zero, in one answer), 4 a poll.

Per way and poll: the wall time of the HTTP queries (Prometheus evaluating and answering, this
process decoding the JSON), this process's CPU for the queries and for turning the answers into
the frame and the per-link error totals (labels resolved once, then cached, as the poller does),
Prometheus' own CPU, and the bytes answered. Prints medians and the load; asserts nothing.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prometheus_client.exposition import generate_latest  # noqa: E402
from prometheus_client.metrics_core import Metric  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from tests.prometheus_stack import NODE_EXPORTER_TEXT, PROMETHEUS, run_prometheus, serve_hosts  # noqa: E402
from twin.replay.prometheus import PRESETS, error_counters, error_totals, prometheus_mapping, rates_frame  # noqa: E402
from twin.replay.telemetry import TelemetryIndex  # noqa: E402
from twin.simcore.generate import fat_tree  # noqa: E402


def exposition(ends: list[tuple[str, str]], metrics: set[str], errors: set[str], erring: float, seed: int) -> bytes:
    """The recorded families of `metrics`, one sample per port end (counters set apart per port;
    the `errors` counters zero but on a share `erring` of the ports)."""
    every = max(1, round(1 / erring)) if erring > 0 else None

    class Registry:
        def collect(self):
            for family in text_string_to_metric_families(NODE_EXPORTER_TEXT.read_text()):
                sample = next((s for s in family.samples if s.name in metrics), None)
                if sample is None:
                    continue
                moved = Metric(family.name, family.documentation, family.type, family.unit)
                for position, (node, port) in enumerate(ends):
                    counted = sample.name not in errors or (every is not None and position % every == 0)
                    moved.add_sample(sample.name, {"node": node, "port": port}, float(seed * 1000 + position + 1) if counted else 0.0)
                yield moved

    return generate_latest(Registry())


def prometheus_cpu_s() -> float:
    """CPU seconds of the Prometheus this process started."""
    ticks = os.sysconf("SC_CLK_TCK")
    for process in Path("/proc").glob("[0-9]*"):
        try:
            fields = (process / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid() and b"prometheus" in (process / "cmdline").read_bytes():
                return (int(fields[11]) + int(fields[12])) / ticks
        except (OSError, IndexError, ValueError):
            continue
    return float("nan")


def query(url: str, promql: str) -> tuple[dict, int]:
    with urllib.request.urlopen(f"{url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}", timeout=120) as response:
        body = response.read()
    return json.loads(body)["data"], len(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=16384)
    parser.add_argument("--ports", type=int, default=16384)
    parser.add_argument("--polls", type=int, default=5)
    parser.add_argument("--scrape-interval", type=int, default=5, help="seconds")
    parser.add_argument("--window", type=int, default=60, help="rate() window, seconds (the form's default)")
    parser.add_argument("--targets", type=int, default=16)
    parser.add_argument("--erring", type=float, default=0.01, help="share of the ports whose error counters are not zero")
    chosen = parser.parse_args()
    if PROMETHEUS is None:
        sys.exit("needs Debian's prometheus binary on PATH (apt-get install prometheus)")

    spec = fat_tree(endpoints=chosen.cards, radix=64)
    index = TelemetryIndex(spec)
    ends = ([(link.a, str(link.a_port)) for link in spec.links] + [(link.b, str(link.b_port)) for link in spec.links])[: chosen.ports]
    preset = PRESETS["node_exporter_infiniband"]
    mapping = prometheus_mapping({"node": "{node}", "port": "{port}"}, preset="node_exporter_infiniband")
    metrics = {preset["tx_bytes"], preset["rx_bytes"], preset["xmit_wait"], *preset["errors"].values()}
    share = -(-len(ends) // chosen.targets)
    hosts = [f"exporter{number:02d}" for number in range(chosen.targets)]
    errors = set(preset["errors"].values())
    texts = {host: exposition(ends[number * share : (number + 1) * share], metrics, errors, chosen.erring, number) for number, host in enumerate(hosts)}
    window = chosen.window
    before_queries = [*mapping.queries(window).values()]
    before_queries += [f"rate({spec_.metric}[{window}s])" for spec_ in mapping.errors.values()] + [spec_.metric for spec_ in mapping.errors.values()]
    now_queries = [*mapping.queries(window).values(), mapping.errors_query()]
    print(f"{len(ends):,} ports x {len(metrics)} metrics = {len(ends) * len(metrics):,} series in {chosen.targets} targets, {sum(map(len, texts.values())) / 1e6:.1f} MB a scrape"
          f" every {chosen.scrape_interval} s; rate window {window} s; error counters not zero on {chosen.erring:.0%} of the ports")  # fmt: skip

    with tempfile.TemporaryDirectory(prefix="twin-bench-prometheus-") as directory, serve_hosts(texts.get) as exporter_port:
        with run_prometheus(Path(directory), exporter_port, hosts, scrape_interval=f"{chosen.scrape_interval}s") as url:
            settle = time.monotonic() + 300
            while time.monotonic() < settle:  # two scrapes of every target in the window
                data, _ = query(url, f"count(count_over_time({preset['tx_bytes']}[{window}s]) >= 2)")
                if data["result"] and int(float(data["result"][0]["value"][1])) == len(ends):
                    break
                time.sleep(1)
            figures: dict[str, list[dict]] = {"before": [], "now": []}
            ports_of: dict = {}
            counts: dict = {}
            for _ in range(chosen.polls):
                for way, promql in (("before", before_queries), ("now", now_queries)):
                    load = os.getloadavg()[0]
                    cpu, prometheus_before, wall = time.process_time(), prometheus_cpu_s(), time.perf_counter()
                    answers = [query(url, text) for text in promql]
                    wall_s, query_cpu_s = time.perf_counter() - wall, time.process_time() - cpu
                    prometheus_s = prometheus_cpu_s() - prometheus_before
                    frame_cpu = time.process_time()
                    if way == "now":
                        readings = dict(zip(mapping.queries(window), (data for data, _ in answers)))
                        counters = error_counters(index, mapping, answers[-1][0], previous=counts, ports_of=ports_of)
                        frame = rates_frame(index, mapping, readings, window_s=window, ports_of=ports_of, error_counters=counters)
                        totals = error_totals(index, counters)
                        assert frame["telemetry"]["unknown_ports"] == 0 and totals
                    figures[way].append({"queries": len(promql), "wall_s": wall_s, "query_cpu_s": query_cpu_s, "frame_cpu_s": time.process_time() - frame_cpu,
                                         "prometheus_s": prometheus_s, "bytes": sum(size for _, size in answers), "load": load})  # fmt: skip
    for way, polls in figures.items():
        median = {key: statistics.median(poll[key] for poll in polls[1:] or polls) for key in polls[0]}
        frame = f", frame and error totals {median['frame_cpu_s'] * 1e3:.0f} ms CPU" if way == "now" else ""
        print(f"[{way}] {median['queries']:.0f} queries a poll: {median['wall_s'] * 1e3:.0f} ms wall, this process {median['query_cpu_s'] * 1e3:.0f} ms CPU (HTTP, JSON){frame};"
              f" Prometheus {median['prometheus_s'] * 1e3:.0f} ms CPU; {median['bytes'] / 1e6:.1f} MB answered; load {median['load']:.1f} on {os.cpu_count()} cores")  # fmt: skip
    before, now = (statistics.median(poll["wall_s"] for poll in figures[way]) for way in ("before", "now"))
    print(f"median poll wall time now / before: {now / before:.2f}")


if __name__ == "__main__":
    main()
