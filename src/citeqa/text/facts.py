"""Facts in a text, one extractor for short answers, features and claims: typed facts with exact
offsets (``text[f.start:f.end] == f.text``).

* **dates** and **years** (:mod:`citeqa.text.facts_dates`): "31 de julio de 2026" = "July 31,
  2026" = one :class:`DatePoint`;
* **quantities**: a number (digits, or number words of the text's language read by ``text2num``:
  "setecientos cuarenta y cuatro mil millones"), its scale words ("744 mil millones" = "744
  billion" = 7.44e11) and its unit (:mod:`citeqa.text.facts_units`: "parámetros" = "parameters" =
  ``param``); **money** when the unit is a currency ("US$ 0,014", "40 euros"), **percent** for
  "%", "por ciento";
* **names** (:mod:`citeqa.text.facts_names`): "Galaxy Tab 3.5", "Banco de Portugal".

A quantity's ``measure_end`` ends its number, scale and unit of measure, before a counted noun:
a short answer is "200 mil" of "200 mil coches", a claim compares the whole. Numbers inside names
("GLM-5", "Kunlun P800", "Ascend 950", "série 3600") and scores or ranges ("3–1") are no
quantities. The word lists are data (:mod:`citeqa.text.lexicon`); a language without a file keeps
the language-free rules: digits, years, unit symbols, currency signs, capitalised names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache, lru_cache

from citeqa.text import facts_words as fw
from citeqa.text.facts_dates import DatePoint, date_spans
from citeqa.text.facts_fractions import fraction_spans
from citeqa.text.facts_names import name_spans
from citeqa.text.facts_units import dimension_after, function_words, unit_after, unit_key
from citeqa.text.highlight import Highlight
from citeqa.text.lexicon import folded, languages

__all__ = [
    "DatePoint",
    "Fact",
    "find_dates",
    "find_facts",
    "find_names",
    "find_quantities",
    "number_words",
    "parse_number",
    "unit_key",
]

DATE, QUANTITY, NAME = "date", "quantity", "name"


@dataclass(frozen=True, slots=True)
class Fact:
    """A date, quantity or name at ``text[start:end]``.

    A quantity has ``number`` (scale words applied) and ``unit`` (a :func:`unit_key`, "" when
    none is written, ``spelled`` when the number is in words); a date has ``date``.
    ``measure_end`` (``end`` unless less) ends the part a short answer shows: the number with its
    scale and unit of measure, without a counted noun.
    """

    kind: str  #: "date", "quantity" or "name"
    start: int
    end: int
    text: str
    number: float | None = None
    unit: str = ""
    date: DatePoint | None = None
    measure_end: int = -1
    spelled: bool = False  #: the number is written in words ("tres trimestres")
    #: A hedge before the number (:data:`~citeqa.text.facts_words.HEDGES`): "about" ("environ 40 000"),
    #: "almost" ("knapp 3000"), "over" ("more than a million"), "under" ("bis zu 10 %"); "" when exact.
    approx: str = ""
    #: A fraction in words read as a share ("a third of": 33.33... ``%``; :mod:`citeqa.text.facts_fractions`):
    #: it stands for its rounded forms ("33 %", "33.3 %").
    fraction: bool = False

    @property
    def measure(self) -> Highlight:
        """Offsets (into the text the fact was found in) of the number, scale and unit of measure
        ("200 mil" of "200 mil coches")."""
        return Highlight(self.start, self.measure_end if self.measure_end >= 0 else self.end)

    @property
    def type(self) -> str:
        """The fact's type: year, date, money, percent, quantity (with a unit), number or name."""
        if self.kind == DATE:
            point = self.date or DatePoint()
            return "year" if point.year is not None and point == DatePoint(point.year) else DATE
        if self.kind == QUANTITY:
            if self.unit in fw.currency_keys():
                return "money"
            return "percent" if self.unit == "%" else (QUANTITY if self.unit else "number")
        return self.kind


