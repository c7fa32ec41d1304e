"""The word lists of :mod:`citeqa.text.facts`, from the per-language files of
:mod:`citeqa.text.lexicon`, as tables and regex alternations, built on first use.

Months, ordinals, periods, scales and units are read in texts of every language (a Spanish
passage quotes "July 31, 2026"), so these tables join every language's file; number words are
read in the text's own language only (:func:`citeqa.text.facts.number_words`). Every word is
matched in its folded form and as written, so patterns work on the text or its folded copy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Any

from citeqa.errors import ConfigError
from citeqa.text.analysis import fold_accents
from citeqa.text.lexicon import entry, folded, languages, shared_list, shared_table


def alternation(words: Iterable[str], fold: bool = True) -> str:
    """A regex alternation of ``words``, longest first (so "a partir de" beats "a"), a space
    matching any run of spaces; "(?!)" (never matches) when there are none. With ``fold``, of their
    case-folded and folded forms; without, of the words as given (an accent that tells "qué" from
    "que" kept)."""
    forms = {form for w in words for form in ((w.casefold(), folded(w)) if fold else (w,)) if form}
    if not forms:
        return "(?!)"
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(forms, key=lambda w: (-len(w), w)))


def facts_list(key: str) -> tuple[str, ...]:
    """A list of the ``facts`` section of every language's file, folded."""
    return shared_list("facts", key)


@cache
def raw_list(section: str, key: str) -> frozenset[str]:
    """A list (or a table's words) of every language's file as written (case-folded, accents kept):
    what a pattern on the unfolded text must also match."""
    return frozenset(w.casefold() for lang in languages() for w in entry(lang, section, key, ()) or ())


def words_of(*keys: str) -> frozenset[str]:
    """The words of the ``facts`` lists or tables ``keys`` in every language, as written."""
    return frozenset().union(*(raw_list("facts", k) for k in keys))


@cache
def common(key: str) -> Any:
    """An entry of ``common.json`` (language-free: unit symbols, currency signs)."""
    return entry("common", "", key)


# --- dates -------------------------------------------------------------------------------


@cache
def month_numbers() -> dict[str, int]:
    """Folded month name or abbreviation -> 1..12."""
    return {**shared_table("facts", "month_abbreviations"), **shared_table("facts", "months")}


@cache
def full_months() -> frozenset[str]:
    return frozenset(shared_table("facts", "months"))


@cache
def abbreviated_months() -> frozenset[str]:
    return frozenset(shared_table("facts", "month_abbreviations")) - full_months()


@cache
def capitalised_nouns(lang: str | None) -> bool:
    """Whether ``lang`` capitalises every noun (German), so that a counted noun is told by its capital."""
    return bool(lang) and bool(entry(str(lang), "facts", "capitalised_nouns", False))


@cache
def capitalised_months() -> frozenset[str]:
    """Month names of languages that capitalise them ("May" the month, "may" the verb)."""
    return frozenset(
        folded(m)
        for lang in languages()
        if entry(lang, "facts", "capitalised_months", False)
        for m in entry(lang, "facts", "months", {})
    )


@cache
def ordinals() -> dict[str, int | None]:
    """Folded ordinal -> its number (None for "last", "final")."""
    return shared_table("facts", "ordinals")


@cache
def periods() -> dict[str, int]:
    """Folded period word ("trimestre", "half") -> its length in months."""
    return shared_table("facts", "periods")


@cache
def period_abbreviations() -> dict[str, int]:
    """Period letters ("q" of Q3, "h" of H1, "t" of 1T) -> the period's length in months."""
    return shared_table("facts", "period_abbreviations")


# --- numbers and units -------------------------------------------------------------------


@cache
def scales() -> dict[str, float]:
    """Folded scale word ("mil millones", "billion") -> multiplier."""
    return {k: float(v) for k, v in shared_table("facts", "scales").items()}


def _by_word(*keys: str, as_written: bool = True) -> dict[str, str]:
    """Word -> group of the ``facts`` tables ``keys`` (group -> words) of every language together,
    folded and, with ``as_written``, also as written in lower case (the first file to give a word wins)."""
    out: dict[str, str] = {}
    for lang in languages():
        for key in keys:
            for group, words in (entry(lang, "facts", key, {}) or {}).items():
                for word in words:
                    if as_written:
                        out.setdefault(word.casefold(), group)
                    out.setdefault(folded(word), group)
    return out


@cache
def dimension_words() -> dict[str, str]:
    """Word that makes a unit of length one of area or volume ("square", "cuadrados", "cubes"; as
    written and folded, lower case) -> the suffix its unit key takes ("²", "³"): 86 hm³ is not 86 hm."""
    return _by_word("dimension_words")


@cache
def dimension_prefixes() -> dict[str, str]:
    """Prefix (folded) that makes a unit of length written in one word with it one of area or
    volume ("quadrat", "kubik": "Quadratkilometer", "Kubikmeter") -> the suffix its unit key takes."""
    return _by_word("dimension_prefixes", as_written=False)


