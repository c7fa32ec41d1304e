"""Fractions in words as shares: "a third of", "la mitad de", "zwei Drittel der", "un quart des".

A share is read on the scale percentages are (``Fact.number`` of "32 %" is 32 with unit ``%``), so
"a third of" is 33.33... ``%`` and compares with "32 %" (see :mod:`citeqa.text.quantities`). The
words are data, ``facts.fractions`` of each language's file (:mod:`citeqa.text.lexicon`), read in
the text's own language only, like number words ("tiers" is French, "tiers" in English are levels):

* ``numerators``: the count before the fraction word ("two", "zwei"; an article says one: "a",
  "la", "die"); required, except before a half ("half of", "metade dos");
* ``denominators``: the fraction word -> what it divides by ("third": 3, "Hälfte": 2);
* ``of``: the words that must follow it ("of", "de", "der", "d'"): a fraction of something.

What is no share: a fraction word without "of" after it ("a third party", "half-life", "a quarter
century"), one after an ordinal ("the second half of the season", "the third quarter of the year";
quarters and halves of a year with their year are dates already), one of a number, a scale or a
unit ("half of 2026", "half a million", "un quart d'heure", "a quarter of an hour").
"""

from __future__ import annotations

import re
from functools import cache

from citeqa.text import facts_words as fw
from citeqa.text.lexicon import entry, folded, languages, shared_list

#: Words that may stand between "of" and what the fraction is of ("a quarter of an hour").
_NEXT = re.compile(r"[\s'\u2019]*([^\W_][\w\-]*|\d)")


@cache
def _pattern(lang: str) -> re.Pattern[str] | None:
    """The fractions of ``lang`` followed by an "of" word, on folded lower-case text."""
    table = entry(lang, "facts", "fractions", None)
    if not table:
        return None
    nums = fw.alternation(table.get("numerators", {}))
    dens = fw.alternation(table.get("denominators", {}))
    of = "|".join(
        re.escape(folded(w)) + (r"(?=\w)" if w.endswith(("'", "\u2019")) else r"\b")
        for w in sorted(table.get("of", ()), key=len, reverse=True)
    )
    return re.compile(rf"(?<![\w\-])(?:(?P<num>{nums})\s+)?(?P<den>{dens})(?![\w\-])(?=\s*(?:{of or '(?!)'}))")


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
            if not _of_what(source, m.end()) or num is not None and num >= den:
                continue
            if not any(a < m.end() and m.start() < b for a, b, _ in found):
                found.append((m.start(), m.end(), 100.0 * (num or 1) / den))
    return sorted(found)
