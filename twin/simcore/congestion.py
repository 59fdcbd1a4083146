"""Max-min fair flow rates by progressive filling (MODELLING.md section 8).

All unfrozen flows grow at the same pace; when an arc fills up, the flows
crossing it freeze at their current rate; repeat until every flow is frozen.
Each round is two sparse products over the flow-by-arc incidence, and the
number of rounds is the number of distinct bottleneck levels.
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

    >>> one_link_two_flows = sparse.csr_array(np.array([[1.0], [1.0]]))
    >>> max_min_rates(one_link_two_flows, np.array([10.0])).tolist()
    [5.0, 5.0]
    """
    flow_count = incidence.shape[0]
    rates = np.zeros(flow_count)
    active = np.diff(incidence.indptr) > 0
    rates[~active] = np.inf
    remaining = capacity.astype(float).copy()
    transposed = incidence.T.tocsr()
    while active.any():
        load = transposed @ active.astype(float)
        used = load > _TOLERANCE
        shares = remaining[used] / load[used]
        step = shares.min() if len(shares) else np.inf
        if limit is not None:
            step = min(step, limit - rates[active].max())
        rates[active] += step
        remaining -= step * load
        saturated = used & (remaining <= _TOLERANCE * capacity)
        frozen = (incidence @ saturated.astype(float)) > 0
        if limit is not None:
            frozen |= rates >= limit * (1 - _TOLERANCE)
        if not frozen[active].any():  # numerical safety: freeze the tightest flows
            frozen = incidence @ (used & (remaining <= remaining[used].min() + _TOLERANCE)).astype(float) > 0
        active &= ~frozen
    return rates