# --- numbers -------------------------------------------------------------------------------

#: Spaces that group thousands: a space, a no-break space (U+00A0), a narrow no-break space
#: (U+202F, French typography) or a thin space (U+2009).
GROUP_SPACES = " \u00a0\u202f\u2009"
#: A number grouped by spaces ("40 000", "1 200 000", "4\u202f808", "12 000,5"): a first group of
#: one to three digits (no leading zero), then groups of exactly three, each after one space; the
#: digits around it ("1998 200", "12 3456") are no group, so a year and a count stay two numbers.
_SPACED = rf"[1-9]\d{{0,2}}(?:[{GROUP_SPACES}]\d{{3}})+(?!\d)(?:[.,]\d+)?"
_DIGITS = re.compile(rf"{_SPACED}|\d+(?:[.,]\d+)*")


def parse_number(token: str) -> float | None:
    """The value of a written number: "744", "0,1" and "0.1", "3.000" (es/pt), "250,000" (en) and
    "40 000" (fr, de: groups of three digits after spaces, see :data:`GROUP_SPACES`).

    A separator followed by exactly three digits after a non-zero whole part groups
    thousands ("1.200", "1,200"); otherwise it is the decimal mark ("0,979", "1,2", "4.5").
    With both marks the last one is the decimal mark ("1.234,5", "1,234.5").
    """
    token = token.strip()
    if not token or not _DIGITS.fullmatch(token):
        return None
    if re.fullmatch(_SPACED, token):  # "40 000", "1 234 567,89": the spaces only group
        token = re.sub(f"[{GROUP_SPACES}]", "", token)
    dots, commas = token.count("."), token.count(",")
    if dots and commas:
        decimal = "." if token.rfind(".") > token.rfind(",") else ","
        group = "," if decimal == "." else "."
        return float(token.replace(group, "").replace(decimal, "."))
    if not dots and not commas:
        return float(token)
    mark = "." if dots else ","
    parts = token.split(mark)
    if len(parts) > 2:  # "1.000.000": only thousands repeat
        return float("".join(parts))
    whole, fraction = parts
    if len(fraction) == 3 and whole.strip("0") and len(whole) <= 3:
        return float(whole + fraction)
    return float(f"{whole}.{fraction}")


#: A number and what is glued to it ("5GB", "4m³": a unit symbol may carry the ² or ³ of an area or a volume).
_NUMBER_TOKEN = re.compile(rf"(?<![\w])(?:{_SPACED}|\d+(?:[.,]\d+)*)(?:[a-zA-Z%]+[²³]?)?")
#: The same without spaced groups: the numbers of a spaced match that overlaps a date ("March 5 200").
_PLAIN_NUMBER_TOKEN = re.compile(r"(?<![\w])\d+(?:[.,]\d+)*(?:[a-zA-Z%]+[²³]?)?")
_WORD_TOKEN = re.compile(r"\w+|[^\w\s]")


@cache
def _scale_pattern() -> re.Pattern[str]:
    return re.compile(rf"[\s\-]*(?P<scale>{fw.alternation(fw.words_of('scales'))})\b", re.I)


@cache
def _per_pattern() -> re.Pattern[str]:
    """A unit's second half: "cúbicos por segundo", "al año", "km/h", "per hour", "por metro
    cúbico", "pro Kubikmeter", "/m³" (group ``dim``: the word that makes the unit an area or a
    volume), or after an open per-word any word ("per image"; group ``noun``, which the caller
    checks is no function word)."""
    dim = fw.alternation(fw.dimension_words(), fold=False)
    per = fw.alternation(fw.words_of("per_words"))
    open_per = fw.alternation(fw.words_of("open_per_words"))
    prefix = fw.alternation(fw.dimension_prefixes())
    suffix = f"[{''.join(sorted(fw.dimension_suffixes()))}]?" if fw.dimension_suffixes() else ""
    unit = fw.alternation(fw.words_of("per_units") | fw.symbol_units())
    rate = rf"(?:(?:{dim})\s+)?(?:{prefix})?(?:{unit}){suffix}\b(?:\s+(?:{dim})\b)?"
    listed = rf"\s*(?:/|(?:{per})\b)\s*{rate}"
    return re.compile(rf"(?:\s+(?P<dim>{dim})\b)?(?:{listed}|\s+(?:{open_per})\s+(?P<noun>[^\W\d_][\w\-]*))?", re.I)


