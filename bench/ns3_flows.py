"""Run flows packet by packet on ns-3 (3.44, ``pip install ns3``): the packet-level peer that
bench/validate_ns3.py compares the twin with. Runs under the venv ns-3 is installed in (its
Python bindings are cppyy: importing them compiles ns-3's headers, minutes the first time),
so it takes plain JSON on stdin and prints plain JSON; no numpy, nothing of twin.

Input: ``{"nodes": N, "hosts": [node, ...], "links": [[a, b, bits_per_s, delay_s], ...],
"flows": [[source_host, target_host, bytes], ...], "steps": S, "spray": bool,
"segment_bytes": M, "buffer_bytes": B, "queue_packets": Q}``. Every link is a point-to-point
cable with its own /30 subnet; switches are plain IPv4 routers on global (shortest-path)
routing. ``spray``: ``Ipv4GlobalRouting::RandomEcmpRouting`` on, each packet takes a random
equal-cost next hop; off, every packet takes the first route (one path for all flows, ECMP
off). Every flow is one TCP connection, opened at time 0 and kept (segments of
``segment_bytes``, socket buffers of ``buffer_bytes`` so the window does not bound the rate;
queues of ``queue_packets`` per device). The flows run ``steps`` lock-step steps, as a
collective's phase does: in each step every flow sends ``bytes`` more on its connection, and
the next step starts when the last byte of the step has arrived everywhere (seen on each
sink's receive trace, so to the packet). Output: ``{"time_s": end of the last step,
"step_times_s": [end of each step], "flow_times_s": [when each flow finished its last step],
"cpu_s"}`` (a flow that has not finished after 1,000 simulated seconds reports -1).
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

struct Flow {
    Ptr<Socket> socket;
    Ptr<PacketSink> sink;
    Address peer;
    uint64_t bytesPerStep = 0;
    uint64_t allowed = 0;  // bytes the flow may have handed to TCP so far (its steps begun)
    uint64_t handed = 0;
};

std::vector<Flow> flows;
std::vector<double> stepEnds, flowEnds;
int steps = 1, step = 0, flowsLeft = 0;
uint32_t writeBytes = 0;

// Hand TCP as much of the step's bytes as its send buffer takes; called again when room frees.
void Fill(size_t f) {
    Flow& flow = flows[f];
    while (flow.handed < flow.allowed) {
        uint32_t room = flow.socket->GetTxAvailable();
        if (room == 0) return;
        uint32_t size = uint32_t(std::min<uint64_t>(std::min<uint64_t>(room, flow.allowed - flow.handed), writeBytes));
        int taken = flow.socket->Send(Create<Packet>(size));
        if (taken <= 0) return;
        flow.handed += uint64_t(taken);
    }
}

void Room(size_t f, Ptr<Socket>, uint32_t) { Fill(f); }

void BeginStep() {
    flowsLeft = int(flows.size());
    for (size_t f = 0; f < flows.size(); ++f) {
        flows[f].allowed += flows[f].bytesPerStep;
        Fill(f);
    }
}

void Open() {
    for (Flow& flow : flows) flow.socket->Connect(flow.peer);
    BeginStep();  // TCP keeps what it is handed before the handshake ends
}

void Received(size_t f, Ptr<const Packet>, const Address&) {
    Flow& flow = flows[f];
    uint64_t goal = flow.bytesPerStep * uint64_t(step + 1);
    if (flowEnds[f] >= 0 || flow.sink->GetTotalRx() < goal) return;
    flowEnds[f] = Simulator::Now().GetSeconds();  // done with this step
    if (--flowsLeft > 0) return;
    stepEnds.push_back(Simulator::Now().GetSeconds());
    if (++step == steps) { Simulator::Stop(); return; }
    for (size_t g = 0; g < flows.size(); ++g) flowEnds[g] = -1.0;
    BeginStep();
}

std::vector<double> Run(int nodeCount, const std::vector<int>& hosts, const std::vector<int>& linkA,
                        const std::vector<int>& linkB, const std::vector<double>& bps, const std::vector<double>& delay,
                        const std::vector<int>& source, const std::vector<int>& target, const std::vector<double>& bytes,
                        int stepCount, bool spray, int segment, int buffer, int queuePackets) {
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
    flows.assign(source.size(), Flow());
    flowEnds.assign(source.size(), -1.0);
    stepEnds.clear();
    steps = stepCount; step = 0; writeBytes = uint32_t(segment) * 64;
    for (size_t f = 0; f < source.size(); ++f) {
        uint16_t port = 5000 + f;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(nodes.Get(hosts[target[f]]));
        flows[f].sink = DynamicCast<PacketSink>(sinkApp.Get(0));
        flows[f].sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&Received, f));
        flows[f].bytesPerStep = uint64_t(bytes[f]);
        flows[f].socket = Socket::CreateSocket(nodes.Get(hosts[source[f]]), TcpSocketFactory::GetTypeId());
        flows[f].socket->Bind();
        flows[f].socket->SetSendCallback(MakeBoundCallback(&Room, f));
        flows[f].peer = InetSocketAddress(hostAddress[hosts[target[f]]], port);
    }
    Simulator::ScheduleNow(&Open);  // once the nodes are initialised (at time 0, in the run)
    Simulator::Stop(Seconds(1000.0));
    Simulator::Run();
    Simulator::Destroy();
    std::vector<double> out(stepEnds);
    out.insert(out.end(), flowEnds.begin(), flowEnds.end());  // step ends, then each flow's last end
    return out;
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
    steps = int(case.get("steps", 1))
    ends = [float(value) for value in cppyy.gbl.twin_ns3.Run(
        case["nodes"], ints(case["hosts"]),
        ints(link[0] for link in links), ints(link[1] for link in links),
        floats(link[2] for link in links), floats(link[3] for link in links),
        ints(flow[0] for flow in flows), ints(flow[1] for flow in flows), floats(flow[2] for flow in flows),
        steps, bool(case["spray"]), case["segment_bytes"], case["buffer_bytes"], case["queue_packets"],
    )]  # fmt: skip
    step_times, flow_times = ends[: len(ends) - len(flows)], ends[len(ends) - len(flows) :]
    finished = len(step_times) == steps
    json.dump({"time_s": step_times[-1] if finished else -1.0, "step_times_s": step_times, "flow_times_s": flow_times,
               "cpu_s": time.process_time() - started}, sys.stdout)  # fmt: skip


if __name__ == "__main__":
    main()
