"""Leaf-to-leaf traffic of a replay: bytes each leaf group sends to each other one, per frame.

Per-link loads cannot say who talks to whom, so the pairs come from the collectives themselves:
each distinct operation's phases (``twin.simcore.algorithms.phases_for``, the same patterns the
simulator loads the links with) give its (source card, target card, bytes) flows; flows are
summed by the leaves the cards hang from, and spread over the frames in the same proportions as
the operation's link bytes. More than ``MAX_GROUPS`` leaves are merged into consecutive buckets,
so a frame's matrix stays small (at most 64 x 64 bytes).
"""

from __future__ import annotations

import base64
import math

import numpy as np
from scipy import sparse

from twin.replay.engine import Replay
from twin.replay.timeline import _window_edges, _window_weights
from twin.simcore.algorithms import phases_for
from twin.simcore.errors import TwinCoreError
from twin.simcore.model import FabricSpec
from twin.traces.model import FlowEvent

__all__ = ["MAX_GROUPS", "leaf_groups", "leaf_matrix_frames"]

MAX_GROUPS = 64


def leaf_groups(spec: FabricSpec, max_groups: int = MAX_GROUPS) -> tuple[list[str], dict[str, int]]:
    """Names of the leaf groups (a range "first…last" when leaves are bucketed) and each card's
    group: the first leaf switch it is cabled to. Cards on no leaf belong to no group."""
    leaves = [node for node in spec.switches() if node.tier == "leaf"]
    if not leaves:
        return [], {}
    size = math.ceil(len(leaves) / max_groups)
    bucket_of_leaf = {leaf.id: position // size for position, leaf in enumerate(leaves)}
    names = [
        leaves[start].name if size == 1 else f"{leaves[start].name}…{leaves[min(start + size, len(leaves)) - 1].name}"
        for start in range(0, len(leaves), size)
    ]
    cards = {card.id for card in spec.cards()}
    group_of_card: dict[str, int] = {}
    for link in spec.links:
        for card, other in ((link.a, link.b), (link.b, link.a)):
            if card in cards and other in bucket_of_leaf:
                group_of_card.setdefault(card, bucket_of_leaf[other])
    return names, group_of_card


def _operation_pairs(replay: Replay, group_of_card: dict[str, int], groups: int) -> sparse.csr_array:
    """(operations x groups²) bytes each distinct operation sends between leaf groups."""
    card_of_rank = replay.bound.card_of_rank
    events = replay.bound.trace.events
    first_event = {}
    for position, operation in enumerate(replay.cost_index.tolist()):
        first_event.setdefault(operation, position)
    rows, columns, values = [], [], []
    for operation, position in first_event.items():
        event = events[position]
        if isinstance(event, FlowEvent):
            flows = [(card_of_rank.get(event.src_rank), card_of_rank.get(event.dst_rank), float(event.bytes))]
        else:
            cards = [card_of_rank.get(rank) for rank in event.ranks]
            try:
                phases = phases_for(event.op, replay.costs[operation].algorithm, event.bytes, len(cards))
            except TwinCoreError:
                continue  # an algorithm needing groups (hierarchical): its pairs are not modelled here
            flows = [
                (cards[source], cards[target], phase.bytes_per_flow * phase.steps)
                for phase in phases
                for source, target in zip(phase.sources.tolist(), phase.targets.tolist())
            ]
        for source, target, size in flows:
            a, b = group_of_card.get(source), group_of_card.get(target)
            if a is not None and b is not None and size > 0:
                rows.append(operation)
                columns.append(a * groups + b)
                values.append(size)
    return sparse.csr_array((values, (rows, columns)), shape=(len(replay.costs), groups * groups))


def leaf_matrix_frames(replay: Replay, *, max_frames: int) -> dict | None:
    """Per frame (the same windows as ``sample_timeline`` with ``max_frames``), the leaf-to-leaf
    bytes as base64 uint8 row-major matrices scaled to the busiest pair of the whole replay:
    ``{"groups": names, "scale_bytes": max, "frames": [base64, ...]}``; None without leaves."""
    names, group_of_card = leaf_groups(replay.bound.spec)
    if not names:
        return None
    edges = _window_edges(replay.duration_s, None, max_frames)
    carried, _ = _window_weights(replay, edges)
    matrices = (carried @ _operation_pairs(replay, group_of_card, len(names))).toarray()
    scale = float(matrices.max(initial=0.0))
    encoded = np.zeros_like(matrices, dtype=np.uint8) if scale == 0 else np.rint(matrices / scale * 255).astype(np.uint8)
    return {"groups": names, "scale_bytes": scale, "frames": [base64.b64encode(row.tobytes()).decode("ascii") for row in encoded]}
