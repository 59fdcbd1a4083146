"""Placements out to the scheduler: rank -> card/host CSV, Slurm hostlists and hostfiles.

``compress_hostlist`` is the inverse of ``twin.ingest.hostlist.expand_hostlist``
(up to order and duplicates): ``host-001 host-002 host-004`` becomes
``host-[001-002,004]``. Names are split at their *last* run of digits; names
with the same text around it share one bracket, and a range keeps the zero
padding of its lower bound, as Slurm reads it.
"""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict
from collections.abc import Iterable

from twin.ingest.errors import ProblemCollector
from twin.operations.placement import Placement, PlacementError
from twin.simcore.diff import natural_key
from twin.simcore.translation import LATER, Joined

__all__ = [
    "PLACEMENT_CSV_COLUMNS",
    "compress_hostlist",
    "placement_csv",
    "read_rank_mapping",
    "slurm_hostfile",
    "slurm_hostlist",
]

PLACEMENT_CSV_COLUMNS = ("rank", "card", "host", "stage", "dp_index", "tp_index")

_LAST_NUMBER = re.compile(r"^(.*?)(\d+)(\D*)$")


def compress_hostlist(hosts: Iterable[str]) -> str:
    """A Slurm hostlist naming each of ``hosts`` once, sorted naturally.

    >>> compress_hostlist(["node003", "node001", "node002", "node007", "login"])
    'login,node[001-003,007]'
    >>> compress_hostlist(["n9", "n10", "n11", "gpu-r04-n01", "gpu-r04-n02"])
    'gpu-r04-n[01-02],n[9-11]'
    >>> compress_hostlist(["node08", "node09", "node10", "node100"])
    'node[08-10,100]'
    """
    numbered: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    items: list[str] = []
    for host in set(hosts):
        if not host or "," in host or "[" in host or "]" in host or any(c.isspace() for c in host):
            raise ValueError(f"host name {host!r} cannot go into a hostlist; expected a plain host name")
        match = _LAST_NUMBER.match(host)
        if match is None:
            items.append(host)
            continue
        prefix, digits, suffix = match.groups()
        # The same number written twice ("n1", "n01") keeps both spellings apart.
        spellings = numbered[(prefix, suffix)]
        if int(digits) in spellings and spellings[int(digits)] != digits:
            items.append(host)
        else:
            spellings[int(digits)] = digits
    for (prefix, suffix), spellings in numbered.items():
        ranges = _ranges(spellings)
        if len(spellings) == 1:
            items.append(f"{prefix}{next(iter(spellings.values()))}{suffix}")
        else:
            items.append(f"{prefix}[{','.join(ranges)}]{suffix}")
    return ",".join(sorted(items, key=natural_key))


def _ranges(spellings: dict[int, str]) -> list[str]:
    """``lo-hi`` runs of consecutive numbers written with the lower bound's padding."""
    ranges: list[str] = []
    numbers = sorted(spellings)
    start = 0
    while start < len(numbers):
        width = len(spellings[numbers[start]])
        end = start
        while (
            end + 1 < len(numbers)
            and numbers[end + 1] == numbers[end] + 1
            and spellings[numbers[end + 1]] == f"{numbers[end + 1]:0{width}d}"
        ):
            end += 1
        low, high = spellings[numbers[start]], spellings[numbers[end]]
        ranges.append(low if start == end else f"{low}-{high}")
        start = end + 1
    return ranges


def placement_csv(placement: Placement) -> str:
    """One row per rank: ``PLACEMENT_CSV_COLUMNS`` (``read_rank_mapping`` reads it back)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(PLACEMENT_CSV_COLUMNS)
    for record in placement.rank_records():
        writer.writerow([record[column] if record[column] is not None else "" for column in PLACEMENT_CSV_COLUMNS])
    return buffer.getvalue()


def slurm_hostlist(placement: Placement) -> str:
    """The hosts of the placement as one compressed Slurm hostlist (``--nodelist``)."""
    return compress_hostlist(_hosts(placement))


def slurm_hostfile(placement: Placement) -> str:
    """One host per rank, in rank order: a ``SLURM_HOSTFILE`` for ``--distribution=arbitrary``."""
    return "".join(f"{host}\n" for host in _hosts(placement))


def _hosts(placement: Placement) -> tuple[str, ...]:
    missing = [card for card, host in zip(placement.cards, placement.hosts) if not host]
    if missing:
        no_host = LATER.ngettext(
            "%(count)s placed card has no host, e.g. %(cards)s; expected every card to record its host for a Slurm host list",
            "%(count)s placed cards have no host, e.g. %(cards)s; expected every card to record its host for a Slurm host list",
            len(missing),
        )
        raise PlacementError(
            no_host % {"count": len(missing), "cards": Joined([repr(card) for card in missing[:3]])}
        )
    return tuple(host for host in placement.hosts if host)


def read_rank_mapping(text: str, *, source_name: str, max_problems: int = 50) -> dict[int, str]:
    """A user's rank -> card mapping from CSV: a header with ``rank`` and ``card`` columns
    (``placement_csv``'s output works), then one row per rank; ``#`` lines and blank lines are skipped.

    Raises ``IngestError`` naming the file and line of every problem (up to ``max_problems``).
    Whether the cards exist and are free is ``user_placement``'s check.
    """
    problems = ProblemCollector(source_name, limit=max_problems)
    rows = [(number, row) for number, row in enumerate(csv.reader(io.StringIO(text)), start=1) if row and not row[0].lstrip().startswith("#")]
    if not rows:
        problems.add("no rows", expected="a header 'rank,card' and one row per rank")
        problems.raise_if_any()
    header_line, header = rows[0]
    columns = [name.strip().lower() for name in header]
    if "rank" not in columns or "card" not in columns:
        problems.add(f"header {','.join(header)!r}", line=header_line, expected="a header naming the columns 'rank' and 'card'")
        problems.raise_if_any()
    rank_column, card_column = columns.index("rank"), columns.index("card")
    mapping: dict[int, str] = {}
    first_line: dict[int, int] = {}
    for line, row in rows[1:]:
        if len(row) <= max(rank_column, card_column):
            problems.add(f"{len(row)} column(s)", line=line, expected=f"at least {max(rank_column, card_column) + 1} columns")
            continue
        rank_text, card = row[rank_column].strip(), row[card_column].strip()
        if not rank_text.isdigit():
            problems.add(f"rank {rank_text!r}", line=line, expected="a rank number 0, 1, 2 ...")
        elif not card:
            problems.add(f"rank {rank_text} has no card", line=line, expected="a card id")
        elif int(rank_text) in mapping:
            problems.add(f"rank {rank_text} is mapped again (first on line {first_line[int(rank_text)]})", line=line, expected="each rank once")
        else:
            mapping[int(rank_text)] = card
            first_line[int(rank_text)] = line
    problems.raise_if_any()
    return mapping
