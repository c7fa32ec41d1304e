"""One value written in the seven interface languages reads as one value (citeqa.text.facts with the
word lists of citeqa.text.lexicon, it.json and ca.json included): magnitudes, units, months, quarters."""

from __future__ import annotations

import pytest

from citeqa.text.facts import find_facts
from citeqa.text.quantities import same_value

BILLIONS = [
    ("744 billion parameters", "en"),
    ("744 mil millones de parámetros", "es"),
    ("744 bilhões de parâmetros", "pt"),
    ("744 Milliarden Parameter", "de"),
    ("744 milliards de paramètres", "fr"),
    ("744 miliardi di parametri", "it"),
    ("744 mil milions de paràmetres", "ca"),
]


@pytest.mark.parametrize(("text", "lang"), BILLIONS)
def test_a_magnitude_reads_the_same_in_every_interface_language(text, lang):
    (fact,) = find_facts(text, lang)
    (english,) = find_facts(BILLIONS[0][0], "en")
    assert fact.number == 744e9 and fact.unit == english.unit
    assert same_value(english, fact)


@pytest.mark.parametrize(
    ("text", "lang"), [("512 Go de mémoire", "fr"), ("512 Go Speicher", "de"), ("512 GB of memory", "en")]
)
def test_gigabytes_written_go_are_gigabytes(text, lang):
    (fact,) = find_facts(text, lang)
    assert (fact.number, fact.unit) == (512.0, "gb")


@pytest.mark.parametrize(
    ("text", "lang", "year", "quarter", "month"),
    [
        ("primo trimestre del 2027", "it", 2027, 1, None),
        ("primer trimestre de 2027", "ca", 2027, 1, None),
        ("T1 2027", "es", 2027, 1, None),
        ("gener de 2025", "ca", 2025, None, 1),
        ("gennaio 2025", "it", 2025, None, 1),
        ("janeiro de 2025", "pt", 2025, None, 1),
    ],
)
def test_quarters_and_months_in_italian_and_catalan(text, lang, year, quarter, month):
    (fact,) = find_facts(text, lang)
    assert fact.date is not None
    assert (fact.date.year, fact.date.quarter, fact.date.month) == (year, quarter, month)


def test_a_hedge_in_italian_and_catalan_makes_the_value_approximate():
    (it,) = find_facts("circa 744 miliardi di parametri", "it")
    (ca,) = find_facts("uns 744 mil milions de paràmetres", "ca")
    assert it.approx == "about" and ca.approx == "about"