@cache
def _currency_before() -> re.Pattern[str]:
    signs = sorted(fw.currency_signs(), key=len, reverse=True)
    alt = "|".join(re.escape(s) if not s.isalpha() else rf"\b{re.escape(s)}" for s in signs)
    return re.compile(rf"(?:{alt})\s*$", re.I)


@cache
def _currency_after() -> re.Pattern[str]:
    """A currency sign written after its number ("1 200 000 €", "25 $", "3,5 Mio. €"): not a letter
    code (a word, read as a unit), not the sign of a number that follows ("5 $20")."""
    signs = sorted((s for s in fw.currency_signs() if not s.isalpha()), key=len, reverse=True)
    return re.compile(rf"\s*({'|'.join(map(re.escape, signs)) or '(?!)'})(?![\w$€£¥])(?!\s*\d)", re.I)


def _currency_next(text: str, at: int) -> bool:
    """Whether a currency sign or word comes next at ``text[at:]`` (the period of "Mio." before "€")."""
    if _currency_after().match(text, at):
        return True
    word = re.match(r"\s+([^\W\d_]+)", text[at : at + 40])
    return word is not None and unit_key(word.group(1)) in fw.currency_keys()


def _hedge_before(text: str, start: int) -> str:
    """What the words just before ``text[start:]`` say of its number: a :data:`~citeqa.text.
    facts_words.HEDGES` kind, or "" (an exact value)."""
    m = fw.hedge_pattern().search(text, max(0, start - 40), start)
    if m is None:
        return ""
    said = " ".join(m.group(1).casefold().split())
    return fw.hedge_words().get(said) or fw.hedge_words().get(folded(said), "")


def _name_number(text: str, a: int) -> bool:
    """Whether the number at ``text[a:]`` is glued into a name ("P800", "GLM-5", "GPT-5.2") or
    follows a word that designates ("série 3600")."""
    before = text[max(0, a - 40) : a]
    if before and (before[-1].isalpha() or before[-1] == "_" or before.endswith(".")):
        return True
    if before.endswith("-") and len(before) > 1 and before[-2].isalnum():
        return True
    previous = re.search(r"([^\W_][\w\-]*)\s+$", before)
    return previous is not None and folded(previous.group(1)) in fw.facts_list("designation_words")


def _in_name(names: tuple[Highlight, ...], text: str, fact: Fact) -> bool:
    """Whether a name of several words holds the fact's measure ("Ascend 950", "Falcon 9"; not
    "Plantaron 100 mil": the scale goes past the name)."""
    at = fact.measure
    return any(n.start < at.start and at.end <= n.end and " " in text[n.start : n.end] for n in names)


def _score_or_range(text: str, a: int, b: int) -> bool:
    """A number joined to another by a dash: a score ("3–1") or a range ("10-15"), not one quantity."""
    after = re.match(r"[\u2013\u2014-]\d", text[b : b + 2])
    before = re.search(r"\d[\u2013\u2014-]$", text[max(0, a - 2) : a])
    return after is not None or before is not None


