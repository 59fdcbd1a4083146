"""The what-if's own error: impossible parameters, said for people."""

from __future__ import annotations

from twin.simcore.errors import ProblemsError

__all__ = ["WhatIfError"]


class WhatIfError(ProblemsError):
    """A what-if cannot be planned or run with these parameters; ``problems`` lists every reason."""
