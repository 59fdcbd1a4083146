"""Traffic replays on the fabric twin, and live telemetry in the same frames (pure: no web layer).

Pipeline: ``bind_trace`` (ranks -> cards) -> ``replay_trace`` (event-driven,
congestion-aware) -> ``sample_timeline`` (compact frames, storable) ->
``Timeline.frame(i)`` / ``frames(...)``; ``replay_summary`` for the numbers
and ``telemetry_frame`` for a running fabric's port counters. docs/replay.md
has the rules, the frame encoding and the telemetry shape.
"""

from twin.replay.binding import BoundTrace, bind_trace
from twin.replay.costs import ReplayOptions
from twin.replay.encoding import DecodedFrame, Frame, decode_frame
from twin.replay.engine import Replay, replay_trace
from twin.replay.summary import replay_summary
from twin.replay.telemetry import TelemetryError, telemetry_frame
from twin.replay.timeline import Timeline, frames, sample_timeline

__all__ = [
    "BoundTrace",
    "DecodedFrame",
    "Frame",
    "Replay",
    "ReplayOptions",
    "TelemetryError",
    "Timeline",
    "bind_trace",
    "decode_frame",
    "frames",
    "replay_summary",
    "replay_trace",
    "sample_timeline",
    "telemetry_frame",
]
