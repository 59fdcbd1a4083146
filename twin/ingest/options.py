"""Options a user can set at upload, passed to every parser."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ParseOptions"]


@dataclass(frozen=True)
class ParseOptions:
    """How to read a file.

    ``default_bandwidth_gbps`` and ``default_latency_ns`` fill in links of
    formats that carry no such figure (Slurm topology.conf, nvidia-smi topo);
    ``None`` means the parser's own documented default. ``max_problems`` is
    how many problems a parser gathers before it gives up on a file.
    """

    default_bandwidth_gbps: float | None = None
    default_latency_ns: float | None = None
    max_problems: int = 50
