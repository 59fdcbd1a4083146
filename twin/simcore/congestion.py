"""Max-min fair flow rates by progressive filling (MODELLING.md section 8).

All unfrozen flows grow at the same pace; when an arc fills up, the flows
crossing it freeze at their current rate; repeat until every flow is frozen.
The arc loads are updated incrementally (only the rows of newly frozen
flows are read), so a round costs O(arcs) plus the frozen flows' path
lengths, and the whole fill O(nnz + rounds x arcs): thousands of distinct
bottleneck levels (ECMP collisions) stay cheap.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = ["max_min_rates"]

_TOLERANCE = 1e-9


def max_min_rates(
    incidence: sparse.csr_array, capacity: np.ndarray, *, limit: float | None = None
) -> np.ndarray:
    """Max-min fair rate of each flow (row of ``incidence``), in ``capacity`` units.

    ``incidence[f, a]`` is the fraction of flow ``f`` carried by arc ``a`` (1 for
    a single path, less when sprayed); ``limit`` caps every flow (a per-channel
    engine limit). Flows on no arc get ``inf``.

    >>> two_flows_one_arc = sparse.csr_array(np.array([[1.0, 1.0], [1.0, 0.0]]))
    >>> max_min_rates(two_flows_one_arc, np.array([10.0, 3.0])).tolist()
    [3.0, 7.0]
    """
    incidence = sparse.csr_array(incidence)
    by_arc = sparse.csr_array(incidence.T)
    rates = np.full(incidence.shape[0], np.inf)
    active = np.diff(incidence.indptr) > 0
    load = by_arc @ active.astype(float)
    # Only arcs still carrying unfrozen flows take part in a round. Loads only fall, so an arc
    # that leaves stays out: the rounds work on the arcs in use (``arcs``, by their ``slot``),
    # compacted whenever half of them have emptied, the same answer at a fraction of the cost.
    used = load > _TOLERANCE
    arcs, slot = np.arange(len(load)), np.empty(len(load), dtype=np.intp)
    remaining = capacity.astype(float)
    level, compact = 0.0, True
    while active.any():
        if compact:
            arcs, load, remaining, capacity = arcs[used], load[used], remaining[used], capacity[used]
            slot.fill(len(arcs))  # arcs out of use: a spare slot past the end
            slot[arcs] = np.arange(len(arcs))
            used = np.ones(len(arcs), dtype=bool)
        step = (remaining[used] / load[used]).min() if used.any() else np.inf
        if limit is not None:
            step = min(step, limit - level)
        level += step
        remaining -= step * load
        if limit is not None and level >= limit * (1 - _TOLERANCE):
            frozen = np.flatnonzero(active)
        else:
            saturated = arcs[used & (remaining <= _TOLERANCE * capacity)]
            crossing = by_arc.indices[_row_entries(by_arc.indptr, saturated)]
            frozen = np.unique(crossing[active[crossing]])
        rates[frozen] = level
        active[frozen] = False
        entries = _row_entries(incidence.indptr, frozen)
        freed = np.bincount(slot[incidence.indices[entries]], weights=incidence.data[entries], minlength=len(arcs) + 1)
        load -= freed[: len(arcs)]
        load[np.abs(load) < _TOLERANCE] = 0.0
        used = load > _TOLERANCE
        compact = 2 * np.count_nonzero(used) < len(arcs)
    return rates


def _row_entries(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions in ``indices``/``data`` of the entries of ``rows`` of a CSR matrix."""
    starts, lengths = indptr[rows], indptr[rows + 1] - indptr[rows]
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(int(lengths.sum())) + offsets
