"""Runs whose work is split into independent cells, each its own Celery task, so that more
workers finish sooner. A kind plugs in three plain functions:

- `plan(run) -> list[CellPlan]`: checks the parameters (raising TwinCoreError with a message for
  people *before* any task starts) and names the cells;
- `execute(run, params) -> dict`: does one cell (pure; may run twice);
- `assemble(run, results: dict[key, result]) -> RunOutput`: the run's result from all cells.

Fan-in is counted in the database (no Celery result backend): the cell that finishes last
queues the assembly, which is itself safe to run twice.
"""
from collections.abc import Callable
from dataclasses import dataclass

from twin.simcore.translation import Phrase

from .handlers import RunOutput
from .models import Run

__all__ = ("CellPlan", "FanOutKind", "FANOUT_KINDS", "register_fanout")


@dataclass(frozen=True)
class CellPlan:
    key: str
    params: dict
    label: Phrase  # shown in progress messages, e.g. "4x one-supernode (4,096 cards): allreduce"


@dataclass(frozen=True)
class FanOutKind:
    plan: Callable[[Run], list[CellPlan]]
    execute: Callable[[Run, dict], dict]
    assemble: Callable[[Run, dict[str, dict]], RunOutput]


FANOUT_KINDS: dict[str, FanOutKind] = {}


def register_fanout(kind: str, fanout: FanOutKind) -> None:
    FANOUT_KINDS[kind] = fanout
