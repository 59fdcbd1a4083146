"""Performance cells of a stage: collective sweeps and the training step, on the simulation core.

Each function is one independent *cell* (one Celery task in the web layer):
a fabric in, a JSON-ready dict out, deterministic for the same inputs.

``performance_cell`` runs one collective over a message-size sweep with one
``Simulator`` (the fabric is compiled once and every flow pattern's rates
are computed once, then reused across sizes and algorithms). Its ``ecmp``
entry compares per-flow ECMP hashing with ideal spraying at the reference
size, which tells ECMP collisions apart from a tier that is simply too thin.

``training_step_cell`` prices one training step's communication (formulas in
docs/whatif.md): tensor-parallel (TP) groups of ``tp`` consecutive cards
all-reduce activations, ``4 x layers x micro_batches`` times a step
(Megatron-LM: two all-reduces forward and two backward per transformer
layer) of ``micro_batch_size x sequence_length x hidden_size x
bytes_per_param`` bytes each; then data-parallel (DP) groups (cards
``i, i + tp, i + 2 tp ...``) all-reduce their gradient shard of
``model_params x bytes_per_param / tp`` bytes. The step's communication time
is the sum (no overlap with compute: an upper bound). One TP group and one DP
group are simulated; the others run the same pattern on their own cards.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from twin.simcore.algorithms import COLLECTIVES, algorithms_for
from twin.simcore.errors import TwinCoreError
from twin.simcore.model import FabricSpec
from twin.simcore.simulate import Simulator
from twin.simcore.translation import LATER, Joined, plain_words
from twin.simcore.units import largest_power_of_two
from twin.whatif.errors import WhatIfError

__all__ = [
    "DEFAULT_COLLECTIVES",
    "DEFAULT_SIZES",
    "MAX_SIZE_BYTES",
    "MIN_SIZE_BYTES",
    "SPRAY_CHECK_MAX_FLOWS",
    "SWEEP_MAX_PATTERN_FLOWS",
    "check_sizes",
    "performance_cell",
    "training_step_cell",
]

DEFAULT_COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall")
DEFAULT_SIZES = tuple(2**exponent for exponent in range(10, 31))
"""1 KiB to 1 GiB in powers of two: 21 sizes (nccl-tests ``-b 1K -e 1G -f 2``)."""
MIN_SIZE_BYTES = 1
SWEEP_MAX_PATTERN_FLOWS = 1024 * 1023
"""Largest all-pairs pattern a sweep routes flow by flow: all pairs of 1,024 ranks.

Flow by flow, all pairs of 2,048 ranks (``MAX_PATTERN_FLOWS``) cost 10-20 s and about 2 GB per
cell of a 21-size sweep; above this the sweep's simulator routes direct (one-shot, two-shot,
all-to-all direct) patterns as flow classes (``route_all_pairs``: same link bytes and slowest
rate, hashing at its expectation), refusing only a walk over ``MAX_CLASS_ENTRIES``. Pass
``max_pattern_flows=MAX_PATTERN_FLOWS`` to match the simulate page exactly.
"""
SPRAY_CHECK_MAX_FLOWS = 65_536
"""Most flows (summed over the phases, channels included) the ECMP check re-routes with
spraying: a sprayed flow splits over every equal-cost path, so this bounds it to a few seconds."""
MAX_SIZE_BYTES = 2**36
"""64 GiB per rank: beyond any accelerator's memory."""


def check_sizes(sizes: Iterable[float]) -> list[int]:
    """Message sizes in bytes, sorted and unique; ``WhatIfError`` naming each bad one.

    >>> check_sizes([4096, 1024, 4096])
    [1024, 4096]
    """
    problems, checked = [], set()
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, (int, float)) or not math.isfinite(size):
            problems.append(LATER.gettext("size %(size)s: expected a number of bytes") % {"size": repr(size)})
        elif not MIN_SIZE_BYTES <= size <= MAX_SIZE_BYTES or not float(size).is_integer():
            out_of_range = LATER.gettext("size %(size)s: expected a whole number of bytes from %(least)s to %(most)s (64 GiB)")
            problems.append(out_of_range % {"size": repr(size), "least": str(MIN_SIZE_BYTES), "most": MAX_SIZE_BYTES})
        else:
            checked.add(int(size))
    if not checked and not problems:
        problems.append(LATER.gettext("no sizes; expected at least one, e.g. 1 KiB to 1 GiB"))
    if problems:
        raise WhatIfError(LATER.gettext("impossible message sizes"), problems)
    return sorted(checked)


