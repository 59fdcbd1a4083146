"""Transport parameters per link domain and protocol, with documented defaults.

A run's time is built from four kinds of cost (docs/simulation.md):

- once per collective, the protocol's ``base_latency_ns`` (launch and first
  synchronisation; NCCL's ``baseLat``);
- per algorithm step, ``alpha = hop_latency + path latency`` (the protocol's
  synchronisation per hop, NCCL's ``hwLat``, then the wire and switch latency of
  the path); a step's chunks are pipelined, ``chunks_in_flight`` slots at once
  (NCCL_STEPS = 8), so a chunk only waits for ``alpha`` when every slot is busy;
- per peer a rank posts to in one step, ``peer_issue_ns`` (direct algorithms:
  one transaction stream per peer, MODELLING.md section 5's corrected rows);
- per byte, ``1 / rate``, the rate coming from max-min sharing of link
  capacities scaled by the domain's framing (``wire_efficiency``: payload per
  frame byte, from the frame's payload and overhead bytes, ``WIRE_FORMATS``)
  and ``efficiency`` (what the endpoints lose besides), then by the
  protocol's (LL sends a flag with every word);
- in-switch reduction (NVLS, SHARP): ``in_switch_latency_ns`` once per step,
  then ``in_switch_step_latency_ns`` per loop of NCCL's NVLS chunking
  (``in_switch_chunking``): a loop moves one chunk per rank on every channel
  and ends with the ranks' synchronisation through the switch, which the wire
  does not overlap. NCCL shrinks that chunk for mid-size buffers, so they take
  many more loops than their bytes alone would. Which channels carry a buffer
  smaller than one loop follows ``nccl_version`` (``in_switch_share``): every
  one from NCCL 2.20, only as many as it fills before.

NCCL's three protocols trade latency for bandwidth: LL (low latency, half the
bandwidth), LL128 (flags in 8 of 128 bytes) and Simple (full bandwidth, the
costliest synchronisation). ``scale-up`` is memory-semantic (NVLink-like),
``scale-out`` message passing (RDMA/Ethernet). ``tuner`` names the library whose
algorithms ``algorithm="auto"`` weighs (``TUNER_ALGORITHMS``: NCCL's by default).
A fabric may carry overrides in ``attrs["transport"]`` (what ``calibrate``
produces); a run may override again.
Plain data in and out (``to_dict``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, is_dataclass, replace
from typing import Any

import numpy as np

from twin.simcore.errors import TwinCoreError
from twin.simcore.model import FabricSpec
from twin.simcore.translation import LATER

__all__ = [
    "HOPPER_NVLINK_EFFICIENCY",
    "NVLS_SPREAD_SINCE",
    "PROTOCOLS",
    "TUNER_ALGORITHMS",
    "WIRE_FORMATS",
    "DomainTransport",
    "FlowCosts",
    "ProtocolTransport",
    "Transport",
    "in_switch_chunking",
    "nccl_release",
    "protocols_to_try",
    "transport_for",
]

PROTOCOLS = ("LL", "LL128", "Simple")
"""NCCL's protocols, spelled as ``NCCL_PROTO`` takes them."""

# The algorithms ``algorithm="auto"`` chooses from, by the library whose tuner the twin stands
# in for (``Transport.tuner``). NCCL's tuner (src/graph/tuning.cc, read at 2.18.3 and 2.23)
# weighs Ring and Tree, and for AllReduce the in-switch reductions (NVLS, NVLS-Tree, CollNet:
# ``in_switch``); it takes Ring alone for Broadcast and Reduce, and Ring for ReduceScatter and
# AllGather (2.18; the NVLS and PAT ones of later versions have no counterpart here). Across
# hosts NCCL runs a ring per channel, one channel a NIC, each crossing between hosts on its own
# rail: the twin's ``hierarchical`` (a ring inside each group, one across per rail), where its
# single ring would take one NIC a host. All-to-all and send/receive are grouped point-to-point
# sends (``direct``). NCCL has no one-shot or two-shot kernel (custom all-reduce kernels such as
# TensorRT-LLM's or vLLM's; NCCL 2.27's symmetric kernels need registered windows, which
# nccl-tests does not use by default) and none of MPI's recursive doubling, Rabenseifner or
# Bruck. ``"any"``: every algorithm the twin knows, the fastest wins.
TUNER_ALGORITHMS: dict[str, dict[str, tuple[str, ...]] | None] = {
    "nccl": {
        "allreduce": ("ring", "tree", "hierarchical", "in_switch"),
        "reducescatter": ("ring", "hierarchical"),
        "allgather": ("ring", "hierarchical"),
        "broadcast": ("ring",),
        "reduce": ("ring",),
        "alltoall": ("direct",),
        "sendrecv": ("direct",),
    },
    "any": None,
}

