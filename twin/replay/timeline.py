"""Sampling a replay into frames, and the stored timeline they come from.

``sample_timeline(replay)`` cuts the replay's span into equal windows and
computes, per window, what port counters read at its two ends would show:

- per arc, the *carried* bytes (each event's bytes times the share of its
  work done in the window) over capacity x window: **utilisation**;
- per arc, the *demanded* bytes (each event's full-speed rate times the time
  it ran in the window) over capacity x window: **congestion**;

both from one sparse product, windows x distinct operations by operations x
arcs, since every event of an operation loads the same arcs in the same
proportions. A link shows its busier direction. The result is a
``Timeline``: per-link ``uint8`` matrices (frames x links), per-switch
aggregates, the top links, the running events and per-frame totals, compact
enough to store (``to_plain``) and reopen without recomputing, and to give
any frame on demand (``frame(i)``): every frame is a complete snapshot.
"""

from __future__ import annotations

import base64
import math
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from twin.replay.binding import BoundTrace
from twin.replay.costs import ReplayOptions
from twin.replay.encoding import Frame, decode_congestion, decode_utilization, encode_bytes, quantise_congestion, quantise_utilization
from twin.replay.engine import Replay, replay_trace
from twin.replay.layout import FabricLayout
from twin.simcore.errors import TwinCoreError
from twin.simcore.translation import LATER

__all__ = [
    "DEFAULT_MAX_FRAMES",
    "FrameBuilder",
    "MAX_ACTIVE_LISTED",
    "TIMELINE_VERSION",
    "TOP_LINKS",
    "Timeline",
    "frames",
    "sample_timeline",
]

DEFAULT_MAX_FRAMES = 600
TOP_LINKS = 10
MAX_ACTIVE_LISTED = 1000
"""A frame lists at most this many running events (``active_count`` has them all)."""
TIMELINE_VERSION = 1
_FRAMES_PER_BLOCK = 64  # frames computed, and stored, together
_TOTALS = ("bytes", "mean_utilization", "max_utilization", "max_congestion")


