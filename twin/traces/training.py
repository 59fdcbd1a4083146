"""A generated training step: the traffic of one step of a TP x PP x DP (x EP) transformer job.

Formulas (Megatron-LM conventions; docs/formats/trace.md, "Generated training
steps", has the worked 175B case):

* Ranks: ``rank = (stage * dp + dp_index) * tp + tp_index``: tensor-parallel
  groups are consecutive ranks, so a placement that lists the cards of one
  switch domain together keeps TP inside it (DOMAIN.md, placement).
* Layers: ``layers`` or, from the model size, ``round(model_params / (12 * hidden_size**2))``
  (a GPT layer holds ~12 h^2 parameters: 96 layers for 175B at h = 12288);
  ``layers / pp`` per stage.
* Activations of one micro-batch: ``A = micro_batch_size * seq_len * hidden_size * bytes_per_param``.
* TP: per layer, one all-reduce of ``A`` after attention and one after the
  MLP, forward and backward (4 per layer per micro-batch), in every TP group.
* EP (``ep > 1``, every layer an MoE layer, top-1 routing): an all-to-all
  dispatch and combine of ``A`` per rank, forward and backward, among the
  ``ep`` consecutive DP replicas of the same stage and TP index.
* PP: at each stage boundary, every TP rank sends ``A`` to the same TP rank of
  the next stage (forward) and the gradient back (backward), per micro-batch.
* DP: one gradient all-reduce per (stage, TP index) group of ``dp`` ranks,
  ``model_params / (tp * pp) * bytes_per_param`` bytes per rank (each rank's
  shard of the gradient). All parameters are treated as dense.

Times follow a GPipe schedule in slots of ``spacing_s``: it orders the traffic
and lets stages overlap, it is not a compute model.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from twin.simcore.errors import problem_phrase
from twin.simcore.translation import LATER, Phrase
from twin.simcore.units import format_count
from twin.traces.errors import TraceError
from twin.traces.model import CollectiveEvent, Event, FlowEvent, RankBinding, Trace

__all__ = ["DEFAULT_SPACING_S", "PARAMS_PER_LAYER_PER_HIDDEN2", "training_step", "training_step_problems"]

DEFAULT_SPACING_S = 1e-4
"""Seconds per schedule slot (one layer collective or one pipeline transfer)."""
PARAMS_PER_LAYER_PER_HIDDEN2 = 12
"""A GPT layer's parameters over hidden_size^2: 4 h^2 attention + 8 h^2 MLP."""


def training_step(
    *,
    model_params: float,
    tp: int,
    pp: int = 1,
    dp: int,
    ep: int = 1,
    micro_batches: int = 1,
    bytes_per_param: int = 2,
    placement: Sequence[str],
    hidden_size: int | None = None,
    seq_len: int | None = None,
    micro_batch_size: int = 1,
    layers: int | None = None,
    spacing_s: float = DEFAULT_SPACING_S,
    name: str | None = None,
) -> Trace:
    """The trace of one training step on the cards of ``placement`` (card ids in rank order).

    ``hidden_size`` and ``seq_len`` size the activations and are needed as
    soon as ``tp``, ``pp`` or ``ep`` exceeds 1. Raises ``TraceError`` listing
    every inconsistent argument.

    >>> cards = [f"card{n}" for n in range(1024)]
    >>> step = training_step(model_params=175e9, tp=16, dp=64, placement=cards,
    ...                      hidden_size=12288, seq_len=2048, layers=96)
    >>> dp_allreduce = step.events[-1]
    >>> dp_allreduce.op, len(dp_allreduce.ranks), dp_allreduce.bytes
    ('allreduce', 64, 21875000000)
    >>> step.attrs["dp_gradient_bytes_total"], step.attrs["dp_shard_bytes_per_rank"]
    (350000000000, 341796875)
    """
    problems = training_step_problems(
        model_params=model_params, tp=tp, pp=pp, dp=dp, ep=ep, micro_batches=micro_batches, bytes_per_param=bytes_per_param,
        hidden_size=hidden_size, seq_len=seq_len, micro_batch_size=micro_batch_size, layers=layers, spacing_s=spacing_s,
    )  # fmt: skip
    if all(type(value) is int and value > 0 for value in (tp, pp, dp)):
        world = tp * pp * dp
        if len(placement) != world:
            listed = LATER.ngettext("placement lists %(count)s card", "placement lists %(count)s cards", len(placement)) % {"count": str(len(placement))}
            problems.append(problem_phrase("", listed, LATER.gettext("tp x pp x dp = %(world)s") % {"world": str(world)}))
        if len(set(placement)) != len(placement):
            problems.append(problem_phrase("", LATER.gettext("placement lists a card twice"), LATER.gettext("one card per rank")))
    if problems:
        raise TraceError(LATER.gettext("cannot generate the training step"), problems)
    layers = _layers(model_params, hidden_size, layers)
    layout = _Layout(tp, pp, dp, ep)
    activation_bytes = micro_batch_size * (seq_len or 0) * (hidden_size or 0) * bytes_per_param
    dp_bytes = round(model_params / (tp * pp)) * bytes_per_param
    layers_per_stage = (layers or pp) // pp
    schedule = _Schedule(layout, micro_batches, layers_per_stage, activation_bytes, dp_bytes, spacing_s)
    trace = Trace(
        name=name or f"training step {model_params:.3g} params TP{tp} PP{pp} DP{dp} EP{ep}",
        ranks=tuple(RankBinding(rank, card, card.split("/", 1)[0] if "/" in card else None) for rank, card in enumerate(placement)),
        events=tuple(schedule.events()),
        attrs={
            "source_format": "training-step",
            "model_params": float(model_params), "tp": tp, "pp": pp, "dp": dp, "ep": ep,
            "micro_batches": micro_batches, "micro_batch_size": micro_batch_size, "bytes_per_param": bytes_per_param,
            "hidden_size": hidden_size, "seq_len": seq_len, "layers": layers,
            "activation_bytes": activation_bytes,
            "dp_allreduce_bytes_per_rank": dp_bytes,
            "dp_gradient_bytes_total": dp_bytes * tp * pp,
            "dp_shard_bytes_per_rank": dp_bytes // dp,
            "schedule": "gpipe", "spacing_s": spacing_s,
        },
    )  # fmt: skip
    trace.validate()
    return trace