def performance_cell(
    spec: FabricSpec,
    collective: str,
    sizes: Sequence[float] = DEFAULT_SIZES,
    algorithms: Sequence[str] = ("auto",),
    *,
    reference_size: float | None = None,
    max_pattern_flows: int = SWEEP_MAX_PATTERN_FLOWS,
    **sim_options: Any,
) -> dict[str, Any]:
    """``collective`` at every size with every algorithm; JSON-ready.

    ``sim_options`` go to ``Simulator`` (``ecmp``, ``seed``, ``channels``,
    ``transport`` ...). ``reference_size`` (default: the largest size) is where
    hashing is compared with spraying when ``ecmp`` is ``"hash"``.
    ``max_pattern_flows``: all-pairs algorithms above it are not run: ``auto``
    skips them, a named one gets the reason as its error (``SWEEP_MAX_PATTERN_FLOWS``).

    Returns ``collective``, ``ranks``, ``sizes``, ``algorithms``,
    ``reference_size``, ``points`` (one per algorithm and size, in that
    order: ``size_bytes``, ``algorithm``, ``chosen_algorithm``, ``chosen_protocol``, ``time_s``,
    ``busbw_GBps``, ``algbw_GBps``, ``latency_s``, ``bandwidth_s``, ``bound``,
    ``bottleneck_link_class``, ``bottleneck_domain``, ``bottleneck_utilization``,
    ``max_link_utilization``, ``reason`` (auto: why) and ``error`` (why an
    explicitly named algorithm could not run, else ``None``)), ``too_large``
    (algorithms left out of ``auto`` because their flow pattern exceeds the
    simulator's limit) and ``ecmp`` (``None`` unless hashing:
    ``size_bytes``, ``algorithm``, ``hash_busbw_GBps``, ``spray_busbw_GBps``,
    ``collision_loss`` = 1 - hash / spray, ``skipped``: why spraying was not
    checked, for patterns above ``SPRAY_CHECK_MAX_FLOWS``).
    """
    if collective not in COLLECTIVES:
        raise WhatIfError(LATER.gettext("unknown collective %(collective)s; expected one of %(collectives)s") % {"collective": repr(collective), "collectives": Joined(COLLECTIVES)})
    sizes = check_sizes(sizes)
    known = algorithms_for(collective)
    unknown = [name for name in algorithms if name != "auto" and name not in known]
    if unknown or not algorithms:
        unknown_algorithms = LATER.gettext("algorithms %(algorithms)s for %(collective)s: expected some of %(known)s")
        raise WhatIfError(unknown_algorithms % {"algorithms": str(list(algorithms)), "collective": collective, "known": Joined(["auto", *known])})
    reference = check_sizes([reference_size])[0] if reference_size is not None else sizes[-1]
    simulator = Simulator(spec, max_pattern_flows=max_pattern_flows, **sim_options)
    points = [_point(simulator, collective, size, algorithm) for algorithm in algorithms for size in sizes]
    return {
        "collective": collective,
        "ranks": len(simulator.ranks),
        "sizes": sizes,
        "algorithms": list(algorithms),
        "reference_size": reference,
        "points": points,
        "too_large": {name: plain_words(why) for name, why in simulator.too_large(collective).items()},
        "ecmp": _ecmp_check(spec, simulator, collective, reference, algorithms[0], sim_options),
    }


ARTICLE_TP = 16
"""The article's tensor parallelism (TP 16 x DP 64 on 1,024 cards)."""


