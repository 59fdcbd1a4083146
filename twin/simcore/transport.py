"""Transport parameters per link domain, with documented defaults.

A run's time is built from three kinds of cost (docs/simulation.md):

- per algorithm step, ``alpha = step_overhead + path latency`` (software,
  synchronisation and completion, then the wire and switch latency of the path);
- per extra chunk of a step, ``tau = message_overhead + path latency``: each
  chunk is written, then completed before the next reuses the buffer, so a
  chunk much smaller than the bandwidth-delay product wastes the link;
- per byte, ``1 / rate``, the rate coming from max-min sharing of link
  capacities scaled by the domain's ``efficiency``.

``scale-up`` is memory-semantic (remote writes plus a completion: small
overheads); ``scale-out`` is message passing (RDMA/Ethernet: larger ones).
A fabric may carry overrides in ``attrs["transport"]`` (what ``calibrate``
produces); a run may override again. Plain data in and out (``to_dict``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from twin.simcore.errors import TwinCoreError
from twin.simcore.model import FabricSpec

__all__ = ["DomainTransport", "Transport", "transport_for"]


@dataclass(frozen=True)
class DomainTransport:
    """Costs of moving data over one link domain.

    ``step_overhead_ns``: fixed cost of one algorithm step (post, barrier or
    completion), on top of the path latency. ``message_overhead_ns``: cost of
    each further chunk, on top of the path latency. ``efficiency``: fraction
    of link bandwidth the protocol delivers. ``chunk_bytes``: pipelining unit.
    """

    step_overhead_ns: float
    message_overhead_ns: float
    efficiency: float
    chunk_bytes: int

    def __post_init__(self) -> None:
        if not (0 < self.efficiency <= 1):
            raise TwinCoreError(f"efficiency {self.efficiency}; expected a fraction in (0, 1]")
        if self.step_overhead_ns < 0 or self.message_overhead_ns < 0:
            raise TwinCoreError("overheads must be non-negative numbers of ns")
        if self.chunk_bytes < 1:
            raise TwinCoreError(f"chunk_bytes {self.chunk_bytes}; expected at least 1 byte")


@dataclass(frozen=True)
class Transport:
    """Transport of both domains plus in-switch reduction and switch defaults.

    Defaults: scale-up 0.5 us per step, 20 ns per chunk, efficiency 1.0;
    scale-out 3 us per step, 1 us per chunk, efficiency 0.94 (46-48 GB/s per
    400G NDR port, MODELLING.md section 6); chunks of 512 KiB (NCCL's Simple
    protocol: a 4 MiB buffer in 8 slots). In-switch reduction: 5 us start-up
    and efficiency 0.85 (NCCL's NVLS figure for Hopper). A switch without
    ``attrs["forwarding_latency_ns"]`` forwards in ``switch_latency_ns`` (100).
    """

    scale_up: DomainTransport = DomainTransport(500.0, 20.0, 1.0, 512 * 1024)
    scale_out: DomainTransport = DomainTransport(3000.0, 1000.0, 0.94, 512 * 1024)
    in_switch_latency_ns: float = 5000.0
    in_switch_efficiency: float = 0.85
    switch_latency_ns: float = 100.0

    def domain(self, scale_out: bool) -> DomainTransport:
        return self.scale_out if scale_out else self.scale_up

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready form (what a fabric stores in ``attrs["transport"]``)."""
        return asdict(self)

    def updated(self, overrides: Mapping[str, Any] | None) -> Transport:
        """A copy with ``overrides`` (same shape as ``to_dict``, any subset) applied.

        >>> Transport().updated({"scale_up": {"efficiency": 0.8}}).scale_up.efficiency
        0.8
        """
        if not overrides:
            return self
        known = {field.name for field in fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise TwinCoreError(f"unknown transport parameters {unknown}; expected some of {sorted(known)}")
        changes: dict[str, Any] = {}
        for name, value in overrides.items():
            current = getattr(self, name)
            if isinstance(current, DomainTransport):
                domain_fields = {field.name for field in fields(DomainTransport)}
                if not isinstance(value, Mapping) or set(value) - domain_fields:
                    raise TwinCoreError(
                        f"transport.{name}: expected a mapping with some of {sorted(domain_fields)}"
                    )
                changes[name] = replace(current, **value)
            else:
                changes[name] = float(value)
        return replace(self, **changes)


def transport_for(spec: FabricSpec, overrides: Mapping[str, Any] | None = None) -> Transport:
    """Defaults, then the fabric's stored ``attrs["transport"]``, then ``overrides``."""
    stored = spec.attrs.get("transport")
    stored_plain = stored.to_plain() if hasattr(stored, "to_plain") else stored
    return Transport().updated(stored_plain).updated(overrides)
