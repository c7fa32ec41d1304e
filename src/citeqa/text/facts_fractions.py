"""Fractions in words as shares: "a third of", "la mitad de", "zwei Drittel der", "un quart des".

A share is read on the scale percentages are (``Fact.number`` of "32 %" is 32 with unit ``%``), so
"a third of" is 33.33... ``%`` and compares with "32 %" (see :mod:`citeqa.text.quantities`). The
words are data, ``facts.fractions`` of each language's file (:mod:`citeqa.text.lexicon`), read in
the text's own language only, like number words ("tiers" is French, "tiers" in English are levels):

* ``numerators``: the count before the fraction word ("two", "zwei"; an article says one: "a",
  "la", "die"); required, except before a half ("half of", "metade dos");
* ``denominators``: the fraction word -> what it divides by ("third": 3, "Hälfte": 2);
* ``of``: the words that must follow it ("of", "de", "der", "d'"): a fraction of something;
* ``by``: the words that may stand between a change verb and a fraction that ends its clause
  ("by", "um", "de", "d'"): the size of a change.

A fraction is a share where an "of" word follows it, or where it ends its clause (. , ; : or the end
of the text) after a verb of change (the word lists' ``concepts`` grow and fall, any inflection that
has their stem): "Sales rose by a third.", "cayeron un tercio.", "stiegen um ein Drittel.", "ont
augmenté d'un tiers", "a baissé de moitié". The verb stands right before it or before a ``by``
word, with at most one more word between ("rose sharply by a third"), a hedge not counted ("rose by
almost a third"); nothing else between ("rose in a quarter.": a time; "fell to a third": another
value).

What is no share: a fraction word with neither ("a third party", "half-life", "a quarter century",
"o quarto capítulo", "quarto lugar": Portuguese "quarto", "quinto", "décimo" are fractions only so),
one after an ordinal ("the second half of the season", "the third quarter of the year"; quarters and
halves of a year with their year are dates already), one of a number, a scale or a unit ("half of
2026", "half a million", "un quart d'heure", "a quarter of an hour").
"""

from __future__ import annotations

import re
from functools import cache

from citeqa.text import facts_words as fw
from citeqa.text.lexicon import concepts, entry, folded, languages, shared_list

#: Words that may stand between "of" and what the fraction is of ("a quarter of an hour").
_NEXT = re.compile(r"[\s'\u2019]*([^\W_][\w\-]*|\d)")
#: The last word before a position, with nothing but spaces and apostrophes after it ("d'").
_LAST_WORD = re.compile(r"(?<![\w\-])([^\W_][\w\-]*)[\s'\u2019]*$")
#: The concepts (the word lists' ``concepts``) whose verbs a fraction at the end of a clause can be
#: the size of: "rose by a third.", "a baissé de moitié."
CHANGE_CONCEPTS = frozenset({"grow", "fall"})
#: How many words may stand between such a verb and its fraction, a hedge not counted.
_CHANGE_GAP = 2


@cache
def _pattern(lang: str) -> re.Pattern[str] | None:
    """The fractions of ``lang`` followed by an "of" word or by the end of their clause (group
    ``end``), on folded lower-case text."""
    table = entry(lang, "facts", "fractions", None)
    if not table:
        return None
    nums = fw.alternation(table.get("numerators", {}))
    dens = fw.alternation(table.get("denominators", {}))
    of = "|".join(
        re.escape(folded(w)) + (r"(?=\w)" if w.endswith(("'", "\u2019")) else r"\b")
        for w in sorted(table.get("of", ()), key=len, reverse=True)
    )
    end = r"(?P<end>\s*(?:[.,;:](?!\w)|\Z))"
    return re.compile(rf"(?<![\w\-])(?:(?P<num>{nums})\s+)?(?P<den>{dens})(?![\w\-])(?=\s*(?:{of or '(?!)'})|{end})")


@cache
def _by_words(lang: str) -> frozenset[str]:
    """The folded ``by`` words of ``lang``, apostrophes dropped ("d'" is the word "d")."""
    table = entry(lang, "facts", "fractions", None) or {}
    return frozenset(folded(w).rstrip("'\u2019") for w in table.get("by") or ())


def _after_change(source: str, start: int, lang: str) -> bool:
    """Whether a verb of change stands just before ``start`` ("rose by", "cayeron", "augmenté
    d'"): right before it or before a ``by`` word, at most :data:`_CHANGE_GAP` words between, a
    hedge just before ``start`` skipped ("rose by almost"); no punctuation between."""
    hedge = fw.hedge_pattern().search(source, max(0, start - 40), start)
    end = hedge.start() if hedge is not None else start
    between: list[str] = []  # nearest first
    while len(between) <= _CHANGE_GAP:
        m = _LAST_WORD.search(source, max(0, end - 40), end)
        if m is None:
            return False
        if concepts([m.group(1)], lang) & CHANGE_CONCEPTS:
            return not between or between[0] in _by_words(lang)
        between.append(m.group(1))
        end = m.start()
    return False


@cache
def _values(lang: str, key: str) -> dict[str, int]:
    table = entry(lang, "facts", "fractions", None) or {}
    return {folded(w): int(v) for w, v in (table.get(key) or {}).items()}


@cache
def _articles() -> frozenset[str]:
    return frozenset(shared_list("names", "articles"))


def _of_what(source: str, end: int) -> bool:
    """Whether what follows the "of" word after ``end`` can be the whole of a share: not a number,
    a scale or a unit ("half of 2026", "un quart d'heure", "a quarter of an hour")."""
    words = [m.group(1) for m in _NEXT.finditer(source, end, min(len(source), end + 40))][:3]
    rest = [w for w in words[1:] if w not in _articles()][:1]  # skip the "of" word and articles
    if not rest:
        return False
    word = rest[0]
    return not (word[:1].isdigit() or word in fw.scales() or word in fw.measure_units())


def fraction_spans(text: str, lang: str | None) -> list[tuple[int, int, float]]:
    """``(start, end, share in %)`` of the fractions in words of ``text`` ("a third" of "almost a
    third of the vote": 33.33...), read in ``lang`` (every language with a table when None)."""
    source = fw.folded_copy(text).casefold()
    if len(source) != len(text):
        return []
    found: list[tuple[int, int, float]] = []
    for code in languages() if lang is None else (lang,):
        pattern = _pattern(code) if code else None
        if pattern is None:
            continue
        nums, dens = _values(code, "numerators"), _values(code, "denominators")
        for m in pattern.finditer(source):
            den = dens[" ".join(m.group("den").split())]
            num = nums.get(" ".join(m.group("num").split())) if m.group("num") else None
            if num is None and den != 2:
                continue  # "third of" alone: "the third of May", "cuarto de baño"
            before = re.search(r"([^\W_][\w\-]*)\s*$", source[max(0, m.start() - 30) : m.start()])
            if num is None and before is not None and before.group(1) in fw.ordinals():
                continue  # "the second half of the season"
            if num is not None and num >= den:
                continue
            if m.group("end") is None and not _of_what(source, m.end()):
                continue  # "half of 2026", "un quart d'heure"
            if m.group("end") is not None and not _after_change(source, m.start(), code):
                continue  # "A third.", "rose in a quarter.", "fell to a third."
            if not any(a < m.end() and m.start() < b for a, b, _ in found):
                found.append((m.start(), m.end(), 100.0 * (num or 1) / den))
    return sorted(found)