def _quantity(text: str, a: int, b: int, value: float, glued: str, nouns: bool = False) -> Fact:
    """The quantity whose number is ``text[a:b]``: scale words, a unit after it or a currency before
    (``nouns``: the text's language capitalises its nouns, see :func:`~citeqa.text.facts_units.unit_after`)."""
    unit, end, measure = "", b, b
    if glued:
        unit = "%" if glued == "%" else unit_key(glued)
        end = measure = b + len(glued)
    else:
        scale = _scale_pattern().match(text, b, min(len(text), b + 30))
        if scale is not None:
            value *= fw.scales().get(folded(" ".join(scale.group("scale").split())), 1.0)
            end = measure = scale.end()
            if text[end : end + 1] == "." and _currency_next(text, end + 1):
                end = measure = end + 1  # "3,5 Mio. €": the abbreviation's period
        unit, unit_end, measure = unit_after(text, end, nouns)
        if unit in fw.symbol_units() and unit[-1:] not in fw.dimension_suffixes():
            unit, unit_end, measure = dimension_after(text, unit, unit_end, measure)
        end = unit_end if unit else end
        sign = None if unit else _currency_after().match(text, end)
        if sign is not None:
            unit, end = fw.currency_signs()[sign.group(1).casefold()], sign.end()
            measure = end
    start = a
    currency = _currency_before().search(text, max(0, a - 4), a)
    if currency is not None:
        unit, start = fw.currency_signs()[currency.group(0).strip().casefold()], currency.start()
    if unit and measure == end:  # a unit of measure or a price: "cúbicos", "por segundo", "per unit"
        per = _per_pattern().match(text, end)
        if per is not None and per.end() > end:
            dim, noun, stop = per.group("dim"), per.group("noun"), per.end()
            if dim and unit not in fw.currency_keys() and unit[-1:] not in fw.dimension_suffixes():
                unit += fw.dimension_words().get(dim.casefold(), "")
            if noun is not None and folded(noun.casefold()) in function_words():  # "$5 per the deal": no rate
                stop = per.end("dim") if dim else end
            end = measure = stop
    return Fact(
        QUANTITY,
        start,
        end,
        text[start:end],
        number=value,
        unit=unit,
        measure_end=max(measure, start),
        approx=_hedge_before(text, start),
    )


def number_words(text: str, lang: str | None) -> list[tuple[int, int, float]]:
    """``(start, end, value)`` of the numbers written in words in ``text`` ("tres trimestres",
    "setecientos cuarenta y cuatro mil millones"), read by ``text2num`` in ``lang`` (every language
    with a word list when None; none when ``lang`` has no reader). Ordinals are left out, and so
    is a lone one ("un", "um", "one"): an article."""
    langs = languages() if lang is None else (lang,)
    found: list[tuple[int, int, float]] = []
    for code in langs:
        for a, b, value in _number_words(text, code):
            if not any(x < b and a < y for x, y, _ in found):
                found.append((a, b, value))
    return sorted(found)


class _Token:
    """A word of the text as ``text2num`` reads it (its protocol: ``text()``)."""

    __slots__ = ("word",)

    def __init__(self, word: str) -> None:
        self.word = word

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: object) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return False


#: Languages ``text2num`` 3.1 reads.
TEXT2NUM_LANGUAGES = frozenset({"en", "es", "pt", "fr", "de", "it", "nl", "da"})


@lru_cache(maxsize=8192)
def _number_words(text: str, lang: str) -> tuple[tuple[int, int, float], ...]:
    if lang not in TEXT2NUM_LANGUAGES or not re.search(r"[^\W\d_]", text):
        return ()
    from text_to_num import find_numbers

    tokens = list(_WORD_TOKEN.finditer(text))
    out = []
    # threshold 2: a lone "un", "um", "one" is an article far more often than a number
    for occurrence in find_numbers([_Token(t.group(0)) for t in tokens], lang, 2):
        span = tokens[occurrence.start : occurrence.end]
        if occurrence.is_ordinal or occurrence.value < 2 or any(t.group(0)[:1].isdigit() for t in span):
            continue  # ordinals are the dates' business; "unos" is no one
        out.append((span[0].start(), span[-1].end(), float(occurrence.value)))
    return tuple(out)


