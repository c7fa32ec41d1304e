"""The unit after a number (:mod:`citeqa.text.facts`' quantities): one key per unit word in any
language, where the unit ends, and whether the measure takes it in ("86 hm³ de agua": hm³; "200
mil coches": a counted noun, outside the measure; "41 millones de metros cúbicos": m³)."""

from __future__ import annotations

import re
from functools import cache

from citeqa.text import facts_words as fw
from citeqa.text.lexicon import folded

__all__ = ["dimension_after", "function_words", "unit_after", "unit_key"]


def unit_key(word: str) -> str:
    """One key for a unit word in any language ("parámetros", "parâmetros", "parameters" ->
    ``param``; "dólares", "US$" -> ``usd``; "km²", "Quadratkilometer" -> ``km²``; "" for no unit):
    a listed unit's key, else the folded singular cut to five letters."""
    lowered = word.strip().casefold()
    if not lowered:
        return ""
    table = fw.unit_table()
    if lowered in table:
        return table[lowered]
    plain = folded(lowered)
    if plain in table:
        return table[plain]
    if plain in fw.symbol_units():
        return plain
    dimensioned = fw.dimensioned_key(lowered)  # "km²", "Kubikkilometer": km³
    if dimensioned:
        return dimensioned
    singular = plain[:-1] if len(plain) > 3 and plain.endswith("s") else plain
    return singular[:5]


#: The next word after a number; an elided word ends at its apostrophe ("d'euros"), a number does not ("737's").
_NEXT_WORD = re.compile(r"(?:[\s\-]|(?<=[^\W\d_])['\u2019])*(%|[^\W\d_][\w\-]*|\d+[\w]*)")


@cache
def _percent_pattern() -> re.Pattern[str]:
    return re.compile(rf"[\s\-]*(?:{fw.alternation(fw.words_of('percent_words'))})\b", re.I)


@cache
def function_words() -> frozenset[str]:
    """Words after which a number is not part of a name, and before which no unit stands."""
    return frozenset(fw.facts_list("function_words")) | fw.full_months()


@cache
def _not_a_noun() -> re.Pattern[str]:
    """Endings of adjectives, participles and adverbs: a word after a number that ends so is not its unit."""
    return re.compile(rf"(?:{fw.alternation(fw.words_of('not_a_noun_endings'))})$")


def unit_after(text: str, end: int, capitalised_nouns: bool = False) -> tuple[str, int, int]:
    """The unit after a number ending at ``end``: its key, where it ends, and where the measure
    ends (the unit's end for a unit of measure or a currency, else ``end``); ("", end, end) for none.

    Skips "de"/"of" and up to two names ("11 UnifiedBus chips", "50,000 Ascend 950 chips"). In a
    language that capitalises its nouns (``capitalised_nouns``: German), the first word written as
    a noun ("1200 Exemplare") is the counted noun and a lower-case word none ("verkauft").
    """
    degrees = re.match(r"\s*[°º]\s*([CF])\b", text[end : end + 8])
    if degrees is not None:
        return f"°{degrees.group(1).lower()}", end + degrees.end(), end + degrees.end()
    percent = _percent_pattern().match(text, end)
    if percent is not None or text[end : end + 2].strip().startswith("%"):
        stop = percent.end() if percent is not None else text.index("%", end) + 1
        return "%", stop, stop
    offset, names, glued = end, 0, False
    limit = min(len(text), end + 80)
    while True:
        m = _NEXT_WORD.match(text, offset, limit)
        if m is None:
            return "", end, end
        word, lowered = m.group(1), m.group(1).casefold()
        if lowered in fw.symbol_units() or lowered in fw.unit_table() or fw.dimensioned_key(word):
            return _unit(word, m.end(), end, glued or names > 0)  # "86 hm³ de agua": hm³, not agua
        if folded(lowered) in fw.facts_list("per_words"):  # "40,000 per unit": a rate (see _quantity), not a unit
            return "", end, end
        if lowered in fw.dimension_words() and not glued and not names:  # "10 square kilometres"
            unit = _dimension_unit(text, m.end(), end, fw.dimension_words()[lowered])
            if unit is not None:
                return unit
        if folded(lowered) in fw.facts_list("unit_glue") and not glued:
            glued, offset = True, m.end()
            continue
        is_name = word[:1].isupper() or any(c.isdigit() for c in word)
        if capitalised_nouns:
            if not names and word.isalpha() and word[:1].isupper() and word[1:].islower():
                return _unit(word, m.end(), end, glued)  # "1200 Exemplare", "97 Brücken"
            if not is_name:
                return "", end, end  # "1200 verkauft": no noun
        if is_name and names < 2:
            names, offset = names + 1, m.end()
            continue
        if folded(lowered) in function_words() or word[:1].isdigit():
            return "", end, end
        if folded(lowered) in fw.measure_units():  # "187.000 toneladas", though it ends like a participle
            return _unit(word, m.end(), end, glued or names > 0)
        if is_name or _not_a_noun().search(folded(lowered)):
            return "", end, end  # "de 7 mil millones responsable de...": the noun was said before
        return _unit(word, m.end(), end, glued or names > 0)


def _dimension_unit(text: str, at: int, end: int, suffix: str) -> tuple[str, int, int] | None:
    """The unit of measure right after a dimension word ending at ``at`` ("square | kilometres"),
    its key taking ``suffix`` ("km²"); None when no unit of measure follows ("5 square meals")."""
    m = _NEXT_WORD.match(text, at, min(len(text), at + 40))
    if m is None or folded(m.group(1).casefold()) not in fw.measure_units():
        return None
    key, unit_end, _ = _unit(m.group(1), m.end(), end, False)
    return key + suffix, unit_end, unit_end


def dimension_after(text: str, unit: str, unit_end: int, measure: int) -> tuple[str, int, int]:
    """A unit of length followed by a dimension word is one of area or volume, also after "de"
    ("41 millones de metros | cúbicos": m³, not m): its key takes the suffix, and the unit (and the
    measure, where it took the unit in) ends after the word."""
    m = _NEXT_WORD.match(text, unit_end, min(len(text), unit_end + 20))
    suffix = fw.dimension_words().get(m.group(1).casefold()) if m is not None else None
    if m is None or suffix is None:
        return unit, unit_end, measure
    return unit + suffix, m.end(), m.end() if measure == unit_end else measure


def _unit(word: str, unit_end: int, end: int, apart: bool) -> tuple[str, int, int]:
    """A unit word ending at ``unit_end``; the measure takes it in when it is a unit of measure next
    to the number, or a currency ("3.000 millones de dólares")."""
    key = unit_key(word)
    measure = folded(word.casefold()) in fw.measure_units() or fw.dimensioned_key(word)
    if key in fw.currency_keys() or (not apart and measure):
        return key, unit_end, unit_end
    return key, unit_end, end
