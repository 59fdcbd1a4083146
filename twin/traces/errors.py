"""Errors of the trace inputs.

Bad *files* are reported with ``twin.ingest``'s ``IngestError`` (file, line,
what was expected; up to ``max_problems`` at once through ``ProblemCollector``),
so the upload views treat traces and fabrics alike. ``TraceError`` is for a
trace or a generator call that is inconsistent in itself (an event naming a
rank that has no binding, ``tp`` not dividing the ranks), where there is no
file line to point at.
"""

from __future__ import annotations

from collections.abc import Iterable

from twin.ingest.errors import IngestError, IngestProblem, ProblemCollector
from twin.simcore.errors import TwinCoreError

__all__ = ["IngestError", "IngestProblem", "ProblemCollector", "TraceError"]


class TraceError(TwinCoreError):
    """A trace (or the arguments that generate one) is inconsistent.

    ``problems`` lists every inconsistency found, each a sentence that says
    what is wrong and what was expected.
    """

    def __init__(self, message: str, problems: Iterable[str] = ()) -> None:
        self.problems = tuple(problems)
        details = "".join(f"\n  - {problem}" for problem in self.problems)
        super().__init__(message + details)
