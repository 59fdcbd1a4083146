"""Errors of the trace inputs.

Bad *files* are reported with ``twin.ingest``'s ``IngestError`` (file, line,
what was expected; up to ``max_problems`` at once through ``ProblemCollector``),
so the upload views treat traces and fabrics alike. ``TraceError`` is for a
trace or a generator call that is inconsistent in itself (an event naming a
rank that has no binding, ``tp`` not dividing the ranks), where there is no
file line to point at.
"""

from __future__ import annotations

from twin.ingest.errors import IngestError, IngestProblem, ProblemCollector
from twin.simcore.errors import ProblemsError

__all__ = ["IngestError", "IngestProblem", "ProblemCollector", "TraceError"]


class TraceError(ProblemsError):
    """A trace (or the arguments that generate one) is inconsistent.

    ``problems`` lists every inconsistency found, each a sentence that says
    what is wrong and what was expected (English; ``words`` holds them to be
    translated).
    """
