"""Quantities the way people write them: sizes (342MB, 1 GiB, 4k, 1e9), counts (175B) and
counted things (1 link, 1,024 cards)."""

from __future__ import annotations

import re

from twin.simcore.errors import TwinCoreError
from twin.simcore.translation import LATER, Joined, Phrase

__all__ = ["parse_size", "parse_count", "format_count", "three_digits", "counted", "counted_list", "counted_phrase", "counted_list_phrase"]

_UNITS = {
    "": 1, "b": 1,
    "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_IRREGULAR_PLURALS = {"switch": "switches", "leaf": "leaves"}
# Counts (a model's parameters) as people write them: 175B is 175 billion, not bytes.
_COUNT_UNITS = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_size(text: str) -> float:
    """Bytes in ``text``: decimal units (KB, MB, GB: powers of 1000, as nccl-tests and the
    article use) and binary ones (KiB, MiB, GiB).

    >>> parse_size("342MB"), parse_size("1 GiB"), parse_size("4k"), parse_size("1e9")
    (342000000.0, 1073741824.0, 4000.0, 1000000000.0)
    """
    match = _SIZE.match(text)
    if not match or match.group(2).lower() not in _UNITS:
        raise TwinCoreError(LATER.gettext("cannot read size %(text)s; expected a number with an optional unit (B, KB, MB, GB, KiB, MiB, GiB)") % {"text": repr(text)})
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if value <= 0:
        raise TwinCoreError(LATER.gettext("size %(text)s must be positive") % {"text": repr(text)})
    return value


def parse_count(text: str) -> float:
    """A count in ``text``, with an optional k, M, B (billion) or T suffix or an exponent.

    >>> parse_count("175B"), parse_count("175e9"), parse_count("1.5T"), parse_count("7000")
    (175000000000.0, 175000000000.0, 1500000000000.0, 7000.0)
    """
    match = _SIZE.match(text)
    if not match or match.group(2).lower() not in _COUNT_UNITS:
        raise TwinCoreError(LATER.gettext("cannot read count %(text)s; expected a number like 175B, 175e9 or 7000 (suffixes k, M, B, T)") % {"text": repr(text)})
    value = float(match.group(1)) * _COUNT_UNITS[match.group(2).lower()]
    if value < 1:
        raise TwinCoreError(LATER.gettext("count %(text)s must be at least 1") % {"text": repr(text)})
    return value


def format_count(value: float) -> str:
    """The shortest of ``parse_count``'s spellings that reads back exactly.

    >>> format_count(175e9), format_count(1.5e12), format_count(7000), format_count(1234567)
    ('175B', '1.5T', '7k', '1234567')
    """
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        scaled = value / scale
        if scaled >= 1 and float(f"{scaled:g}") * scale == value:
            return f"{scaled:g}{suffix}"
    return str(int(value)) if value == int(value) else str(value)


def three_digits(value: float) -> str:
    """Three significant digits with thousands separators, never an exponent (a time of
    "1.93e+03 ms" reads as 1,930 ms to nobody).

    >>> three_digits(2071.4), three_digits(906.1), three_digits(0.8681)
    ('2,071', '906', '0.868')
    """
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def largest_power_of_two(limit: int) -> int:
    """The largest power of two at most ``limit``; 1 below that (group sizes start at one card).

    >>> largest_power_of_two(12), largest_power_of_two(16), largest_power_of_two(1), largest_power_of_two(0)
    (8, 16, 1, 1)
    """
    return 1 << (limit.bit_length() - 1) if limit >= 1 else 1


def counted(count: int, noun: str) -> str:
    """The count with its thousands separated and the noun in the number it needs.

    >>> counted(1, "link"), counted(1024, "card"), counted(176, "switch"), counted(0, "leaf")
    ('1 link', '1,024 cards', '176 switches', '0 leaves')
    """
    return f"{count:,} {noun if count == 1 else _IRREGULAR_PLURALS.get(noun, noun + 's')}"


def counted_list(counts: dict[str, int]) -> str:
    """Several counts in one phrase, zero counts left out.

    >>> counted_list({"card": 1024, "nic": 0, "switch": 176})
    '1,024 cards, 176 switches'
    """
    return ", ".join(counted(count, noun) for noun, count in counts.items() if count)


# Each noun's forms, written out so that makemessages finds them as plurals.
_COUNTED_PHRASES = {
    "card": lambda count: LATER.ngettext("%(count)s card", "%(count)s cards", count),
    "nic": lambda count: LATER.ngettext("%(count)s NIC", "%(count)s NICs", count),
    "switch": lambda count: LATER.ngettext("%(count)s switch", "%(count)s switches", count),
    "host": lambda count: LATER.ngettext("%(count)s host", "%(count)s hosts", count),
    "aggregation": lambda count: LATER.ngettext("%(count)s aggregation node", "%(count)s aggregation nodes", count),
    "link": lambda count: LATER.ngettext("%(count)s link", "%(count)s links", count),
    "leaf": lambda count: LATER.ngettext("%(count)s leaf", "%(count)s leaves", count),
    "spine": lambda count: LATER.ngettext("%(count)s spine", "%(count)s spines", count),
    "core": lambda count: LATER.ngettext("%(count)s core switch", "%(count)s core switches", count),
}


def counted_phrase(count: int, noun: str) -> Phrase:
    """``counted`` in the reader's language: one of the nouns of a fabric's summary (node kinds,
    switch tiers, links).

    >>> str(counted_phrase(1024, "card")), str(counted_phrase(1, "switch"))
    ('1,024 cards', '1 switch')
    """
    return _COUNTED_PHRASES[noun](count) % {"count": count}


def counted_list_phrase(counts: dict[str, int]) -> Joined:
    """``counted_list`` in the reader's language.

    >>> str(counted_list_phrase({"card": 1024, "nic": 0, "switch": 176}))
    '1,024 cards, 176 switches'
    """
    return Joined([counted_phrase(count, noun) for noun, count in counts.items() if count])