HOPPER_NVLINK_EFFICIENCY = 20.6 / 25
"""The share of an H100's NVLink line rate (18 links of 25 GB/s a direction, 450 GB/s) that moves
data: NCCL's topology counts 20.6 GB/s a link on Hopper (``SM90_NVLINK_BW``, src/graph/topo.h),
370.8 GB/s a GPU, what a ring reaches (MODELLING.md section 6: about 370 busbw, nccl-tests#212).
A scale-up ``efficiency`` for a fabric whose NVLink rate is the line rate."""


@dataclass(frozen=True)
class ProtocolTransport:
    """Costs of one protocol over one link domain.

    ``base_latency_ns``: once per collective. ``hop_latency_ns``: per
    algorithm step (and per slot reuse), on top of the path latency.
    ``efficiency``: payload share of the wire. ``chunk_bytes``: payload of one
    buffer slot. ``chunks_in_flight``: slots a flow keeps in flight.
    """

    base_latency_ns: float
    hop_latency_ns: float
    efficiency: float
    chunk_bytes: int
    chunks_in_flight: int = 8

    def __post_init__(self) -> None:
        if not (0 < self.efficiency <= 1):
            raise TwinCoreError(LATER.gettext("efficiency %(value)s; expected a fraction in (0, 1]") % {"value": str(self.efficiency)})
        if self.base_latency_ns < 0 or self.hop_latency_ns < 0:
            raise TwinCoreError(LATER.gettext("latencies must be non-negative numbers of ns"))
        if self.chunk_bytes < 1:
            raise TwinCoreError(LATER.gettext("%(name)s %(value)s; expected at least 1 byte") % {"name": "chunk_bytes", "value": str(self.chunk_bytes)})
        if self.chunks_in_flight < 1:
            raise TwinCoreError(LATER.gettext("%(name)s %(value)s; expected at least 1") % {"name": "chunks_in_flight", "value": str(self.chunks_in_flight)})


# Latencies from NCCL's tuner (MODELLING.md: ring base LL 6.6 / LL128 14 / Simple 8.4 us; per hop
# NVLink 0.6 / 1.9 / 3.4 us, network 2.7 / 4 / 14 us); efficiencies LL 0.5, LL128 0.92. Slots:
# Simple 4 MiB in 8; LL 64 KiB of 16-byte lines (half flags) per slot; LL128 120 x 640 x 8 bytes.
_LL_CHUNK, _LL128_CHUNK, _SIMPLE_CHUNK = 32 * 1024, 120 * 640 * 8, 512 * 1024


# Payload and overhead bytes of one frame on the wire (``frame_payload_bytes``,
# ``frame_overhead_bytes``) of the link layers a domain runs on, for ``transport=`` overrides:
# - infiniband: a 4,096-byte MTU packet carries LRH 8 + BTH 12 + ICRC 4 + VCRC 2 bytes (IBTA
#   InfiniBand Architecture Specification Vol. 1; a write's first packet adds a 16-byte RETH);
# - roce: RoCEv2 at a 4,096-byte path MTU: BTH 12 + ICRC 4 inside UDP 8 + IPv4 20, in an
#   Ethernet frame of 14 header + 4 FCS bytes with 8 of preamble and 12 of inter-frame gap
#   (IBTA RoCEv2 annex A17; IEEE 802.3);
# - nvlink: 16-byte flits, one header flit per 16 data flits (256 bytes) of a write, 94.1 %
#   (NVLink as described by Foley and Danskin, IEEE Micro 37(2), 2017);
# - tcp: TCP over Ethernet at a 1,500-byte MTU: 1,448 bytes of payload a segment, TCP 20 + 12
#   of timestamps, IPv4 20, Ethernet 14 + 4 FCS + 8 preamble + 12 inter-frame gap (RFC 7323).
WIRE_FORMATS: dict[str, dict[str, int]] = {
    "infiniband": {"frame_payload_bytes": 4096, "frame_overhead_bytes": 26},
    "roce": {"frame_payload_bytes": 4096, "frame_overhead_bytes": 82},
    "nvlink": {"frame_payload_bytes": 256, "frame_overhead_bytes": 16},
    "tcp": {"frame_payload_bytes": 1448, "frame_overhead_bytes": 90},
}