def find_quantities(
    text: str, lang: str | None = "", dates: list[Fact] | None = None, fractions: bool = False
) -> list[Fact]:
    """Quantities in ``text``: digits or (in ``lang``, see :func:`number_words`) number words,
    with scale words and a unit. Numbers inside dates (``dates``, default :func:`dates`) or names
    are left out; a number word needs a unit ("seis meses", "three quarters"). With ``fractions``,
    fractions in words too ("almost a third of": a share in ``%``, ``Fact.fraction``), which
    short answers leave out."""
    dates = find_dates(text) if dates is None else dates
    return list(_quantities(text, lang, tuple(Highlight(d.start, d.end) for d in dates), fractions))


def _number_tokens(text: str, taken: tuple[Highlight, ...]) -> list[re.Match[str]]:
    """The numbers of ``text``, one per match; a number grouped by spaces that overlaps a date
    ("March 5 200 people") is read as its separate numbers again."""
    out: list[re.Match[str]] = []
    for m in _NUMBER_TOKEN.finditer(text):
        spaced = any(c in GROUP_SPACES for c in m.group(0))
        if spaced and any(t.start < m.end() and m.start() < t.end for t in taken):
            out.extend(_PLAIN_NUMBER_TOKEN.finditer(text, m.start(), m.end()))
        else:
            out.append(m)
    return out


@lru_cache(maxsize=8192)
def _quantities(text: str, lang: str | None, taken: tuple[Highlight, ...], fractions: bool) -> tuple[Fact, ...]:
    names = tuple(name_spans(fw.folded_copy(text)))
    nouns = fw.capitalised_nouns(lang)
    out = []
    for m in _number_tokens(text, taken):
        a = m.start()
        digits = _DIGITS.match(m.group(0))
        b = a + digits.end() if digits is not None else a
        glued = m.group(0)[b - a :]
        if digits is None or any(t.start < m.end() and a < t.end for t in taken):
            continue
        if glued and glued.casefold() not in fw.symbol_units() and not fw.dimensioned_key(glued) and glued != "%":
            continue  # "800T", "960DT", "2K": a model name
        if text[a - 1 : a] == "-" and a >= 2 and text[a - 2].isalnum():
            continue
        if _score_or_range(text, a, b) or _name_number(text, a):
            continue
        value = parse_number(digits.group(0))
        fact = _quantity(text, a, b, value, glued, nouns) if value is not None else None
        if fact is not None and not _in_name(names, text, fact):
            out.append(fact)
    for a, b, share in fraction_spans(text, lang) if fractions and lang != "" else []:
        clash = any(t.start < b and a < t.end for t in taken) or any(f.start < b and a < f.end for f in out)
        if not clash:
            hedge = _hedge_before(text, a)
            out.append(Fact(QUANTITY, a, b, text[a:b], share, "%", None, b, True, hedge, fraction=True))
    for a, b, value in number_words(text, lang) if lang != "" else []:
        fact = replace(_quantity(text, a, b, value, "", nouns), spelled=True)
        clash = any(t.start < fact.end and fact.start < t.end for t in taken)
        if fact.unit and not clash and not any(f.start < fact.end and fact.start < f.end for f in out):
            out.append(fact)
    return tuple(sorted(out, key=lambda f: f.start))


def find_dates(text: str) -> list[Fact]:
    """The dates of ``text`` as facts, in text order."""
    source = fw.folded_copy(text)
    return [Fact(DATE, a, b, text[a:b], date=point, measure_end=b) for a, b, point in date_spans(text, source)]


def find_facts(text: str, lang: str | None = "") -> list[Fact]:
    """Every date and quantity of ``text`` in text order (``lang`` enables its number words and
    fractions in words; None: every language's)."""
    dated = find_dates(text)
    return sorted(dated + find_quantities(text, lang, dated, fractions=True), key=lambda f: f.start)


def find_names(text: str) -> list[Fact]:
    """The names of ``text`` as facts, in text order."""
    return [
        Fact(NAME, n.start, n.end, text[n.start : n.end], measure_end=n.end) for n in name_spans(fw.folded_copy(text))
    ]
