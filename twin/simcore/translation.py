"""Words for people in the reader's language, without the pure core importing Django.

Renderers take ``translations``: any object with the stdlib ``gettext``
methods (``gettext``, ``ngettext``, ``pgettext``, ``npgettext``). The web
layer passes ``django.utils.translation`` itself (its functions have those
names and signatures), so ``makemessages`` finds every string where it is
written; the default is English. Text stored in the report (the knee's
remedy, stage labels) is kept in English and translated when rendered, so one
stored report reads in every language.

Results that are computed once and read in several languages (a cabling check,
a diagnosis, a run's progress) hold ``Phrase``s instead of text: ``LATER``'s
methods are named as gettext's (so ``makemessages`` finds the English where it
is written) but return a ``Phrase``, filled with ``%`` as a translated string
is, and rendered where it is shown: ``phrase.render(translations)``.
"""

from __future__ import annotations

import gettext
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

__all__ = ["ENGLISH", "LATER", "Joined", "Phrase", "Translations", "gettext_noop", "plain_words", "rendered", "words_from_plain"]


class Translations(Protocol):
    def gettext(self, message: str) -> str: ...

    def ngettext(self, singular: str, plural: str, n: int) -> str: ...

    def pgettext(self, context: str, message: str) -> str: ...

    def npgettext(self, context: str, singular: str, plural: str, n: int) -> str: ...


ENGLISH: Translations = gettext.NullTranslations()


def gettext_noop(message: str) -> str:
    """Marks a string for ``makemessages`` where it is stored, to be translated where it is shown."""
    return message


@dataclass(frozen=True)
class Phrase:
    """A message (English, the msgid) and its values, rendered in a language when shown.

    ``plural`` and ``count`` choose the plural form as ``ngettext`` does, ``context`` is
    ``pgettext``'s. Values are rendered too: a Phrase in its language, a list joined by the
    language's list separator, an integer with its thousands separated. ``str()`` is English.
    """

    message: str
    plural: str | None = None
    count: int | None = None
    context: str | None = None
    params: Mapping[str, Any] | None = None

    def __mod__(self, params: Mapping[str, Any]) -> Phrase:
        return replace(self, params=dict(params))

    def render(self, translations: Translations = ENGLISH) -> str:
        tr = translations
        if self.plural is None:
            text = tr.pgettext(self.context, self.message) if self.context else tr.gettext(self.message)
        elif self.context:
            text = tr.npgettext(self.context, self.message, self.plural, self.count)
        else:
            text = tr.ngettext(self.message, self.plural, self.count)
        if self.params is None:
            return text
        return text % {name: rendered(value, tr) for name, value in self.params.items()}

    def __str__(self) -> str:
        return self.render()

    def to_plain(self) -> dict[str, Any]:
        """JSON-ready, to be stored and rendered later (``from_plain``)."""
        plain: dict[str, Any] = {"message": self.message}
        plain.update((name, value) for name, value in (("plural", self.plural), ("count", self.count), ("context", self.context)) if value is not None)
        if self.params is not None:
            plain["params"] = {name: plain_words(value) for name, value in self.params.items()}
        return plain

    @classmethod
    def from_plain(cls, plain: Mapping[str, Any]) -> Phrase:
        params = plain.get("params")
        return cls(
            plain["message"], plain.get("plural"), plain.get("count"), plain.get("context"),
            None if params is None else {name: words_from_plain(value) for name, value in params.items()},
        )  # fmt: skip


SEPARATORS = (gettext_noop(", "), gettext_noop("; "))
"""How items of a list are joined, translated as the language joins them (、 and ； in Chinese)."""


@dataclass(frozen=True)
class Joined:
    """Items (Phrases or names) shown joined by ``separator``, one of ``SEPARATORS``; a plain list
    is joined by ", "."""

    items: Sequence[Any]
    separator: str = ", "

    def render(self, translations: Translations = ENGLISH) -> str:
        return translations.gettext(self.separator).join(str(rendered(item, translations)) for item in self.items)

    def __str__(self) -> str:
        return self.render()


def plain_words(value: Any) -> Any:
    """``value`` (Phrases, Joined, lists of them, other values) JSON-ready, to be stored."""
    if isinstance(value, Phrase):
        return {"phrase": value.to_plain()}
    if isinstance(value, Joined):
        return {"joined": [plain_words(item) for item in value.items], "separator": value.separator}
    if isinstance(value, (list, tuple)):
        return [plain_words(item) for item in value]
    return value


def words_from_plain(value: Any) -> Any:
    """Inverse of ``plain_words``: stored words ready to render (``rendered``)."""
    if isinstance(value, Mapping) and "phrase" in value:
        return Phrase.from_plain(value["phrase"])
    if isinstance(value, Mapping) and "joined" in value:
        return Joined([words_from_plain(item) for item in value["joined"]], value["separator"])
    if isinstance(value, list):
        return [words_from_plain(item) for item in value]
    return value


def rendered(value: Any, translations: Translations = ENGLISH) -> Any:
    """``value`` for people in the language of ``translations`` (see ``Phrase``); other values as they are."""
    if isinstance(value, (Phrase, Joined)):
        return value.render(translations)
    if isinstance(value, (list, tuple)):
        return Joined(value).render(translations)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return value


class _Later:
    """gettext's methods, returning Phrases to render later (see the module's docstring)."""

    def gettext(self, message: str) -> Phrase:
        return Phrase(message)

    def ngettext(self, singular: str, plural: str, n: int) -> Phrase:
        return Phrase(singular, plural, n)

    def pgettext(self, context: str, message: str) -> Phrase:
        return Phrase(message, context=context)

    def npgettext(self, context: str, singular: str, plural: str, n: int) -> Phrase:
        return Phrase(singular, plural, n, context)


LATER = _Later()