@dataclass(frozen=True)
class DomainTransport:
    """Costs of moving data over one link domain.

    ``efficiency``: fraction of the link's payload rate delivered to the protocol
    (what the NIC, PCIe and the library lose besides the framing).
    ``peer_issue_ns``: cost of posting to one more peer. ``LL``, ``LL128``,
    ``Simple``: each protocol's ``ProtocolTransport``. ``frame_payload_bytes``
    and ``frame_overhead_bytes``: payload of one frame (packet, flit group) and
    the bytes the wire spends on it besides (headers, CRCs, preamble, gap);
    ``wire_efficiency`` is payload over frame bytes (``WIRE_FORMATS``).
    """

    efficiency: float
    peer_issue_ns: float
    LL: ProtocolTransport
    LL128: ProtocolTransport
    Simple: ProtocolTransport
    frame_payload_bytes: int = 4096
    frame_overhead_bytes: int = 0

    def __post_init__(self) -> None:
        if not (0 < self.efficiency <= 1):
            raise TwinCoreError(LATER.gettext("efficiency %(value)s; expected a fraction in (0, 1]") % {"value": str(self.efficiency)})
        if self.peer_issue_ns < 0:
            raise TwinCoreError(LATER.gettext("%(name)s must be a non-negative number of ns") % {"name": "peer_issue_ns"})
        if self.frame_payload_bytes < 1:
            raise TwinCoreError(LATER.gettext("%(name)s %(value)s; expected at least 1 byte") % {"name": "frame_payload_bytes", "value": str(self.frame_payload_bytes)})
        if self.frame_overhead_bytes < 0:
            raise TwinCoreError(LATER.gettext("%(name)s %(value)s; expected 0 or more bytes") % {"name": "frame_overhead_bytes", "value": str(self.frame_overhead_bytes)})

    @property
    def wire_efficiency(self) -> float:
        """Payload per byte on the wire: ``frame_payload_bytes / (frame_payload_bytes + frame_overhead_bytes)``.

        >>> round(Transport().scale_out.wire_efficiency, 5), Transport().scale_up.wire_efficiency
        (0.99369, 1.0)
        """
        return self.frame_payload_bytes / (self.frame_payload_bytes + self.frame_overhead_bytes)

    @property
    def link_efficiency(self) -> float:
        """The share of a link's rate a flow of this domain gets: framing times ``efficiency``."""
        return self.wire_efficiency * self.efficiency

    def protocol(self, name: str) -> ProtocolTransport:
        return getattr(self, name)


@dataclass(frozen=True)
class FlowCosts:
    """One protocol's costs per flow (arrays over flows, each by its flow's domain), in s and bytes."""

    base: np.ndarray  # once per collective; a collective pays its costliest flow's
    alpha: np.ndarray
    efficiency: np.ndarray
    chunk_bytes: np.ndarray
    chunks_in_flight: np.ndarray
    peer_issue: np.ndarray


