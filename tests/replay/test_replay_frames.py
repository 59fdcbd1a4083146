"""Frames: complete snapshots, plain JSON, compact; the stored timeline reopens without recomputing."""

import base64
import json
import os
from pathlib import Path

import numpy as np
import pytest

from twin.replay import ReplayOptions, Timeline, bind_trace, decode_frame, frames, replay_trace, sample_timeline
from twin.replay.encoding import FRAME_ARRAYS, FRAME_MESSAGE_VERSION, decode_bytes, decode_frame_message, encode_bytes, encode_frame_message
from twin.replay.layout import FabricLayout
from twin.replay.timeline import MAX_ACTIVE_LISTED, FrameBuilder
from twin.simcore.errors import TwinCoreError
from twin.simcore.generate import fat_tree, supernode
from twin.traces.model import CollectiveEvent, FlowEvent, RankBinding, Trace

SPEC = supernode(cards=64, switch_radix=16)
CARDS = [card.id for card in SPEC.cards()]
PLAIN_TYPES = (dict, list, str, int, float, bool, type(None))


def bound(*events):
    return bind_trace(SPEC, Trace("frames", [RankBinding(rank, card) for rank, card in enumerate(CARDS)], events))


@pytest.fixture(scope="module")
def replay():
    return replay_trace(bound(
        CollectiveEvent(0.0, "allreduce", tuple(range(0, 64, 2)), 64_000_000, algorithm="ring"),
        CollectiveEvent(0.001, "allreduce", tuple(range(1, 64, 2)), 64_000_000, algorithm="ring"),
        FlowEvent(0.002, 0, 9, 50_000_000),
        CollectiveEvent(0.02, "alltoall", tuple(range(16)), 16_000_000),
    ))  # fmt: skip


@pytest.fixture(scope="module")
def timeline(replay):
    return sample_timeline(replay, max_frames=50)


def only_plain_types(value):
    if isinstance(value, dict):
        return all(isinstance(key, str) and only_plain_types(item) for key, item in value.items())
    if isinstance(value, list):
        return all(only_plain_types(item) for item in value)
    return type(value) in PLAIN_TYPES


def test_frames_are_plain_json(timeline):
    for frame in timeline.frames():
        assert only_plain_types(frame)  # no numpy scalars: channels_redis packs frames with msgpack
        assert json.loads(json.dumps(frame)) == frame


