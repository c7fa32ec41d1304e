"""Dates in a text: one finder for short answers and claims, in every language with a word list.

"31 de julio de 2026", "31 de julho de 2026" and "July 31, 2026" are one :class:`DatePoint`;
so are "primer trimestre de 2027", "Q1 2027" and "first quarter of 2027". Also read: ISO and
d/m/y dates, halves and seasons of a year ("segundo semestre de 2026", "summer 2025"), parts of
a year ("finales de 2025", "mid-2024"), decades ("the 1990s"), centuries ("im 13. Jahrhundert",
"the 13th century", "au XIIIe siècle", "siglo XIII"), a bare month ("en septiembre"),
a quarter named by its ordinal after another ("... and the 960PR in the third"), and years:
1800-2100 standing alone, 1000-1799 after a date word ("en 1187") or with a day and a month
("15. August 1248"), never inside a name
("Huawei Connect 2026") nor before a unit ("2000 GB").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

from citeqa.text import facts_words as fw
from citeqa.text.facts_names import name_spans
from citeqa.text.highlight import Highlight
from citeqa.text.lexicon import folded


@dataclass(frozen=True, slots=True)
class DatePoint:
    """A date as precise as the text says: year, quarter, month, day, decade (None when not said)."""

    year: int | None = None
    quarter: int | None = None
    month: int | None = None
    day: int | None = None
    decade: int | None = None  #: 1990 for "the 1990s"
    century: int | None = None  #: 13 for "the 13th century" (the years 1201-1300)

    @property
    def quarter_of_month(self) -> int | None:
        return (self.month - 1) // 3 + 1 if self.month is not None else None


_YEAR = r"(?:1[89]\d\d|20\d\d|2100)"
#: Any year from 1000, where a day and a month make it a date ("15. August 1248", "July 4, 1776").
_DATED_YEAR = r"(?:1\d\d\d|20\d\d|2100)"
#: A century's number: 1-21 in digits or Roman numerals (matched case-blind; checked by :func:`century_number`).
_CENTURY = r"(?:[12]?\d|[IVX]{1,6})"
#: What may follow a century's number before its word: "13.", "13th", "XIIIe", "XIIIème", "XIIIᵉ".
_CENTURY_SUFFIX = r"(?:\.|st|nd|rd|th|eme|ᵉ|er|e|º|°)?"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])"


@cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The date patterns, most specific first (an earlier match takes its characters)."""
    mon = fw.alternation(fw.words_of("months", "month_abbreviations"))
    full = fw.alternation(fw.words_of("months"))
    suffix = fw.alternation(fw.words_of("day_suffixes"))
    of = fw.alternation(fw.words_of("date_of"))
    ordinal = fw.alternation(fw.words_of("ordinals"))
    period = fw.alternation(fw.words_of("periods"))
    letter = fw.alternation(fw.words_of("period_abbreviations"))
    year_word = fw.alternation(fw.words_of("year_words"))
    century = fw.alternation(fw.words_of("century_words"))
    sep = rf"(?:\s+(?:{of})\s+|\s+|,\s*)"
    parts = (
        ("iso", rf"\b(?P<year>{_YEAR})-(?P<month>0[1-9]|1[0-2])-(?P<day>[0-2]\d|3[01])\b"),
        ("slash", rf"\b{_DAY}/{_DAY}/(?:(?P<year>{_YEAR})|\d{{2}})\b"),
        (
            "dmy",
            rf"\b(?P<day>{_DAY})(?:{suffix}|°)?\s+(?:(?:{of})\s+)?(?P<month>{mon})\.?,?{sep}(?P<year>{_DATED_YEAR})\b",
        ),
        ("mdy", rf"\b(?P<month>{mon})\.?\s+(?P<day>{_DAY})(?:{suffix})?,?\s+(?P<year>{_DATED_YEAR})\b"),
        (
            "py",
            rf"\b(?P<ordinal>{ordinal})\s+(?P<period>{period})(?:\s+(?:{of})\s+(?:(?:{year_word})\s+)?|\s+)"
            rf"(?P<year>{_YEAR})\b",
        ),
        (
            "ly",
            rf"\b(?:(?P<letter>{letter})(?P<n>[1-4])|(?P<n2>[1-4])(?P<letter2>{letter}))\s*(?:(?:{of})\s+)?"
            rf"(?:(?P<year>{_YEAR})|'\d{{2}})\b",
        ),
        ("yl", rf"\b(?P<year>{_YEAR})\s*(?P<letter>{letter})(?P<n>[1-4])\b"),
        ("season", rf"\b(?:{fw.alternation(fw.words_of('seasons'))})\s+(?:(?:{of})\s+)?(?P<year>{_YEAR})\b"),
        (
            "part",
            rf"\b(?:{fw.alternation(fw.words_of('date_parts'))})[\s-]+(?:(?:{of})\s+)?(?:(?:{year_word})\s+)?"
            rf"(?P<year>{_YEAR})\b",
        ),
        ("decade", r"\b(?P<decade>1[89]\d|20\d)0s\b"),
        ("century", rf"\b(?P<century>{_CENTURY}){_CENTURY_SUFFIX}\s+(?:{century})(?!\w)"),
        ("century_after", rf"\b(?:{century})\s+(?P<century>{_CENTURY})\b"),
        ("my", rf"\b(?P<month>{mon})\.?,?{sep}(?P<year>{_YEAR})\b"),
        ("dm", rf"\b(?P<day>{_DAY})(?:{suffix})?\s+(?:(?:{of})\s+)?(?P<month>{full})\b"),
        ("md", rf"\b(?P<month>{full})\s+(?P<day>{_DAY})(?:{suffix})?\b(?![.,]\d)"),
        ("p", rf"\b(?P<ordinal>{ordinal})\s+(?P<period>{period})\b"),
        ("m", rf"\b(?P<month>{full})\b"),
        ("old", r"\b(?P<year>1[0-7]\d\d)\b(?![.,]\d)"),
    )
    return tuple((name, re.compile(p, re.I)) for name, p in parts)


