"""Facts compared across es, pt and en (citeqa.text.quantities)."""

from __future__ import annotations

from citeqa.text.facts import DatePoint, find_quantities, unit_key
from citeqa.text.quantities import date_relation, same_slot, same_value


def _only(text: str, lang: str):
    facts = find_quantities(text, lang)
    assert len(facts) == 1, facts
    return facts[0]


def test_date_relation():
    july = DatePoint(2026, None, 7, 31)
    assert date_relation(DatePoint(2026, None, 7, 31), july) == "same"
    assert date_relation(DatePoint(2026), july) == "same"  # the document is more precise
    assert date_relation(DatePoint(2026, None, 8, 31), july) == "different"
    assert date_relation(DatePoint(2030), DatePoint(2028)) == "different"
    assert date_relation(DatePoint(2026, None, 7, 31), DatePoint(2026)) == "unknown"  # less precise
    assert date_relation(DatePoint(2027, None, 2), DatePoint(2027, 1)) == "unknown"  # February is in Q1
    assert date_relation(DatePoint(2027, None, 5), DatePoint(2027, 1)) == "different"


def test_same_value_and_slot():
    es = _only("744 mil millones de parámetros", "es")
    en = _only("744 billion parameters", "en")
    other = _only("800 billion parameters", "en")
    chips = _only("800 chips", "en")
    assert same_value(es, en) and not same_value(es, other)
    assert same_slot(es, other) and not same_slot(other, chips)
    months, bare = _only("seis meses", "es"), _only("980 en 2029", "es")
    assert not same_slot(months, bare)  # a measure is always written with its unit


def test_unit_key_matches_cognates():
    assert unit_key("parámetros") == unit_key("parâmetros") == unit_key("parameters") == "param"
    assert unit_key("visitantes") == unit_key("visitors")
    assert unit_key("dólares") == unit_key("dollars") == unit_key("US$") == "usd"
