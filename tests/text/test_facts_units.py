"""Units of quantities (citeqa.text.facts): a rate after a price or a unit of measure is kept whole
("2 euros por kilo"), a per-word alone is no unit ("2.85 per match"), and a unit of area or volume
written with its dimension in one word ("86 hm³", "3 Kubikkilometer") is the unit, with a key of
its own (``km³``, never the length's ``km``)."""

from __future__ import annotations

import pytest

from citeqa.text import facts_words as fw
from citeqa.text.facts import find_facts, unit_key
from citeqa.text.quantities import listed_units


def _quantity(text: str, lang: str):
    (fact,) = [f for f in find_facts(text, lang) if f.kind == "quantity"]
    return fact


# --- a rate after a price or a unit of measure ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("El tomate cuesta 2 euros por kilo.", "es", ("2 euros por kilo", "eur")),
        ("O café custa R$ 30 por quilo.", "pt", ("R$ 30 por quilo", "brl")),
        ("Le café coûte 5 euros par kilo.", "fr", ("5 euros par kilo", "eur")),
        ("Kaffee kostet 3 Euro pro Kilo.", "de", ("3 Euro pro Kilo", "eur")),
        ("Beef sells for 3 dollars per kilogram.", "en", ("3 dollars per kilogram", "usd")),
        ("O cobre custa US$ 9.000 por tonelada.", "pt", ("US$ 9.000 por tonelada", "usd")),
        # a rate's unit of area or volume: the dimension word before or after it, or a prefix
        ("El agua cuesta 0,68 euros por metro cúbico.", "es", ("0,68 euros por metro cúbico", "eur")),
        ("Water costs $2 per cubic metre.", "en", ("$2 per cubic metre", "usd")),
        ("Wasser kostet 0,5 Euro pro Kubikmeter.", "de", ("0,5 Euro pro Kubikmeter", "eur")),
        ("L'eau coûte 3 €/m³.", "fr", ("3 €/m³", "eur")),
        # after "per", which says nothing else, any noun is the rate's noun
        ("Generating one costs US$ 0.014 per image.", "en", ("US$ 0.014 per image", "usd")),
        ("The dividend is $0.25 per share.", "en", ("$0.25 per share", "usd")),
        # a unit of measure keeps its rate too
        ("El río lleva 1,5 m³ por segundo.", "es", ("1,5 m³ por segundo", "m³")),
        ("The forest loses 10 km² per year.", "en", ("10 km² per year", "km²")),
    ],
)
def test_a_price_or_a_measure_keeps_its_whole_rate(text, lang, expected):
    fact = _quantity(text, lang)
    assert (fact.text, fact.unit) == expected
    assert fact.measure_end == fact.end  # the short answer keeps the rate with its price


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        # a bare number: "per match" is no unit and no rate of a price or a measure
        ("The team averaged 2.85 per match.", "en", ("2.85", "")),
        # a counted noun keeps its own unit, its rate is left out
        ("He scored 2.85 goals per match.", "en", ("2.85 goals", "goal")),
        # a function word after "per" is no rate's noun
        ("It paid US$ 40 per the agreement.", "en", ("US$ 40", "usd")),
        # "por" is also "because of", "above": only a listed unit follows it in a rate
        ("El precio subió 5 euros por la demanda.", "es", ("5 euros", "eur")),
        ("Está un 5 % por encima.", "es", ("5 %", "%")),
        # an article is no per-word: "el año pasado", "le mois dernier" say when, not how often
        ("Ganó 5 millones de euros el año pasado.", "es", ("5 millones de euros", "eur")),
        ("Le café coûte 5 € le kilo.", "fr", ("5 €", "eur")),
    ],
)
def test_a_per_phrase_is_no_rate_after_a_bare_number_or_before_a_function_word(text, lang, expected):
    assert (_quantity(text, lang).text, _quantity(text, lang).unit) == expected


def test_a_bare_number_with_per_is_a_number_not_a_rate():
    fact = _quantity("The team averaged 2.85 per match.", "en")
    assert fact.type == "number" and fact.number == pytest.approx(2.85)


