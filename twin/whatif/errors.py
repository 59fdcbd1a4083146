"""The what-if's own error: impossible parameters, said for people."""

from __future__ import annotations

from collections.abc import Iterable

from twin.simcore.errors import TwinCoreError

__all__ = ["WhatIfError"]


class WhatIfError(TwinCoreError):
    """A what-if cannot be planned or run with these parameters.

    ``problems`` lists every reason found (all are checked before any work
    starts, so a user fixes them in one go); the message joins them.
    """

    def __init__(self, message: str, problems: Iterable[str] = ()) -> None:
        self.problems = tuple(problems)
        details = "".join(f"\n  - {problem}" for problem in self.problems)
        super().__init__(message + details)
