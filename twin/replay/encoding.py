"""The compact encoding of frames, and its decoder.

A frame carries per-link values as one byte per link, base64 (standard
alphabet, padded) of the bytes in ``spec.links`` order:

- ``utilization``: byte ``v`` means ``v / 255`` of the link's bandwidth (0..1);
- ``congestion``: byte ``v`` means ``2 v / 255`` (0..2; demand beyond twice
  the capacity saturates at 255, the frame's ``top`` and ``totals`` keep the
  exact figure).

Per-switch values (``switches.in``, ``.out``, ``.max``) use the utilisation
byte, one per switch in the order of ``FabricSpec.switches()``. Bytes are
rounded to the nearest step (1/255 ~ 0.4 %).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CONGESTION_FULL_SCALE",
    "DecodedFrame",
    "Frame",
    "decode_bytes",
    "decode_congestion",
    "decode_frame",
    "decode_utilization",
    "encode_bytes",
    "quantise_congestion",
    "quantise_utilization",
]

Frame = dict[str, Any]
"""One frame: plain JSON types only (str, int, float, bool, None, list, dict); shape in docs/replay.md."""

CONGESTION_FULL_SCALE = 2.0
"""Congestion at byte 255."""


def quantise_utilization(values: np.ndarray) -> np.ndarray:
    """Fractions 0..1 as bytes 0..255 (clipped)."""
    return np.rint(np.clip(values, 0.0, 1.0) * 255).astype(np.uint8)


def quantise_congestion(values: np.ndarray) -> np.ndarray:
    """Demand / capacity 0..2 as bytes 0..255 (saturating)."""
    return np.rint(np.clip(values, 0.0, CONGESTION_FULL_SCALE) * (255 / CONGESTION_FULL_SCALE)).astype(np.uint8)


def decode_utilization(values: np.ndarray) -> np.ndarray:
    return values.astype(float) / 255


def decode_congestion(values: np.ndarray) -> np.ndarray:
    return values.astype(float) * (CONGESTION_FULL_SCALE / 255)


def encode_bytes(values: np.ndarray) -> str:
    """Base64 text of a uint8 array."""
    return base64.b64encode(np.ascontiguousarray(values, dtype=np.uint8).tobytes()).decode("ascii")


def decode_bytes(text: str) -> np.ndarray:
    """Inverse of ``encode_bytes``."""
    return np.frombuffer(base64.b64decode(text), dtype=np.uint8)


@dataclass(frozen=True, eq=False)
class DecodedFrame:
    """A frame with its byte arrays decoded to floats (for tests and analysis)."""

    t_s: float
    t_end_s: float
    utilization: np.ndarray  # per link, 0..1
    congestion: np.ndarray  # per link, 0..2
    switch_in: np.ndarray  # per switch, 0..1
    switch_out: np.ndarray
    switch_max: np.ndarray
    top: list[dict[str, Any]]
    active: list[int]
    events_done: int
    events_total: int


def decode_frame(frame: Mapping[str, Any]) -> DecodedFrame:
    """Decode one frame on its own: every frame is a complete snapshot."""
    switches = frame["switches"]
    return DecodedFrame(
        t_s=frame["t_s"],
        t_end_s=frame["t_end_s"],
        utilization=decode_utilization(decode_bytes(frame["utilization"])),
        congestion=decode_congestion(decode_bytes(frame["congestion"])),
        switch_in=decode_utilization(decode_bytes(switches["in"])),
        switch_out=decode_utilization(decode_bytes(switches["out"])),
        switch_max=decode_utilization(decode_bytes(switches["max"])),
        top=list(frame["top"]),
        active=list(frame["active"]),
        events_done=frame["events_done"],
        events_total=frame["events_total"],
    )
