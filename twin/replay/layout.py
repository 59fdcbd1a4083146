"""A fabric's links as directed arcs, the numbering every replay and telemetry frame uses.

Arc ``l`` is link ``l`` of ``spec.links`` from ``a`` to ``b``, arc ``L + l`` the
same link from ``b`` to ``a`` (``L`` links). Every link gets its two arcs,
down ones included (they simply carry nothing in a replay), so the numbering
is the same for a replay and for live telemetry, and needs no cards: an
InfiniBand fabric of HCAs and switches mirrors its counters too.

Link classes read like the simulator's (``"card-leaf (scale-up)"``): the
levels of the two ends (``attrs["role"]``, else the tier, else the kind),
lower first, then the domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from twin.simcore.model import FabricSpec

__all__ = ["FabricLayout"]

# Level order of link ends, as twin.simcore.compile orders them, so class names match the simulator's.
_LEVELS = {"card": 0, "nic": 1, "host": 1, "aggregation": 2, "nvswitch": 3, "leaf": 4, "spine": 5, "core": 6}
_UNKNOWN_LEVEL = 2


@dataclass(frozen=True, eq=False)
class FabricLayout:
    """Arrays describing the arcs of one fabric; build with ``FabricLayout.of(spec)``."""

    fabric: str
    link_count: int
    node_ids: tuple[str, ...]
    node_names: tuple[str, ...]  # as people know them (leaf01, node01/mlx5_0)
    arc_tail: np.ndarray  # node position the arc leaves
    arc_head: np.ndarray  # node position the arc enters
    arc_capacity: np.ndarray  # bytes/s of the cable (no protocol efficiency)
    arc_scale_out: np.ndarray
    link_class: tuple[str, ...]  # per link
    switch_positions: np.ndarray  # node positions of the switches, in fabric order
    switch_in: sparse.csr_array  # (arcs, switches): 1 where the arc enters the switch
    switch_out: sparse.csr_array  # (arcs, switches): 1 where the arc leaves the switch
    switch_links: sparse.csr_array  # (switches, links): 1 where the link touches the switch

    @classmethod
    def of(cls, spec: FabricSpec) -> FabricLayout:
        index = spec.node_index()
        links = spec.links
        link_count = len(links)
        a = np.array([index[link.a] for link in links], dtype=np.intp)
        b = np.array([index[link.b] for link in links], dtype=np.intp)
        gbps = np.array([link.bandwidth_gbps for link in links], dtype=float)
        scale_out = np.array([link.domain == "scale-out" for link in links], dtype=bool)
        levels = [node.attrs.get("role") or node.tier or node.kind for node in spec.nodes]
        classes = tuple(_link_class(levels[index[link.a]], levels[index[link.b]], link.domain) for link in links)

        is_switch = np.array([node.kind == "switch" for node in spec.nodes], dtype=bool)
        switch_positions = np.flatnonzero(is_switch)
        switch_number = np.full(len(spec.nodes), -1, dtype=np.intp)
        switch_number[switch_positions] = np.arange(len(switch_positions))
        tail, head = np.concatenate([a, b]), np.concatenate([b, a])
        shape = (2 * link_count, len(switch_positions))
        switch_in, switch_out = _membership(switch_number[head], shape), _membership(switch_number[tail], shape)
        return cls(
            fabric=spec.name,
            link_count=link_count,
            node_ids=tuple(node.id for node in spec.nodes),
            node_names=tuple(node.name for node in spec.nodes),
            arc_tail=tail,
            arc_head=head,
            arc_capacity=np.concatenate([gbps, gbps]) * 1e9 / 8,
            arc_scale_out=np.concatenate([scale_out, scale_out]),
            link_class=classes,
            switch_positions=switch_positions,
            switch_in=switch_in,
            switch_out=switch_out,
            # Arc l (l < L) leaves a and enters b: its in and out memberships are the link's two ends.
            switch_links=sparse.csr_array((switch_in[:link_count] + switch_out[:link_count]).T),
        )

    @cached_property
    def switch_capacity(self) -> tuple[np.ndarray, np.ndarray]:
        """Bytes/s of the arcs entering and of those leaving each switch (a frame's switch loads
        divide by them; computed once per layout, not per frame)."""
        return self.arc_capacity @ self.switch_in, self.arc_capacity @ self.switch_out

    @property
    def arc_count(self) -> int:
        return 2 * self.link_count

    def arc_link(self, arcs: np.ndarray) -> np.ndarray:
        """Link index of each arc."""
        return np.asarray(arcs) % self.link_count if self.link_count else np.asarray(arcs)

    def arc_record(self, arc: int) -> dict[str, object]:
        """Plain description of one arc: link index, from and to node ids and names, class."""
        link = int(arc) % self.link_count
        return {
            "link": link,
            "from": self.node_ids[self.arc_tail[arc]],
            "to": self.node_ids[self.arc_head[arc]],
            "from_name": self.node_names[self.arc_tail[arc]],
            "to_name": self.node_names[self.arc_head[arc]],
            "class": self.link_class[link],
        }

    def link_values(self, arc_values: np.ndarray) -> np.ndarray:
        """Per-link values from per-arc ones (last axis): the busier direction, as the simulator reports."""
        return np.maximum(arc_values[..., : self.link_count], arc_values[..., self.link_count :])


def _link_class(level_a: str, level_b: str, domain: str) -> str:
    low, high = sorted((level_a, level_b), key=lambda level: _LEVELS.get(level, _UNKNOWN_LEVEL))
    return f"{low}-{high} ({domain})"


def _membership(columns: np.ndarray, shape: tuple[int, int]) -> sparse.csr_array:
    """Sparse 0/1 matrix with a one at (row, columns[row]) wherever columns[row] >= 0."""
    rows = np.flatnonzero(columns >= 0)
    return sparse.csr_array((np.ones(len(rows)), (rows, columns[rows])), shape=shape)
