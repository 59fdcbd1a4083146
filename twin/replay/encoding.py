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

Over a websocket a message carrying a frame goes as one binary message instead
(``encode_frame_message``, layout in docs/replay.md "Binary frame messages"): a
small JSON header with everything but the byte arrays, then the arrays raw, so
nothing is base64 (a third larger) and a viewer reads them without a copy.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CONGESTION_FULL_SCALE",
    "FRAME_ARRAYS",
    "FRAME_MESSAGE_VERSION",
    "DecodedFrame",
    "Frame",
    "decode_bytes",
    "decode_congestion",
    "decode_frame",
    "decode_frame_message",
    "decode_message",
    "decode_utilization",
    "encode_bytes",
    "encode_frame_message",
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


FRAME_MESSAGE_VERSION = 1
"""The layout of a binary frame message (its first byte); a reader refuses any other."""

FRAME_ARRAYS = ("utilization", "congestion", "switches.in", "switches.out", "switches.max", "leaf_matrix.values")
"""The frame's base64 fields (dotted paths) that a binary message carries as raw bytes, in this order."""

_PREFIX = struct.Struct("<B3xI")  # version, 3 reserved zero bytes, header length (little-endian)


def encode_frame_message(message: Mapping[str, Any]) -> bytes:
    """A websocket message holding a frame (``{"type", ..., "frame": {...}}``) as one binary
    message: the prefix, the header (the message as JSON with the frame's byte arrays left out
    and listed in ``arrays`` as [path, length]) and the arrays' raw bytes one after another."""
    frame = dict(message["frame"])
    names, blocks = [], []
    for path in FRAME_ARRAYS:
        *parents, leaf = path.split(".")
        holder = frame
        for key in parents:
            inner = holder.get(key) if holder is not None else None
            if isinstance(inner, dict):
                holder[key] = holder = dict(inner)  # a copy: the caller's frame is left as it was
            else:
                holder = None
        if holder is not None and leaf in holder:
            block = base64.b64decode(holder.pop(leaf))
            names.append([path, len(block)])
            blocks.append(block)
    header = json.dumps({**message, "frame": frame, "arrays": names}, separators=(",", ":")).encode()
    return b"".join([_PREFIX.pack(FRAME_MESSAGE_VERSION, len(header)), header, *blocks])


def decode_frame_message(data: bytes) -> dict[str, Any]:
    """Inverse of ``encode_frame_message``: the message with its frame's arrays as base64 again.
    Raises ValueError for another layout version or bytes that do not add up."""
    if len(data) < _PREFIX.size:
        raise ValueError(f"a binary frame message is at least {_PREFIX.size} bytes, got {len(data)}")
    version, header_length = _PREFIX.unpack_from(data)
    if version != FRAME_MESSAGE_VERSION:
        raise ValueError(f"binary frame message of layout version {version}; this reader knows version {FRAME_MESSAGE_VERSION}")
    offset = _PREFIX.size + header_length
    message = json.loads(data[_PREFIX.size : offset])
    frame = message["frame"]
    for path, length in message.pop("arrays"):
        *parents, leaf = path.split(".")
        holder = frame
        for key in parents:
            holder = holder[key]
        holder[leaf] = base64.b64encode(data[offset : offset + length]).decode("ascii")
        offset += length
    if offset != len(data):
        raise ValueError(f"binary frame message of {len(data)} bytes, its header accounts for {offset}")
    return message


def decode_message(payload: str | bytes) -> dict[str, Any]:
    """A websocket message as a viewer received it, text (JSON) or binary (a frame message), in
    the shape of the JSON message (a binary frame's arrays as base64 again)."""
    return decode_frame_message(payload) if isinstance(payload, bytes) else json.loads(payload)


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
