"""A domain's framing (payload per frame byte on the wire) and what it changes (issue 13)."""

import pytest

from twin.simcore.errors import TwinCoreError
from twin.simcore.generate import fat_tree, supernode
from twin.simcore.simulate import Simulator
from twin.simcore.transport import WIRE_FORMATS, Transport

# Frame bytes on the wire for the payload of one frame, counted header by header.
EXPECTED_FRAME_BYTES = {
    "infiniband": 4096 + 8 + 12 + 4 + 2,  # LRH, BTH, ICRC, VCRC
    "roce": 4096 + 12 + 4 + 8 + 20 + 14 + 4 + 8 + 12,  # BTH, ICRC, UDP, IPv4, Ethernet, FCS, preamble, gap
    "nvlink": 256 + 16,  # 16 data flits and their header flit
    "tcp": 1448 + 32 + 20 + 14 + 4 + 8 + 12,  # TCP with timestamps, IPv4, Ethernet, FCS, preamble, gap
}


@pytest.mark.parametrize("name", sorted(WIRE_FORMATS))
def test_wire_efficiency_is_payload_over_frame_bytes(name):
    domain = Transport().updated({"scale_out": WIRE_FORMATS[name]}).scale_out
    payload = WIRE_FORMATS[name]["frame_payload_bytes"]
    assert domain.wire_efficiency == pytest.approx(payload / EXPECTED_FRAME_BYTES[name], rel=1e-12)
    assert domain.link_efficiency == pytest.approx(domain.wire_efficiency * domain.efficiency, rel=1e-12)


def test_defaults_keep_the_seed_link_rate_and_the_measured_scale_out_share():
    transport = Transport()
    assert transport.scale_up.wire_efficiency == 1.0  # a scale-up link's rate is its data rate
    # InfiniBand framing times the rest: the 46-48 GB/s of a 400G NDR port, 0.94 of it.
    assert transport.scale_out.wire_efficiency == pytest.approx(4096 / 4122, rel=1e-12)
    assert transport.scale_out.link_efficiency == pytest.approx(0.94, abs=1e-4)


def test_framing_scales_the_bandwidth_term_and_nothing_else():
    """The seed case (1,024 cards, 342 MB, 50 GB/s): 13.67 ms with the default scale-up domain;
    NVLink's flits on the same links would cost 1/16 more, every other term unchanged."""
    plain = Simulator(supernode()).run("allreduce", 342e6, "ring", "Simple", top_links=0)
    flits = Simulator(supernode(), transport={"scale_up": WIRE_FORMATS["nvlink"]}).run("allreduce", 342e6, "ring", "Simple", top_links=0)
    assert plain["bandwidth_s"] == pytest.approx(13.67e-3, rel=0.002)
    assert flits["bandwidth_s"] == pytest.approx(plain["bandwidth_s"] * 272 / 256, rel=1e-9)
    assert flits["latency_s"] == pytest.approx(plain["latency_s"], rel=1e-9)


def test_framing_only_touches_its_own_domain():
    spec = fat_tree(endpoints=32, radix=8, cards_per_host=4)  # scale-up links only
    plain = Simulator(spec).run("allreduce", 2**26, "ring", "Simple", top_links=0)
    other = Simulator(spec, transport={"scale_out": WIRE_FORMATS["tcp"]}).run("allreduce", 2**26, "ring", "Simple", top_links=0)
    assert other["time_s"] == plain["time_s"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [({"frame_payload_bytes": 0}, "frame_payload_bytes 0; expected at least 1 byte"),
     ({"frame_overhead_bytes": -1}, "frame_overhead_bytes -1; expected 0 or more bytes")],
)  # fmt: skip
def test_non_physical_frames_are_refused(overrides, message):
    with pytest.raises(TwinCoreError, match=message):
        Transport().updated({"scale_out": overrides})


def test_a_frame_is_part_of_the_plain_transport():
    plain = Transport().to_dict()
    assert plain["scale_out"]["frame_payload_bytes"] == 4096 and plain["scale_out"]["frame_overhead_bytes"] == 26
    assert Transport().updated(plain) == Transport()
