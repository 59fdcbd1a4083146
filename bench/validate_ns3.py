"""The twin against a packet-level peer, ns-3 3.44, on issue 13's 16-host 2:1 leaf-spine.

Run from the repository root: ``.venv/bin/python bench/validate_ns3.py [--case ring] [--mib 16] [--gbps 400]``.

The fabric: 16 hosts on a 2:1 leaf-spine (k = 6: 4 leaves of 4 hosts, 2 uplinks each, 2
spines; ``--gbps`` links, 10 ns cables, 100 ns switches). The cases (``--case``, any of them,
all by default), each host with ``--mib`` MiB:

- ``permutation``: host i sends its MiB to host i + 4, every flow at once (issue 13's case);
- ``ring``: ring AllReduce of a ``--mib`` MiB buffer, 2 (p - 1) = 30 lock-step steps of
  1/16 of it from each host to the next (ring order = host order: 4 of the 16 flows cross
  the spines);
- ``alltoall``: direct AllToAll of a ``--mib`` MiB buffer, every host to the 15 others at once
  (the spines carry 3/4 of it at half the hosts' rate).

Printed for each, with each peer's costs (CPU and wall seconds):

- the twin, transport overheads zeroed, per ECMP mode: "one path" (the fabric reduced to its
  first spine, as ns-3's ECMP off routes it), per-flow hash, pinned (d-mod-k), ideal spray;
- the same with ns-3's framing as its wire efficiency (``NS3_FRAMING``: 1,448 bytes of TCP
  payload in 1,502 on the wire, the domain's ``frame_payload_bytes`` and
  ``frame_overhead_bytes``);
- SimGrid 3.32 (flow level, max-min) on the twin's routes, where ``python3-simgrid`` is
  installed (``bench/validate_simgrid.py`` has the details);
- ns-3 packet level (``bench/ns3_flows.py``): one TCP connection per flow, kept over the steps,
  1,448-byte segments, drop-tail queues, global routing with ECMP off (every packet on the
  first route: one path) and with per-packet random ECMP (spray). Each link's delay is the mean
  of the twin's two directions (cable, plus the switch entered), so a path's latency is the
  twin's. The ratio to the framed twin is what TCP itself costs (slow start, ACK clocking,
  and sprayed, reordering taken for loss).

ns-3 is ``pip install ns3==3.44.post0`` into a venv of its own (``NS3_PYTHON``, default
``/tmp/ns3venv/bin/python``): it is not a dependency of the product; ``.ci/run`` installs it there
for ``tests/simcore/test_simcore_ns3.py``.
Without it the ns-3 lines say why and the rest still runs. Its Python bindings compile ns-3's
headers when imported: about 10-30 s of CPU per run here, included in its CPU figure.

Issue 13 quotes single path 10.18 ms and spray 6.19 ms for the permutation, without a message
size: ``--case permutation --mib 28.6102294921875 --gbps 100`` (30 MB at 100 Gb/s) is one
setup that reproduces it (docs/simulation.md has the figures).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from validate_simgrid import ZERO_OVERHEADS, flows_case, run_simgrid, simgrid_available  # noqa: E402

from twin.simcore.algorithms import phases_for  # noqa: E402
from twin.simcore.compile import flow_keys, route  # noqa: E402
from twin.simcore.congestion import max_min_rates  # noqa: E402
from twin.simcore.generate import fat_tree  # noqa: E402
from twin.simcore.simulate import Simulator  # noqa: E402

NS3_PYTHON = os.environ.get("NS3_PYTHON", "/tmp/ns3venv/bin/python")
RUNNER = Path(__file__).resolve().parent / "ns3_flows.py"
MIB = 2**20
SEGMENT_BYTES = 1448
# ns-3's frame of one segment on a point-to-point cable: TCP 20 + 12 of timestamps (on by
# default), IPv4 20, PPP 2 (no preamble, FCS or gap): 1,448 bytes of payload in 1,502.
NS3_FRAMING = {"frame_payload_bytes": SEGMENT_BYTES, "frame_overhead_bytes": 54}
NS3_TRANSPORT = {domain: {**ZERO_OVERHEADS[domain], **NS3_FRAMING} for domain in ZERO_OVERHEADS}
CASES = {"permutation": None, "ring": ("allreduce", "ring"), "alltoall": ("alltoall", "direct")}  # collective, algorithm


def ns3_missing() -> str | None:
    """None when ns-3's Python module can be found (found, not imported: that takes ~30 s)."""
    if not Path(NS3_PYTHON).exists():
        return f"no Python at {NS3_PYTHON} (python3.11 -m venv /tmp/ns3venv && /tmp/ns3venv/bin/pip install ns3==3.44.post0; or set NS3_PYTHON)"
    probe = subprocess.run([NS3_PYTHON, "-c", "import importlib.util as u; print(bool(u.find_spec('ns')))"], capture_output=True, text=True, check=False)
    return None if probe.stdout.strip() == "True" else f"ns-3's Python module is not installed at {NS3_PYTHON} (pip install ns3==3.44.post0)"