@cache
def _elliptic() -> re.Pattern[str]:
    """An ordinal standing alone after a quarter date: "... in the first quarter of 2027 and the 960PR in the third"."""
    articles = fw.alternation(fw.words_of("ordinal_articles"))
    ordinal = fw.alternation(fw.words_of("ordinals"))
    conj = fw.alternation(fw.words_of("list_conjunctions"))
    return re.compile(
        rf"\b(?:{articles})\s+(?P<quarter>{ordinal})\b(?=\s*(?:[.,;:)\u2014\u2013-]|$|\s+(?:{conj})\b))", re.I
    )


def _group(m: re.Match[str], *names: str) -> str | None:
    """The first of the named groups that the pattern has and the match filled."""
    return next((m.group(n) for n in names if n in m.re.groupindex and m.group(n)), None)


def _point(name: str, m: re.Match[str]) -> DatePoint:
    """The :class:`DatePoint` a match of pattern ``name`` says."""
    year = _group(m, "year")
    y = int(year) if year else None
    if name == "decade":
        return DatePoint(decade=int(m.group("decade")) * 10)
    if name in ("century", "century_after"):
        return DatePoint(century=century_number(m.group("century")))
    if name in ("iso", "dmy", "mdy", "my", "dm", "md", "m"):
        month = m.group("month")
        number = int(month) if month.isdigit() else fw.month_numbers().get(folded(month).rstrip("."))
        day = _group(m, "day")
        return DatePoint(y, None, number, int(day) if day else None)
    if name in ("py", "p"):
        length = fw.periods().get(folded(m.group("period")))
        n = fw.ordinals().get(folded(m.group("ordinal")))
        return DatePoint(y, n if length == 3 and n is not None and n <= 4 else None)
    if name in ("ly", "yl"):
        letter = _group(m, "letter", "letter2") or ""
        n = int(_group(m, "n", "n2") or 0)
        return DatePoint(y, n if fw.period_abbreviations().get(letter.lower()) == 3 else None)
    return DatePoint(y)


#: The Roman numerals of the centuries a text may name, I to XXI.
_ROMAN_CENTURIES = {
    numeral: n
    for n, numeral in enumerate(
        "i ii iii iv v vi vii viii ix x xi xii xiii xiv xv xvi xvii xviii xix xx xxi".split(), start=1
    )
}


def century_number(token: str) -> int | None:
    """The number of a century written in digits or Roman numerals ("13", "XIII", "xxi"), when it is 1-21."""
    n = int(token) if token.isdigit() else _ROMAN_CENTURIES.get(token.lower())
    return n if n is not None and 1 <= n <= 21 else None


def _bare_month_ok(text: str, a: int, b: int) -> bool:
    """A month name without a day or year is a date after a date word ("en septiembre", "in May"),
    or when it is not a common word too ("marco", "may") and, in a language that capitalises
    months, capitalised; never the lower-case common word ("it may rain", "el marco legal")."""
    word = text[a:b]
    if word.casefold() in fw.raw_list("facts", "ambiguous_months") and word.islower():
        return False
    if _after_date_word(text, a):
        return True
    return word.casefold() not in fw.raw_list("facts", "ambiguous_months") and (
        folded(word) not in fw.capitalised_months() or word[:1].isupper()
    )


