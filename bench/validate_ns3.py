"""The twin against a packet-level peer, ns-3 3.44, on issue 13's 16-host 2:1 leaf-spine case.

Run from the repository root: ``.venv/bin/python bench/validate_ns3.py [--mib 16] [--gbps 400]``.

Host i sends ``--mib`` MiB to host i + 4 on the 16-host, 2:1 leaf-spine (k = 6: 4 leaves of 4
hosts, 2 uplinks each, 2 spines; ``--gbps`` links, 10 ns cables, 100 ns switches), every flow
at once. Printed, with each peer's CPU cost:

- the twin, transport overheads zeroed, per-flow hash, pinned (d-mod-k) and ideal spray;
- SimGrid 3.32 (flow level, max-min) on the twin's routes, where ``python3-simgrid`` is installed
  (``bench/validate_simgrid.py`` has the details);
- ns-3 packet level (``bench/ns3_flows.py``): TCP bulk sends, 1,448-byte segments, drop-tail
  queues, global routing with ECMP off (every packet on the first route: one path) and with
  per-packet random ECMP (spray). Each link's delay is the mean of the twin's two directions
  (cable, plus the switch entered), so a path's latency is the twin's.

ns-3 is ``pip install ns3`` (3.44) into a venv of its own (``NS3_PYTHON``, default
``/tmp/ns3venv/bin/python``): it is not a dependency of the product and CI never installs it.
Without it the ns-3 lines say why and the rest still runs. Its Python bindings compile ns-3's
headers when imported: about 30 s of CPU per run here, included in its CPU figure.

Issue 13 quotes single path 10.18 ms and spray 6.19 ms for this case, without a message size:
``--mib 28.6102294921875 --gbps 100`` (30 MB at 100 Gb/s) gives ns-3 10.11 and 5.93 ms,
``--mib 114.44091796875`` (120 MB at 400 Gb/s) 10.12 and 6.46 ms (docs/simulation.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from validate_simgrid import ZERO_OVERHEADS, flows_case, run_simgrid, simgrid_available  # noqa: E402

from twin.simcore.compile import route  # noqa: E402
from twin.simcore.congestion import max_min_rates  # noqa: E402
from twin.simcore.generate import fat_tree  # noqa: E402
from twin.simcore.simulate import Simulator  # noqa: E402

NS3_PYTHON = os.environ.get("NS3_PYTHON", "/tmp/ns3venv/bin/python")
RUNNER = Path(__file__).resolve().parent / "ns3_flows.py"
MIB = 2**20


def ns3_missing() -> str | None:
    """None when ns-3's Python module can be found (found, not imported: that takes ~30 s)."""
    if not Path(NS3_PYTHON).exists():
        return f"no Python at {NS3_PYTHON} (python3.11 -m venv /tmp/ns3venv && /tmp/ns3venv/bin/pip install ns3; or set NS3_PYTHON)"
    probe = subprocess.run([NS3_PYTHON, "-c", "import importlib.util as u; print(bool(u.find_spec('ns')))"], capture_output=True, text=True, check=False)
    return None if probe.stdout.strip() == "True" else f"ns-3's Python module is not installed at {NS3_PYTHON} (pip install ns3)"


def ns3_case(simulator: Simulator, sources: np.ndarray, targets: np.ndarray, size: float, spray: bool) -> dict:
    """The fabric as ns-3 nodes and point-to-point cables, the flows as host pairs."""
    compiled = simulator.compiled
    spec = compiled.spec
    index = spec.node_index()
    links = []
    for number, link in enumerate(spec.links):
        arcs = np.flatnonzero(compiled.arc_link == number)  # its two directions
        links.append([index[link.a], index[link.b], float(compiled.arc_raw_capacity[arcs].min()) * 8, float(compiled.arc_latency[arcs].mean())])
    hosts = [int(node) for node in compiled.card_nodes]
    return {
        "nodes": len(spec.nodes),
        "hosts": hosts,
        "links": links,
        "flows": [[int(source), int(target), size] for source, target in zip(sources, targets)],
        "spray": spray,
        "segment_bytes": 1448,
        "buffer_bytes": 64 * MIB,
        "queue_packets": 1000,
    }


def run_ns3(case: dict) -> dict:
    done = subprocess.run([NS3_PYTHON, str(RUNNER)], input=json.dumps(case), capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"ns-3 failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=16.0, help="MiB each host sends (default 16: ns-3 takes about 30 s of CPU a mode)")
    parser.add_argument("--gbps", type=float, default=400.0, help="link speed, Gb/s (default 400)")
    options = parser.parse_args()
    size = options.mib * MIB
    spec = fat_tree(endpoints=16, radix=6, oversubscription=2, cards_per_host=1, link_gbps=options.gbps, name="leaf-spine-16-2to1")
    simulator = Simulator(spec, transport=ZERO_OVERHEADS)
    compiled = simulator.compiled
    sources = np.arange(16)
    targets = (sources + 4) % 16
    sizes = np.full(16, size)
    print(f"== 16 hosts, 2:1 leaf-spine (k = 6), {options.gbps:g} Gb/s links, host i -> i + 4, {options.mib:g} MiB each")
    missing_simgrid = simgrid_available()
    for mode in ("hash", "pinned", "spray"):
        started = time.process_time()
        routes = route(compiled, sources, targets, mode=mode)
        rates = max_min_rates(routes.incidence, compiled.arc_capacity)
        twin_time = float(np.max(routes.latency + sizes / rates))
        line = f"twin {mode:<6} {twin_time * 1e3:8.3f} ms ({time.process_time() - started:5.3f} s CPU)"
        if missing_simgrid:
            line += f"   SimGrid not run: {missing_simgrid}"
        else:
            peer = run_simgrid(flows_case(compiled, routes, sizes, sources, targets))
            line += f"   SimGrid {peer['time_s'] * 1e3:8.3f} ms ({peer['cpu_s']:5.3f} s CPU)"
        print(line, flush=True)
    missing_ns3 = ns3_missing()
    if missing_ns3:
        print(f"ns-3 not run: {missing_ns3}")
        return
    for label, spray in (("one path (ECMP off)", False), ("spray (per-packet ECMP)", True)):
        try:
            peer = run_ns3(ns3_case(simulator, sources, targets, size, spray))
        except RuntimeError as error:
            print(f"ns-3 {label}: {error}")
            continue
        flow_times = np.array(peer["flow_times_s"])
        unfinished = int((flow_times < 0).sum())
        print(f"ns-3 {label:<24} {peer['time_s'] * 1e3:8.3f} ms ({peer['cpu_s']:6.1f} s CPU)   flows done from {flow_times.min() * 1e3:.3f} ms"
              + (f"   {unfinished} flows unfinished" if unfinished else ""), flush=True)
    print(f"issue 13's reference: single path 10.18 ms, spray 6.19 ms (ratio {10.18 / 6.19:.3f})")


if __name__ == "__main__":
    main()
