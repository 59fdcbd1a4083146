"""Words for people in the reader's language, without the pure core importing Django.

Renderers take ``translations``: any object with the stdlib ``gettext``
methods (``gettext``, ``ngettext``, ``pgettext``, ``npgettext``). The web
layer passes ``django.utils.translation`` itself (its functions have those
names and signatures), so ``makemessages`` finds every string where it is
written; the default is English. Text stored in the report (the knee's
remedy, stage labels) is kept in English and translated when rendered, so one
stored report reads in every language.
"""

from __future__ import annotations

import gettext
from typing import Protocol

__all__ = ["ENGLISH", "Translations", "gettext_noop"]


class Translations(Protocol):
    def gettext(self, message: str) -> str: ...

    def ngettext(self, singular: str, plural: str, n: int) -> str: ...

    def pgettext(self, context: str, message: str) -> str: ...

    def npgettext(self, context: str, singular: str, plural: str, n: int) -> str: ...


ENGLISH: Translations = gettext.NullTranslations()


def gettext_noop(message: str) -> str:
    """Marks a string for ``makemessages`` where it is stored, to be translated where it is shown."""
    return message
