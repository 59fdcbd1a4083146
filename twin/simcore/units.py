"""Reading sizes the way people write them: 342MB, 1 GiB, 4k, 1e9."""

from __future__ import annotations

import re

from twin.simcore.errors import TwinCoreError

__all__ = ["parse_size"]

_UNITS = {
    "": 1, "b": 1,
    "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_size(text: str) -> float:
    """Bytes in ``text``: decimal units (KB, MB, GB: powers of 1000, as nccl-tests and the
    article use) and binary ones (KiB, MiB, GiB).

    >>> parse_size("342MB"), parse_size("1 GiB"), parse_size("4k"), parse_size("1e9")
    (342000000.0, 1073741824.0, 4000.0, 1000000000.0)
    """
    match = _SIZE.match(text)
    if not match or match.group(2).lower() not in _UNITS:
        raise TwinCoreError(f"cannot read size {text!r}; expected a number with an optional unit (B, KB, MB, GB, KiB, MiB, GiB)")
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if value <= 0:
        raise TwinCoreError(f"size {text!r} must be positive")
    return value
