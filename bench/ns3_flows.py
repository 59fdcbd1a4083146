"""Run flows packet by packet on ns-3 (3.44, ``pip install ns3``): the packet-level peer that
bench/validate_ns3.py compares the twin with. Runs under the venv ns-3 is installed in (its
Python bindings are cppyy: importing them compiles ns-3's headers, minutes the first time),
so it takes plain JSON on stdin and prints plain JSON; no numpy, nothing of twin.

Input: ``{"nodes": N, "hosts": [node, ...], "links": [[a, b, bits_per_s, delay_s], ...],
"flows": [[source_host, target_host, bytes], ...], "spray": bool, "segment_bytes": S,
"buffer_bytes": B, "queue_packets": Q}``. Every link is a point-to-point cable with its own
/30 subnet; switches are plain IPv4 routers on global (shortest-path) routing. ``spray``:
``Ipv4GlobalRouting::RandomEcmpRouting`` on, each packet takes a random equal-cost next hop;
off, every packet takes the first route (one path for all flows, ECMP off). Every flow is a
TCP bulk send started at time 0 (segments of ``segment_bytes``, socket buffers of
``buffer_bytes`` so the window does not bound the rate; queues of ``queue_packets`` per
device). Output: ``{"time_s": last completion, "flow_times_s": [...], "cpu_s"}`` (a flow that has
not finished after 1,000 simulated seconds reports -1).
"""

import json
import sys
import time

CODE = r"""
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

namespace twin_ns3 {
using namespace ns3;

std::vector<Ptr<PacketSink>> sinks;
std::vector<uint64_t> wanted;
std::vector<double> finished;

// Completion is seen by polling the sinks' received bytes (ns-3 has no "flow done" event).
void Poll(double every) {
    bool all = true;
    for (size_t i = 0; i < sinks.size(); ++i) {
        if (finished[i] < 0 && sinks[i]->GetTotalRx() >= wanted[i]) finished[i] = Simulator::Now().GetSeconds();
        all = all && finished[i] >= 0;
    }
    if (all) Simulator::Stop();
    else Simulator::Schedule(Seconds(every), &Poll, every);
}

std::vector<double> Run(int nodeCount, const std::vector<int>& hosts, const std::vector<int>& linkA,
                        const std::vector<int>& linkB, const std::vector<double>& bps, const std::vector<double>& delay,
                        const std::vector<int>& source, const std::vector<int>& target, const std::vector<double>& bytes,
                        bool spray, int segment, int buffer, int queuePackets, double poll) {
    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(spray));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buffer));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buffer));
    NodeContainer nodes;
    nodes.Create(nodeCount);
    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.0.0.0", "255.255.255.252");
    std::map<int, Ipv4Address> hostAddress;
    for (size_t i = 0; i < linkA.size(); ++i) {
        PointToPointHelper cable;
        cable.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(bps[i]))));
        cable.SetChannelAttribute("Delay", TimeValue(Seconds(delay[i])));
        cable.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(std::to_string(queuePackets) + "p")));
        NetDeviceContainer ends = cable.Install(nodes.Get(linkA[i]), nodes.Get(linkB[i]));
        Ipv4InterfaceContainer interfaces = addresses.Assign(ends);
        addresses.NewNetwork();
        if (!hostAddress.count(linkA[i])) hostAddress[linkA[i]] = interfaces.GetAddress(0);
        if (!hostAddress.count(linkB[i])) hostAddress[linkB[i]] = interfaces.GetAddress(1);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    sinks.clear(); wanted.clear(); finished.clear();
    for (size_t f = 0; f < source.size(); ++f) {
        uint16_t port = 5000 + f;
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sink.Install(nodes.Get(hosts[target[f]]));
        sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));
        BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(hostAddress[hosts[target[f]]], port));
        send.SetAttribute("MaxBytes", UintegerValue(uint64_t(bytes[f])));
        send.SetAttribute("SendSize", UintegerValue(segment * 64));
        send.Install(nodes.Get(hosts[source[f]]));
        wanted.push_back(uint64_t(bytes[f]));
        finished.push_back(-1.0);
    }
    Simulator::Schedule(Seconds(poll), &Poll, poll);
    Simulator::Stop(Seconds(1000.0));
    Simulator::Run();
    Simulator::Destroy();
    return finished;
}
}
"""


def main() -> None:
    case = json.load(sys.stdin)
    started = time.process_time()
    from ns import ns  # noqa: F401 - loads ns-3's libraries and headers into cppyy
    import cppyy

    cppyy.cppdef(CODE)
    std = cppyy.gbl.std
    ints = lambda values: std.vector["int"]([int(value) for value in values])  # noqa: E731
    floats = lambda values: std.vector["double"]([float(value) for value in values])  # noqa: E731
    links, flows = case["links"], case["flows"]
    times = cppyy.gbl.twin_ns3.Run(
        case["nodes"], ints(case["hosts"]),
        ints(link[0] for link in links), ints(link[1] for link in links),
        floats(link[2] for link in links), floats(link[3] for link in links),
        ints(flow[0] for flow in flows), ints(flow[1] for flow in flows), floats(flow[2] for flow in flows),
        bool(case["spray"]), case["segment_bytes"], case["buffer_bytes"], case["queue_packets"], case.get("poll_s", 1e-6),
    )  # fmt: skip
    flow_times = [float(value) for value in times]
    json.dump({"time_s": max(flow_times), "flow_times_s": flow_times, "cpu_s": time.process_time() - started}, sys.stdout)


if __name__ == "__main__":
    main()
