"""Exception tree of the pure core.

``TwinCoreError`` is the root so that callers (services, tasks) can catch every
expected failure of the core in one place; ``FabricError`` says a fabric
description is inconsistent and carries the individual problems as data, so
that parsers can point at the offending element of the source file.
``ProblemsError`` is a message and the list of reasons under it (a placement,
a what-if, a trace, telemetry, a fabric), said in the reader's language where
it is shown (``words``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from twin.simcore.translation import LATER, Joined

__all__ = ["PROBLEM_LINE", "FabricError", "FabricProblem", "PathPart", "ProblemsError", "TwinCoreError", "format_path", "problem_phrase"]

PathPart = str | int


def format_path(path: Iterable[PathPart]) -> str:
    """Render a document path the way JSON users read it.

    >>> format_path(("links", 3, "b"))
    'links[3].b'
    >>> format_path(())  # the document itself
    ''
    >>> format_path((None,))  # YAML's "?" makes a mapping with a null key
    'None'
    """
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def problem_phrase(where: Any, problem: Any, expected: Any = None) -> Any:
    """The sentence of one problem, as words: "where: what is wrong; expected what would do"
    (``where`` and ``expected`` may be empty; an empty ``problem`` says only what was expected)."""
    if not problem:
        return LATER.gettext("%(where)s: expected %(expected)s") % {"where": where, "expected": expected}
    text = LATER.gettext("%(where)s: %(problem)s") % {"where": where, "problem": problem} if where else problem
    return LATER.gettext("%(problem)s; expected %(expected)s") % {"problem": text, "expected": expected} if expected else text


class TwinCoreError(Exception):
    """Root of every error the pure core raises on purpose.

    Its message is English text or words (a Phrase or Joined of ``twin.simcore.translation``):
    ``str()`` is English, ``words`` is rendered in the reader's language where it is shown.
    """

    @property
    def words(self) -> Any:
        return self.args[0] if self.args else ""


PROBLEM_LINE = "\n  - "
"""Between a ``ProblemsError``'s message and each of its problems, in every language."""


class ProblemsError(TwinCoreError):
    """A message and every reason found under it (all are checked before any work starts, so a
    user fixes them in one go). ``problems`` are English; the words hold them to be translated."""

    def __init__(self, message: Any, problems: Iterable[Any] = ()) -> None:
        problems = tuple(problems)
        self.problems = tuple(str(problem) for problem in problems)
        self.problem_words = problems  # each problem alone, for pages that list them
        super().__init__(Joined([message, *problems], PROBLEM_LINE) if problems else message)


@dataclass(frozen=True)
class FabricProblem:
    """One inconsistency in a fabric.

    ``path`` locates the offending value in the plain-dict form of the fabric
    (``("links", 3, "b")``), ``expected`` says what would have been valid.
    """

    path: tuple[PathPart, ...]
    message: Any  # text, or a Phrase (twin.simcore.translation) rendered where it is shown
    expected: Any = None

    @property
    def words(self) -> Any:
        """The whole sentence (where, what, what was expected), to be rendered in a language."""
        return problem_phrase(format_path(self.path), self.message, self.expected)

    def __str__(self) -> str:
        return str(self.words)


class FabricError(ProblemsError):
    """A fabric cannot be built or is inconsistent.

    ``problems`` lists what was found, in the order found (possibly only the
    first few); it may be empty when the message alone says it all, as for the
    design-rule errors of the generator. Unlike other ``ProblemsError``s they are
    ``FabricProblem``s (``str()`` is English), so that parsers can point at their path.
    """

    def __init__(self, message: Any, problems: Iterable[FabricProblem] = ()) -> None:
        problems = tuple(problems)
        super().__init__(message, [problem.words for problem in problems])
        self.problems = problems  # type: ignore[assignment]