def training_step_problems(
    *,
    model_params: float,
    tp: int,
    pp: int = 1,
    dp: int,
    ep: int = 1,
    micro_batches: int = 1,
    bytes_per_param: int = 2,
    hidden_size: int | None = None,
    seq_len: int | None = None,
    micro_batch_size: int = 1,
    layers: int | None = None,
    spacing_s: float = DEFAULT_SPACING_S,
) -> list[Phrase]:
    """Why ``training_step`` would refuse these arguments (the placement aside), each a sentence
    saying what was expected; empty when it would not. Cheap: callers check before queueing work.

    >>> [str(problem) for problem in training_step_problems(model_params=175e9, tp=16, pp=4, dp=16, hidden_size=12288, seq_len=2048)]
    ['97 layers (from 175B parameters at hidden size 12288) do not split into 4 pipeline stages; expected layers divisible by pp (give layers, e.g. 96)']
    """
    values = {"tp": tp, "pp": pp, "dp": dp, "ep": ep, "micro_batches": micro_batches, "bytes_per_param": bytes_per_param, "micro_batch_size": micro_batch_size}
    problems = [_wrong(name, value, LATER.gettext("a positive integer")) for name, value in values.items() if type(value) is not int or value < 1]
    for name, value in (("hidden_size", hidden_size), ("seq_len", seq_len), ("layers", layers)):
        if value is not None and (type(value) is not int or value < 1):
            problems.append(_wrong(name, value, LATER.gettext("a positive integer or None")))
    if problems:
        return problems
    if not (isinstance(model_params, (int, float)) and model_params >= 1):
        return [_wrong("model_params", model_params, LATER.gettext("a positive number of parameters"))]
    if not (isinstance(spacing_s, (int, float)) and spacing_s > 0):
        problems.append(_wrong("spacing_s", spacing_s, LATER.gettext("a positive number of seconds")))
    if dp % ep:
        undivided = LATER.gettext("ep %(ep)s does not divide dp %(dp)s") % {"ep": str(ep), "dp": str(dp)}
        problems.append(problem_phrase("", undivided, LATER.gettext("expert groups carved out of the DP replicas")))
    if max(tp, pp, ep) > 1 and (hidden_size is None or seq_len is None):
        problems.append(problem_phrase("", LATER.gettext("tp, pp or ep above 1 moves activations"), LATER.gettext("hidden_size and seq_len to size them")))
    split = _layers(model_params, hidden_size, layers)
    if split is not None and split % pp:
        numbers = {"layers": str(split), "params": format_count(model_params), "hidden": str(hidden_size), "pp": str(pp)}
        unsplit = (
            LATER.gettext("%(layers)s layers do not split into %(pp)s pipeline stages") if layers is not None
            else LATER.gettext("%(layers)s layers (from %(params)s parameters at hidden size %(hidden)s) do not split into %(pp)s pipeline stages")
        )  # fmt: skip
        divisible = LATER.gettext("layers divisible by pp (give layers, e.g. %(nearest)s)") % {"nearest": str(max(pp, split - split % pp))}
        problems.append(problem_phrase("", unsplit % numbers, divisible))
    return problems


