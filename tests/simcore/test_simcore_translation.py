"""Phrases: words kept apart from their values, stored as JSON and rendered in a language later."""
import gettext
import json

from twin.simcore.translation import LATER, Joined, Phrase, plain_words, rendered, words_from_plain


class Pirate(gettext.NullTranslations):
    """A catalogue of a few messages, as Django's would answer for one language."""

    table = {
        "%(count)s link: %(ports)s": "%(count)s ropes: %(ports)s",
        "%(port)s to %(peer)s": "%(port)s lashed to %(peer)s",
        ", ": " & ",
        "; ": " / ",
    }

    def gettext(self, message):
        return self.table.get(message, message)

    def ngettext(self, singular, plural, n):
        return self.table.get(singular, singular if n == 1 else plural)

    def pgettext(self, context, message):
        return {("link state", "down"): "sunk"}.get((context, message), message)


def cabling(count: int) -> Phrase:
    ports = [LATER.gettext("%(port)s to %(peer)s") % {"port": str(port), "peer": f"leaf-01:{port}"} for port in range(1, count + 1)]
    return LATER.ngettext("%(count)s link: %(ports)s", "%(count)s links: %(ports)s", count) % {"count": count, "ports": ports}


def test_english_by_default_with_plurals_lists_and_thousands():
    assert str(cabling(1)) == "1 link: 1 to leaf-01:1"
    assert str(cabling(2)) == "2 links: 1 to leaf-01:1, 2 to leaf-01:2"
    assert str(LATER.ngettext("%(count)s card", "%(count)s cards", 1024) % {"count": 1024}) == "1,024 cards"


def test_rendered_in_the_language_given_nested_phrases_and_separators_too():
    words = Joined([cabling(2), LATER.pgettext("link state", "down")], "; ")
    assert rendered(words, Pirate()) == "2 ropes: 1 lashed to leaf-01:1 & 2 lashed to leaf-01:2 / sunk"


def test_stored_as_json_and_read_back_unchanged():
    words = Joined([cabling(2), LATER.pgettext("link state", "down")], "; ")
    stored = json.loads(json.dumps(plain_words(words)))
    assert words_from_plain(stored) == words
    assert rendered(words_from_plain(stored), Pirate()) == rendered(words, Pirate())
    assert words_from_plain("an English warning from before") == "an English warning from before"