@dataclass(frozen=True, eq=False)
class Timeline:
    """Frames of a replay (or of live telemetry), stored compactly.

    ``utilization``/``congestion``: ``uint8`` (frames, links) in the frame
    encoding (``twin.replay.encoding``); ``switch_load``: ``uint8`` (frames,
    3, switches) for in, out and max; ``top``: per frame, the hottest links'
    records; ``totals``: per-frame arrays ``bytes`` (carried on links in the
    window), ``mean_utilization``, ``max_utilization``, ``max_congestion``;
    ``active_events[active_offsets[i]:active_offsets[i + 1]]``: events
    running in frame ``i``; ``events_done``: events finished by its end.
    """

    fabric: str
    source: str
    switch_ids: tuple[str, ...]
    t_s: np.ndarray
    t_end_s: np.ndarray
    utilization: np.ndarray
    congestion: np.ndarray
    switch_load: np.ndarray
    top: tuple[tuple[Mapping[str, Any], ...], ...]
    totals: Mapping[str, np.ndarray]
    active_offsets: np.ndarray
    active_events: np.ndarray
    events_done: np.ndarray
    events_total: int

    def __len__(self) -> int:
        return len(self.t_s)

    @property
    def link_count(self) -> int:
        return self.utilization.shape[1]

    def frame(self, index: int) -> Frame:
        """Frame ``index`` as plain JSON data (``seq`` is left 0 for the sender to set)."""
        if not 0 <= index < len(self):
            raise IndexError(f"frame {index} of a timeline of {len(self)} frames")
        active = self.active_events[self.active_offsets[index] : self.active_offsets[index + 1]]
        return {
            "seq": 0,
            "source": self.source,
            "t_s": float(self.t_s[index]),
            "t_end_s": float(self.t_end_s[index]),
            "links": self.link_count,
            "utilization": encode_bytes(self.utilization[index]),
            "congestion": encode_bytes(self.congestion[index]),
            "switches": {
                name: encode_bytes(self.switch_load[index, number]) for number, name in enumerate(("in", "out", "max"))
            },
            "top": [dict(record) for record in self.top[index]],
            "active": active[:MAX_ACTIVE_LISTED].tolist(),
            "active_count": len(active),
            "events_done": int(self.events_done[index]),
            "events_total": self.events_total,
            "totals": {name: float(self.totals[name][index]) for name in _TOTALS},
        }

    def frames(self) -> Iterator[Frame]:
        """Every frame, in time order."""
        return (self.frame(index) for index in range(len(self)))

    def link_series(self, link: int) -> dict[str, list[float]]:
        """One link's time series (window starts, utilisation and congestion), for charts."""
        return {
            "t_s": self.t_s.tolist(),
            "utilization": decode_utilization(self.utilization[:, link]).tolist(),
            "congestion": decode_congestion(self.congestion[:, link]).tolist(),
        }

    def to_plain(self) -> dict[str, Any]:
        """JSON-ready form: byte matrices as zlib-compressed base64 blocks of 64 frames."""
        return {
            "version": TIMELINE_VERSION,
            "fabric": self.fabric,
            "source": self.source,
            "frames": len(self),
            "links": self.link_count,
            "switch_ids": list(self.switch_ids),
            "t_s": self.t_s.tolist(),
            "t_end_s": self.t_end_s.tolist(),
            "utilization": _blocks(self.utilization),
            "congestion": _blocks(self.congestion),
            "switch_load": _blocks(self.switch_load),
            "top": [[dict(record) for record in records] for records in self.top],
            "totals": {name: self.totals[name].tolist() for name in _TOTALS},
            "active_offsets": _packed(self.active_offsets.astype(np.int64)),
            "active_events": _packed(self.active_events.astype(np.int64)),
            "events_done": self.events_done.tolist(),
            "events_total": self.events_total,
        }

    @classmethod
    def from_plain(cls, plain: Mapping[str, Any]) -> Timeline:
        """Inverse of ``to_plain``; ``TwinCoreError`` naming the field that does not fit."""
        if plain.get("version") != TIMELINE_VERSION:
            raise TwinCoreError(f"timeline version {plain.get('version')!r}; expected {TIMELINE_VERSION}")
        try:
            count, links, switches = int(plain["frames"]), int(plain["links"]), len(plain["switch_ids"])
            timeline = cls(
                fabric=plain["fabric"],
                source=plain["source"],
                switch_ids=tuple(plain["switch_ids"]),
                t_s=np.array(plain["t_s"], dtype=float),
                t_end_s=np.array(plain["t_end_s"], dtype=float),
                utilization=_unblocks(plain["utilization"], (count, links)),
                congestion=_unblocks(plain["congestion"], (count, links)),
                switch_load=_unblocks(plain["switch_load"], (count, 3, switches)),
                top=tuple(tuple(records) for records in plain["top"]),
                totals={name: np.array(plain["totals"][name], dtype=float) for name in _TOTALS},
                active_offsets=_unpacked(plain["active_offsets"]),
                active_events=_unpacked(plain["active_events"]),
                events_done=np.array(plain["events_done"], dtype=np.int64),
                events_total=int(plain["events_total"]),
            )
        except (KeyError, TypeError, ValueError, zlib.error) as error:
            raise TwinCoreError(f"stored timeline does not fit its shape: {type(error).__name__} {error}") from None
        lengths = {len(timeline.t_end_s), len(timeline.top), len(timeline.events_done), len(timeline.active_offsets) - 1}
        if lengths != {count}:
            raise TwinCoreError(f"stored timeline of {count} frames has per-frame lists of lengths {sorted(lengths)}")
        return timeline


def sample_timeline(replay: Replay, *, interval_s: float | None = None, max_frames: int = DEFAULT_MAX_FRAMES) -> Timeline:
    """Frames of ``replay``, each a window of ``interval_s`` simulated seconds.

    ``interval_s=None`` gives ``max_frames`` equal windows over the replay
    (one empty frame for a replay that takes no time); an explicit interval
    that needs more than ``max_frames`` windows raises ``TwinCoreError``. The
    last window ends with the replay.
    """
    if max_frames < 1:
        raise TwinCoreError(LATER.gettext("max_frames %(count)s; expected at least 1") % {"count": str(max_frames)})
    edges = _window_edges(replay.duration_s, interval_s, max_frames)
    count = len(edges) - 1
    layout = replay.layout
    carried_weight, demand_weight = _window_weights(replay, edges)
    operation_bytes = _operation_matrix(replay)
    windows = np.diff(edges)
    rows = FrameBuilder(layout, count)
    for first in range(0, count, _FRAMES_PER_BLOCK):
        block = slice(first, min(count, first + _FRAMES_PER_BLOCK))
        carried = (carried_weight[block] @ operation_bytes).toarray()
        demand = (demand_weight[block] @ operation_bytes).toarray()
        scale = _per_capacity_second(layout, windows[block])
        rows.add(block, carried * scale, demand * scale, carried.sum(axis=1))
    offsets, active = _running(replay, edges)
    return rows.timeline(
        source="replay",
        t_s=edges[:-1],
        t_end_s=edges[1:],
        active_offsets=offsets,
        active_events=active,
        events_done=np.searchsorted(np.sort(replay.end_s), edges[1:], side="right"),
        events_total=len(replay.end_s),
    )


