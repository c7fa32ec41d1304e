"""Numbers, units and dates read the same way in es, pt and en (citeqa.text.quantities)."""

from __future__ import annotations

import pytest

from citeqa.text.quantities import (
    DatePoint,
    date_relation,
    find_dates,
    find_facts,
    find_quantities,
    parse_number,
    same_slot,
    same_value,
    unit_key,
)


@pytest.mark.parametrize(
    "token,value",
    [
        ("744", 744.0),
        ("0,1", 0.1),
        ("0.1", 0.1),
        ("0,979", 0.979),
        ("1,2", 1.2),
        ("4.5", 4.5),
        ("3.000", 3000.0),
        ("250,000", 250000.0),
        ("1.000.000", 1e6),
        ("1,234.5", 1234.5),
        ("1.234,5", 1234.5),
        ("abc", None),
        ("", None),
    ],
)
def test_parse_number_reads_both_decimal_marks(token, value):
    assert parse_number(token) == value


def _only(text: str, lang: str):
    facts = find_quantities(text, lang)
    assert len(facts) == 1, facts
    return facts[0]


@pytest.mark.parametrize(
    "text,lang",
    [
        ("un modelo de 744 mil millones de parámetros", "es"),
        ("um modelo de 744 bilhões de parâmetros", "pt"),
        ("a model of 744 billion parameters", "en"),
        ("a 744-billion-parameter model", "en"),
    ],
)
def test_scale_words_and_units_agree_across_languages(text, lang):
    fact = _only(text, lang)
    assert fact.number == 744e9 and fact.unit == "param"


def test_spanish_billon_is_a_million_millions():
    assert _only("1,2 billones de parámetros", "es").number == pytest.approx(1.2e12)


@pytest.mark.parametrize(
    "text,lang,number,unit",
    [
        ("unos 100 mil chips", "pt", 1e5, "chip"),
        ("around 100,000 chips", "en", 1e5, "chip"),
        ("API a 0,1 yuan por imagen", "es", 0.1, "cny"),
        ("roughly US$ 0.014 per image", "en", 0.014, "usd"),
        ("288 GB de memoria", "es", 288, "gb"),
        ("subieron un 8 % tras", "es", 8, "%"),
        ("adelantó el chip en tres trimestres", "es", 3, "quarter"),
        ("pulled forward by three quarters", "en", 3, "quarter"),
        ("tardó seis meses", "es", 6, "month"),
        ("3.000 millones de dólares", "es", 3e9, "usd"),
    ],
)
def test_quantities_with_units(text, lang, number, unit):
    fact = _only(text, lang)
    assert fact.number == pytest.approx(number) and fact.unit == unit


@pytest.mark.parametrize(
    "text",
    [
        "GLM-5 and GPT-5.2",
        "Kunlun P800",
        "the Ascend 950 chip",
        "openPangu 2.0 was released",
        "At Huawei Connect 2026, held",
        "the 960DT and the 960PR",
        "Atlas 800T A2",
        "the CVTG-2K benchmark",
        "the series 3600 trains cost more",
    ],
)
def test_numbers_inside_names_are_not_quantities(text):
    assert [f for f in find_facts(text, "en") if f.kind == "quantity"] == []


def test_number_words_only_in_their_language():
    # "dos" is "of the" in Portuguese, "two" in Spanish
    assert find_quantities("o preço dos chips", "pt") == []
    assert _only("los dos chips", "es").number == 2


def test_an_elided_unit_is_not_the_next_adjective():
    fact = _only("un decodificador de 7 mil millones responsable del detalle", "es")
    assert fact.number == 7e9 and fact.unit == ""


@pytest.mark.parametrize(
    "text,lang,point",
    [
        ("el 31 de julio de 2026", "es", DatePoint(2026, None, 7, 31)),
        ("a 31 de julho de 2026", "pt", DatePoint(2026, None, 7, 31)),
        ("by Huawei itself (July 31, 2026)", "en", DatePoint(2026, None, 7, 31)),
        ("en enero de 2025, Zhipu", "es", DatePoint(2025, None, 1)),
        ("In January 2025, Zhipu", "en", DatePoint(2025, None, 1)),
        ("no primeiro trimestre de 2027", "pt", DatePoint(2027, 1)),
        ("in the first quarter of 2027", "en", DatePoint(2027, 1)),
        ("desde 2022, cuando", "es", DatePoint(2022)),
        ("realizado em setembro", "pt", DatePoint(None, None, 9)),
    ],
)
def test_dates_in_three_languages(text, lang, point):
    dates = find_dates(text)
    assert [d.date for d in dates] == [point]


def test_an_ordinal_after_a_quarter_is_another_quarter_of_that_year():
    text = "o 960DT chega no primeiro trimestre de 2027 e o 960PR no terceiro."
    assert [d.date for d in find_dates(text)] == [DatePoint(2027, 1), DatePoint(2027, 3)]


def test_ambiguous_month_words_need_a_day_or_year():
    assert find_dates("the results may vary; el marco de trabajo") == []
    assert [d.date for d in find_dates("May 2026")] == [DatePoint(2026, None, 5)]


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
