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
2. Group cards into classes with the same attachments (``HopClasses``): one
   card per class is enough to search from.
3. On a directed graph ``card -> attached switches``, ``switch <-> switch``,
   unit-weight shortest paths (``scipy.sparse.csgraph``, BFS-equivalent) from
   a chunk of classes give, for each switch, the number of switches on
   the best path from the class's card up to and including that switch.
4. The hop count to a class is the minimum of that over the switches its cards
   are attached to: a numpy gather and reduction over the whole chunk.
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
from twin.simcore.translation import LATER, Phrase

__all__ = ["HopClasses", "ProgressCallback", "hop_classes", "hop_matrix", "hop_statistics"]

ProgressCallback = Callable[[float, Phrase], None]
"""Called as ``on_progress(fraction_done, message)``; the fraction ends at 1.0; the message is
rendered in its reader's language (``Phrase.render``)."""

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
    # (cards, cards): non-zero where two distinct cards are 0 hops apart.
    direct: sparse.csr_array


@dataclass(frozen=True, eq=False)
class HopClasses:
    """The hop matrix, compressed: cards with the same switch attachments are equally far from
    every other card, so they share a *class* (a card with a 0-hop partner gets a class of its
    own). ``hops[i, j]`` is the hop count between distinct cards of classes ``i`` and ``j``, ``-1``
    where unreachable; a fat-tree's 16,384 cards make as few classes as it has leaves."""

    card_ids: tuple[str, ...]
    card_class: np.ndarray  # card number (fabric order) -> class
    hops: np.ndarray  # (classes, classes) int16

    def matrix(self) -> np.ndarray:
        """The full (cards, cards) hop matrix: ``2 * cards**2`` bytes."""
        matrix = self.hops[np.ix_(self.card_class, self.card_class)]
        np.fill_diagonal(matrix, 0)
        return matrix


def hop_classes(
    spec: FabricSpec, *, on_progress: ProgressCallback | None = None, chunk: int = 64
) -> HopClasses:
    """Hop counts between every pair of cards (definition in the module docstring), by class.

    ``chunk`` classes are searched at a time; ``on_progress`` is called after each chunk.
    """
    hop_graph = _compile(spec)
    card_class, sizes = _card_classes(hop_graph)
    hops = np.empty((len(sizes), len(sizes)), dtype=np.int16)
    for start, rows in _class_rows(hop_graph, card_class, sizes, chunk, on_progress):
        hops[start : start + len(rows)] = rows
    return HopClasses(hop_graph.card_ids, card_class, hops)


def hop_matrix(
    spec: FabricSpec, *, on_progress: ProgressCallback | None = None, chunk: int = 64
) -> tuple[list[str], np.ndarray]:
    """Hop counts between every pair of cards (definition in the module docstring).

    Returns the card ids in fabric order and a symmetric ``int16`` matrix in that
    order, ``-1`` where unreachable. Memory is ``2 * cards**2`` bytes (512 MiB at
    16,384 cards); ``hop_classes`` is the compressed form, ``hop_statistics`` streams.

    >>> from twin.simcore.generate import supernode
    >>> card_ids, matrix = hop_matrix(supernode(cards=64, cards_per_host=8, switch_radix=16))
    >>> card_ids[0], matrix[0, 1], matrix[0, 63], matrix.dtype
    ('card-0001', np.int16(1), np.int16(3), dtype('int16'))
    """
    classes = hop_classes(spec, on_progress=on_progress, chunk=chunk)
    return list(classes.card_ids), classes.matrix()


def hop_statistics(
    spec: FabricSpec, *, on_progress: ProgressCallback | None = None, chunk: int = 64
) -> dict[str, Any]:
    """Distribution of hop counts over unordered card pairs, as JSON-ready data.

    Hops are computed ``chunk`` card classes at a time (see ``HopClasses``) and
    counted at once, weighted by the classes' sizes, so memory stays at
    ``chunk * classes`` whatever the size; ``on_progress`` is called after each chunk.

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
    card_class, sizes = _card_classes(hop_graph)
    # Bin 0 counts ordered pairs of distinct cards that are unreachable, bin h + 1 those h hops apart.
    pair_counts = np.zeros(hop_graph.switch_count + 2)
    for start, rows in _class_rows(hop_graph, card_class, sizes, chunk, on_progress):
        chunk_sizes = sizes[start : start + len(rows)]
        weights = np.outer(chunk_sizes, sizes).astype(float)
        weights[np.arange(len(rows)), start + np.arange(len(rows))] -= chunk_sizes  # not a card with itself
        pair_counts += np.bincount(rows.ravel() + 1, weights=weights.ravel(), minlength=len(pair_counts))
    # Every unordered pair was counted from both ends (weights are exact integers in float64).
    unreachable, *hop_counts = (np.rint(pair_counts).astype(np.int64) // 2).tolist()

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


def _card_classes(hop_graph: _HopGraph) -> tuple[np.ndarray, np.ndarray]:
    """Each card's class (same attachments, and no 0-hop partner) and each class's size."""
    count = len(hop_graph.card_ids)
    has_partner = np.diff(hop_graph.direct.indptr) > 0
    own = np.where(has_partner, np.arange(count), -1)
    keys = np.column_stack([hop_graph.attachments, own]) if count else np.empty((0, 1), dtype=np.intp)
    _, card_class, sizes = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    return card_class.reshape(-1), sizes


def _class_rows(
    hop_graph: _HopGraph,
    card_class: np.ndarray,
    sizes: np.ndarray,
    chunk: int,
    on_progress: ProgressCallback | None,
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first_class, int16 rows of the class hop matrix)`` for each chunk of classes.

    ``on_progress`` is called once the consumer is done with a chunk.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    count = len(hop_graph.card_ids)
    classes = len(sizes)
    # One card stands for its class: the first of it in fabric order.
    representative = np.full(classes, count, dtype=np.intp)
    np.minimum.at(representative, card_class, np.arange(count))
    class_attachments = hop_graph.attachments[representative]
    # 0-hop pairs join cards that are classes of their own.
    direct = hop_graph.direct.tocoo()
    direct_rows, direct_columns = card_class[direct.row], card_class[direct.col]
    for start in range(0, classes, chunk):
        stop = min(start + chunk, classes)
        to_switch = csgraph.dijkstra(hop_graph.graph, indices=representative[start:stop], unweighted=True)[:, count:]
        # An extra column for the attachment padding: never reached.
        to_switch = np.hstack([to_switch, np.full((stop - start, 1), np.inf)])
        hops = to_switch[:, class_attachments].min(axis=2)
        rows = np.where(np.isfinite(hops), hops, _UNREACHABLE).astype(np.int16)
        in_chunk = (direct_rows >= start) & (direct_rows < stop)
        rows[direct_rows[in_chunk] - start, direct_columns[in_chunk]] = 0
        yield start, rows
        if on_progress is not None:
            done = int(sizes[:stop].sum())
            message = LATER.ngettext("hop distances from %(done)s of %(count)s card", "hop distances from %(done)s of %(count)s cards", count)
            on_progress(done / count, message % {"done": done, "count": count})
    if classes == 0 and on_progress is not None:
        on_progress(1.0, LATER.gettext("no cards: nothing to measure"))


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
        raise FabricError(LATER.gettext("%(switches)s switches: hop counts would overflow int16") % {"switches": str(len(switches))})

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
    direct = sparse.csr_array(sparse.triu(direct, k=1) + sparse.tril(direct, k=-1))  # partners only

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
