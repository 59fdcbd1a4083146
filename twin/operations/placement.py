"""Place a TP x PP x DP (x EP) job on the free cards of a fabric, and evaluate the placement.

**Rank order** (Megatron-LM's, the same as ``twin.traces.training``):
``rank = (stage * dp + dp_index) * tp + tp_index``. Tensor-parallel groups are
``tp`` consecutive ranks, a pipeline stage is ``tp * dp`` consecutive ranks,
and an expert-parallel group is ``ep`` consecutive DP replicas of one stage and
TP index (``ep`` divides ``dp``: experts are carved out of the DP replicas).

**Strategies** (``STRATEGIES``):

- ``naive``: the free cards in fabric order, rank 0 on the first;
- ``random``: a seeded random choice and order of the free cards;
- ``aware``: TP groups inside the smallest switch domain that holds them,
  pipelines on neighbouring domains, DP across, then a routing-aware
  refinement (``aware_placement`` says how);
- ``user``: the user's own rank -> card mapping, checked.

**Evaluation** (``evaluate_placement``): every parallel dimension's
collective runs in all its groups at once on the simulation core
(``twin.operations.concurrent``): TP and DP ring all-reduce, EP direct
all-to-all, PP a send from each stage to the next. Per-step traffic comes
from ``twin.traces.training`` (``job_traffic``). The dimensions are timed one
after the other (no overlap): the communication time of one step.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from twin.operations.concurrent import GroupRun, link_records, route_phase, run_groups
from twin.simcore.algorithms import BUS_FACTORS, Phase, phases_for
from twin.simcore.compile import CompiledFabric, arc_record, compile_fabric, flow_keys, route
from twin.simcore.errors import ProblemsError
from twin.simcore.model import Attrs, FabricSpec
from twin.simcore.transport import transport_for
from twin.simcore.translation import ENGLISH, LATER, Joined, Phrase, Translations, plain_words, rendered
from twin.traces.model import CollectiveEvent, FlowEvent
from twin.traces.training import PARAMS_PER_LAYER_PER_HIDDEN2, training_step

__all__ = [
    "ARTICLE_MODEL_PARAMS",
    "DEFAULT_SEQ_LEN",
    "DIMENSIONS",
    "STRATEGIES",
    "DimensionTraffic",
    "Job",
    "Placement",
    "PlacementError",
    "aware_placement",
    "compare_placements",
    "evaluate_placement",
    "job_traffic",
    "mapping_problems",
    "naive_placement",
    "place",
    "random_placement",
    "user_placement",
]

DIMENSIONS = ("tp", "pp", "dp", "ep")
STRATEGIES = ("naive", "random", "aware", "user")
ARTICLE_MODEL_PARAMS = 175e9
"""Model size used when a job gives neither ``model_params`` nor ``group_bytes`` (DOMAIN.md's case)."""
DEFAULT_SEQ_LEN = 2048
# GPT-3 family shape when only the parameter count is known: layers = hidden / 128.
_HIDDEN_PER_LAYER = 128
# Which collective (and algorithm) each dimension runs.
_COLLECTIVES = {"tp": ("allreduce", "ring"), "dp": ("allreduce", "ring"), "ep": ("alltoall", "direct"), "pp": ("sendrecv", "chain")}


class PlacementError(ProblemsError):
    """A job, a free-card list or a mapping that cannot be placed; ``problems`` lists each reason."""


@dataclass(frozen=True, kw_only=True)
class Job:
    """A parallel training job: ``tp x pp x dp`` ranks, ``ep`` carved out of ``dp``.

    Per-step traffic comes either from the model (``model_params`` and the
    optional shape fields, see ``job_traffic``) or from ``group_bytes``:
    dimension -> bytes per rank of one collective call per step (the nccl-tests
    ``size``), which then replaces the model for every dimension it names.
    """

    tp: int
    dp: int
    pp: int = 1
    ep: int = 1
    model_params: float | None = None
    bytes_per_param: int = 2
    hidden_size: int | None = None
    seq_len: int | None = None
    layers: int | None = None
    micro_batches: int = 1
    micro_batch_size: int = 1
    group_bytes: Mapping[str, float] = field(default_factory=Attrs)

    def __post_init__(self) -> None:
        object.__setattr__(self, "group_bytes", Attrs(self.group_bytes))
        problems = [
            LATER.gettext("%(name)s %(value)s; expected a positive integer") % {"name": name, "value": repr(getattr(self, name))}
            for name in ("tp", "dp", "pp", "ep", "bytes_per_param", "micro_batches", "micro_batch_size")
            if type(getattr(self, name)) is not int or getattr(self, name) < 1
        ]
        problems += [
            LATER.gettext("%(name)s %(value)s; expected a positive integer or None") % {"name": name, "value": repr(getattr(self, name))}
            for name in ("hidden_size", "seq_len", "layers")
            if getattr(self, name) is not None and (type(getattr(self, name)) is not int or getattr(self, name) < 1)
        ]
        if self.model_params is not None and not (
            isinstance(self.model_params, (int, float)) and math.isfinite(self.model_params) and self.model_params >= 1
        ):
            problems.append(LATER.gettext("model_params %(value)s; expected a positive number of parameters") % {"value": repr(self.model_params)})
        if not problems and self.dp % self.ep:
            problems.append(
                LATER.gettext("ep %(ep)s does not divide dp %(dp)s; expected expert groups carved out of the DP replicas") % {"ep": str(self.ep), "dp": str(self.dp)}
            )
        for name, value in self.group_bytes.items():
            if name not in DIMENSIONS:
                problems.append(LATER.gettext("group_bytes names %(name)s; expected some of %(dimensions)s") % {"name": repr(name), "dimensions": Joined(DIMENSIONS)})
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
                problems.append(LATER.gettext("group_bytes[%(name)s] %(value)s; expected a positive number of bytes") % {"name": repr(name), "value": repr(value)})
        if problems:
            raise PlacementError(LATER.gettext("invalid job"), problems)

    @property
    def world(self) -> int:
        """Number of ranks (cards): ``tp * pp * dp``."""
        return self.tp * self.pp * self.dp

    def group_size(self, dimension: str) -> int:
        return {"tp": self.tp, "pp": self.pp, "dp": self.dp, "ep": self.ep}[dimension]

    def groups(self, dimension: str) -> np.ndarray:
        """Rank numbers of every group of ``dimension``: one row per group, in ring order."""
        ranks = np.arange(self.world).reshape(self.pp, self.dp, self.tp)
        if dimension == "tp":
            return ranks.reshape(-1, self.tp)
        if dimension == "dp":
            return ranks.transpose(0, 2, 1).reshape(-1, self.dp)
        if dimension == "pp":
            return ranks.reshape(self.pp, -1).T.copy()
        if dimension == "ep":
            return ranks.reshape(self.pp, self.dp // self.ep, self.ep, self.tp).transpose(0, 1, 3, 2).reshape(-1, self.ep)
        raise PlacementError(LATER.gettext("unknown dimension %(dimension)s; expected one of %(dimensions)s") % {"dimension": repr(dimension), "dimensions": Joined(DIMENSIONS)})

    def coordinates(self, rank: int) -> tuple[int, int, int]:
        """``(stage, dp_index, tp_index)`` of a rank."""
        stage_and_replica, tp_index = divmod(rank, self.tp)
        stage, dp_index = divmod(stage_and_replica, self.dp)
        return stage, dp_index, tp_index

    def to_dict(self) -> dict[str, Any]:
        return {
            "tp": self.tp, "pp": self.pp, "dp": self.dp, "ep": self.ep, "world": self.world,
            "model_params": self.model_params, "bytes_per_param": self.bytes_per_param,
            "hidden_size": self.hidden_size, "seq_len": self.seq_len, "layers": self.layers,
            "micro_batches": self.micro_batches, "micro_batch_size": self.micro_batch_size,
            "group_bytes": self.group_bytes.to_plain(),
        }  # fmt: skip


@dataclass(frozen=True)
class DimensionTraffic:
    """One dimension's traffic per step: ``calls`` collectives of ``bytes_per_call`` each (per rank)."""

    collective: str
    algorithm: str
    calls: int
    bytes_per_call: float


def job_traffic(job: Job) -> dict[str, DimensionTraffic]:
    """Per-step traffic of every dimension whose groups have more than one rank.

    From the model, via ``twin.traces.training.training_step`` (its formulas:
    TP 4 all-reduces of the activations per layer and micro-batch, PP one send
    of the activations per stage boundary and schedule slot, EP a dispatch and
    combine all-to-all per layer, DP one gradient all-reduce of
    ``model_params / (tp * pp) * bytes_per_param``). The step is generated for
    a job with the same TP, PP and EP but only ``2 * ep`` replicas: every
    group's traffic is the same whatever ``dp``. Shape defaults when only
    ``model_params`` is given: a GPT-3-shaped model with
    ``hidden = (128 * P / 12) ** (1/3)`` rounded to 128, ``hidden / 128`` layers
    (rounded to a multiple of ``pp``) and ``seq_len = DEFAULT_SEQ_LEN``;
    ``ARTICLE_MODEL_PARAMS`` when neither the model nor ``group_bytes`` is
    given. ``group_bytes`` entries replace the model's traffic (one call per
    step).
    """
    traffic: dict[str, DimensionTraffic] = {}
    modelled = [dimension for dimension in DIMENSIONS if job.group_size(dimension) > 1 and dimension not in job.group_bytes]
    if modelled:
        traffic.update(_model_traffic(job))
    for dimension, size in job.group_bytes.items():
        if job.group_size(dimension) > 1:
            traffic[dimension] = DimensionTraffic(*_COLLECTIVES[dimension], calls=1, bytes_per_call=float(size))
    return {dimension: traffic[dimension] for dimension in DIMENSIONS if dimension in traffic}


def _model_traffic(job: Job) -> dict[str, DimensionTraffic]:
    params = float(job.model_params if job.model_params is not None else ARTICLE_MODEL_PARAMS)
    hidden = job.hidden_size or max(
        _HIDDEN_PER_LAYER,
        _HIDDEN_PER_LAYER * round((_HIDDEN_PER_LAYER * params / PARAMS_PER_LAYER_PER_HIDDEN2) ** (1 / 3) / _HIDDEN_PER_LAYER),
    )
    layers = job.layers or job.pp * max(1, round(hidden / _HIDDEN_PER_LAYER / job.pp))
    replicas = job.ep * (2 if job.dp > job.ep else 1)
    reduced = Job(tp=job.tp, pp=job.pp, dp=replicas, ep=job.ep)
    step = training_step(
        model_params=params, tp=job.tp, pp=job.pp, dp=replicas, ep=job.ep,
        micro_batches=job.micro_batches, bytes_per_param=job.bytes_per_param,
        placement=[f"rank{rank}" for rank in range(reduced.world)],
        hidden_size=hidden, seq_len=job.seq_len or DEFAULT_SEQ_LEN,
        micro_batch_size=job.micro_batch_size, layers=layers,
    )  # fmt: skip
    calls: dict[str, int] = dict.fromkeys(DIMENSIONS, 0)
    sizes: dict[str, float] = {}
    pipeline_slots: set[float] = set()
    for event in step.events:
        if isinstance(event, FlowEvent):
            pipeline_slots.add(event.t_s)
            sizes["pp"] = float(event.bytes)
            continue
        assert isinstance(event, CollectiveEvent)
        consecutive = event.ranks == tuple(range(event.ranks[0], event.ranks[0] + len(event.ranks)))
        dimension = "ep" if event.op == "alltoall" else "tp" if consecutive and job.tp > 1 else "dp"
        calls[dimension] += 1
        sizes[dimension] = float(event.bytes)
    calls["pp"] = len(pipeline_slots)
    return {
        dimension: DimensionTraffic(
            *_COLLECTIVES[dimension],
            calls=calls[dimension] if dimension == "pp" else calls[dimension] // len(reduced.groups(dimension)),
            bytes_per_call=sizes[dimension],
        )
        for dimension in DIMENSIONS
        if dimension in sizes and job.group_size(dimension) > 1
    }


def _phases(dimension: str, traffic: DimensionTraffic, size: int) -> list[Phase]:
    if dimension == "pp":
        # Every stage sends to the next one at the same time (a full pipeline).
        chain = np.arange(size - 1)
        return [Phase("send to the next stage", "pipeline", chain, chain + 1, traffic.bytes_per_call)]
    return phases_for(traffic.collective, traffic.algorithm, traffic.bytes_per_call, size)


# -- placements ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """Rank ``r`` runs on ``cards[r]`` (host ``hosts[r]``); ``warnings`` say where it fell short
    (Phrases, rendered in the reader's language where they are shown)."""

    strategy: str
    job: Job
    cards: tuple[str, ...]
    hosts: tuple[str | None, ...]
    warnings: tuple[Phrase | str, ...] = ()

    def rank_records(self) -> list[dict[str, Any]]:
        """One dict per rank: ``rank, card, host, stage, dp_index, tp_index, tp_group``."""
        records = []
        for rank, (card, host) in enumerate(zip(self.cards, self.hosts)):
            stage, dp_index, tp_index = self.job.coordinates(rank)
            records.append(
                {
                    "rank": rank, "card": card, "host": host, "stage": stage, "dp_index": dp_index,
                    "tp_index": tp_index, "tp_group": rank // self.job.tp,
                }
            )  # fmt: skip
        return records

    def to_dict(self, translations: Translations = ENGLISH) -> dict[str, Any]:
        """JSON-ready: strategy, job, warnings (in the language of ``translations``) and the rank
        records (what the map draws)."""
        return {
            "strategy": self.strategy, "job": self.job.to_dict(), "warnings": [str(rendered(warning, translations)) for warning in self.warnings],
            "ranks": self.rank_records(),
        }  # fmt: skip


def place(
    spec: FabricSpec,
    job: Job,
    strategy: str,
    *,
    free: Iterable[str] | None = None,
    seed: int = 0,
    mapping: Mapping[int, str] | None = None,
) -> Placement:
    """Place ``job`` on the free cards of ``spec`` (every card when ``free`` is None) with ``strategy``."""
    if strategy == "naive":
        return naive_placement(spec, job, free=free)
    if strategy == "random":
        return random_placement(spec, job, free=free, seed=seed)
    if strategy == "aware":
        return aware_placement(spec, job, free=free, seed=seed)
    if strategy == "user":
        if mapping is None:
            raise PlacementError(LATER.gettext("the user strategy needs a rank -> card mapping"))
        return user_placement(spec, job, mapping, free=free)
    raise PlacementError(LATER.gettext("unknown strategy %(strategy)s; expected one of %(strategies)s") % {"strategy": repr(strategy), "strategies": Joined(STRATEGIES)})


def naive_placement(spec: FabricSpec, job: Job, *, free: Iterable[str] | None = None) -> Placement:
    """Rank ``r`` on the ``r``-th free card in fabric order."""
    cards = _free_cards(spec, job, free)
    return _placement(spec, "naive", job, cards[: job.world])


def random_placement(spec: FabricSpec, job: Job, *, free: Iterable[str] | None = None, seed: int = 0) -> Placement:
    """A uniformly random choice and order of free cards (``numpy`` generator seeded with ``seed``)."""
    cards = _free_cards(spec, job, free)
    chosen = np.random.default_rng(seed).permutation(len(cards))[: job.world]
    return _placement(spec, "random", job, [cards[position] for position in chosen])


def user_placement(
    spec: FabricSpec, job: Job, mapping: Mapping[int, str], *, free: Iterable[str] | None = None
) -> Placement:
    """The user's mapping (rank -> card id), checked: ranks ``0..world-1`` each once,
    known cards, each card once, only free cards. ``PlacementError`` lists every problem.
    """
    problems = list(mapping_problems(spec, job, mapping, free))
    if problems:
        cannot = LATER.ngettext("the rank mapping cannot be used for %(count)s rank", "the rank mapping cannot be used for %(count)s ranks", job.world)
        raise PlacementError(cannot % {"count": str(job.world)}, [words for _, words in problems])
    return _placement(spec, "user", job, [mapping[rank] for rank in range(job.world)])


def mapping_problems(
    spec: FabricSpec, job: Job, mapping: Mapping[int, str], free: Iterable[str] | None
) -> Iterable[tuple[int | None, Phrase]]:
    """``(rank or None, sentence)`` for everything wrong with a rank -> card mapping."""
    cards = {node.id for node in spec.cards()}
    nodes = {node.id: node.kind for node in spec.nodes}
    free_set = None if free is None else set(free)
    missing = [rank for rank in range(job.world) if rank not in mapping]
    if missing:
        listed = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        no_card = LATER.ngettext(
            "%(count)s rank has no card: %(ranks)s; expected ranks 0..%(last)s each mapped",
            "%(count)s ranks have no card: %(ranks)s; expected ranks 0..%(last)s each mapped", len(missing),
        )  # fmt: skip
        yield None, no_card % {"count": str(len(missing)), "ranks": listed, "last": str(job.world - 1)}
    first_rank: dict[str, int] = {}
    for rank, card in sorted(mapping.items()):
        if not (isinstance(rank, int) and 0 <= rank < job.world):
            yield rank, LATER.gettext("rank %(rank)s is outside the job; expected 0..%(last)s") % {"rank": repr(rank), "last": str(job.world - 1)}
            continue
        if card not in cards:
            kind = nodes.get(card)
            if kind:
                not_card = LATER.gettext("rank %(rank)s: %(card)s is a %(kind)s, not a card; expected a card id of %(fabric)s")
            else:
                not_card = LATER.gettext("rank %(rank)s: %(card)s is not in the fabric; expected a card id of %(fabric)s")
            yield rank, not_card % {"rank": str(rank), "card": repr(card), "kind": kind, "fabric": repr(spec.name)}
        elif card in first_rank:
            used = LATER.gettext("rank %(rank)s: card %(card)s is already used by rank %(first)s; expected one rank per card")
            yield rank, used % {"rank": str(rank), "card": repr(card), "first": str(first_rank[card])}
        elif free_set is not None and card not in free_set:
            yield rank, LATER.gettext("rank %(rank)s: card %(card)s is busy; expected a free card") % {"rank": str(rank), "card": repr(card)}
        first_rank.setdefault(card, rank)


def _free_cards(spec: FabricSpec, job: Job, free: Iterable[str] | None) -> list[str]:
    """The free card ids in fabric order, checked against the fabric and the job's size."""
    card_ids = [node.id for node in spec.cards()]
    if free is None:
        chosen = card_ids
    else:
        wanted = list(free)
        known = set(card_ids)
        unknown = sorted({card for card in wanted if card not in known})
        if unknown:
            not_cards = LATER.ngettext("%(count)s free card is not a card of %(fabric)s", "%(count)s free cards are not cards of %(fabric)s", len(unknown))
            raise PlacementError(
                not_cards % {"count": str(len(unknown)), "fabric": repr(spec.name)},
                [LATER.gettext("%(card)s; expected a card id of the fabric") % {"card": repr(card)} for card in unknown[:20]],
            )
        wanted_set = set(wanted)
        chosen = [card for card in card_ids if card in wanted_set]
    if job.world > len(chosen):
        too_few = LATER.ngettext(
            "the job needs %(count)s card (tp %(tp)s x pp %(pp)s x dp %(dp)s) but only %(free)s of the %(total)s cards of %(fabric)s are free",
            "the job needs %(count)s cards (tp %(tp)s x pp %(pp)s x dp %(dp)s) but only %(free)s of the %(total)s cards of %(fabric)s are free", job.world,
        )  # fmt: skip
        shape = {"count": str(job.world), "tp": str(job.tp), "pp": str(job.pp), "dp": str(job.dp)}
        raise PlacementError(too_few % {**shape, "free": str(len(chosen)), "total": str(len(card_ids)), "fabric": repr(spec.name)})
    return chosen


def _placement(spec: FabricSpec, strategy: str, job: Job, cards: Sequence[str], warnings: Sequence[Phrase] = ()) -> Placement:
    hosts = {node.id: node.host for node in spec.cards()}
    return Placement(strategy, job, tuple(cards), tuple(hosts[card] for card in cards), tuple(warnings))


# -- the topology-aware strategy ----------------------------------------------------------------


def aware_placement(
    spec: FabricSpec,
    job: Job,
    *,
    free: Iterable[str] | None = None,
    seed: int = 0,
    ecmp: str = "hash",
    refine_moves: int = 3000,
) -> Placement:
    """Topology-aware placement: TP in the smallest domain, pipelines close, DP across.

    1. **Domains.** Free cards with the same attachments (the same leaf, or
       the same set of switches) form a *class*. The distance between two
       classes is the routing cost between their cards on the compiled fabric
       (``compile_fabric``: links crossed, a scale-out link counting as farther
       than any scale-up path, like ``hop_matrix``'s hops but aware of the
       super-node border). Single-linkage clusters of that distance, level by
       level, give a tree of domains (leaf, pod, super-node ...); a depth-first
       walk of it orders the classes so that near classes are neighbours.
    2. **TP groups.** Each class holds ``free // tp`` whole groups. The cards
       left over are pooled upwards, domain by domain, largest leftovers
       first, so that a group that cannot fit one class spans the fewest
       classes of the smallest domain (the fallback when ``tp`` is larger than
       any domain; ``warnings`` says so). The tightest groups are used first.
    3. **Pipelines and replicas.** Groups in depth-first order: ``pp``
       consecutive groups form one pipeline (stages on the same or neighbouring
       domains), pipelines in that order are the DP replicas, so ring
       neighbours of the DP all-reduce are as close as they can be.
    4. **Routing-aware refinement.** Swapping two cards of one class changes
       no distance, but it changes which flows the fabric's routing (``ecmp``
       hash or d-mod-k ``pinned``) sends over the same uplink. Up to
       ``refine_moves`` swaps are tried on the flows of the TP, PP and DP
       patterns that share an over-full link, kept when they lower the
       traffic-weighted overload. Skipped for ``spray`` (no collisions).
    """
    cards = _free_cards(spec, job, free)
    compiled = compile_fabric(spec, transport_for(spec))
    number = {card_id: position for position, card_id in enumerate(compiled.card_ids)}
    nearest = _nearest_attachments(compiled)
    # A card without a live link can talk to nobody: never placed.
    free_numbers = np.array([number[card] for card in cards if nearest[number[card]]], dtype=np.intp)
    if len(free_numbers) < job.world:
        too_few = LATER.ngettext(
            "the job needs %(world)s cards but only %(count)s free card has a live link",
            "the job needs %(world)s cards but only %(count)s free cards have a live link", len(free_numbers),
        )  # fmt: skip
        raise PlacementError(too_few % {"world": str(job.world), "count": str(len(free_numbers))})
    domains = _Domains.of(compiled, free_numbers, nearest)
    groups, spans = domains.tp_groups(job.tp, job.pp * job.dp)
    warnings = domains.warnings(job.tp, spans)
    ranks = np.concatenate(groups)
    if ecmp != "spray" and refine_moves > 0:
        ranks = _Refinement(compiled, job, ranks, ecmp=ecmp, seed=seed).run(refine_moves)
    return _placement(spec, "aware", job, [compiled.card_ids[card] for card in ranks], warnings)


@dataclass
class _Domains:
    """Free cards grouped in classes, classes ordered depth-first through the domain tree."""

    classes: list[np.ndarray]  # card numbers of each class, in depth-first class order
    levels: list[np.ndarray]  # component label per class at each distance level, finest first
    class_of_card: dict[int, int]

    @classmethod
    def of(cls, compiled: CompiledFabric, free_numbers: np.ndarray, nearest: Mapping[int, tuple[int, ...]]) -> _Domains:
        keys = [nearest[int(card)] for card in free_numbers]
        key_index: dict[tuple[int, ...], int] = {}
        class_index = np.array([key_index.setdefault(key, len(key_index)) for key in keys], dtype=np.intp)
        first = np.array([free_numbers[np.argmax(class_index == position)] for position in range(len(key_index))])
        # distance[i, j]: routing cost from class j's first card to class i's; symmetrised.
        distance = compiled.distance(compiled.card_group[first][:, None], compiled.card_nodes[first])
        distance = np.minimum(distance, distance.T)
        np.fill_diagonal(distance, 0.0)
        thresholds = np.unique(distance[np.isfinite(distance) & (distance > 0)])
        levels = [
            csgraph.connected_components(distance <= threshold, directed=False)[1] for threshold in thresholds
        ]
        # Slurm blocks (topology/block, uploaded with the fabric) come first: a TP group is made
        # inside one block where it can be, and blocks are filled one after the other.
        blocks = [compiled.spec.nodes[compiled.card_nodes[card]].attrs.get("slurm_block") for card in first]
        block_levels = []
        if any(block is not None for block in blocks):
            block_levels = [np.unique(np.array([str(block) for block in blocks]), return_inverse=True)[1].reshape(-1)]
        # Depth-first: blocks, then the coarsest label, then finer ones, then fabric order.
        sort_keys = (np.arange(len(first)), *levels, *block_levels)
        order = np.lexsort(sort_keys) if len(sort_keys) > 1 else np.arange(len(first))
        levels = [*block_levels, *levels]
        position_of = np.empty(len(first), dtype=np.intp)
        position_of[order] = np.arange(len(first))
        classes = [free_numbers[class_index == original] for original in order]
        class_of_card = {int(card): int(position_of[index]) for card, index in zip(free_numbers, class_index)}
        return cls(classes, [level[order] for level in levels], class_of_card)

    def tp_groups(self, tp: int, needed: int) -> tuple[list[np.ndarray], list[int]]:
        """``needed`` groups of ``tp`` cards, tightest first, in depth-first order; and classes spanned."""
        candidates: list[tuple[int, int, np.ndarray]] = []  # (level, class position, cards)
        leftovers: dict[int, np.ndarray] = {}
        for position, members in enumerate(self.classes):
            whole = len(members) // tp
            candidates += [(0, position, members[start * tp : (start + 1) * tp]) for start in range(whole)]
            if len(members) % tp:
                leftovers[position] = members[whole * tp :]
        for level, labels in enumerate(self.levels, start=1):
            by_domain: dict[int, list[int]] = {}
            for position in leftovers:
                by_domain.setdefault(int(labels[position]), []).append(position)
            for positions in by_domain.values():
                positions.sort(key=lambda position: (-len(leftovers[position]), position))
                pool = np.concatenate([leftovers.pop(position) for position in positions])
                whole = len(pool) // tp
                candidates += [(level, positions[0], pool[start * tp : (start + 1) * tp]) for start in range(whole)]
                rest = pool[whole * tp :]
                for card in rest.tolist():
                    owner = self.class_of_card[card]
                    leftovers[owner] = np.append(leftovers.get(owner, np.empty(0, np.intp)), card)
        if len(candidates) < needed:
            too_few = LATER.ngettext(
                "only %(count)s TP group of %(tp)s connected cards fits on the free cards; the job needs %(needed)s (pp x dp)",
                "only %(count)s TP groups of %(tp)s connected cards fit on the free cards; the job needs %(needed)s (pp x dp)", len(candidates),
            )  # fmt: skip
            raise PlacementError(too_few % {"count": str(len(candidates)), "tp": str(tp), "needed": str(needed)})
        chosen = sorted(candidates, key=lambda candidate: (candidate[0], candidate[1]))[:needed]
        chosen.sort(key=lambda candidate: candidate[1])
        spans = [len({self.class_of_card[int(card)] for card in group}) for _, _, group in chosen]
        return [group for _, _, group in chosen], spans

    def warnings(self, tp: int, spans: list[int]) -> list[Phrase]:
        largest = max(len(members) for members in self.classes)
        split = [span for span in spans if span > 1]
        if not split:
            return []
        if tp > largest:
            reason = LATER.ngettext(
                "a TP group of %(tp)s cards is larger than any switch domain (the largest has %(count)s free card)",
                "a TP group of %(tp)s cards is larger than any switch domain (the largest has %(count)s free cards)", largest,
            ) % {"tp": tp, "count": largest}  # fmt: skip
        else:
            reason = LATER.gettext("the free cards do not split into whole TP groups of %(tp)s per switch domain") % {"tp": tp}
        return [
            LATER.ngettext(
                "%(reason)s: %(count)s of %(total)s TP groups spans several domains, at most %(most)s, the fewest the free cards allow",
                "%(reason)s: %(count)s of %(total)s TP groups span several domains, at most %(most)s, the fewest the free cards allow", len(split),
            ) % {"reason": reason, "count": len(split), "total": len(spans), "most": max(split)}  # fmt: skip
        ]


def _nearest_attachments(compiled: CompiledFabric) -> dict[int, tuple[int, ...]]:
    """Card number -> the nodes it reaches over its cheapest links (its scale-up switch, else its NIC's)."""
    leaving = compiled.is_card[compiled.arc_tail] & ~compiled.is_card[compiled.arc_head]
    tails, heads, costs = compiled.arc_tail[leaving], compiled.arc_head[leaving], compiled.arc_cost[leaving]
    cheapest = np.full(len(compiled.is_card), np.inf)
    np.minimum.at(cheapest, tails, costs)
    keep = costs <= cheapest[tails] + 1e-9
    reached: dict[int, set[int]] = {}
    for tail, head in zip(tails[keep].tolist(), heads[keep].tolist()):
        reached.setdefault(tail, set()).add(head)
    return {
        number: tuple(sorted(reached.get(int(node), ()))) for number, node in enumerate(compiled.card_nodes)
    }


@dataclass(eq=False)
class _RefinedPattern:
    """One flow pattern of the job, routed, with its per-arc flow counts."""

    weight: float
    sources: np.ndarray  # rank per flow
    targets: np.ndarray
    flow_arcs: list[list[int]]
    flow_mass: list[list[float]]
    load: np.ndarray
    on_arc: dict[int, set[int]]
    by_rank: dict[int, list[int]]


class _Refinement:
    """Swaps of interchangeable cards (same attachments) that relieve over-full links.

    Overload of a pattern = sum over arcs of (flows on the arc - flows the arc
    carries at a card port's rate), positive parts only; the objective weighs
    each pattern by the bytes it moves per step.
    """

    def __init__(self, compiled: CompiledFabric, job: Job, ranks: np.ndarray, *, ecmp: str, seed: int) -> None:
        self.compiled, self.ecmp, self.seed = compiled, ecmp, seed
        self.ranks = ranks.copy()
        self.rng = np.random.default_rng(seed)
        card_arcs = compiled.is_card[compiled.arc_tail]
        reference = float(np.median(compiled.arc_capacity[card_arcs])) if card_arcs.any() else 1.0
        self.capacity = compiled.arc_capacity / reference
        self.patterns = [pattern for pattern in self._patterns(job) if pattern is not None]
        # Interchangeable cards: the same destination group (identical attachments).
        groups = compiled.card_group
        self.rank_of_card = {int(card): rank for rank, card in enumerate(self.ranks)}
        self.partners: dict[int, np.ndarray] = {}
        placed_groups = groups[self.ranks]
        for group in np.unique(placed_groups):
            members = self.ranks[placed_groups == group]
            for card in members.tolist():
                self.partners[card] = members

    def _patterns(self, job: Job) -> Iterable[_RefinedPattern | None]:
        for dimension, traffic in job_traffic(job).items():
            if dimension == "ep":
                continue  # all-to-all: every pair talks, no swap can help
            rank_groups = job.groups(dimension)
            seen: set[str] = set()
            for phase in _phases(dimension, traffic, rank_groups.shape[1]):
                if phase.pattern in seen:
                    continue
                seen.add(phase.pattern)
                weight = traffic.calls * phase.steps * phase.bytes_per_flow
                yield self._routed(weight, rank_groups, phase)

    def _routed(self, weight: float, rank_groups: np.ndarray, phase: Phase) -> _RefinedPattern:
        sources = rank_groups[:, phase.sources].ravel()
        targets = rank_groups[:, phase.targets].ravel()
        incidence = route_phase(self.compiled, self.ranks[rank_groups], phase, ecmp=self.ecmp, seed=self.seed).incidence
        flow_arcs, flow_mass = _rows(incidence, range(incidence.shape[0]))
        load = incidence.T @ np.ones(incidence.shape[0])
        on_arc: dict[int, set[int]] = {}
        for flow, arcs in enumerate(flow_arcs):
            for arc in arcs:
                on_arc.setdefault(arc, set()).add(flow)
        by_rank: dict[int, list[int]] = {}
        for flow, (source, target) in enumerate(zip(sources.tolist(), targets.tolist())):
            by_rank.setdefault(source, []).append(flow)
            by_rank.setdefault(target, []).append(flow)
        return _RefinedPattern(weight, sources, targets, flow_arcs, flow_mass, load, on_arc, by_rank)

    def _over(self, pattern: _RefinedPattern) -> np.ndarray:
        return np.flatnonzero(pattern.load > self.capacity + 1e-9)

    def run(self, moves: int, *, batch: int = 32) -> np.ndarray:
        """Try up to ``moves`` swaps, ``batch`` at a time; the improved rank -> card numbers.

        The swaps of one batch touch disjoint flows, so their new routes are
        computed in one vectorised call; each is then kept or dropped in turn
        against the loads left by those kept before it.
        """
        tried = 0
        while tried < moves:
            overloads = np.array([pattern.weight * self._excess(pattern.load, self._over(pattern)) for pattern in self.patterns])
            if not len(overloads) or overloads.sum() <= 0:
                break
            swaps = self._proposals(overloads, min(batch, moves - tried))
            tried += batch
            if swaps:
                self._apply_improving(swaps)
        return self.ranks

    def _proposals(self, overloads: np.ndarray, count: int) -> list[tuple[int, int, list[list[int]]]]:
        """Up to ``count`` swaps ``(rank, rank, affected flows per pattern)`` on over-full links."""
        proposals: list[tuple[int, int, list[list[int]]]] = []
        busy: set[tuple[int, int]] = set()
        for _ in range(count):
            which = int(self.rng.choice(len(overloads), p=overloads / overloads.sum()))
            pattern = self.patterns[which]
            flows = sorted(pattern.on_arc[int(self.rng.choice(self._over(pattern)))])
            flow = flows[int(self.rng.integers(len(flows)))]
            rank = int(pattern.sources[flow] if self.rng.integers(2) else pattern.targets[flow])
            partners = self.partners[int(self.ranks[rank])]
            other = self.rank_of_card[int(partners[self.rng.integers(len(partners))])]
            if other == rank:
                continue
            affected = [sorted(set(p.by_rank.get(rank, []) + p.by_rank.get(other, []))) for p in self.patterns]
            keys = {(number, flow) for number, flows in enumerate(affected) for flow in flows}
            if keys & busy:
                continue
            busy |= keys
            proposals.append((rank, other, affected))
        return proposals

    def _apply_improving(self, swaps: list[tuple[int, int, list[list[int]]]]) -> None:
        """Route every proposed swap's flows at once, then keep each swap that lowers the overload."""
        swapped = self.ranks.copy()
        for first, second, _ in swaps:
            swapped[[first, second]] = swapped[[second, first]]
        flows_in_order = [(number, flow) for _, _, affected in swaps for number, flows in enumerate(affected) for flow in flows]
        sources = np.array([swapped[self.patterns[number].sources[flow]] for number, flow in flows_in_order], dtype=np.intp)
        targets = np.array([swapped[self.patterns[number].targets[flow]] for number, flow in flows_in_order], dtype=np.intp)
        incidence = route(self.compiled, sources, targets, mode=self.ecmp, seed=self.seed, flow_keys=flow_keys(self.compiled, sources, targets)).incidence
        new_arcs, new_mass = _rows(incidence, range(len(flows_in_order)))
        row = 0
        for first, second, affected in swaps:
            changes = []
            delta = 0.0
            for pattern, flows in zip(self.patterns, affected):
                arcs, masses = new_arcs[row : row + len(flows)], new_mass[row : row + len(flows)]
                row += len(flows)
                old = np.array([arc for flow in flows for arc in pattern.flow_arcs[flow]], dtype=np.intp)
                old_mass = np.array([mass for flow in flows for mass in pattern.flow_mass[flow]])
                new = np.array([arc for flow_arcs in arcs for arc in flow_arcs], dtype=np.intp)
                new_weights = np.array([mass for flow_masses in masses for mass in flow_masses])
                touched = np.union1d(old, new)
                load = pattern.load[touched].copy()
                np.subtract.at(load, np.searchsorted(touched, old), old_mass)
                np.add.at(load, np.searchsorted(touched, new), new_weights)
                excess_after = float(np.maximum(load - self.capacity[touched], 0.0).sum())
                delta += pattern.weight * (excess_after - self._excess(pattern.load, touched))
                changes.append((pattern, flows, arcs, masses, touched, load))
            if delta < 0:
                self._commit(first, second, changes)

    def _commit(self, first: int, second: int, changes: list) -> None:
        for pattern, flows, arcs, masses, touched, load in changes:
            for flow, flow_arcs, flow_masses in zip(flows, arcs, masses):
                for arc in pattern.flow_arcs[flow]:
                    pattern.on_arc[arc].discard(flow)
                for arc in flow_arcs:
                    pattern.on_arc.setdefault(arc, set()).add(flow)
                pattern.flow_arcs[flow], pattern.flow_mass[flow] = flow_arcs, flow_masses
            pattern.load[touched] = load
        first_card, second_card = int(self.ranks[first]), int(self.ranks[second])
        self.ranks[[first, second]] = self.ranks[[second, first]]
        self.rank_of_card[first_card], self.rank_of_card[second_card] = second, first

    def _excess(self, load: np.ndarray, arcs: np.ndarray) -> float:
        return float(np.maximum(load[arcs] - self.capacity[arcs], 0.0).sum())


def _rows(incidence: sparse.csr_array, rows: Iterable[int]) -> tuple[list[list[int]], list[list[float]]]:
    """Arc numbers and masses of some rows of a flow-by-arc incidence, as lists."""
    indptr, indices, data = incidence.indptr.tolist(), incidence.indices.tolist(), incidence.data.tolist()
    rows = list(rows)
    return [indices[indptr[row] : indptr[row + 1]] for row in rows], [data[indptr[row] : indptr[row + 1]] for row in rows]


# -- evaluation ---------------------------------------------------------------------------------


def evaluate_placement(
    spec: FabricSpec, placement: Placement, *, ecmp: str = "hash", seed: int = 0, top_links: int = 10
) -> dict[str, Any]:
    """Per-step communication time of a placement, by dimension, on the simulation core.

    Returns ``strategy``, ``job``, ``communication_time_s`` (sum over
    dimensions), ``dimensions`` (for each of ``tp``/``pp``/``dp``/``ep`` with
    groups of 2 or more: ``collective``, ``algorithm``, ``groups``,
    ``group_size``, ``calls_per_step``, ``bytes_per_call``,
    ``time_per_call_s``, ``time_s``, ``latency_s``, ``bandwidth_s``,
    ``busbw_GBps``, ``mean_switch_hops``, ``max_switch_hops``,
    ``crosses_scale_out``, ``bottleneck`` (an arc record or None),
    ``hottest_links``), ``bottleneck_links`` (the step's hottest links),
    ``warnings`` (English) and ``warning_words`` (the same to render in another language:
    ``twin.simcore.translation.words_from_plain``), ``settings`` and ``ranks`` (``Placement.rank_records``).
    An arc record is ``{link, from, to, class, bytes, utilization}``.
    """
    compiled = compile_fabric(spec, transport_for(spec))
    number = {card_id: position for position, card_id in enumerate(compiled.card_ids)}
    unknown = [card for card in placement.cards if card not in number]
    if unknown:
        raise PlacementError(LATER.gettext("the placement names cards that %(fabric)s lacks") % {"fabric": repr(spec.name)}, [repr(card) for card in unknown[:20]])
    cards = np.array([number[card] for card in placement.cards], dtype=np.intp)
    job = placement.job
    dimensions: dict[str, dict[str, Any]] = {}
    step_bytes = np.zeros(len(compiled.arc_tail))
    for dimension, traffic in job_traffic(job).items():
        rank_groups = job.groups(dimension)
        run = run_groups(compiled, cards[rank_groups], _phases(dimension, traffic, rank_groups.shape[1]), ecmp=ecmp, seed=seed)
        step_bytes += traffic.calls * run.arc_bytes
        dimensions[dimension] = _dimension_result(compiled, traffic, rank_groups.shape, run, top_links)
    total = sum(result["time_s"] for result in dimensions.values())
    return {
        "strategy": placement.strategy,
        "job": job.to_dict(),
        "communication_time_s": total,
        "dimensions": dimensions,
        "bottleneck_links": link_records(compiled, step_bytes, total, top=top_links),
        "warnings": [str(warning) for warning in placement.warnings],
        "warning_words": [plain_words(warning) for warning in placement.warnings],
        "settings": {"ecmp": ecmp, "seed": seed, "transport": compiled.transport.to_dict()},
        "ranks": placement.rank_records(),
    }


def _dimension_result(
    compiled: CompiledFabric, traffic: DimensionTraffic, shape: tuple[int, int], run: GroupRun, top_links: int
) -> dict[str, Any]:
    groups, size = shape
    bus_factor = BUS_FACTORS[traffic.collective](size)
    bottleneck = None
    if run.bottleneck_arc >= 0:
        arc = run.bottleneck_arc
        bottleneck = arc_record(compiled, arc, float(run.arc_bytes[arc]), float(run.arc_bytes[arc] / (compiled.arc_raw_capacity[arc] * run.time_s)))
    return {
        "collective": traffic.collective,
        "algorithm": traffic.algorithm,
        "protocol": run.protocol,
        "groups": groups,
        "group_size": size,
        "calls_per_step": traffic.calls,
        "bytes_per_call": traffic.bytes_per_call,
        "time_per_call_s": run.time_s,
        "time_s": traffic.calls * run.time_s,
        "latency_s": traffic.calls * run.latency_s,
        "bandwidth_s": traffic.calls * run.bandwidth_s,
        "busbw_GBps": traffic.bytes_per_call / run.time_s * bus_factor / 1e9 if run.time_s > 0 else None,
        "mean_switch_hops": float(run.switch_hops.mean()) if len(run.switch_hops) else 0.0,
        "max_switch_hops": float(run.switch_hops.max(initial=0.0)),
        "crosses_scale_out": run.crosses_scale_out,
        "bottleneck": bottleneck,
        "hottest_links": link_records(compiled, run.arc_bytes, run.time_s, top=top_links),
    }


def compare_placements(
    spec: FabricSpec,
    job: Job,
    *,
    free: Iterable[str] | None = None,
    strategies: Sequence[str] = ("naive", "random", "aware"),
    seed: int = 0,
    mapping: Mapping[int, str] | None = None,
    ecmp: str = "hash",
) -> dict[str, Any]:
    """Place and evaluate ``job`` with each strategy (what ``manage.py place`` prints).

    Returns ``job``, ``results`` (strategy -> ``evaluate_placement`` result),
    ``ranking`` (strategies, fastest first) and ``best``.
    """
    results = {
        strategy: evaluate_placement(spec, place(spec, job, strategy, free=free, seed=seed, mapping=mapping), ecmp=ecmp, seed=seed)
        for strategy in strategies
    }
    ranking = sorted(results, key=lambda strategy: results[strategy]["communication_time_s"])
    return {"job": job.to_dict(), "results": results, "ranking": ranking, "best": ranking[0] if ranking else None}
