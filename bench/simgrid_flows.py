"""Run flows on SimGrid's flow-level max-min model: the peer that bench/validate_simgrid.py
compares the twin with. Runs under Debian's /usr/bin/python3 (python3-simgrid 3.32 is built
for it), so it takes plain JSON on stdin and prints plain JSON; no numpy, nothing of twin.

Input: ``{"hosts": H, "links": [[bytes_per_s, latency_s], ...], "steps": S,
"flows": [[source, target, bytes, [link, ...]], ...]}``. Every flow of a step starts at once
on its own route (one per source and target: the twin's); the next step starts when the last
one ends. Output: ``{"time_s", "cpu_s", "comms"}``.

Model: CM02 (pure max-min sharing, a flow's time is its route latency plus its bytes at its
share) with SimGrid's TCP corrections off: latency and bandwidth factors 1, no weight on
latency, no cross-traffic, TCP window bound out of reach. The solver's precision is 1e-6:
tighter (1e-7, 1e-9) crashes SimGrid 3.32 (segmentation fault, or abort) on the 65,280 flows of
all-to-all at 256 cards, and 1e-6 still gives the ring and all-to-all to four digits.
"""

import json
import sys
import time

import simgrid

CONFIG = [
    "network/model:CM02",
    "network/latency-factor:1",
    "network/bandwidth-factor:1",
    "network/weight-S:0",
    "network/crosstraffic:0",
    "network/TCP-gamma:1e18",
    "maxmin/precision:1e-6",
]


def main() -> None:
    case = json.load(sys.stdin)
    started = time.process_time()
    engine = simgrid.Engine(["simgrid_flows", *(f"--cfg={item}" for item in CONFIG), "--log=root.thres:critical"])
    zone = simgrid.NetZone.create_full_zone("fabric")
    hosts = [zone.create_host(f"h{index}", 1e9) for index in range(case["hosts"])]
    links = []
    for index, (bandwidth, latency) in enumerate(case["links"]):
        link = zone.create_link(f"l{index}", bandwidth)
        link.set_latency(latency)
        links.append(link.seal())
    routed = set()
    for source, target, _, route in case["flows"]:
        if (source, target) not in routed:
            routed.add((source, target))
            zone.add_route(hosts[source].netpoint, hosts[target].netpoint, None, None, [simgrid.LinkInRoute(links[link]) for link in route], False)
    zone.seal()
    done = {}

    def driver() -> None:
        for _ in range(case["steps"]):
            simgrid.Comm.wait_all([simgrid.Comm.sendto_async(hosts[source], hosts[target], int(size)) for source, target, size, _ in case["flows"]])
        done["time_s"] = simgrid.Engine.clock

    simgrid.Actor.create("driver", hosts[0], driver)
    engine.run()
    json.dump({"time_s": done["time_s"], "cpu_s": time.process_time() - started, "comms": case["steps"] * len(case["flows"])}, sys.stdout)


if __name__ == "__main__":
    main()