@cache
def dimension_suffixes() -> frozenset[str]:
    """The suffixes a unit key of area or volume takes ("²", "³"), also written after a unit symbol ("km²")."""
    return frozenset(dimension_words().values()) | frozenset(dimension_prefixes().values())


@lru_cache(maxsize=4096)
def dimensioned_key(word: str) -> str:
    """The unit key of a unit of length written with its dimension in one word: a unit symbol with
    the suffix ("km²", "hm³") or a unit word after a :func:`dimension_prefixes` prefix
    ("Quadratkilometer", "Kubikmetern") -> "km²", "hm³", "km²", "m³"; "" for any other word. The
    unit must have a symbol ("km"), so a word that only begins like a prefix is no unit."""
    lowered = word.strip().casefold()
    if len(lowered) > 1 and lowered[-1] in dimension_suffixes() and lowered[:-1] in symbol_units():
        return lowered
    plain = folded(lowered)
    for prefix, suffix in dimension_prefixes().items():
        if plain.startswith(prefix) and len(plain) > len(prefix):
            base = unit_table().get(plain[len(prefix) :]) or ""
            if base in symbol_units():
                return base + suffix
    return ""


@cache
def currency_signs() -> dict[str, str]:
    """Sign or code written before a number ("US$", "€", "EUR") -> currency key."""
    return {k.casefold(): v for k, v in (common("currency_signs") or {}).items()}


@cache
def unit_table() -> dict[str, str]:
    """Unit word (as written and folded, lower case) -> one key shared by the languages."""
    out = _by_word("units", "currencies")
    for sign, key in currency_signs().items():
        out.setdefault(sign, key)
    out.setdefault("%", "%")
    return out


@cache
def currency_keys() -> frozenset[str]:
    """The unit keys that are money."""
    keys = {key for lang in languages() for key in (entry(lang, "facts", "currencies", {}) or {})}
    return frozenset(keys | set(currency_signs().values()))


@cache
def currency_words(key: str) -> tuple[str, ...]:
    """Every word of every language for the currency ``key`` ("usd" -> dólares, dollars, ...)."""
    return tuple(w for w, k in unit_table().items() if k == key and w.isalpha())


@cache
def symbol_units() -> frozenset[str]:
    """Units written as symbols, in any language ("GB", "km", "°C"), lower case."""
    return frozenset(w.casefold() for w in common("symbol_units") or ())


@cache
def measure_units() -> frozenset[str]:
    """Units a short answer keeps with its number ("5 teraFLOPS", "3 meses"): symbols and the
    words of each language's ``measure_units``; a counted noun ("200 mil coches") is not one."""
    return symbol_units() | frozenset(facts_list("measure_units"))


#: What a hedge before a number says of it (the keys of ``facts.hedges``): ``about`` ("environ",
#: "rund"), ``almost`` (just under: "knapp", "nearly"), ``over`` (a lower bound: "more than", "plus
#: de") and ``under`` (an upper bound: "less than", "bis zu").
HEDGES = ("about", "almost", "over", "under")


@cache
def hedge_words() -> dict[str, str]:
    """Hedge word or phrase written before a number (case-folded, as written and folded, one space
    between words) -> what it says of the number, one of :data:`HEDGES`."""
    out: dict[str, str] = {}
    for lang in languages():
        for kind, group in (entry(lang, "facts", "hedges", {}) or {}).items():
            if kind not in HEDGES:
                raise ConfigError(f"{lang}.json: facts.hedges.{kind} is none of {HEDGES}")
            for word in group:
                for form in (word.casefold(), folded(word)):
                    out.setdefault(" ".join(form.split()), kind)
    return out


@cache
def hedge_pattern() -> re.Pattern[str]:
    """A hedge word ("environ", "rund", "more than a") that ends the text just before a number."""
    return re.compile(rf"(?<![\w])({alternation(hedge_words())})\s+$", re.I)


@cache
def _unit_word() -> re.Pattern[str]:
    return re.compile(rf"[\s\-]*({alternation(words_of('scales'))}|%|[^\W\d_]+)", re.I)


def unit_follows(text: str, end: int) -> bool:
    """Whether a scale word, a unit symbol or a unit word follows ``end`` ("2000 GB", "2026 millones")."""
    m = _unit_word().match(text, end, min(len(text), end + 30))
    if m is None:
        return False
    word = m.group(1).casefold()
    return folded(word) in scales() or word in symbol_units() or word in unit_table()


@cache
def _fold_char(c: str) -> str:
    f = fold_accents(c)
    return f if len(f) == 1 and f.isalpha() == c.isalpha() and f.isdigit() == c.isdigit() else c


@lru_cache(maxsize=8192)
def folded_copy(text: str) -> str:
    """``text`` with accents removed letter by letter, so offsets stay valid ("Março" -> "Marco")."""
    return "".join(_fold_char(c) for c in text)
