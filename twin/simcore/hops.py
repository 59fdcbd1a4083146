"""Hop distances between accelerator cards, as a matrix or as statistics.

**Hop count** between two cards = the number of *switches* traversed on a
shortest path between them: 1 for two cards under the same leaf, 3 for
leaf-spine-leaf, and so on. The rules behind it:

- cards are endpoints: a path never passes through a third card;
- NICs, hosts and aggregation nodes are passive attachments: a path may cross
  them and they do not count, so two cards joined directly or through passive
  nodes only are 0 hops apart;
- links in state ``"down"`` do not exist for routing; ``"degraded"`` ones do;
- a card is 0 hops from itself; a pair with no path is unreachable (``-1`` in
  the matrix).

Both entry points validate the fabric first and raise ``FabricError`` if it is
inconsistent.

Method (compile once, then arrays only, like ``networkx``'s scipy kernels):

1. Collapse each connected group of passive nodes into one vertex, and derive
   sparse matrices for card-switch attachment, switch-switch adjacency and
   card-card direct reachability (possibly through a passive group).
2. On a directed graph ``card -> attached switches``, ``switch <-> switch``,
   unit-weight shortest paths (``scipy.sparse.csgraph``, BFS-equivalent) from
   a chunk of source cards give, for each switch, the number of switches on
   the best path from the card up to and including that switch.
3. The hop count to card ``j`` is the minimum of that over the switches ``j``
   is attached to: a numpy gather and reduction over the whole chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from twin.simcore.errors import FabricError
from twin.simcore.model import FabricSpec

__all__ = ["ProgressCallback", "hop_matrix", "hop_statistics"]

ProgressCallback = Callable[[float, str], None]
"""Called as ``on_progress(fraction_done, message)``; the fraction ends at 1.0."""

_CARD, _SWITCH, _PASSIVE = 0, 1, 2
_UNREACHABLE = -1
_INT16_MAX = np.iinfo(np.int16).max


@dataclass(frozen=True)
class _HopGraph:
    """A fabric compiled for hop computations; cards and switches in fabric order."""

    card_ids: tuple[str, ...]
    switch_count: int
    # (cards + switches) square: card -> attached switch, switch <-> switch.
    graph: sparse.csr_array
    # (cards, k): switch numbers each card attaches to, padded with switch_count.
    attachments: np.ndarray
    # (cards, cards): non-zero where two cards are 0 hops apart.
    direct: sparse.csr_array


def hop_matrix(
    spec: FabricSpec, *, on_progress: ProgressCallback | None = None, chunk: int = 64
) -> tuple[list[str], np.ndarray]:
    """Hop counts between every pair of cards (definition in the module docstring).

    Returns the card ids in fabric order and a symmetric ``int16`` matrix in that
    order, ``-1`` where unreachable. Memory is ``2 * cards**2`` bytes (512 MiB at
    16,384 cards); ``hop_statistics`` streams instead.

    >>> from twin.simcore.generate import supernode
    >>> card_ids, matrix = hop_matrix(supernode(cards=64, cards_per_host=8, switch_radix=16))
    >>> card_ids[0], matrix[0, 1], matrix[0, 63], matrix.dtype
    ('card-0001', np.int16(1), np.int16(3), dtype('int16'))
    """
    hop_graph = _compile(spec)
    count = len(hop_graph.card_ids)
    matrix = np.empty((count, count), dtype=np.int16)
    for start, rows in _hop_rows(hop_graph, chunk, on_progress):
        matrix[start : start + len(rows)] = rows
    return list(hop_graph.card_ids), matrix


def hop_statistics(
    spec: FabricSpec, *, on_progress: ProgressCallback | None = None, chunk: int = 64
) -> dict[str, Any]:
    """Distribution of hop counts over unordered card pairs, as JSON-ready data.

    Rows of the hop matrix are computed ``chunk`` source cards at a time and
    counted at once, so memory stays at ``chunk * cards`` whatever the size;
    ``on_progress`` is called after each chunk.

    Returns ``cards``, ``switches``, ``links`` (all, whatever their state),
    ``pairs`` (``cards * (cards - 1) / 2``), ``histogram`` (hop count as a
    string -> number of pairs, ascending, zero counts left out), ``mean_hops``
    and ``diameter`` over reachable pairs (0 when there are none), and
    ``unreachable_pairs``.

    >>> from twin.simcore.generate import supernode
    >>> stats = hop_statistics(supernode(cards=64, cards_per_host=8, switch_radix=16))
    >>> stats["histogram"], stats["diameter"], stats["unreachable_pairs"]
    ({'1': 224, '3': 1792}, 3, 0)
    """
    hop_graph = _compile(spec)
    count = len(hop_graph.card_ids)
    # Bin 0 counts unreachable entries of the matrix, bin h + 1 entries h hops apart.
    entry_counts = np.zeros(hop_graph.switch_count + 2, dtype=np.int64)
    for _, rows in _hop_rows(hop_graph, chunk, on_progress):
        entry_counts += np.bincount(rows.ravel() + 1, minlength=len(entry_counts))
    entry_counts[1] -= count  # each card's own 0-hop entry
    # The matrix is symmetric: every unordered pair appears twice.
    unreachable, *hop_counts = (entry_counts // 2).tolist()

    reachable_pairs = sum(hop_counts)
    histogram = {str(hops): pairs for hops, pairs in enumerate(hop_counts) if pairs}
    return {
        "cards": count,
        "switches": hop_graph.switch_count,
        "links": len(spec.links),
        "pairs": count * (count - 1) // 2,
        "histogram": histogram,
        "mean_hops": (
            sum(hops * pairs for hops, pairs in enumerate(hop_counts)) / reachable_pairs
            if reachable_pairs
            else 0.0
        ),
        "diameter": max(map(int, histogram), default=0),
        "unreachable_pairs": unreachable,
    }


def _hop_rows(
    hop_graph: _HopGraph, chunk: int, on_progress: ProgressCallback | None
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first_card, int16 rows of the hop matrix)`` for each chunk of cards.

    ``on_progress`` is called once the consumer is done with a chunk.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    count = len(hop_graph.card_ids)
    for start in range(0, count, chunk):
        sources = np.arange(start, min(start + chunk, count))
        # Cards with the same attachments are equally far from every switch and
        # card: search and gather once per distinct attachment set in the chunk.
        distinct, representatives, expand = np.unique(
            hop_graph.attachments[sources], axis=0, return_index=True, return_inverse=True
        )
        to_switch = csgraph.dijkstra(
            hop_graph.graph, indices=sources[representatives], unweighted=True
        )[:, count:]
        # An extra column for the attachment padding: never reached.
        to_switch = np.hstack([to_switch, np.full((len(distinct), 1), np.inf)])
        hops = to_switch[:, hop_graph.attachments].min(axis=2)
        rows = np.where(np.isfinite(hops), hops, _UNREACHABLE).astype(np.int16)[expand]
        direct_rows, direct_columns = hop_graph.direct[start : start + len(sources)].nonzero()
        rows[direct_rows, direct_columns] = 0
        rows[np.arange(len(sources)), sources] = 0
        yield start, rows
        if on_progress is not None:
            done = start + len(sources)
            on_progress(done / count, f"hop distances from {done} of {count} cards")
    if count == 0 and on_progress is not None:
        on_progress(1.0, "no cards: nothing to measure")


def _compile(spec: FabricSpec) -> _HopGraph:
    """Validate a fabric, then compile it into the arrays ``_hop_rows`` works on."""
    spec.validate()
    role = np.array(
        [{"card": _CARD, "switch": _SWITCH}.get(node.kind, _PASSIVE) for node in spec.nodes],
        dtype=np.int8,
    )
    cards = np.flatnonzero(role == _CARD)
    switches = np.flatnonzero(role == _SWITCH)
    passives = np.flatnonzero(role == _PASSIVE)
    if len(switches) >= _INT16_MAX:
        # hops <= switches, and hop_statistics shifts them by one in int16.
        raise FabricError(f"{len(switches)} switches: hop counts would overflow int16")

    # Both directions of every live link, as node positions.
    index = spec.node_index()
    live = [link for link in spec.links if link.state != "down"]
    ends = np.fromiter(
        (index[node_id] for link in live for node_id in (link.a, link.b)), dtype=np.intp
    ).reshape(-1, 2)
    tails = np.concatenate([ends[:, 0], ends[:, 1]])
    heads = np.concatenate([ends[:, 1], ends[:, 0]])

    # Number each role's nodes from 0; passive nodes then by their group.
    local = np.empty(len(role), dtype=np.intp)
    for members in (cards, switches, passives):
        local[members] = np.arange(len(members))

    def block(tail_role: int, head_role: int, shape: tuple[int, int]) -> sparse.csr_array:
        """Link counts from nodes of one role to nodes of another, by local number."""
        chosen = (role[tails] == tail_role) & (role[heads] == head_role)
        entries = (local[tails[chosen]], local[heads[chosen]])
        return sparse.csr_array((np.ones(chosen.sum()), entries), shape=shape)

    group_count, local[passives] = csgraph.connected_components(
        block(_PASSIVE, _PASSIVE, (len(passives), len(passives))), directed=False
    )
    card_to_group = block(_CARD, _PASSIVE, (len(cards), group_count))
    group_to_switch = block(_PASSIVE, _SWITCH, (group_count, len(switches)))

    attached = block(_CARD, _SWITCH, (len(cards), len(switches))) + card_to_group @ group_to_switch
    switch_links = (
        block(_SWITCH, _SWITCH, (len(switches), len(switches)))
        + group_to_switch.T @ group_to_switch
    )
    direct = block(_CARD, _CARD, (len(cards), len(cards))) + card_to_group @ card_to_group.T

    graph = sparse.block_array(
        [[None, attached], [sparse.csr_array((len(switches), len(cards))), switch_links]],
        format="csr",
    )
    return _HopGraph(
        card_ids=tuple(spec.nodes[position].id for position in cards),
        switch_count=len(switches),
        graph=graph,
        attachments=_padded_rows(attached, pad=len(switches)),
        direct=direct,
    )


def _padded_rows(matrix: sparse.csr_array, *, pad: int) -> np.ndarray:
    """Column indices of each row's non-zeros, as a dense array padded with ``pad``."""
    per_row = np.diff(matrix.indptr)
    padded = np.full((matrix.shape[0], max(1, int(per_row.max(initial=0)))), pad, dtype=np.intp)
    rows = np.repeat(np.arange(matrix.shape[0]), per_row)
    slots = np.arange(matrix.nnz) - np.repeat(matrix.indptr[:-1], per_row)
    padded[rows, slots] = matrix.indices
    return padded
