"""Comparing facts across languages: is a document's fact the claim's value, another value in
its place, or neither?

The facts themselves come from :mod:`citeqa.text.facts` ("744 mil millones de parámetros",
"744 bilhões de parâmetros" and "744 billion parameters" are one value, 7.44e11 ``param``;
"31 de julio de 2026" and "July 31, 2026" one date): :func:`same_value` and :func:`same_slot`
compare two of them, :func:`date_relation` two dates, :func:`numbers_agree` two numbers (a
hedged one, "environ 40 000", "knapp 3000 Meter", within its rounding; a fraction in words, "a
third of", a share in % like "33 %": :func:`rounds_to`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal
from functools import cache

from citeqa.text import facts_words as fw
from citeqa.text.facts import DATE, QUANTITY, DatePoint, Fact

#: Relative difference under which two numbers are the same value (rounding of the last digit
#: is a different number: 0.952 is not 0.925).
SAME_NUMBER_TOLERANCE = 1e-6


#: The most a hedge stretches a number, relative to it ("knapp 3000 Meter" covers 2700-3000 m, not
#: 2600): see :func:`hedge_tolerance`. Exact numbers keep :data:`SAME_NUMBER_TOLERANCE`.
APPROX_TOLERANCE = 0.1


def same_number(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=SAME_NUMBER_TOLERANCE, abs_tol=1e-12)


def hedge_tolerance(number: float) -> float:
    """How far a hedged number ("environ 40 000", "unos 800") may be from the value it stands for:
    half a unit of its last non-zero digit (who writes "unos 800" rounded something in 750-850, and
    would have written "unos 750" for 744), of five units when that digit is a 5 ("about 750" is
    also 744 rounded to fifties: 725-775), at most :data:`APPROX_TOLERANCE` of it ("rund 40 000":
    36 000-44 000)."""
    if not math.isfinite(number) or number == 0:
        return 0.0
    written = Decimal(f"{number:.12g}").normalize().as_tuple()
    place = 10.0 ** int(written.exponent) * (5 if written.digits[-1] == 5 else 1)
    return min(place / 2, APPROX_TOLERANCE * abs(number))


def value_range(fact: Fact) -> tuple[float, float]:
    """The numbers a quantity is true of: its number when exact; within :func:`hedge_tolerance`
    for "about", up to it for "almost" ("knapp 3000": 2700-3000); from or up to it for the bounds
    "over" ("more than a million") and "under" ("bis zu 10 %"). A hedged fraction in words ("almost a
    third") has no last digit: it stretches by :data:`APPROX_TOLERANCE` of it (30-33.3 %)."""
    v = fact.number if fact.number is not None else math.nan
    t = APPROX_TOLERANCE * abs(v) if fact.fraction else hedge_tolerance(v)
    ranges = {"": (v, v), "almost": (v - t, v), "over": (v, math.inf), "under": (-math.inf, v)}
    return ranges.get(fact.approx, (v - t, v + t))


def numbers_agree(claim: Fact, doc: Fact) -> bool:
    """Whether two quantities' numbers can be one value: equal when both are exact, else one in the
    other's :func:`value_range` ("knapp 3000 Meter" and 2962 m; not "unos 800" and "aproximadamente
    744"). An end equal up to rounding counts: "more than a million" and 1,000,000."""
    if claim.number is None or doc.number is None:
        return False
    if not claim.approx and not doc.approx:
        if claim.fraction != doc.fraction:  # "a third" is "33 %" and "33.3 %", not "30 %" or "35 %"
            share, written = (claim.number, doc.number) if claim.fraction else (doc.number, claim.number)
            return rounds_to(share, written)
        return same_number(claim.number, doc.number)
    (a, b), (c, d) = value_range(claim), value_range(doc)
    low, high = max(a, c), min(b, d)
    return low <= high or same_number(low, high)


def rounds_to(exact: float, written: float) -> bool:
    """Whether ``written`` is ``exact`` rounded to the decimals it is written with (33.33... to
    "33" or "33.3", 50 to "50"; not 33.33... to "30" or "35": a whole number keeps its units)."""
    if not math.isfinite(exact) or not math.isfinite(written):
        return False
    decimals = max(0, -int(Decimal(f"{written:.12g}").normalize().as_tuple().exponent))
    return same_number(round(exact, decimals), written)


@cache
def listed_units() -> frozenset[str]:
    """Units always written next to their number (a count of things may leave its noun out):
    every listed unit key and unit symbol, and the symbols of area and volume ("km²", "hm³")."""
    symbols = fw.symbol_units()
    dimensioned = {symbol + suffix for symbol in symbols for suffix in fw.dimension_suffixes()}
    return frozenset(fw.unit_table().values()) | symbols | dimensioned


def date_relation(claim: DatePoint, doc: DatePoint) -> str:
    """``"same"`` when ``doc`` states everything ``claim`` says, ``"different"`` when a part both
    state differs (a month outside a stated quarter, a year outside a stated decade or century count), else
    ``"unknown"`` (``doc`` is less precise, or says other parts)."""
    for c, d in ((claim.year, doc.year), (claim.month, doc.month), (claim.day, doc.day)):
        if c is not None and d is not None and c != d:
            return "different"
    claim_q = claim.quarter if claim.quarter is not None else claim.quarter_of_month
    doc_q = doc.quarter if doc.quarter is not None else doc.quarter_of_month
    if claim_q is not None and doc_q is not None and claim_q != doc_q:
        return "different"
    claim_d = claim.decade if claim.decade is not None else (claim.year // 10 * 10 if claim.year else None)
    doc_d = doc.decade if doc.decade is not None else (doc.year // 10 * 10 if doc.year else None)
    if claim_d is not None and doc_d is not None and claim_d != doc_d:
        return "different"
    claim_c, doc_c = _century_of(claim), _century_of(doc)
    if claim_c is not None and doc_c is not None and claim_c != doc_c:
        return "different"
    wanted = [(claim.year, doc.year), (claim.month, doc.month), (claim.day, doc.day), (claim.quarter, doc_q)]
    wanted += [(claim.decade, doc_d), (claim.century, doc_c)]
    stated = [(c, d) for c, d in wanted if c is not None]
    if stated and all(c == d for c, d in stated):
        return "same"
    return "unknown"


def _century_of(point: DatePoint) -> int | None:
    """The century a date lies in, counted as it is said (1248 and 1300 in the 13th, 1301 in the
    14th; the 1990s in the 20th), when it says one."""
    if point.century is not None:
        return point.century
    if point.year:
        return (point.year - 1) // 100 + 1
    return point.decade // 100 + 1 if point.decade is not None else None


def _on_share_scale(fact: Fact, other: Fact) -> Fact:
    """``fact`` in % when ``other`` is a fraction in words and ``fact`` a bare number from 0 to 1
    ("0.33" against "a third of": 33 %), else ``fact``."""
    n = fact.number
    if other.fraction and not fact.fraction and not fact.unit and n is not None and 0 < n <= 1:
        return replace(fact, number=n * 100, unit="%")
    return fact


def same_value(claim: Fact, doc: Fact) -> bool:
    """Whether ``doc`` states the value of ``claim``: same date, or the same number in the same
    unit (a unit written on one side only is taken as the same: "744 billion" and "744 mil
    millones de parámetros"); a hedged number is the same within :func:`numbers_agree`."""
    if claim.kind != doc.kind:
        return False
    if claim.kind == DATE:
        return claim.date is not None and doc.date is not None and date_relation(claim.date, doc.date) == "same"
    if claim.kind != QUANTITY or claim.number is None or doc.number is None:
        return False
    claim, doc = _on_share_scale(claim, doc), _on_share_scale(doc, claim)
    if not numbers_agree(claim, doc):
        return False
    return not claim.unit or not doc.unit or claim.unit == doc.unit


def same_slot(claim: Fact, doc: Fact) -> bool:
    """Whether ``doc`` could state the same thing as ``claim`` with another value: a date that
    differs in a part both give, or a quantity in the same unit (or without one on either side:
    "de 7 mil millones responsable de..." leaves the unit said before, but a measure such as
    months, dollars, GB or % is always written)."""
    if claim.kind != doc.kind:
        return False
    if claim.kind == DATE:
        return claim.date is not None and doc.date is not None and date_relation(claim.date, doc.date) == "different"
    claim, doc = _on_share_scale(claim, doc), _on_share_scale(doc, claim)
    if claim.unit == doc.unit:
        return True
    unit = claim.unit or doc.unit
    return not (claim.unit and doc.unit) and unit not in listed_units()