def _after_date_word(text: str, a: int) -> bool:
    m = re.search(r"(\w+) $", text[max(0, a - 30) : a])
    return m is not None and folded(m.group(1)) in fw.facts_list("date_context")


def _in_name(spans: tuple[Highlight, ...], text: str, a: int, b: int) -> bool:
    """Whether ``text[a:b]`` lies inside a name of several words ("Huawei Connect 2026")."""
    return any(s.start <= a and b <= s.end and " " in text[s.start : s.end] for s in spans)


def _period_in_year(m: re.Match[str]) -> bool:
    """ "Q4", "H2", "2S": there are that many such periods in a year (no "H3")."""
    length = fw.period_abbreviations().get((_group(m, "letter", "letter2") or "").lower()) or 12
    return int(_group(m, "n", "n2") or 0) <= 12 // length


def _not_the_common_word(text: str, m: re.Match[str]) -> bool:
    """ "31 de marzo", "May 5", but not "3 may" (a verb) nor "el marco 2" (a frame)."""
    word = text[slice(*m.span("month"))]
    return not (word.islower() and word.casefold() in fw.raw_list("facts", "ambiguous_months"))


#: Extra conditions of some patterns, on the text as written.
_ACCEPT: dict[str, Callable[[str, re.Match[str]], bool]] = {
    "dm": _not_the_common_word,
    "md": _not_the_common_word,
    "m": lambda text, m: _bare_month_ok(text, *m.span()),
    "old": lambda text, m: _after_date_word(text, m.start()),
    "ly": lambda text, m: _period_in_year(m),
    "century": lambda text, m: century_number(m.group("century")) is not None,
    "century_after": lambda text, m: century_number(m.group("century")) is not None,
}


def date_spans(text: str, source: str | None = None) -> list[tuple[int, int, DatePoint]]:
    """``(start, end, point)`` of every date of ``text`` in text order; spans never overlap.
    ``source`` is ``text`` with accents folded (same length), where the patterns are matched."""
    return list(_find_dates(text, source if source is not None else text))


@lru_cache(maxsize=8192)
def _find_dates(text: str, source: str) -> tuple[tuple[int, int, DatePoint], ...]:
    found: list[tuple[int, int, DatePoint]] = []
    for name, pattern in _patterns():
        accept = _ACCEPT.get(name)
        for m in pattern.finditer(source):
            a, b = m.span()
            if _overlaps(found, a, b) or (accept is not None and not accept(text, m)):
                continue
            found.append((a, b, _point(name, m)))
    found += _elliptic_quarters(source, found)
    found += _bare_years(text, source, found)
    return tuple(sorted(found))


def _overlaps(found: list[tuple[int, int, DatePoint]], a: int, b: int) -> bool:
    return any(x < b and a < y for x, y, _ in found)


def _elliptic_quarters(source: str, found: list[tuple[int, int, DatePoint]]) -> list[tuple[int, int, DatePoint]]:
    out: list[tuple[int, int, DatePoint]] = []
    for _, end, point in [f for f in found if f[2].quarter is not None and f[2].year is not None]:
        stop = re.search(r"[.;!?](?:\s|$)", source[end:])
        window_end = end + stop.start() if stop else len(source)
        for m in _elliptic().finditer(source, end, window_end):
            a, b = m.span("quarter")
            n = fw.ordinals().get(folded(m.group("quarter")))
            if n is None or n > 4 or _overlaps(found + out, a, b):
                continue
            out.append((a, b, DatePoint(point.year, n)))
    return out


#: A year standing alone: not glued to a word, a decimal or a path, not a decimal itself; a range
#: ("2026-2027") is two years, a name ("GLM-2026") none.
_YEAR_TOKEN = re.compile(rf"(?<![\w.,/])(?<![^\W\d_]-){_YEAR}(?!\w|[.,]\d|-[^\W\d_])")


def _bare_years(text: str, source: str, found: list[tuple[int, int, DatePoint]]) -> list[tuple[int, int, DatePoint]]:
    """Four-digit years standing alone ("desde 2022", "in 2028"), not inside names nor quantities."""
    out: list[tuple[int, int, DatePoint]] = []
    names = tuple(name_spans(source))
    for m in _YEAR_TOKEN.finditer(source):
        a, b = m.span()
        if _overlaps(found + out, a, b) or _in_name(names, source, a, b) or fw.unit_follows(source, b):
            continue  # "Huawei Connect 2026"; "2000 GB", "2026 millones", "1990 %": a quantity
        out.append((a, b, DatePoint(int(m.group(0)))))
    return out
