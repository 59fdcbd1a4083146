"""Binding a trace's ranks to the cards of a fabric.

Each rank is looked for, in order (the identity conventions of FORMATS.md
section 9):

1. by card id: the binding's ``card`` is a card of the fabric;
2. by host and PCI bus id: the card ``<host>/gpu:<bus id>``, or a card on that
   host whose ``attrs["busid"]`` is the bus id (NCCL topology dumps);
3. by host and device index: the card ``<host>/gpu<index>`` (nvidia-smi), or a
   card on that host whose ``attrs["gpu_index"]`` or ``attrs["index_on_host"]``
   is the index (generated fabrics).

Hosts compare as short lower-case names and bus ids as ``dddd:bb:dd.f``.
Every rank that names something must be found, exactly once; a rank that
names nothing is an error only when an event uses it. Two ranks on one card
are an error too. ``bind_trace`` raises ``TraceError`` listing the problems
(at most 50), so nothing is replayed from a trace that does not fit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from twin.ingest.hostlist import short_host_name
from twin.ingest.parsers.nccl_xml import normalise_bus_id
from twin.simcore.errors import problem_phrase
from twin.simcore.model import FabricSpec, NodeSpec
from twin.simcore.translation import LATER, Joined, Phrase
from twin.traces.errors import TraceError
from twin.traces.model import FlowEvent, RankBinding, Trace, gpu_card_id

__all__ = ["MAX_BINDING_PROBLEMS", "BoundTrace", "bind_trace"]

MAX_BINDING_PROBLEMS = 50


@dataclass(frozen=True, eq=False)
class BoundTrace:
    """A trace whose ranks are cards of ``spec``.

    ``cards[i]`` is the card id of ``trace.ranks[i]`` (``None`` for a rank
    that names nothing and that no event uses); ``matched_by[i]`` says how it
    was found: ``"card"``, ``"bus_id"``, ``"device"`` or ``"unused"``.
    """

    spec: FabricSpec
    trace: Trace
    cards: tuple[str | None, ...]
    matched_by: tuple[str, ...]

    @cached_property
    def card_of_rank(self) -> Mapping[int, str]:
        """Rank number -> card id, for the ranks that are bound."""
        return {binding.rank: card for binding, card in zip(self.trace.ranks, self.cards) if card is not None}


def bind_trace(spec: FabricSpec, trace: Trace) -> BoundTrace:
    """Bind every rank of ``trace`` to a card of ``spec`` (see the module docstring).

    The trace is validated first; raises ``TraceError`` listing unknown,
    ambiguous and doubly used cards.
    """
    trace.validate(max_problems=MAX_BINDING_PROBLEMS)
    finder = _CardFinder(spec)
    used = _ranks_used_by_events(trace)
    problems: list[Phrase] = []
    cards: list[str | None] = []
    matched_by: list[str] = []
    rank_on_card: dict[str, int] = {}
    for binding in trace.ranks:
        card, how, problem = finder.find(binding, required=binding.rank in used)
        if problem is None and card is not None and card in rank_on_card:
            taken = LATER.gettext("card %(card)s is already rank %(rank)s's") % {"card": repr(card), "rank": rank_on_card[card]}
            problem = problem_phrase(_rank_where(binding), taken, LATER.gettext("one rank per card"))
        if problem is not None:
            problems.append(problem)
            if len(problems) >= MAX_BINDING_PROBLEMS:
                break
            continue
        if card is not None:
            rank_on_card[card] = binding.rank
        cards.append(card)
        matched_by.append(how)
    if problems:
        unknown = LATER.gettext("trace %(trace)s names ranks that are not cards of fabric %(fabric)s")
        raise TraceError(unknown % {"trace": repr(trace.name), "fabric": repr(spec.name)}, problems)
    return BoundTrace(spec=spec, trace=trace, cards=tuple(cards), matched_by=tuple(matched_by))


def _ranks_used_by_events(trace: Trace) -> set[int]:
    used: set[int] = set()
    for event in trace.events:
        if isinstance(event, FlowEvent):
            used.update((event.src_rank, event.dst_rank))
        else:
            used.update(event.ranks)
    return used


class _CardFinder:
    """Indexes of the fabric's cards by id, (host, bus id) and (host, device index)."""

    def __init__(self, spec: FabricSpec) -> None:
        self.fabric = spec.name
        cards = spec.cards()
        self.ids = {card.id for card in cards}
        self.by_bus: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.by_device: dict[tuple[str, int], set[str]] = defaultdict(set)
        for card in cards:
            host = _card_host(card)
            if host is None:
                continue
            bus_id = card.attrs.get("busid")
            if isinstance(bus_id, str) and normalise_bus_id(bus_id):
                self.by_bus[(host, normalise_bus_id(bus_id))].add(card.id)
            for key in ("gpu_index", "index_on_host"):
                index = card.attrs.get(key)
                if isinstance(index, int) and not isinstance(index, bool):
                    self.by_device[(host, index)].add(card.id)

    def find(self, binding: RankBinding, *, required: bool) -> tuple[str | None, str, Phrase | None]:
        """(card, how, problem): the card and how it was found, or why it was not."""
        if binding.card is not None and binding.card in self.ids:
            return binding.card, "card", None
        host = short_host_name(binding.host) if binding.host else None
        bus_id = normalise_bus_id(binding.bus_id) if binding.bus_id else None
        tried: list[Phrase] = []
        if binding.card is not None:
            tried.append(LATER.gettext("card %(card)s") % {"card": repr(binding.card)})
        if host and bus_id:
            candidates = set(self.by_bus.get((host, bus_id), ()))
            candidates.update({gpu_card_id(host, bus_id)} & self.ids)
            if candidates:
                return self._one(binding, candidates, "bus_id", LATER.gettext("host %(host)s and bus id %(bus_id)s") % {"host": repr(host), "bus_id": bus_id})
            tried.append(LATER.gettext("host %(host)s with bus id %(bus_id)s") % {"host": repr(host), "bus_id": bus_id})
        if host and binding.device is not None:
            candidates = set(self.by_device.get((host, binding.device), ()))
            candidates.update({f"{host}/gpu{binding.device}"} & self.ids)
            if candidates:
                device = {"host": repr(host), "device": str(binding.device)}
                return self._one(binding, candidates, "device", LATER.gettext("host %(host)s and device %(device)s") % device)
            tried.append(LATER.gettext("host %(host)s with device index %(device)s") % {"host": repr(host), "device": str(binding.device)})
        if not tried:
            if host:
                tried.append(LATER.gettext("host %(host)s without a bus id or device index") % {"host": repr(host)})
            elif not required:
                return None, "unused", None
            else:
                nothing, expected = LATER.gettext("names no card, host, bus id or device"), LATER.gettext("a card id or a host with a bus id or device index")
                return None, "", problem_phrase(_rank_where(binding), nothing, expected)
        no_card = LATER.gettext("no card of fabric %(fabric)s matches %(tried)s") % {"fabric": repr(self.fabric), "tried": Joined(tried)}
        return None, "", problem_phrase(_rank_where(binding), no_card)

    @staticmethod
    def _one(binding: RankBinding, candidates: set[str], how: str, what: Phrase) -> tuple[str | None, str, Phrase | None]:
        if len(candidates) == 1:
            return next(iter(candidates)), how, None
        several = LATER.gettext("%(what)s match %(count)s cards (%(cards)s)") % {
            "what": what, "count": len(candidates), "cards": Joined([repr(card) for card in sorted(candidates)[:5]]),
        }
        return None, "", problem_phrase(_rank_where(binding), several, LATER.gettext("exactly one"))


def _rank_where(binding: RankBinding) -> Phrase:
    return LATER.gettext("rank %(rank)s") % {"rank": str(binding.rank)}


def _card_host(card: NodeSpec) -> str | None:
    """Short host name of a card: its ``host``, else the ``<host>/`` prefix of its id."""
    if card.host:
        return short_host_name(card.host)
    return short_host_name(card.id.split("/", 1)[0]) if "/" in card.id else None