def frames(
    bound: BoundTrace,
    *,
    interval_s: float | None = None,
    max_frames: int = DEFAULT_MAX_FRAMES,
    options: ReplayOptions = ReplayOptions(),
) -> Iterator[Frame]:
    """Replay ``bound`` and yield its frames: ``sample_timeline(replay_trace(bound)).frames()``."""
    return sample_timeline(replay_trace(bound, options=options), interval_s=interval_s, max_frames=max_frames).frames()


# -- sampling -------------------------------------------------------------------------------------


def _window_edges(duration_s: float, interval_s: float | None, max_frames: int) -> np.ndarray:
    if interval_s is not None and not (math.isfinite(interval_s) and interval_s > 0):
        raise TwinCoreError(LATER.gettext("interval %(interval)s s; expected a positive number of seconds") % {"interval": repr(interval_s)})
    if duration_s <= 0:
        return np.zeros(2)
    if interval_s is None:
        count = max_frames
        interval_s = duration_s / count
    else:
        count = max(1, math.ceil(duration_s / interval_s - 1e-9))
        if count > max_frames:
            too_many = LATER.gettext(
                "an interval of %(interval)s s cuts the %(duration)s s replay into %(count)s frames, more than max_frames=%(limit)s; "
                "expected a longer interval or a larger max_frames"
            )
            raise TwinCoreError(too_many % {"interval": str(interval_s), "duration": f"{duration_s:.6g}", "count": str(count), "limit": str(max_frames)})
    edges = np.minimum(np.arange(count + 1) * interval_s, duration_s)
    edges[-1] = duration_s
    return edges


