"""Fractions in words read as shares in % (citeqa.text.facts_fractions), in the text's language,
and what is no share: dates, halves of things, a fraction word without "of" that does not end
its clause after a change verb ("Sales rose by a third.")."""

from __future__ import annotations

import pytest

from citeqa.text.facts import find_facts, find_quantities
from citeqa.text.facts_fractions import fraction_spans


@pytest.mark.parametrize(
    ("text", "lang", "said", "share", "approx"),
    [
        ("Almost a third of the votes went to her.", "en", "a third", 100 / 3, "almost"),
        ("Half of the budget went to salaries.", "en", "Half", 50.0, ""),
        ("Two thirds of the staff work remotely.", "en", "Two thirds", 200 / 3, ""),
        ("Three quarters of the land is forest.", "en", "Three quarters", 75.0, ""),
        ("A quarter of the votes were blank.", "en", "A quarter", 25.0, ""),
        ("Casi un tercio de los votos fue nulo.", "es", "un tercio", 100 / 3, "almost"),
        ("La mitad de los ingresos vino de China.", "es", "La mitad", 50.0, ""),
        ("Dos tercios de la plantilla teletrabajan.", "es", "Dos tercios", 200 / 3, ""),
        ("Un cuarto de los socios votó.", "es", "Un cuarto", 25.0, ""),
        ("Um terço dos votos foi nulo.", "pt", "Um terço", 100 / 3, ""),
        ("Mais de metade dos votos foi nula.", "pt", "metade", 50.0, "over"),
        ("Ein Drittel der Fläche ist Wald.", "de", "Ein Drittel", 100 / 3, ""),
        ("Mehr als die Hälfte der Stimmen ging an ihn.", "de", "die Hälfte", 50.0, "over"),
        ("Zwei Drittel der Kosten trägt der Bund.", "de", "Zwei Drittel", 200 / 3, ""),
        ("Ein Viertel der Einwohner ist älter als 65.", "de", "Ein Viertel", 25.0, ""),
        ("Un tiers des habitants vit en ville.", "fr", "Un tiers", 100 / 3, ""),
        ("Plus de la moitié des voix sont allées à elle.", "fr", "la moitié", 50.0, "over"),
        ("Deux tiers des députés ont voté.", "fr", "Deux tiers", 200 / 3, ""),
        ("Un quart des sièges est vacant.", "fr", "Un quart", 25.0, ""),
    ],
)
def test_a_fraction_in_words_is_a_share_in_percent(text, lang, said, share, approx):
    (fact,) = [f for f in find_facts(text, lang) if f.kind == "quantity" and f.fraction]
    assert (fact.text, fact.unit, fact.approx) == (said, "%", approx)
    assert fact.number == pytest.approx(share) and text[fact.start : fact.end] == fact.text
    assert fact.type == "percent"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("The chip ships in the third quarter of 2027.", "en"),  # a date
        ("Sales rose in the second half of the season.", "en"),  # after an ordinal
        ("The isotope's half-life is short.", "en"),
        ("A third party audited the accounts.", "en"),  # no "of"
        ("Half a million people came.", "en"),  # a number
        ("It took a quarter of an hour.", "en"),  # a unit
        ("Half of 2026 is gone.", "en"),  # a year
        ("El cuarto trimestre de 2026 fue bueno.", "es"),
        ("Il a attendu un quart d'heure.", "fr"),
        ("Die zweite Hälfte der Saison war schwach.", "de"),
        ("Three tiers of the building were closed.", "en"),  # French "tiers" is not read in English
        ("A third party audited the accounts, and sales rose.", "en"),
        ("It took a quarter of an hour, and sales rose by half a million.", "en"),
        ("The chip ships in the first quarter of 2027, and sales rose.", "en"),
        ("Sales rose in the third quarter.", "en"),  # an ordinal: no numerator
        ("O quarto capítulo é o mais longo.", "pt"),  # an ordinal, no "de"
        ("A equipa terminou em quarto lugar.", "pt"),
        ("Ele esperou um quarto de hora.", "pt"),  # a unit
        ("O quarto trimestre de 2026 foi bom.", "pt"),  # a date
    ],
)
def test_no_share_where_the_fraction_word_is_no_fraction(text, lang):
    assert not [f for f in find_facts(text, lang) if f.fraction]


