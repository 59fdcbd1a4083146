"""Collective algorithms as schedules of phases, and the step-time law they share.

A ``Phase`` is a flow pattern between ranks (rank ``sources[i]`` sends to
``targets[i]``), the bytes each flow carries per step, and how many identical
steps run back to back; a pipelined phase also has a depth (stages a chunk
crosses), and a direct phase the number of peers each rank posts to. Rates come
from max-min sharing (``simulate``) or, for the non-blocking baseline, from the
busiest card port alone (``closed_form_time``).

Step time of a flow carrying ``b`` bytes at payload rate ``R`` in ``m`` chunks of
``C``, ``k`` chunks in flight, with a start-up ``s`` paid once per step (posting to
each peer of a direct step, in-switch start-up):

    s + alpha + b / R + (depth - 1) (alpha + C / R) + floor((m - 1) / k) max(0, alpha - (k - 1) C / R)

which is MODELLING.md section 5's alpha + n beta per step, plus the chunk
costs. An in-switch step's start-up grows with its loops (NCCL's NVLS
chunking, ``transport.in_switch_chunking``): ``heads`` ranks share one switch
domain. A slot is free again ``alpha + C / R`` after it was filled, so every
``k`` chunks the wire waits for what ``k - 1`` further chunks do not cover
(chunks much smaller than the bandwidth-delay product over ``k``); a pipelined
phase also pays a fill of ``depth - 1`` chunks (too large a chunk: no
pipelining). With ``k = 1`` it is stop-and-wait: ``m alpha + b / R``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from twin.simcore.errors import TwinCoreError
from twin.simcore.translation import LATER, Joined

__all__ = [
    "ALGORITHMS",
    "ALL_PAIRS",
    "ALL_PAIRS_PATTERN",
    "check_collective",
    "algorithms_for",
    "BUS_FACTORS",
    "COLLECTIVES",
    "Phase",
    "closed_form_time",
    "phases_for",
    "posting_time",
    "step_time",
]

COLLECTIVES = ("allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall", "sendrecv")
ALGORITHMS = (
    "ring",
    "tree",
    "recursive_doubling",
    "rabenseifner",
    "hierarchical",
    "one_shot",
    "two_shot",
    "in_switch",
    "direct",
    "bruck",
)
# nccl-tests busbw = algbw * factor(p) (doc/PERFORMANCE.md).
BUS_FACTORS: dict[str, Callable[[int], float]] = {
    "allreduce": lambda p: 2 * (p - 1) / p,
    "reducescatter": lambda p: (p - 1) / p,
    "allgather": lambda p: (p - 1) / p,
    "alltoall": lambda p: (p - 1) / p,
    "broadcast": lambda p: 1.0,
    "reduce": lambda p: 1.0,
    "sendrecv": lambda p: 1.0,
}


@dataclass(frozen=True, eq=False)
class Phase:
    """Identical steps of one flow pattern; ``pattern`` names it for caching."""

    name: str
    pattern: str
    sources: np.ndarray
    targets: np.ndarray
    bytes_per_flow: float
    steps: int = 1
    depth: int = 1
    peer_issues: int = 0  # per-peer posts of each rank per step (direct algorithms)
    in_switch: bool = False
    memory_semantic: bool = False  # direct writes: only on scale-up flows
    unbuilt_pairs: int = 0  # all pairs of this many ranks, left unbuilt (sources, targets empty)
    heads: int = 0  # in-switch: ranks reduced through one switch domain (NCCL's NVLS heads)

    @property
    def flow_count(self) -> int:
        return self.unbuilt_pairs * (self.unbuilt_pairs - 1) or len(self.sources)


def step_time(
    bytes_per_flow: float | np.ndarray,
    rate: np.ndarray | float,
    alpha: np.ndarray | float,
    chunk_bytes: np.ndarray | float,
    chunks_in_flight: np.ndarray | float,
    *,
    depth: int = 1,
    startup: np.ndarray | float = 0.0,
) -> np.ndarray | float:
    """Time of one step per flow (see the module docstring); arrays broadcast.

    ``rate`` is the payload rate (protocol efficiency applied).
    """
    chunks = np.maximum(1, np.ceil(bytes_per_flow / chunk_bytes))
    wire = bytes_per_flow / chunks / rate  # one chunk on the wire
    slot_waits = np.floor((chunks - 1) / chunks_in_flight) * np.maximum(0.0, alpha - (chunks_in_flight - 1) * wire)
    return startup + alpha + bytes_per_flow / rate + (depth - 1) * (alpha + wire) + slot_waits


def posting_time(
    phase: Phase, peer_issue: np.ndarray | float, bytes_per_flow: float, rate: np.ndarray | float
) -> np.ndarray | float:
    """What a step's per-peer posting adds to its time (s), per flow at payload ``rate``.

    Direct writes (memory-semantic: one-shot, two-shot, direct reduce-scatter and allgather)
    post their writes and flags before the data counts, all of it: ``peer_issues x
    peer_issue`` (MODELLING.md's corrected rows). Posted messages (direct all-to-all: NCCL's
    grouped sends, which the proxy thread progresses for every peer at once, NVIDIA/nccl#316,
    #376) go on the wire as they are posted: message ``j`` of ``m = peer_issues`` leaves at ``j o``
    and the port drains them one after another, so the step ends at
    ``max(o + b / R, m o + b / (m R))`` (``b / R`` the port's time for all ``m``): the
    posting hides behind the transfers until it takes longer than they do."""
    posting = phase.peer_issues * peer_issue
    if phase.memory_semantic or not phase.peer_issues:
        return posting
    wire = bytes_per_flow / rate  # all m messages through the rank's port
    return np.maximum(peer_issue, posting + wire / phase.peer_issues - wire)


def phases_for(
    collective: str,
    algorithm: str,
    size_bytes: float,
    ranks: int,
    groups: np.ndarray | None = None,
    *,
    pairs_up_to: int | None = None,
    hosts: np.ndarray | None = None,
) -> list[Phase]:
    """The phases of ``algorithm`` for ``collective`` on ``ranks`` ranks (0..p-1).

    ``size_bytes`` follows nccl-tests: the per-rank buffer for allreduce,
    broadcast, reduce, alltoall and sendrecv; the whole output (allgather) or
    input (reducescatter) buffer. ``groups`` (rank -> group number, equal
    sizes) is needed by ``hierarchical``; ``hosts`` (rank -> host number) makes
    ``tree`` as deep as NCCL's, a chain inside each host (without: each rank its own
    host). Raises ``TwinCoreError`` when the pair does not exist or does not fit the
    ranks. ``pairs_up_to``: an all-pairs phase of more
    flows is left unbuilt (``Phase.unbuilt_pairs``; at 16,384 ranks its pairs alone take 4 GiB)
    for a caller that routes it as flow classes.
    """
    check_collective(collective)
    if ranks < 2:
        raise TwinCoreError(LATER.gettext("a collective needs at least 2 ranks, got %(ranks)s") % {"ranks": str(ranks)})
    builder = _BUILDERS.get((collective, algorithm))
    if builder is None:
        known = sorted(alg for coll, alg in _BUILDERS if coll == collective)
        unknown = LATER.gettext("no algorithm %(algorithm)s for %(collective)s; expected one of %(names)s or auto")
        raise TwinCoreError(unknown % {"algorithm": repr(algorithm), "collective": collective, "names": Joined(known)})
    phases = builder(float(size_bytes), ranks, hosts if algorithm == "tree" else groups)
    if not any(phase.unbuilt_pairs for phase in phases) or (pairs_up_to is not None and ranks * (ranks - 1) > pairs_up_to):
        return phases
    sources, targets = _all_pairs(ranks)
    return [
        dataclasses.replace(phase, sources=sources, targets=targets, unbuilt_pairs=0) if phase.unbuilt_pairs else phase
        for phase in phases
    ]


def algorithms_for(collective: str) -> list[str]:
    """The algorithms that implement ``collective``, in ``ALGORITHMS`` order."""
    return [alg for alg in ALGORITHMS if (collective, alg) in _BUILDERS]


def closed_form_time(
    phases: list[Phase],
    *,
    bandwidth: float,
    alpha: float,
    chunk_bytes: float,
    chunks_in_flight: float = 8,
    peer_issue: float = 0.0,
    base: float = 0.0,
    in_switch_startup: float = 0.0,
    in_switch_efficiency: float = 1.0,
) -> float:
    """Non-blocking baseline: every flow runs at ``bandwidth`` (payload bytes/s) shared only
    with the other flows of its own card ports (the busiest of sender and receiver); ``base``
    once, then every phase's steps.
    """
    total = base
    for phase in phases:
        if phase.in_switch:
            rate = bandwidth * in_switch_efficiency
            total += phase.steps * step_time(phase.bytes_per_flow, rate, alpha, chunk_bytes, chunks_in_flight, startup=in_switch_startup)
            continue
        out_degree = np.bincount(phase.sources).max()
        in_degree = np.bincount(phase.targets).max()
        rate = bandwidth / max(out_degree, in_degree)
        total += phase.steps * step_time(
            phase.bytes_per_flow, rate, alpha, chunk_bytes, chunks_in_flight,
            depth=phase.depth, startup=posting_time(phase, peer_issue, phase.bytes_per_flow, rate),
        )  # fmt: skip
    return float(total)


def _shift(p: int, distance: int) -> tuple[np.ndarray, np.ndarray]:
    ranks = np.arange(p)
    return ranks, (ranks + distance) % p


ALL_PAIRS_PATTERN = "all-pairs"
"""The pattern name of every phase from each rank to every other (``_all_pairs``)."""


def _all_pairs(p: int) -> tuple[np.ndarray, np.ndarray]:
    sources = np.repeat(np.arange(p), p - 1)
    offsets = np.tile(np.arange(1, p), p)
    return sources, (sources + offsets) % p


def _ring(collective: str) -> Callable:
    def build(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
        if collective in ("broadcast", "reduce"):
            chain = np.arange(p - 1)
            sources, targets = (chain, chain + 1) if collective == "broadcast" else (chain + 1, chain)
            return [Phase("pipelined chain", f"chain-{collective}", sources, targets, n, depth=p - 1)]
        steps = 2 * (p - 1) if collective == "allreduce" else p - 1
        sources, targets = _shift(p, 1)
        return [Phase("ring", "ring", sources, targets, n / p, steps=steps)]

    return build


def _binary_tree_edges(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Child -> parent edges of NCCL-style double binary trees (two complementary heaps).

    The second heap numbers ranks backwards, so the first heap's inner ranks
    are leaves of the second; each tree carries half the data.
    """
    children = np.arange(1, p)
    parents = (children - 1) // 2
    mirrored_children, mirrored_parents = p - 1 - children, p - 1 - parents
    return np.concatenate([children, mirrored_children]), np.concatenate([parents, mirrored_parents])


def _nccl_tree_depth(p: int, hosts: np.ndarray | None) -> int:
    """The hops a chunk climbs in NCCL's trees: ``nRanks / nNodes - 1 + log2(nNodes)``
    (``connectTrees``, ``src/graph/connect.cc``; its tuner prices tree latency the same way):
    inside a host the ranks form a chain, across hosts two complementary binary trees
    (``ncclGetDtree``). ``hosts``: rank -> host number; without, each rank is its own host.

    >>> _nccl_tree_depth(8, np.zeros(8)), _nccl_tree_depth(8, None), _nccl_tree_depth(1024, np.arange(1024) // 8)
    (7, 3, 14)
    """
    if hosts is None:
        return int(math.floor(math.log2(p)))
    per_host = np.unique(hosts, return_counts=True)[1]
    return int(per_host.max()) - 1 + int(math.floor(math.log2(len(per_host))))


def _tree(collective: str) -> Callable:
    # The traffic of NCCL's trees (each rank sends and receives about n a phase, spread over
    # every rank's ports as NCCL spreads its tree channels over a host's NICs) as double binary
    # trees over all ranks; the pipeline as deep as NCCL's chains and trees.
    def build(n: float, p: int, hosts: np.ndarray | None) -> list[Phase]:
        up_sources, up_targets = _binary_tree_edges(p)
        depth = _nccl_tree_depth(p, hosts)
        reduce = Phase("tree reduce", "tree-up", up_sources, up_targets, n / 2, depth=depth)
        broadcast = Phase("tree broadcast", "tree-down", up_targets, up_sources, n / 2, depth=depth)
        return {"allreduce": [reduce, broadcast], "reduce": [reduce], "broadcast": [broadcast]}[
            collective
        ]

    return build


def _folded(n: float, p: int, body: Callable[[int], list[Phase]]) -> list[Phase]:
    """``body`` on the largest power of two p' <= p; the p - p' extra ranks fold in first."""
    core = 1 << (p.bit_length() - 1)
    phases = body(core)
    extra = p - core
    if extra:
        extra_ranks = np.arange(core, p)
        partners = extra_ranks - core
        phases = [
            Phase("fold extra ranks", "fold", extra_ranks, partners, n),
            *phases,
            Phase("unfold extra ranks", "unfold", partners, extra_ranks, n),
        ]
    return phases


def _exchange(core: int, distance: int) -> tuple[np.ndarray, np.ndarray]:
    ranks = np.arange(core)
    return ranks, ranks ^ distance


def _recursive_doubling_allreduce(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    def body(core: int) -> list[Phase]:
        return [
            Phase(f"exchange at distance {1 << k}", f"xor-{1 << k}", *_exchange(core, 1 << k), n)
            for k in range(core.bit_length() - 1)
        ]

    return _folded(n, p, body)


def check_collective(collective: str) -> None:
    """``TwinCoreError`` unless ``collective`` is one the twin models."""
    if collective not in COLLECTIVES:
        raise TwinCoreError(LATER.gettext("unknown collective %(collective)s; expected one of %(names)s") % {"collective": repr(collective), "names": Joined(list(COLLECTIVES))})


def _require_power_of_two(p: int, algorithm: str) -> None:
    if p & (p - 1):
        raise TwinCoreError(LATER.gettext("%(algorithm)s needs a power-of-two rank count for this collective, got %(ranks)s") % {"algorithm": algorithm, "ranks": str(p)})


def _doubling_allgather(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    _require_power_of_two(p, "recursive doubling")
    return [
        Phase(f"gather at distance {1 << k}", f"xor-{1 << k}", *_exchange(p, 1 << k), n / p * (1 << k))
        for k in range(p.bit_length() - 1)
    ]


def _halving_reducescatter(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    _require_power_of_two(p, "recursive halving")
    return [
        Phase(f"halve at distance {p >> k}", f"xor-{p >> k}", *_exchange(p, p >> k), n / (1 << k))
        for k in range(1, p.bit_length())
    ]


def _rabenseifner_allreduce(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    def body(core: int) -> list[Phase]:
        halving = _halving_reducescatter(n, core, None)
        return [*halving, *reversed(halving)]

    return _folded(n, p, body)


def _group_rings(p: int, groups: np.ndarray | None) -> tuple[int, int, tuple, tuple]:
    """(inner, outer, ring inside each group, ring across groups by local index) of the
    ranks' equal groups (super-nodes or hosts): rank i of a group talks across to rank i of the
    next group, each on its own rail."""
    if groups is None:
        raise TwinCoreError(LATER.gettext("hierarchical needs groups of ranks (super-nodes or hosts)"))
    labels, local = np.unique(groups, return_inverse=True)
    sizes = np.bincount(local)
    if len(labels) < 2 or (sizes != sizes[0]).any() or sizes[0] < 2:
        unequal = LATER.gettext("hierarchical needs at least 2 groups (super-nodes or hosts) of equal size, at least 2 ranks each; got sizes %(sizes)s in %(count)s groups")
        raise TwinCoreError(unequal % {"sizes": str(sorted(set(sizes.tolist()))), "count": str(len(labels))})
    inner, outer = int(sizes[0]), len(labels)
    members = np.argsort(local, kind="stable").reshape(outer, inner)  # members[group, local index]
    inner_next = np.roll(members, -1, axis=1)
    outer_next = np.roll(members, -1, axis=0)
    return inner, outer, (members.ravel(), inner_next.ravel()), (members.ravel(), outer_next.ravel())


def _hierarchical_allreduce(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    inner, outer, inside, across = _group_rings(p, groups)
    return [
        Phase("reduce-scatter inside groups", "inner-ring", *inside, n / inner, steps=inner - 1),
        Phase("allreduce across groups", "outer-ring", *across, n / p, steps=2 * (outer - 1)),
        Phase("allgather inside groups", "inner-ring", *inside, n / inner, steps=inner - 1),
    ]


def _hierarchical_allgather(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    # Each rank's n / p block goes round its rail first, then the group shares what it holds.
    inner, outer, inside, across = _group_rings(p, groups)
    return [
        Phase("allgather across groups", "outer-ring", *across, n / p, steps=outer - 1),
        Phase("allgather inside groups", "inner-ring", *inside, n / inner, steps=inner - 1),
    ]


def _hierarchical_reducescatter(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    # The mirror image: reduce inside the group to n / inner a rank, then across its rail.
    inner, outer, inside, across = _group_rings(p, groups)
    return [
        Phase("reduce-scatter inside groups", "inner-ring", *inside, n / inner, steps=inner - 1),
        Phase("reduce-scatter across groups", "outer-ring", *across, n / p, steps=outer - 1),
    ]


# A direct write step posts to p - 1 peers, then raises a flag at each for the
# barrier: 2 (p - 1) posts (MODELLING.md's sync(p) of at least (p - 1) o with flags).
def _every_peer(name: str, p: int, bytes_per_flow: float, **options) -> Phase:
    """An all-pairs phase, its pairs left for ``phases_for`` to build (or not)."""
    empty = np.empty(0, np.intp)
    return Phase(name, ALL_PAIRS_PATTERN, empty, empty, bytes_per_flow, unbuilt_pairs=p, **options)


def _one_shot(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    return [_every_peer("write to every peer", p, n, peer_issues=2 * (p - 1), memory_semantic=True)]


def _two_shot(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    return [
        _every_peer("direct reduce-scatter", p, n / p, peer_issues=2 * (p - 1), memory_semantic=True),
        _every_peer("direct allgather", p, n / p, peer_issues=2 * (p - 1), memory_semantic=True),
    ]


def _direct(collective: str) -> Callable:
    def build(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
        if collective == "sendrecv":
            return [Phase("send to the next rank", "ring", *_shift(p, 1), n)]
        if collective == "alltoall":
            # Posted at once: p - 1 messages a rank, each on the wire once posted, one latency.
            return [_every_peer("exchange with every peer", p, n / p, peer_issues=p - 1)]
        return [
            _every_peer(f"direct {collective}", p, n / p, peer_issues=2 * (p - 1), memory_semantic=True)
        ]

    return build


def _bruck(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    return [
        Phase(f"bruck round {k}", f"shift-{1 << k}", *_shift(p, 1 << k), n / 2)
        for k in range(math.ceil(math.log2(p)))
    ]


def _in_switch(n: float, p: int, groups: np.ndarray | None) -> list[Phase]:
    # Every rank pushes n to the switch tree and pulls the reduced n back; the ranks of one
    # super-node (or host) are the heads of its NVLS domain, all of them without groups.
    ranks = np.arange(p)
    heads = p if groups is None else int(np.unique(groups, return_counts=True)[1].max())
    return [Phase("in-switch reduction", "reduction-tree", ranks, np.zeros(p, np.intp), n, in_switch=True, heads=heads)]


_BUILDERS: dict[tuple[str, str], Callable[[float, int, np.ndarray | None], list[Phase]]] = {
    **{(collective, "ring"): _ring(collective) for collective in ("allreduce", "reducescatter", "allgather", "broadcast", "reduce")},
    **{(collective, "tree"): _tree(collective) for collective in ("allreduce", "broadcast", "reduce")},
    ("allreduce", "recursive_doubling"): _recursive_doubling_allreduce,
    ("allgather", "recursive_doubling"): _doubling_allgather,
    ("allreduce", "rabenseifner"): _rabenseifner_allreduce,
    ("reducescatter", "rabenseifner"): _halving_reducescatter,
    ("allreduce", "hierarchical"): _hierarchical_allreduce,
    ("allgather", "hierarchical"): _hierarchical_allgather,
    ("reducescatter", "hierarchical"): _hierarchical_reducescatter,
    ("allreduce", "one_shot"): _one_shot,
    ("allreduce", "two_shot"): _two_shot,
    ("allreduce", "in_switch"): _in_switch,
    **{(collective, "direct"): _direct(collective) for collective in ("reducescatter", "allgather", "alltoall", "sendrecv")},
    ("alltoall", "bruck"): _bruck,
}

ALL_PAIRS = frozenset(
    pair for pair, build in _BUILDERS.items() if any(phase.pattern == ALL_PAIRS_PATTERN for phase in build(1.0, 4, np.arange(4) // 2))
)
"""The (collective, algorithm) pairs with a phase from every rank to every other: p (p - 1)
flows, so callers can refuse them by the rank count before building the pairs (found by
building each on 4 ranks)."""