def _spans(t0: np.ndarray, t1: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For intervals ``[t0, t1)``: (interval, window, overlap seconds) of every window each overlaps."""
    last = len(edges) - 2
    first_window = np.clip(np.searchsorted(edges, t0, side="right") - 1, 0, last)
    last_window = np.clip(np.searchsorted(edges, t1, side="left") - 1, first_window, last)
    counts = last_window - first_window + 1
    interval = np.repeat(np.arange(len(t0)), counts)
    window = first_window[interval] + np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    overlap = np.minimum(t1[interval], edges[window + 1]) - np.maximum(t0[interval], edges[window])
    return interval, window, np.maximum(overlap, 0.0)


def _window_weights(replay: Replay, edges: np.ndarray) -> tuple[sparse.csr_array, sparse.csr_array]:
    """(windows x operations) weights: shares of each operation's bytes carried, and demanded, per window."""
    count, operations = len(edges) - 1, len(replay.costs)
    moving = replay.pieces_t1 > replay.pieces_t0
    events, t0, t1 = replay.pieces_event[moving], replay.pieces_t0[moving], replay.pieces_t1[moving]
    speed = replay.pieces_speed[moving]
    piece, window, overlap = _spans(t0, t1, edges)
    event = events[piece]
    demanded = overlap / replay.solo_s[event]  # the event ran this long at its full-speed demand
    operation = replay.cost_index[event]

    def weights(values: np.ndarray) -> sparse.csr_array:
        return sparse.csr_array(sparse.coo_array((values, (window, operation)), shape=(count, operations)))

    return weights(demanded * speed[piece]), weights(demanded)


def _operation_matrix(replay: Replay) -> sparse.csr_array:
    """(operations x arcs) bytes of each distinct operation."""
    lengths = [len(cost.arcs) for cost in replay.costs]
    rows = np.repeat(np.arange(len(replay.costs)), lengths)
    arcs = np.concatenate([cost.arcs for cost in replay.costs]) if replay.costs else np.zeros(0, dtype=np.intp)
    values = np.concatenate([cost.arc_bytes for cost in replay.costs]) if replay.costs else np.zeros(0)
    return sparse.csr_array((values, (rows, arcs)), shape=(len(replay.costs), replay.layout.arc_count))


def _per_capacity_second(layout: FabricLayout, windows: np.ndarray) -> np.ndarray:
    """1 / (capacity x window) per (window, arc); 0 for empty windows."""
    with np.errstate(divide="ignore"):
        inverse = np.where(windows > 0, 1.0 / windows, 0.0)
    return inverse[:, None] / layout.arc_capacity[None, :]


def _running(replay: Replay, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Events running at some moment of each window, as ragged (offsets, events)."""
    count = len(edges) - 1
    running = np.flatnonzero(replay.end_s > replay.start_s)
    event, window, overlap = _spans(replay.start_s[running], replay.end_s[running], edges)
    keep = overlap > 0
    event, window = running[event[keep]], window[keep]
    order = np.lexsort((event, window))
    offsets = np.concatenate([[0], np.cumsum(np.bincount(window, minlength=count))])
    return offsets.astype(np.int64), event[order].astype(np.int64)


# -- rows -----------------------------------------------------------------------------------------


class FrameBuilder:
    """Fills a timeline's per-frame rows from per-arc utilisation and congestion (floats)."""

    def __init__(self, layout: FabricLayout, count: int) -> None:
        self.layout = layout
        switches = len(layout.switch_positions)
        self.utilization = np.zeros((count, layout.link_count), dtype=np.uint8)
        self.congestion = np.zeros((count, layout.link_count), dtype=np.uint8)
        self.switch_load = np.zeros((count, 3, switches), dtype=np.uint8)
        self.top: list[tuple[dict[str, Any], ...]] = [()] * count
        self.totals = {name: np.zeros(count) for name in _TOTALS}
        self.in_capacity, self.out_capacity = layout.switch_capacity
        lengths = np.diff(layout.switch_links.indptr)
        self.switch_has_links = lengths > 0
        self.switch_starts = layout.switch_links.indptr[:-1][self.switch_has_links]

    def add(self, rows: slice, utilization: np.ndarray, congestion: np.ndarray, carried_bytes: np.ndarray) -> None:
        """Rows ``rows`` from (frames, arcs) utilisation and congestion, and bytes carried per frame."""
        layout = self.layout
        link_utilization = layout.link_values(utilization)
        link_congestion = layout.link_values(congestion)
        self.utilization[rows] = quantise_utilization(link_utilization)
        self.congestion[rows] = quantise_congestion(link_congestion)
        carried_rate = utilization * layout.arc_capacity
        with np.errstate(invalid="ignore", divide="ignore"):
            self.switch_load[rows, 0] = quantise_utilization(np.nan_to_num((carried_rate @ layout.switch_in) / self.in_capacity))
            self.switch_load[rows, 1] = quantise_utilization(np.nan_to_num((carried_rate @ layout.switch_out) / self.out_capacity))
        if self.switch_has_links.any():
            by_switch = link_utilization[:, layout.switch_links.indices]
            self.switch_load[rows, 2][:, self.switch_has_links] = quantise_utilization(
                np.maximum.reduceat(by_switch, self.switch_starts, axis=1)
            )
        self.totals["bytes"][rows] = carried_bytes
        if layout.link_count:
            self.totals["mean_utilization"][rows] = link_utilization.mean(axis=1)
            self.totals["max_utilization"][rows] = link_utilization.max(axis=1)
            self.totals["max_congestion"][rows] = link_congestion.max(axis=1)
        for offset, frame in enumerate(range(rows.start, rows.stop)):
            self.top[frame] = _top_records(layout, utilization[offset], congestion[offset])

    def timeline(self, *, source: str, **per_frame: Any) -> Timeline:
        layout = self.layout
        return Timeline(
            fabric=layout.fabric,
            source=source,
            switch_ids=tuple(layout.node_ids[position] for position in layout.switch_positions),
            utilization=self.utilization,
            congestion=self.congestion,
            switch_load=self.switch_load,
            top=tuple(self.top),
            totals=self.totals,
            **per_frame,
        )


def _top_records(layout: FabricLayout, utilization: np.ndarray, congestion: np.ndarray) -> tuple[dict[str, Any], ...]:
    """The ``TOP_LINKS`` loaded arcs with the highest congestion (ties: utilisation, then arc order)."""
    loaded = np.flatnonzero(congestion > 0)
    if len(loaded) > TOP_LINKS:
        threshold = np.partition(congestion[loaded], len(loaded) - TOP_LINKS)[len(loaded) - TOP_LINKS]
        loaded = loaded[congestion[loaded] >= threshold]
    order = np.lexsort((loaded, -utilization[loaded], -congestion[loaded]))[:TOP_LINKS]
    return tuple(
        {
            **layout.arc_record(int(arc)),
            "utilization": round(float(utilization[arc]), 4),
            "congestion": round(float(congestion[arc]), 4),
        }
        for arc in loaded[order]
    )


# -- storage --------------------------------------------------------------------------------------


def _blocks(matrix: np.ndarray) -> list[str]:
    return [_packed(matrix[first : first + _FRAMES_PER_BLOCK]) for first in range(0, len(matrix), _FRAMES_PER_BLOCK)]


def _unblocks(blocks: list[str], shape: tuple[int, ...]) -> np.ndarray:
    data = b"".join(zlib.decompress(base64.b64decode(block)) for block in blocks)
    return np.frombuffer(data, dtype=np.uint8).reshape(shape).copy()


def _packed(values: np.ndarray) -> str:
    """zlib-compressed base64 of an array's bytes (little-endian, C order)."""
    return base64.b64encode(zlib.compress(np.ascontiguousarray(values).tobytes(), 6)).decode("ascii")


def _unpacked(text: str) -> np.ndarray:
    return np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=np.int64).copy()