@pytest.mark.parametrize(
    ("text", "lang", "said", "share", "approx"),
    [
        ("Sales rose by a third.", "en", "a third", 100 / 3, ""),
        ("Sales fell by half, to 3 million.", "en", "half", 50.0, ""),
        ("Sales rose sharply by a quarter; costs did not.", "en", "a quarter", 25.0, ""),
        ("Sales rose by almost a third", "en", "a third", 100 / 3, "almost"),  # end of text
        ("Las ventas cayeron un tercio.", "es", "un tercio", 100 / 3, ""),
        ("Los precios subieron en un quinto: nadie lo esperaba.", "es", "un quinto", 20.0, ""),
        ("Die Preise stiegen um ein Drittel.", "de", "ein Drittel", 100 / 3, ""),
        ("Der Umsatz sank um die Hälfte.", "de", "die Hälfte", 50.0, ""),
        ("Les ventes ont augmenté d'un tiers.", "fr", "un tiers", 100 / 3, ""),
        ("Le chômage a baissé de moitié.", "fr", "moitié", 50.0, ""),
        ("O lucro caiu um terço", "pt", "um terço", 100 / 3, ""),  # end of text
        ("As vendas caíram um quarto.", "pt", "um quarto", 25.0, ""),
        ("O lucro aumentou em um quinto, para 3 milhões.", "pt", "um quinto", 20.0, ""),
        ("O preço subiu quase um décimo.", "pt", "um décimo", 10.0, "almost"),
        ("Um quarto dos votos foi nulo.", "pt", "Um quarto", 25.0, ""),  # with "de"
        ("Um décimo da população vive no campo.", "pt", "Um décimo", 10.0, ""),
    ],
)
def test_a_fraction_ending_its_clause_after_a_change_verb_is_the_size_of_the_change(text, lang, said, share, approx):
    (fact,) = [f for f in find_facts(text, lang) if f.fraction]
    assert (fact.text, fact.unit, fact.approx, fact.type) == (said, "%", approx, "percent")
    assert fact.number == pytest.approx(share)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("A third.", "en"),  # no verb
        ("The team won a third.", "en"),  # a verb, but no change
        ("Sales rose in a quarter.", "en"),  # a time: "in" is no "by" word
        ("Revenue rose 10 % in a quarter.", "en"),
        ("Sales fell to a third.", "en"),  # another value, not the change
        ("Sales rose; a third.", "en"),  # another clause
        ("Sales rose in the second half.", "en"),  # after an ordinal
        ("Sales rose and then stayed level for a quarter.", "en"),  # the verb too far
        ("Sales rose by a third in 2026.", "en"),  # the clause goes on (and no "of")
        ("Sales rose by half a million.", "en"),  # a number
        ("The team fell to third.", "en"),  # no numerator
        ("The 960PR arrives in the third.", "en"),
        ("Les ventes ont augmenté, un tiers.", "fr"),
        ("Die Zahl stieg im dritten Viertel.", "de"),
        ("O time subiu para o quarto lugar.", "pt"),
        ("O time caiu para quinto.", "pt"),
        ("Ela mora no décimo.", "pt"),
        ("Ficou em quarto.", "pt"),
        ("Sales rose by a third.", "pt"),  # read in the text's language only
    ],
)
def test_no_share_at_a_clause_end_without_a_change_verb_just_before(text, lang):
    assert not [f for f in find_facts(text, lang) if f.fraction]


def test_fractions_are_read_in_the_text_language_and_left_out_of_short_answers():
    text = "Deux tiers des députés ont voté."
    assert fraction_spans(text, "fr") and not fraction_spans(text, "en")
    assert fraction_spans(text, None) == fraction_spans(text, "fr")
    assert not fraction_spans(text, "it")  # no word list: no fractions
    assert not [f for f in find_quantities(text, "fr") if f.fraction]  # short answers: as before