def training_tp(cards: int) -> int:
    """TP of a what-if's training step: the article's 16, or on a smaller fabric (a lab of 8
    cards) the largest power of two that leaves a DP of 2, so that the first stage has gradients
    to all-reduce too; one value for every stage, so that they compare."""
    return largest_power_of_two(min(ARTICLE_TP, cards // 2))


def training_step_cell(
    spec: FabricSpec,
    *,
    model_params: float = 175e9,
    tp: int = ARTICLE_TP,
    dp: int | None = None,
    bytes_per_param: float = 2,
    layers: int = 96,
    hidden_size: int = 12_288,
    sequence_length: int = 2_048,
    micro_batch_size: int = 1,
    micro_batches: int = 1,
    max_pattern_flows: int = SWEEP_MAX_PATTERN_FLOWS,
    **sim_options: Any,
) -> dict[str, Any]:
    """Communication time of one training step (formulas in the module docstring); JSON-ready.

    Defaults are GPT-3 175B (96 layers, hidden 12,288, sequence 2,048) in
    16-bit, TP = 16 and DP = cards / TP: the article's TP 16 x DP 64 on 1,024
    cards, scaled with the stage. Returns the parameters, ``cards_used``,
    ``tp_allreduce`` and ``dp_allreduce`` (``ranks``, ``bytes_per_rank``,
    ``per_step``, ``algorithm``, ``time_s`` each, ``busbw_GBps``, ``bound``,
    ``bottleneck_link_class``, ``bottleneck_domain``; ``None`` for a group of
    one), ``tp_time_s``, ``dp_time_s`` and ``step_comm_time_s``.
    """
    card_ids = [card.id for card in spec.cards()]
    counts = {"tp": tp, "layers": layers, "hidden_size": hidden_size, "sequence_length": sequence_length,
              "micro_batch_size": micro_batch_size, "micro_batches": micro_batches}
    problems = [LATER.gettext("%(name)s = %(value)s: expected a whole number of at least 1") % {"name": name, "value": repr(value)}
                for name, value in counts.items() if isinstance(value, bool) or not isinstance(value, int) or value < 1]
    if not (isinstance(model_params, (int, float)) and math.isfinite(model_params) and model_params > 0):
        problems.append(LATER.gettext("model_params = %(value)s: expected a positive number of parameters") % {"value": repr(model_params)})
    if not (isinstance(bytes_per_param, (int, float)) and 0 < bytes_per_param <= 16):
        problems.append(LATER.gettext("bytes_per_param = %(value)s: expected 0 to 16 bytes (2 for 16-bit)") % {"value": repr(bytes_per_param)})
    if problems:
        raise WhatIfError(LATER.gettext("impossible training step"), problems)
    dp = len(card_ids) // tp if dp is None else dp
    if isinstance(dp, bool) or not isinstance(dp, int) or dp < 1 or tp * dp > len(card_ids):
        too_many = LATER.ngettext(
            "TP %(tp)s x DP %(dp)s on %(count)s card; expected whole numbers with TP x DP at most the cards",
            "TP %(tp)s x DP %(dp)s on %(count)s cards; expected whole numbers with TP x DP at most the cards", len(card_ids),
        )  # fmt: skip
        raise WhatIfError(too_many % {"tp": str(tp), "dp": repr(dp), "count": len(card_ids)})
    activation_bytes = micro_batch_size * sequence_length * hidden_size * bytes_per_param
    gradient_bytes = model_params * bytes_per_param / tp
    sim_options = {**sim_options, "max_pattern_flows": max_pattern_flows}
    tp_part = _group_allreduce(spec, card_ids[:tp], activation_bytes, 4 * layers * micro_batches, sim_options)
    dp_part = _group_allreduce(spec, card_ids[: tp * dp : tp], gradient_bytes, 1, sim_options)
    tp_time = tp_part["time_s"] * tp_part["per_step"] if tp_part else 0.0
    dp_time = dp_part["time_s"] * dp_part["per_step"] if dp_part else 0.0
    return {
        "model_params": float(model_params),
        "bytes_per_param": float(bytes_per_param),
        **counts,
        "dp": dp,
        "cards_used": tp * dp,
        "tp_allreduce": tp_part,
        "dp_allreduce": dp_part,
        "tp_time_s": tp_time,
        "dp_time_s": dp_time,
        "step_comm_time_s": tp_time + dp_time,
    }


def _point(simulator: Simulator, collective: str, size: int, algorithm: str) -> dict[str, Any]:
    try:
        result = simulator.run(collective, size, algorithm, top_links=0)
    except TwinCoreError as error:
        if algorithm == "auto":
            failed = LATER.ngettext("%(collective)s of %(size)s byte: %(error)s", "%(collective)s of %(size)s bytes: %(error)s", size)
            raise WhatIfError(failed % {"collective": collective, "size": size, "error": error.words}) from None
        return {**dict.fromkeys(_POINT_KEYS), "size_bytes": size, "algorithm": algorithm, "error": str(error)}
    bottleneck = result["bottleneck"]
    return {
        "size_bytes": size,
        "algorithm": algorithm,
        "chosen_algorithm": result["algorithm"],
        "chosen_protocol": result["protocol"],
        "time_s": result["time_s"],
        "busbw_GBps": result["busbw_GBps"],
        "algbw_GBps": result["algbw_GBps"],
        "latency_s": result["latency_s"],
        "bandwidth_s": result["bandwidth_s"],
        "bound": result["bound"],
        "bottleneck_link_class": bottleneck["link_class"],
        "bottleneck_domain": bottleneck["domain"],
        "bottleneck_utilization": bottleneck["utilization"],
        "max_link_utilization": result["max_link_utilization"],
        "reason": result["choice"]["reason"] if "choice" in result else None,
        "error": None,
    }


_POINT_KEYS = (
    "size_bytes", "algorithm", "chosen_algorithm", "chosen_protocol", "time_s", "busbw_GBps", "algbw_GBps", "latency_s",
    "bandwidth_s", "bound", "bottleneck_link_class", "bottleneck_domain", "bottleneck_utilization",
    "max_link_utilization", "reason", "error",
)


def _ecmp_check(
    spec: FabricSpec, simulator: Simulator, collective: str, size: int, algorithm: str, sim_options: dict[str, Any]
) -> dict[str, Any] | None:
    if simulator.ecmp != "hash":
        return None
    try:
        hashed = simulator.run(collective, size, algorithm, top_links=0)
    except TwinCoreError:
        return None  # an explicitly named algorithm that cannot run here: its points say why
    check = {"size_bytes": size, "algorithm": hashed["algorithm"], "hash_busbw_GBps": hashed["busbw_GBps"]}
    flows = sum(phase["flows"] for phase in hashed["phases"])
    if flows > SPRAY_CHECK_MAX_FLOWS:
        return {**check, "spray_busbw_GBps": None, "collision_loss": None,
                "skipped": f"{flows:,} flows: spraying them over every path is too slow to check"}
    sprayed = Simulator(spec, **{**sim_options, "ecmp": "spray"}).run(collective, size, hashed["algorithm"], top_links=0)
    return {
        **check,
        "spray_busbw_GBps": sprayed["busbw_GBps"],
        "collision_loss": max(0.0, 1.0 - hashed["busbw_GBps"] / sprayed["busbw_GBps"]),
        "skipped": None,
    }


def _group_allreduce(
    spec: FabricSpec, ranks: list[str], size_bytes: float, per_step: int, sim_options: dict[str, Any]
) -> dict[str, Any] | None:
    if len(ranks) < 2:
        return None
    try:
        result = Simulator(spec, ranks=ranks, **sim_options).run("allreduce", size_bytes, "auto", top_links=0)
    except TwinCoreError as error:
        failed = LATER.gettext("allreduce of %(size)s bytes on %(count)s ranks: %(error)s")
        raise WhatIfError(failed % {"size": f"{size_bytes:,.0f}", "count": str(len(ranks)), "error": error.words}) from None
    return {
        "ranks": len(ranks),
        "bytes_per_rank": float(size_bytes),
        "per_step": per_step,
        "algorithm": result["algorithm"],
        "time_s": result["time_s"],
        "busbw_GBps": result["busbw_GBps"],
        "bound": result["bound"],
        "bottleneck_link_class": result["bottleneck"]["link_class"],
        "bottleneck_domain": result["bottleneck"]["domain"],
    }