# --- a unit of area or volume in one word --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("El embalse guarda 86 hm³ de agua.", "es", ("86 hm³", "hm³")),
        ("La presa almacena 41 hm³.", "es", ("41 hm³", "hm³")),
        ("The site covers 12 km².", "en", ("12 km²", "km²")),
        ("Der Tank fasst 4 m³.", "de", ("4 m³", "m³")),
        ("A tank of 4m³ of water.", "en", ("4m³", "m³")),
        ("O lago tem 12 km² de área.", "pt", ("12 km²", "km²")),
        ("Der See enthält 3 Kubikkilometer Wasser.", "de", ("3 Kubikkilometer", "km³")),
        ("Der Park ist 10 Quadratkilometer groß.", "de", ("10 Quadratkilometer", "km²")),
        ("Sie wohnen auf 80 Quadratmetern.", "de", ("80 Quadratmetern", "m²")),
        ("Der Stausee fasst 41 Kubikmeter.", "de", ("41 Kubikmeter", "m³")),
    ],
)
def test_a_unit_with_its_dimension_in_one_word_is_the_unit(text, lang, expected):
    fact = _quantity(text, lang)
    assert (fact.text, fact.unit) == expected
    assert fact.measure_end == fact.end


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("3 Kubikkilometer", "de"),
        ("3 km³", "de"),
        ("3 kilómetros cúbicos", "es"),
        ("3 quilômetros cúbicos", "pt"),
        ("3 kilomètres cubes", "fr"),
        ("3 cubic kilometres", "en"),
    ],
)
def test_a_volume_has_one_key_in_every_language_and_it_is_not_the_length(text, lang):
    fact = _quantity(text, lang)
    assert fact.unit == "km³"
    assert _quantity("3 Kilometer", "de").unit == "km"


def test_a_word_that_only_begins_like_a_dimension_prefix_is_no_area():
    assert fw.dimensioned_key("Quadratur") == ""
    assert unit_key("Quadratur") != "" and "²" not in unit_key("Quadratur")
    assert fw.dimensioned_key("Kubikmetern") == "m³" and fw.dimensioned_key("hm³") == "hm³"


def test_an_area_or_a_volume_is_a_unit_always_written_with_its_number():
    assert {"km²", "m³", "hm³"} <= listed_units()


# --- units of mass and of land: one key whatever the language or the spelling -------------------


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("El lingote pesa 3 kilos.", "es", ("3 kilos", "kg")),
        ("El lingote pesa 3 kg.", "es", ("3 kg", "kg")),
        ("O lingote pesa 3 quilos.", "pt", ("3 quilos", "kg")),
        ("The ingot weighs 3 kilograms.", "en", ("3 kilograms", "kg")),
        ("Der Barren wiegt 3 Kilogramm.", "de", ("3 Kilogramm", "kg")),
        ("Le lingot pèse 3 kilogrammes.", "fr", ("3 kilogrammes", "kg")),
        ("La receta lleva 300 gramos de harina.", "es", ("300 gramos", "g")),
        ("A fábrica produziu 5 toneladas.", "pt", ("5 toneladas", "t")),
        ("The mill produced 5 tonnes.", "en", ("5 tonnes", "t")),
        ("La finca tiene 50 hectáreas.", "es", ("50 hectáreas", "ha")),
        ("The estate covers 50 hectares.", "en", ("50 hectares", "ha")),
    ],
)
def test_a_unit_of_mass_or_land_has_one_key_in_every_language(text, lang, expected):
    """One value, whether written "3 kilos" or "3 kg": a claim in one spelling is read against a document
    in the other (they had the keys ``kilo`` and ``kg``, "tonelada" ``tonel``, "hectáreas" ``hectá``)."""
    fact = _quantity(text, lang)
    assert (fact.text, fact.unit) == expected


# --- a language that capitalises its nouns --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "said", "unit"),
    [
        ("Es wurden 1200 Exemplare verkauft.", "1200 Exemplare", unit_key("Exemplare")),  # not "verkauft"
        ("Sie besteht aus 97 Brücken und hat 3 Häfen.", "97 Brücken", unit_key("Brücken")),
        ("Im Jahr 2023 kamen 6 Millionen Besucher.", "6 Millionen Besucher", unit_key("Besucher")),
        ("Der Rhein ist 1233 Kilometer lang.", "1233 Kilometer", "km"),
        ("Der Eintritt kostet 25 Euro.", "25 Euro", unit_key("Euro")),
    ],
)
def test_in_german_a_counted_noun_is_the_capitalised_word(text: str, said: str, unit: str):
    fact = [f for f in find_facts(text, "de") if f.kind == "quantity"][0]
    assert (fact.text, fact.unit) == (said, unit)


def test_two_counted_nouns_are_two_units_and_a_verb_is_none():
    bridges, harbours = find_facts("Sie besteht aus 97 Brücken und hat 3 Häfen.", "de")
    assert bridges.unit != harbours.unit
    (sold,) = find_facts("Bis heute wurden 1200 verkauft.", "de")
    assert sold.unit == ""
    assert fw.capitalised_nouns("de") and not fw.capitalised_nouns("en") and not fw.capitalised_nouns(None)