def ns3_case(simulator: Simulator, sources: np.ndarray, targets: np.ndarray, size: float, steps: int, spray: bool) -> dict:
    """The fabric as ns-3 nodes and point-to-point cables, the flows as host pairs."""
    compiled = simulator.compiled
    spec = compiled.spec
    index = spec.node_index()
    links = []
    for number, link in enumerate(spec.links):
        arcs = np.flatnonzero(compiled.arc_link == number)  # its two directions
        links.append([index[link.a], index[link.b], float(compiled.arc_raw_capacity[arcs].min()) * 8, float(compiled.arc_latency[arcs].mean())])
    return {
        "nodes": len(spec.nodes),
        "hosts": [int(node) for node in compiled.card_nodes],
        "links": links,
        "flows": [[int(source), int(target), size] for source, target in zip(sources, targets)],
        "steps": steps,
        "spray": spray,
        "segment_bytes": SEGMENT_BYTES,
        "buffer_bytes": 64 * MIB,
        "queue_packets": 1000,
    }


def run_ns3(case: dict) -> dict:
    """``case`` on ns-3: its answer (bench/ns3_flows.py) and ``wall_s``, the run's wall time."""
    started = time.perf_counter()
    done = subprocess.run([NS3_PYTHON, str(RUNNER)], input=json.dumps(case), capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"ns-3 failed: {done.stderr[-2000:]}")
    return {**json.loads(done.stdout), "wall_s": time.perf_counter() - started}


def leaf_spine(gbps: float):
    return fat_tree(endpoints=16, radix=6, oversubscription=2, cards_per_host=1, link_gbps=gbps, name="leaf-spine-16-2to1")


