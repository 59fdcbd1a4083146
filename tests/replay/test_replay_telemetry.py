"""Live telemetry: port counters into replay-shaped frames, with wraps, resets and unknown ports."""

import json

import pytest

from twin.replay import TelemetryError, decode_frame, telemetry_frame
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

# An InfiniBand-like fabric without cards: two HCAs on one switch, 400 Gb/s = 50 GB/s per direction.
SPEC = FabricSpec(
    "ib",
    (
        NodeSpec("ib:hca1", "nic", "node01/mlx5_0", host="node01"),
        NodeSpec("ib:hca2", "nic", "node02/mlx5_0", host="node02"),
        NodeSpec("ib:sw", "switch", "leaf01", tier="leaf", radix=40),
    ),
    (
        LinkSpec("ib:hca1", "1", "ib:sw", "1", 400, 10, domain="scale-out"),
        LinkSpec("ib:sw", "2", "ib:hca2", "1", 400, 10, domain="scale-out"),
    ),
)
LINE_RATE = 50e9  # bytes/s


def sample(node, port, t, **fields):
    return {"port": {"node": node, "port": port}, "timestamp": t, **fields}


def test_byte_counters_give_utilisation_per_direction():
    first, state = telemetry_frame(SPEC, [sample("ib:hca1", "1", 100.0, tx_bytes=0, rx_bytes=0)], previous=None)
    assert first["telemetry"]["first_samples"] == 1 and decode_frame(first).utilization.max() == 0
    second, state = telemetry_frame(SPEC, [sample("ib:hca1", "1", "1970-01-01T00:01:42Z", tx_bytes=int(LINE_RATE), rx_bytes=int(LINE_RATE / 4))], previous=state)
    frame = decode_frame(second)
    assert (frame.t_s, frame.t_end_s) == (100.0, 102.0)
    assert frame.utilization[0] == pytest.approx(0.5, abs=1 / 255) and frame.utilization[1] == 0
    top = second["top"][0]
    assert (top["from"], top["to"], top["utilization"]) == ("ib:hca1", "ib:sw", 0.5)
    assert second["top"][1]["from"] == "ib:sw" and second["top"][1]["utilization"] == 0.125
    assert second["source"] == "telemetry" and second["telemetry"]["links_measured"] == 1
    assert json.loads(json.dumps(state)) == state and json.loads(json.dumps(second)) == second


def test_counter_wrap_and_reset():
    _, state = telemetry_frame(SPEC, [sample("ib:sw", "2", 0.0, tx_bytes=2**32 - 1000, rx_bytes=5_000_000_000_000)], previous=None)
    frame, state = telemetry_frame(SPEC, [sample("ib:sw", "2", 1.0, tx_bytes=24_999_000, rx_bytes=10_000_000_000)], previous=state)
    report = frame["telemetry"]
    assert (report["counter_wraps"], report["counter_resets"]) == (1, 1)
    arcs = {(record["from"], record["to"]): record["utilization"] for record in frame["top"]}
    assert arcs[("ib:sw", "ib:hca2")] == pytest.approx(25e6 / LINE_RATE, abs=1e-4)  # wrapped: 1,000 + 24,999,000 bytes
    assert arcs[("ib:hca2", "ib:sw")] == pytest.approx(0.2)  # reset: 10 GB since the reset


def test_xmit_wait_and_pfc_pauses_show_congestion():
    _, state = telemetry_frame(SPEC, [
        sample("ib:hca1", "1", 0.0, tx_bytes=0, xmit_wait=0),
        sample("ib:hca2", "1", 0.0, tx_bytes=0, pfc_pauses=10),
    ], previous=None)  # fmt: skip
    frame, _ = telemetry_frame(SPEC, [
        sample("ib:hca1", "1", 1.0, tx_bytes=int(0.9 * LINE_RATE), xmit_wait=int(0.6 * LINE_RATE / 8)),
        sample("ib:hca2", "1", 1.0, tx_bytes=int(0.3 * LINE_RATE), pfc_pauses=11),
    ], previous=state)  # fmt: skip
    decoded = decode_frame(frame)
    assert decoded.utilization[0] == pytest.approx(0.9, abs=1 / 255)
    assert decoded.congestion[0] == pytest.approx(1.5, abs=2 / 255)  # 0.9 sent + 0.6 waiting to be sent
    assert decoded.congestion[1] == pytest.approx(1.0, abs=2 / 255)  # paused by its peer
    assert frame["totals"]["max_congestion"] == pytest.approx(1.5)


def test_utilisation_samples_need_no_previous_state():
    frame, _ = telemetry_frame(SPEC, [sample("ib:sw", "1", 5, utilization={"tx": 0.25, "rx": 0.75})], previous=None)
    decoded = decode_frame(frame)
    assert decoded.utilization[0] == pytest.approx(0.75, abs=1 / 255)  # the busier direction of link 0
    assert decoded.switch_out.tolist() == pytest.approx([0.125], abs=1 / 255)  # one of the switch's two ports at 25 %


def test_unknown_ports_stale_samples_and_error_counters_are_reported():
    _, state = telemetry_frame(SPEC, [sample("ib:hca1", "1", 0, tx_bytes=0, errors={"symbol_errors": 3})], previous=None)
    frame, _ = telemetry_frame(SPEC, [
        sample("ib:hca1", "1", 1, tx_bytes=10, errors={"symbol_errors": 7, "link_downed": 0}),
        sample("ib:hca1", "1", 0.5, tx_bytes=20),
        sample("ib:nowhere", "3", 1, tx_bytes=10),
        sample("ib:sw", "40", 1, tx_bytes=10),
    ], previous=state)  # fmt: skip
    report = frame["telemetry"]
    assert report["unknown_ports"] == 2 and report["unknown"] == ["ib:nowhere:3", "ib:sw:40"]
    assert report["stale_samples"] == 1 and report["samples"] == 4
    assert report["errors"] == [{"node": "ib:hca1", "port": "1", "link": 0, "counters": {"symbol_errors": 4}}]


def test_malformed_batches_are_rejected_with_their_problems():
    with pytest.raises(TelemetryError) as caught:
        telemetry_frame(SPEC, [
            sample("ib:hca1", "1", "yesterday", tx_bytes=-1),
            {"port": "ib:hca1/1", "timestamp": 1, "utilization": 1.5},
            sample("ib:hca1", "1", 1),
            "not a sample",
        ], previous=None)  # fmt: skip
    assert caught.value.problems == (
        "samples[0].timestamp: 'yesterday'; expected an ISO 8601 time or seconds since the epoch",
        "samples[0].tx_bytes: -1; expected a non-negative integer counter",
        "samples[1].port: 'ib:hca1/1'; expected {\"node\": \"<node id>\", \"port\": \"<port>\"}",
        "samples[1].utilization: 1.5; expected a fraction 0..1 or {\"tx\": 0..1, \"rx\": 0..1}",
        "samples[1]: no measurement; expected tx_bytes/rx_bytes counters, utilization or error counters",
        "samples[2]: no measurement; expected tx_bytes/rx_bytes counters, utilization or error counters",
        "samples[3]: str; expected an object",
    )
    with pytest.raises(TelemetryError, match="must be a list"):
        telemetry_frame(SPEC, {"port": {}}, previous=None)