def _wrong(name: str, value: Any, expected: Phrase) -> Phrase:
    return problem_phrase("", f"{name} {value!r}", expected)


def _layers(model_params: float, hidden_size: int | None, layers: int | None) -> int | None:
    """The given layer count, else the one the model size implies (~12 h^2 parameters a layer)."""
    if layers is None and hidden_size:
        return max(1, round(model_params / (PARAMS_PER_LAYER_PER_HIDDEN2 * hidden_size**2)))
    return layers


class _Layout:
    """Rank numbers of the parallel groups; each group is one tuple, shared by its events."""

    def __init__(self, tp: int, pp: int, dp: int, ep: int) -> None:
        self.tp, self.pp, self.dp, self.ep = tp, pp, dp, ep
        self.tp_groups = [[self._group(stage, d, range(tp), None) for d in range(dp)] for stage in range(pp)]
        self.dp_groups = [[self._group(stage, None, range(dp), t) for t in range(tp)] for stage in range(pp)]
        self.ep_groups = [
            [self._group(stage, None, range(block, block + ep), t) for block in range(0, dp, ep) for t in range(tp)]
            for stage in range(pp)
        ]

    def rank(self, stage: int, d: int, t: int) -> int:
        return (stage * self.dp + d) * self.tp + t

    def _group(self, stage: int, d: int | None, members: range, t: int | None) -> tuple[int, ...]:
        if d is not None:
            return tuple(self.rank(stage, d, member) for member in members)
        return tuple(self.rank(stage, member, t) for member in members)


class _Schedule:
    """Events of one step in GPipe order: all forwards, all backwards, then the DP all-reduce."""

    def __init__(self, layout: _Layout, micro_batches: int, layers_per_stage: int, activation_bytes: int, dp_bytes: int, spacing_s: float) -> None:
        self.layout, self.micro_batches, self.layers = layout, micro_batches, layers_per_stage
        self.activation_bytes, self.dp_bytes, self.spacing_s = activation_bytes, dp_bytes, spacing_s
        # The collectives of one layer, in order: attention all-reduce, MoE dispatch and combine, MLP all-reduce.
        self.layer_ops = [op for op, present in (("allreduce", layout.tp > 1), ("alltoall", layout.ep > 1), ("alltoall", layout.ep > 1), ("allreduce", layout.tp > 1)) if present]
        self.slot = 0

    def events(self) -> Iterator[Event]:
        pp = self.layout.pp
        for backward in (False, True):
            for wave in range(self.micro_batches + pp - 1):
                # In wave w, stage s works on micro-batch w - s (w - (pp-1-s) going backward).
                stages = [stage for stage in range(pp) if 0 <= wave - (pp - 1 - stage if backward else stage) < self.micro_batches]
                yield from self._wave(stages, backward)
        if self.layout.dp > 1:
            t_s = self._next_slot()
            for stage in range(pp):
                for group in self.layout.dp_groups[stage]:
                    yield CollectiveEvent(t_s, "allreduce", group, self.dp_bytes)

    def _next_slot(self) -> float:
        t_s = round(self.slot * self.spacing_s, 9)
        self.slot += 1
        return t_s

    def _wave(self, stages: list[int], backward: bool) -> Iterator[Event]:
        layout = self.layout
        for _ in range(self.layers):
            for op in self.layer_ops:
                t_s = self._next_slot()
                for stage in stages:
                    groups = layout.tp_groups[stage] if op == "allreduce" else layout.ep_groups[stage]
                    for group in groups:
                        yield CollectiveEvent(t_s, op, group, self.activation_bytes)
        peers = [(stage, stage - 1 if backward else stage + 1) for stage in stages]
        peers = [(stage, peer) for stage, peer in peers if 0 <= peer < layout.pp]
        if peers:
            t_s = self._next_slot()
            for stage, peer in peers:
                for d in range(layout.dp):
                    for t in range(layout.tp):
                        yield FlowEvent(t_s, layout.rank(stage, d, t), layout.rank(peer, d, t), self.activation_bytes)
