"""Facts compared across es, pt and en (citeqa.text.quantities)."""

from __future__ import annotations

import pytest

from citeqa.text.facts import DatePoint, find_facts, find_quantities, unit_key
from citeqa.text.quantities import (
    APPROX_TOLERANCE,
    date_relation,
    hedge_tolerance,
    numbers_agree,
    rounds_to,
    same_slot,
    same_value,
    value_range,
)


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


def test_a_century_holds_its_years():
    thirteenth = DatePoint(century=13)
    assert date_relation(thirteenth, DatePoint(1248, None, 8, 15)) == "same"  # the document is more precise
    assert date_relation(thirteenth, DatePoint(1300)) == "same"  # 1201-1300, as a century is counted
    assert date_relation(thirteenth, DatePoint(1301)) == "different"
    assert date_relation(thirteenth, DatePoint(decade=1990)) == "different"
    assert date_relation(DatePoint(1248), thirteenth) == "unknown"  # the document is less precise
    assert date_relation(DatePoint(century=20), DatePoint(decade=1990)) == "same"


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


# --- hedged numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "claim_lang", "doc", "doc_lang", "same"),
    [
        ("knapp 3000 Meter", "de", "2962 m", "en", True),  # just under 3000
        ("knapp 3000 Meter", "de", "3050 m", "en", False),  # "knapp" is under
        ("knapp 3000 Meter", "de", "2500 m", "en", False),  # further than the tolerance
        ("rund 40 000 Einwohner", "de", "41 500 Einwohner", "de", True),
        ("environ 40 000 habitants", "fr", "41 500 habitants", "fr", True),
        ("environ 40 000 habitants", "fr", "50 000 habitants", "fr", False),
        ("41 500 habitants", "fr", "environ 40 000 habitants", "fr", True),  # a hedged document
        ("about 40,000 people", "en", "unos 39.000 personas", "es", True),
        (
            "unos 800 mil millones de parámetros",
            "es",
            "744 mil millones de parámetros",
            "es",
            False,
        ),  # 800 is no rounding of 744
        ("cerca de 750 mil millones de parámetros", "es", "744 billion parameters", "en", True),
        ("more than a million people", "en", "1.2 million people", "en", True),
        ("more than a million people", "en", "900,000 people", "en", False),
        ("up to 10 %", "en", "8 %", "en", True),
        ("up to 10 %", "en", "12 %", "en", False),
        ("quase 40 milhões de euros", "pt", "39,5 millones de euros", "es", True),
        ("40 000 habitants", "fr", "41 500 habitants", "fr", False),  # exact numbers stay exact
        ("40 000 habitants", "fr", "40 000 habitants", "fr", True),
    ],
)
def test_a_hedged_number_is_the_same_within_its_rounding(claim, claim_lang, doc, doc_lang, same):
    c, d = _only(claim, claim_lang), _only(doc, doc_lang)
    assert same_value(c, d) is same
    assert same_slot(c, d)  # another value in the same place: a conflict when not the same


def test_the_hedge_tolerance_is_half_the_last_digit_at_most_the_named_share():
    assert hedge_tolerance(800) == 50 and hedge_tolerance(3.4e6) == 5e4
    assert hedge_tolerance(750) == 25  # a 5 rounds to fifties
    assert hedge_tolerance(3000) == APPROX_TOLERANCE * 3000  # half a thousand is more than 10 %
    exact, hedged = _only("40 000 habitants", "fr"), _only("environ 40 000 habitants", "fr")
    assert value_range(exact) == (40000, 40000) and value_range(hedged) == (36000, 44000)
    assert numbers_agree(hedged, exact)


# --- fractions in words ("almost a third of") against percentages ---------------------------------


def _share(text: str, lang: str):
    (fact,) = [f for f in find_facts(text, lang) if f.kind == "quantity"]
    return fact


@pytest.mark.parametrize(
    ("claim", "doc", "same"),
    [
        (("Almost a third of the votes were blank.", "en"), ("32 % of the votes were blank.", "en"), True),
        (("A third of the votes were blank.", "en"), ("33 % of the votes were blank.", "en"), True),
        (("A third of the votes were blank.", "en"), ("33.3% of the votes were blank.", "en"), True),
        (("Un tercio de los votos fue nulo.", "es"), ("El 33,3 % de los votos fue nulo.", "es"), True),
        (("Two thirds of the staff.", "en"), ("67% of the staff.", "en"), True),
        (("Half of the votes.", "en"), ("50 % des voix.", "fr"), True),
        (("About half of the votes.", "en"), ("48 % des voix.", "fr"), True),
        (("Almost a third of the votes.", "en"), ("The share was 0.33.", "en"), True),
        (("A third of the votes were blank.", "en"), ("32 % of the votes were blank.", "en"), False),
        (("Half of the votes.", "en"), ("48 % des voix.", "fr"), False),
        (("Almost a third of the votes.", "en"), ("35 % of the votes.", "en"), False),
        (("Half of the votes.", "en"), ("A third of the votes.", "en"), False),
        (("Die Hälfte der Stimmen.", "de"), ("Un tiers des voix.", "fr"), False),
    ],
)
def test_a_fraction_in_words_is_the_percentage_it_rounds_to(claim, doc, same):
    c, d = _share(*claim), _share(*doc)
    assert same_value(c, d) is same and same_value(d, c) is same
    assert same_slot(c, d)  # never another unit: a share is in the slot of a percentage


def test_half_and_a_third_are_other_values_and_a_count_is_no_share():
    half, third = _share("Half of the votes.", "en"), _share("A third of the votes.", "en")
    assert not same_value(half, third) and same_slot(half, third)
    count = _share("He got 3 votes.", "en")
    assert not same_value(half, count) and not same_slot(half, count)
    assert rounds_to(100 / 3, 33) and rounds_to(50, 50) and not rounds_to(100 / 3, 30) and not rounds_to(50, 48)