def test_every_frame_is_a_complete_snapshot(replay, timeline):
    middle = timeline.frame(len(timeline) // 2)
    decoded = decode_frame(json.loads(json.dumps(middle)))  # decoded alone, as a late viewer would
    assert len(decoded.utilization) == len(decoded.congestion) == len(SPEC.links)
    assert len(decoded.switch_in) == len(SPEC.switches())
    assert np.array_equal(decode_bytes(middle["utilization"]), timeline.utilization[len(timeline) // 2])
    assert (decoded.t_s, decoded.t_end_s) == (timeline.t_s[25], timeline.t_end_s[25])
    assert decoded.events_total == 4 and 0 <= decoded.events_done <= 4
    running = [event for event in range(4) if replay.start_s[event] < decoded.t_end_s and replay.end_s[event] > decoded.t_s]
    assert decoded.active == running
    for record in decoded.top:
        assert set(record) == {"link", "from", "to", "from_name", "to_name", "utilization", "congestion", "class"}
        link = SPEC.links[record["link"]]
        assert {record["from"], record["to"]} == {link.a, link.b}
        assert decoded.utilization[record["link"]] == pytest.approx(record["utilization"], abs=1 / 255)


def test_window_averages_match_the_engine(replay, timeline):
    # All bytes carried show up, frame by frame, and the windows tile the replay.
    assert timeline.totals["bytes"].sum() == pytest.approx(replay.arc_bytes().sum(), rel=1e-9)
    assert timeline.t_s[0] == 0 and timeline.t_end_s[-1] == replay.duration_s
    assert np.allclose(timeline.t_s[1:], timeline.t_end_s[:-1])
    assert timeline.events_done[-1] == 4 and (np.diff(timeline.events_done) >= 0).all()


def test_stored_timeline_reopens_without_recomputing(timeline):
    stored = json.loads(json.dumps(timeline.to_plain()))
    reopened = Timeline.from_plain(stored)
    assert [reopened.frame(i) for i in range(len(reopened))] == list(timeline.frames())
    assert reopened.link_series(3) == timeline.link_series(3)
    with pytest.raises(TwinCoreError, match="version"):
        Timeline.from_plain({**stored, "version": 99})
    with pytest.raises(TwinCoreError, match="does not fit"):
        Timeline.from_plain({**stored, "links": 7})


def test_interval_choice():
    replayed = replay_trace(bound(CollectiveEvent(0.0, "allreduce", tuple(range(8)), 8_000_000, algorithm="ring")))
    duration = replayed.duration_s
    explicit = sample_timeline(replayed, interval_s=duration / 3.5)
    assert len(explicit) == 4 and explicit.t_end_s[-1] == duration
    with pytest.raises(TwinCoreError, match="more than max_frames=10"):
        sample_timeline(replayed, interval_s=duration / 100, max_frames=10)
    with pytest.raises(TwinCoreError, match="positive"):
        sample_timeline(replayed, interval_s=0)
    streamed = list(frames(bound(CollectiveEvent(0.0, "allreduce", tuple(range(8)), 8_000_000)), max_frames=5, options=ReplayOptions(ecmp="spray")))
    assert len(streamed) == 5 and streamed[-1]["events_done"] == 1


def test_switch_aggregates():
    """Cards 0..7 sit on leaf-1: a flow from card 0 to card 1 goes in and out of leaf-1 only."""
    replayed = replay_trace(bound(FlowEvent(0.0, 0, 1, 100_000_000)))
    frame = decode_frame(sample_timeline(replayed, max_frames=1).frame(0))
    leaf = [switch.id for switch in SPEC.switches()].index("leaf-01")
    carried = 100_000_000 / replayed.duration_s / (400e9 / 8)  # the flow's rate over one card port
    ports_in = sum(1 for link in SPEC.links if "leaf-01" in (link.a, link.b))
    assert frame.switch_in[leaf] == pytest.approx(carried / ports_in, abs=1 / 255)
    assert frame.switch_out[leaf] == pytest.approx(carried / ports_in, abs=1 / 255)
    assert frame.switch_max[leaf] == pytest.approx(carried, abs=1 / 255)
    assert frame.switch_max.sum() == frame.switch_max[leaf]


def test_a_16k_card_frame_stays_under_200_kb():
    """The worst case: every link loaded, every switch busy, the most running events listed."""
    spec = fat_tree(endpoints=16384)
    layout = FabricLayout.of(spec)
    assert layout.link_count == 49152
    generator = np.random.default_rng(7)
    builder = FrameBuilder(layout, 1)
    builder.add(slice(0, 1), generator.random((1, layout.arc_count)), 2 * generator.random((1, layout.arc_count)), np.array([1e12]))
    timeline = builder.timeline(
        source="replay", t_s=np.array([123.456789]), t_end_s=np.array([123.556789]),
        active_offsets=np.array([0, 5000]), active_events=np.arange(10**6, 10**6 + 5000),
        events_done=np.array([987654]), events_total=10**6,
    )  # fmt: skip
    frame = timeline.frame(0)
    assert len(frame["active"]) == MAX_ACTIVE_LISTED and frame["active_count"] == 5000
    size = len(json.dumps(frame))
    assert size < 200_000, size


# ---- binary frame messages (the websocket's encoding of a frame) -------------------------------

FRONTEND_FIXTURE = Path(__file__).resolve().parents[2] / "frontend" / "src" / "replay" / "frameMessage.fixture.json"


def fixture_message() -> dict:
    """A replay.frame message with every byte value at an edge, a leaf matrix and a top link: the
    bytes the frontend's decoder is tested against (frontend/src/replay/frameMessage.test.ts)."""
    frame = {
        "seq": 41, "source": "replay", "t_s": 0.25, "t_end_s": 0.5, "links": 6,
        "utilization": encode_bytes(np.array([0, 1, 127, 128, 254, 255])),
        "congestion": encode_bytes(np.array([255, 0, 2, 64, 128, 200])),
        "switches": {"in": encode_bytes(np.array([10, 20])), "out": encode_bytes(np.array([30, 40])), "max": encode_bytes(np.array([50, 255]))},
        "top": [{"link": 5, "from": "spine-01", "to": "leaf-02", "utilization": 1.0, "congestion": 1.5686, "class": "leaf-spine (scale-up)"}],
        "active": [3, 4], "active_count": 2, "events_done": 7, "events_total": 9,
        "totals": {"bytes": 1.5e9, "mean_utilization": 0.5, "max_utilization": 1.0, "max_congestion": 1.5686},
        "snapshot": 12,
        "leaf_matrix": {"groups": ["leaf-01", "leaf-02"], "scale_bytes": 2.5e8, "values": encode_bytes(np.array([0, 255, 51, 0]))},
    }  # fmt: skip
    return {"type": "replay.frame", "seq": 41, "index": 3, "frame": frame}


def test_a_binary_frame_message_carries_the_arrays_raw_and_decodes_to_the_json_message(timeline):
    for message in (fixture_message(), {"type": "replay.frame", "seq": 2, "index": 7, "frame": timeline.frame(7)}):
        kept = json.loads(json.dumps(message))
        data = encode_frame_message(message)
        assert message == kept  # the caller's frame is left as it was
        assert data[0] == FRAME_MESSAGE_VERSION and data[1:4] == b"\0\0\0"
        header_length = int.from_bytes(data[4:8], "little")
        header = json.loads(data[8 : 8 + header_length])
        assert header["type"] == "replay.frame" and header["seq"] == message["seq"] and header["index"] == message["index"]
        frame = message["frame"]
        raw = [decode_bytes(frame["utilization"]), decode_bytes(frame["congestion"])] + [decode_bytes(frame["switches"][k]) for k in ("in", "out", "max")]
        if "leaf_matrix" in frame:
            raw.append(decode_bytes(frame["leaf_matrix"]["values"]))
        assert header["arrays"] == [[path, len(block)] for path, block in zip(FRAME_ARRAYS, raw)]
        assert data[8 + header_length :] == b"".join(block.tobytes() for block in raw)  # no base64 left
        assert "utilization" not in header["frame"] and "values" not in header["frame"].get("leaf_matrix", {})
        assert decode_frame_message(data) == message
    assert len(data) < len(json.dumps(message, separators=(",", ":")))  # a real frame: smaller than its JSON


def test_a_binary_frame_message_of_another_version_or_length_is_refused():
    data = encode_frame_message(fixture_message())
    with pytest.raises(ValueError, match="layout version 2"):
        decode_frame_message(bytes([2]) + data[1:])
    with pytest.raises(ValueError, match="header accounts for"):
        decode_frame_message(data[:-1])
    with pytest.raises(ValueError, match="at least 8 bytes"):
        decode_frame_message(data[:3])


def test_the_frontend_decoder_fixture_is_what_the_encoder_writes():
    """The frontend's decoder test reads these bytes; regenerate with TWIN_WRITE_FIXTURES=1."""
    message = fixture_message()
    fixture = {"base64": base64.b64encode(encode_frame_message(message)).decode("ascii"), "message": message}
    text = json.dumps(fixture, indent=1) + "\n"
    if os.environ.get("TWIN_WRITE_FIXTURES") == "1":
        FRONTEND_FIXTURE.write_text(text)
    assert FRONTEND_FIXTURE.read_text() == text, "the encoder changed: run with TWIN_WRITE_FIXTURES=1 and check the frontend tests"