def flows_of(case: str, size: float) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Sources, targets (card indices = host order), bytes per flow and lock-step steps."""
    if case == "permutation":
        sources = np.arange(16)
        return sources, (sources + 4) % 16, size, 1
    collective, algorithm = CASES[case]
    (phase,) = phases_for(collective, algorithm, size, 16)
    return phase.sources, phase.targets, phase.bytes_per_flow, phase.steps


def first_spine_only(spec):
    """The fabric as ns-3 routes it with ECMP off (every packet on the first route found): the
    links of every spine but the first are left out, so all flows between leaves share it."""
    others = {node.id for node in spec.nodes if node.tier == "spine"} - {next(node.id for node in spec.nodes if node.tier == "spine")}
    return replace(spec, links=tuple(replace(link, state="down") if {link.a, link.b} & others else link for link in spec.links))


# Twin modes: "one path" is hashing on the fabric reduced to its first spine (ns-3's ECMP off).
MODES = {"one path": "hash", "hash": "hash", "pinned": "pinned", "spray": "spray"}


def twin_time(case: str, spec, transport: dict, mode: str, size: float) -> tuple[float, str, object, object]:
    """The twin's time of ``case`` (the collectives as ``Simulator.run`` answers them; the
    permutation as one pattern: routes, max-min, latency + bytes / rate), its costs (CPU and
    wall seconds, as text), the compiled fabric and the routes of its flows (as the simulator
    keys them: one channel)."""
    started, started_wall = time.process_time(), time.perf_counter()
    simulator = Simulator(first_spine_only(spec) if mode == "one path" else spec, transport=transport, ecmp=MODES[mode])
    compiled = simulator.compiled
    sources, targets, flow_bytes, _ = flows_of(case, size)
    routes = route(compiled, sources, targets, mode=MODES[mode], flow_keys=flow_keys(compiled, sources, targets))
    if case == "permutation":
        answer = float(np.max(routes.latency + flow_bytes / max_min_rates(routes.incidence, compiled.arc_capacity)))
    else:
        collective, algorithm = CASES[case]
        answer = simulator.run(collective, size, algorithm, "Simple", top_links=0)["time_s"]
    return answer, costs(time.process_time() - started, time.perf_counter() - started_wall), compiled, routes


def costs(cpu_s: float, wall_s: float) -> str:
    return f"{cpu_s:.3f} s CPU, {wall_s:.3f} s wall"


def run_case(case: str, spec, size: float, ns3_reason: str | None, simgrid_reason: str | None) -> None:
    sources, targets, flow_bytes, steps = flows_of(case, size)
    print(f"-- {case}: {len(sources)} flows of {flow_bytes / MIB:g} MiB, {steps} step(s)", flush=True)
    framed = {}
    for mode in MODES:
        zeroed, cpu, compiled, routes = twin_time(case, spec, ZERO_OVERHEADS, mode, size)
        framed[mode], framed_cpu, _, _ = twin_time(case, spec, NS3_TRANSPORT, mode, size)
        line = f"twin {mode:<8} {zeroed * 1e3:8.3f} ms ({cpu}); with ns-3's framing {framed[mode] * 1e3:8.3f} ms ({framed_cpu})"
        if simgrid_reason:
            line += f"   SimGrid not run: {simgrid_reason}"
        else:
            started = time.perf_counter()
            peer = run_simgrid(flows_case(compiled, routes, np.full(len(sources), flow_bytes), sources, targets, steps=steps))
            line += f"   SimGrid {peer['time_s'] * 1e3:8.3f} ms ({costs(peer['cpu_s'], time.perf_counter() - started)})"
        print(line, flush=True)
    if ns3_reason:
        print(f"ns-3 not run: {ns3_reason}")
        return
    simulator = Simulator(spec, transport=ZERO_OVERHEADS)
    for label, spray, reference in (("one path (ECMP off)", False, "one path"), ("spray (per-packet ECMP)", True, "spray")):
        try:
            peer = run_ns3(ns3_case(simulator, sources, targets, flow_bytes, steps, spray))
        except RuntimeError as error:
            print(f"ns-3 {label}: {error}")
            continue
        if peer["time_s"] < 0:
            print(f"ns-3 {label}: {len(peer['step_times_s'])} of {steps} steps done in 1,000 simulated seconds")
            continue
        print(f"ns-3 {label:<24} {peer['time_s'] * 1e3:8.3f} ms ({costs(peer['cpu_s'], peer['wall_s'])})   "
              f"x{peer['time_s'] / framed[reference]:.3f} the framed twin ({reference})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="case to run (repeat for several; default all)")
    parser.add_argument("--mib", type=float, default=16.0, help="MiB each host sends or reduces (default 16: ns-3 takes about a minute of CPU a run)")
    parser.add_argument("--gbps", type=float, default=400.0, help="link speed, Gb/s (default 400)")
    options = parser.parse_args()
    spec = leaf_spine(options.gbps)
    print(f"== 16 hosts, 2:1 leaf-spine (k = 6), {options.gbps:g} Gb/s links, {options.mib:g} MiB a host")
    simgrid_reason, ns3_reason = simgrid_available(), ns3_missing()
    for case in options.case or sorted(CASES, key=list(CASES).index):
        run_case(case, spec, options.mib * MIB, ns3_reason, simgrid_reason)
    print(f"issue 13's reference (permutation): single path 10.18 ms, spray 6.19 ms (ratio {10.18 / 6.19:.3f})")


if __name__ == "__main__":
    main()