@dataclass(frozen=True)
class Transport:
    """Transport of both domains plus in-switch reduction, direct algorithms and switch defaults.

    Defaults: scale-up efficiency 1.0, no framing overhead (a scale-up link's
    rate is taken as its data rate, as DOMAIN.md's 50 GB/s a card is; give
    ``WIRE_FORMATS["nvlink"]`` for NVLink's flits) and 100 ns per peer (a
    remote-write stream: tens to hundreds of ns); scale-out InfiniBand framing
    (4,096-byte MTU) with efficiency 0.946, together 0.94 of the link (46-48
    GB/s per 400G NDR port, MODELLING.md section 6), and 1 us per peer (a work
    request through the proxy). In-switch reduction (NVLS, SHARP) runs Simple, plus
    5 us start-up at efficiency 0.85 (NCCL's NVLS figure for Hopper), in
    loops of ``in_switch_channels`` (16: NCCL's NVLS channels on Hopper) x
    ranks chunks of at most ``in_switch_chunk_bytes`` (128 KiB:
    NCCL_NVLS_CHUNKSIZE), each loop waiting ``in_switch_step_latency_ns``
    (10 us: what the 8x H100 NVLS curve of MODELLING.md section 6 asks for,
    ``tests/simcore/test_simcore_calibrate.py``; NCCL's tuner charges 25 us per
    NVLS collective, whatever its size).
    Direct algorithms that write to every peer (one-shot, two-shot, direct
    reduce-scatter and allgather) run on at most ``direct_max_ranks`` ranks
    (16: libraries keep them inside one scale-up domain of 8-16 GPUs). A
    switch without ``attrs["forwarding_latency_ns"]`` forwards in
    ``switch_latency_ns`` (100). ``tuner``: whose algorithms ``algorithm="auto"``
    chooses from (``TUNER_ALGORITHMS``; ``"nccl"``, or ``"any"`` for every one the
    twin knows); any algorithm still runs when asked for by name.
    ``nccl_version``: the NCCL release whose scheduling of in-switch work the twin
    follows (``"2.18.5"``, ``"v2.20.5-1"`` and ``"2.21.5+cuda12.4"`` all read), by default
    2.21.5, a release that spreads every buffer over all NVLS channels as later ones do
    (``in_switch_share``, ``NVLS_SPREAD_SINCE``).
    """

    scale_up: DomainTransport = DomainTransport(
        1.0,
        100.0,
        LL=ProtocolTransport(6600.0, 600.0, 0.5, _LL_CHUNK),
        LL128=ProtocolTransport(14000.0, 1900.0, 0.92, _LL128_CHUNK),
        Simple=ProtocolTransport(8400.0, 3400.0, 1.0, _SIMPLE_CHUNK),
    )
    scale_out: DomainTransport = DomainTransport(
        0.946,
        1000.0,
        LL=ProtocolTransport(6600.0, 2700.0, 0.5, _LL_CHUNK),
        LL128=ProtocolTransport(14000.0, 4000.0, 0.92, _LL128_CHUNK),
        Simple=ProtocolTransport(8400.0, 14000.0, 1.0, _SIMPLE_CHUNK),
        **WIRE_FORMATS["infiniband"],
    )
    in_switch_latency_ns: float = 5000.0
    in_switch_efficiency: float = 0.85
    in_switch_step_latency_ns: float = 10_000.0
    in_switch_channels: int = 16
    in_switch_chunk_bytes: int = 128 * 1024
    direct_max_ranks: int = 16
    switch_latency_ns: float = 100.0
    tuner: str = "nccl"
    nccl_version: str = "2.21.5"

    def __post_init__(self) -> None:
        nccl_release(self.nccl_version)
        if self.tuner not in TUNER_ALGORITHMS:
            raise TwinCoreError(LATER.gettext("unknown tuner %(tuner)s; expected one of %(known)s") % {"tuner": repr(self.tuner), "known": list(TUNER_ALGORITHMS)})
        if self.in_switch_channels < 1:
            raise TwinCoreError(LATER.gettext("%(name)s %(value)s; expected at least 1") % {"name": "in_switch_channels", "value": str(self.in_switch_channels)})
        if self.in_switch_chunk_bytes < 1:
            raise TwinCoreError(LATER.gettext("%(name)s %(value)s; expected at least 1 byte") % {"name": "in_switch_chunk_bytes", "value": str(self.in_switch_chunk_bytes)})
        if self.in_switch_latency_ns < 0 or self.in_switch_step_latency_ns < 0:
            raise TwinCoreError(LATER.gettext("in-switch latencies must be non-negative numbers of ns"))

    def flow_costs(self, protocol: str, scale_out: np.ndarray, path_latency: np.ndarray) -> FlowCosts:
        """``protocol``'s costs for flows crossing scale-out (``scale_out``) or not, with their
        path latencies (s)."""
        if protocol not in PROTOCOLS:
            raise TwinCoreError(LATER.gettext("unknown protocol %(protocol)s; expected one of %(known)s") % {"protocol": repr(protocol), "known": list(PROTOCOLS)})
        up, out = self.scale_up.protocol(protocol), self.scale_out.protocol(protocol)

        def per_flow(up_value: float, out_value: float) -> np.ndarray:
            return np.where(scale_out, out_value, up_value).astype(float)

        return FlowCosts(
            base=per_flow(up.base_latency_ns, out.base_latency_ns) * 1e-9,
            alpha=per_flow(up.hop_latency_ns, out.hop_latency_ns) * 1e-9 + path_latency,
            efficiency=per_flow(up.efficiency, out.efficiency),
            chunk_bytes=per_flow(up.chunk_bytes, out.chunk_bytes),
            chunks_in_flight=per_flow(up.chunks_in_flight, out.chunks_in_flight),
            peer_issue=per_flow(self.scale_up.peer_issue_ns, self.scale_out.peer_issue_ns) * 1e-9,
        )

    def in_switch_startup(self, size_bytes: float, heads: int) -> float:
        """Fixed cost (s) of an in-switch step reducing ``size_bytes`` a rank over ``heads`` ranks:
        the start-up, then one synchronisation per loop of NCCL's NVLS chunking."""
        _, loops = in_switch_chunking(size_bytes, heads, channels=self.in_switch_channels, max_chunk_bytes=self.in_switch_chunk_bytes)
        return (self.in_switch_latency_ns + loops * self.in_switch_step_latency_ns) * 1e-9

    def in_switch_share(self, size_bytes: float, heads: int) -> float:
        """The share of its channels' bandwidth an in-switch step reducing ``size_bytes`` a rank
        over ``heads`` ranks moves data on, by ``nccl_version``.

        From NCCL 2.20 (``NVLS_SPREAD_SINCE``) the enqueue divides a collective's bytes over every
        NVLS channel, so all of them carry data: 1. Before, channel ``c`` took the bytes from
        ``c x heads x chunk`` in each loop, so the last loop, and a buffer smaller than one loop,
        left channels idle while the others took a whole loop's time: the bytes over as many
        whole loops. On 8 H100s, 1 MiB is half a loop of 16 KiB chunks: 8 of 16 channels.

        >>> [Transport(nccl_version=version).in_switch_share(2**20, 8) for version in ("2.18.5", "2.20.5")]
        [0.5, 1.0]
        >>> Transport(nccl_version="2.18.5").in_switch_share(2**24, 8)  # 4 whole loops of 32 KiB chunks
        1.0
        """
        if nccl_release(self.nccl_version) >= NVLS_SPREAD_SINCE:
            return 1.0
        chunk, loops = in_switch_chunking(size_bytes, heads, channels=self.in_switch_channels, max_chunk_bytes=self.in_switch_chunk_bytes)
        return min(1.0, size_bytes / (loops * self.in_switch_channels * heads * chunk))

    def tuner_algorithms(self, collective: str, known: list[str]) -> list[str]:
        """The algorithms of ``known`` (those implementing ``collective``) that ``tuner`` weighs
        for ``algorithm="auto"``, in ``known``'s order.

        >>> Transport().tuner_algorithms("allreduce", ["ring", "two_shot", "in_switch"])
        ['ring', 'in_switch']
        >>> Transport(tuner="any").tuner_algorithms("allreduce", ["ring", "two_shot", "in_switch"])
        ['ring', 'two_shot', 'in_switch']
        """
        chosen_from = TUNER_ALGORITHMS[self.tuner]
        if chosen_from is None:
            return list(known)
        return [name for name in known if name in chosen_from.get(collective, ())]

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready form (what a fabric stores in ``attrs["transport"]``)."""
        return asdict(self)

    def updated(self, overrides: Mapping[str, Any] | None) -> Transport:
        """A copy with ``overrides`` (same shape as ``to_dict``, any subset) applied.

        >>> Transport().updated({"scale_up": {"Simple": {"efficiency": 0.8}}}).scale_up.Simple.efficiency
        0.8
        """
        return _updated(self, overrides or {}, "transport")


def _updated(current: Any, overrides: Mapping[str, Any], where: str) -> Any:
    """``current`` (a frozen dataclass) with ``overrides`` applied, nested sections by name."""
    known = {field.name: field for field in fields(current)}
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise TwinCoreError(LATER.gettext("unknown %(where)s parameters %(unknown)s; expected some of %(known)s") % {"where": where, "unknown": unknown, "known": sorted(known)})
    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        present = getattr(current, name)
        if is_dataclass(present):
            if not isinstance(value, Mapping):
                raise TwinCoreError(LATER.gettext("%(where)s: expected a mapping with some of %(known)s") % {"where": f"{where}.{name}", "known": sorted(f.name for f in fields(present))})
            changes[name] = _updated(present, value, f"{where}.{name}")
        elif isinstance(present, str):
            changes[name] = str(value)
        else:
            changes[name] = int(value) if isinstance(present, int) else float(value)
    return replace(current, **changes)


# NCCL's NVLS chunk halves to these sizes when the buffer is less than this many loops of the
# current chunk (src/enqueue.cc, calcCollChunking: 64, 8 and 2 loops; 64, 32 and 16 KiB).
_NVLS_CHUNK_STEPS = ((64, 64 * 1024), (8, 32 * 1024), (2, 16 * 1024))


def in_switch_chunking(size_bytes: float, heads: int, *, channels: int, max_chunk_bytes: int) -> tuple[int, int]:
    """NCCL's NVLS chunk (bytes) for a buffer of ``size_bytes`` reduced over ``heads`` ranks, and
    the loops it takes.

    A loop moves ``channels`` x ``heads`` chunks at once (each rank, as head, reduces one chunk
    of the loop on every channel). The chunk starts at ``max_chunk_bytes`` and halves while the
    buffer is less than 64, 8 and 2 loops of it, down to 16 KiB, so the channels stay busy on
    mid-size buffers at the price of more, smaller loops. On 8 H100s (16 channels): 128 KiB from
    1 GiB up, 64 KiB from 64 MiB, 32 KiB from 8 MiB, 16 KiB below.

    >>> [in_switch_chunking(2**power, 8, channels=16, max_chunk_bytes=2**17) for power in (20, 24, 26, 28, 30, 33)]
    [(16384, 1), (32768, 4), (65536, 8), (65536, 32), (131072, 64), (131072, 512)]
    """
    concurrent = channels * heads
    chunk = max_chunk_bytes
    for loops, smaller in _NVLS_CHUNK_STEPS:
        if size_bytes < loops * concurrent * chunk and chunk > smaller:
            chunk = smaller
    return chunk, max(1, math.ceil(size_bytes / (concurrent * chunk)))


NVLS_SPREAD_SINCE = (2, 20)
"""The first NCCL release (major, minor) whose enqueue spreads an NVLS collective's bytes over
every channel: ``scheduleCollTasksToPlan`` gives each of the usable channels (``nvlsChannels``)
``maxBytesPerChannel`` = bytes / channels and the kernel reads each channel's ``workOffset`` and
``workCount`` (``src/enqueue.cc`` and ``src/device/all_reduce.h`` of 2.21.5, NVIDIA/nccl ab2b89c;
the code index also holds that scheduler without 2.21's CollNet buffer registration and with the
version-1 tuner plugin 2.20.5's ``init.cc``, 48bb7fe, loads: the 2.20 enqueue). Up to 2.19 the
kernel placed channel ``bid``'s part of each loop at ``bid x nHeads x chunk``
(``src/collectives/device/all_reduce.h`` of 2.18.1, d97a32f; 2.19.3's enqueue, 8c6c595, still
hands the kernel only a chunk size)."""


def nccl_release(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) of an NCCL version as NCCL and its users write it.

    >>> nccl_release("2.18.5"), nccl_release("v2.20.5-1"), nccl_release("2.21.5+cuda12.4"), nccl_release("2.19")
    ((2, 18, 5), (2, 20, 5), (2, 21, 5), (2, 19, 0))
    """
    text = str(version).strip().removeprefix("v").split("+")[0].split("-")[0]
    parts = text.split(".")
    if not 2 <= len(parts) <= 3 or not all(part.isdigit() for part in parts):
        raise TwinCoreError(LATER.gettext("NCCL version %(version)s; expected major.minor or major.minor.patch, as 2.18.5") % {"version": repr(version)})
    major, minor, patch = (int(part) for part in (*parts, "0")[:3])
    return major, minor, patch


def protocols_to_try(protocol: str, *, in_switch: bool) -> tuple[str, ...]:
    """The protocols to evaluate for ``protocol`` (``"auto"``: all, the fastest wins); in-switch
    reduction runs Simple only (NVLS).

    >>> protocols_to_try("auto", in_switch=False), protocols_to_try("auto", in_switch=True)
    (('LL', 'LL128', 'Simple'), ('Simple',))
    """
    if in_switch:
        if protocol not in ("auto", "Simple"):
            raise TwinCoreError(LATER.gettext("in-switch reduction runs the Simple protocol only, not %(protocol)s") % {"protocol": protocol})
        return ("Simple",)
    return PROTOCOLS if protocol == "auto" else (protocol,)


def transport_for(spec: FabricSpec, overrides: Mapping[str, Any] | None = None) -> Transport:
    """Defaults, then the fabric's stored ``attrs["transport"]``, then ``overrides``."""
    stored = spec.attrs.get("transport")
    stored_plain = stored.to_plain() if hasattr(stored, "to_plain") else stored
    return Transport().updated(stored_plain).updated(overrides)
