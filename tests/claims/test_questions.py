"""The questions a claim is checked with (citeqa.claims.questions): each value masked by the question
word of the claim's language, and the claim's subject masked to ask who holds a value."""

from __future__ import annotations

import pytest

from citeqa.claims.parts import analyse_claim
from citeqa.claims.questions import claim_subject, claim_values, holder_question, slot_question, slot_words
from citeqa.text.facts import find_facts

# --- the question for each value, per language ------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "lang", "form", "question"),
    [
        ("The 960PR arrives in the first quarter of 2027.", "en", "replace", "The 960PR arrives when?"),
        ("The 960PR arrives in the first quarter of 2027.", "en", "front", "When the 960PR arrives?"),
        ("El 960PR llega en el tercer trimestre de 2027.", "es", "replace", "¿El 960PR llega cuándo?"),
        ("O 960PR chega no terceiro trimestre de 2027.", "pt", "front", "Quando o 960PR chega?"),
        ("Der Damm wurde im März 1955 fertiggestellt.", "de", "replace", "Der Damm wurde wann fertiggestellt?"),
        ("Le pont fut achevé en 1887.", "fr", "replace", "Le pont fut achevé en quelle année?"),
        (
            "Der Stausee fasst 41 Millionen Kubikmeter.",
            "de",
            "replace",
            "Der Stausee fasst wie viel?",  # the number with its scale and unit (de.json), as in es/en
        ),
        ("Le sommet culmine à 4808 mètres.", "fr", "replace", "Le sommet culmine à combien?"),
        # a hedge before the number goes with it: "cuánto tiene", not "cuánto tiene unos"
        ("GLM-5 tiene unos 744 mil millones de parámetros.", "es", "front", "¿Cuántos parámetros GLM-5 tiene?"),
        ("Le barrage retient environ 41 millions de litres.", "fr", "replace", "Le barrage retient combien de litres?"),
    ],
)
def test_the_value_is_masked_by_the_question_word_of_the_claims_language(claim, lang, form, question):
    (fact,) = [f for f in find_facts(claim, lang)]
    assert slot_question(claim, fact, lang, form) == question


def test_a_masked_name_takes_its_article_with_it():
    claim = "DeepSeek V4 moved its training to the Ascend 950."
    (name,) = [v for v in claim_values(analyse_claim(claim, "en")) if v.text == "Ascend 950"]
    assert slot_question(claim, name, "en", "front") == "Who or what DeepSeek V4 moved its training to?"
    assert slot_question(claim, name, "en", "replace") == "DeepSeek V4 moved its training to who or what?"


# the claim in the seven interface languages: the counted noun and the predicate kept, the
# hedge and the scale gone, every word of the claim's language ("GLM-5 ha how much di parametri?" before)
SEVEN = [
    ("GLM-5 has roughly 744 billion parameters.", "en", "GLM-5 has how many parameters?"),
    ("GLM-5 tiene unos 744 mil millones de parámetros.", "es", "¿GLM-5 tiene cuántos parámetros?"),
    ("O GLM-5 tem cerca de 744 bilhões de parâmetros.", "pt", "O GLM-5 tem quantos parâmetros?"),
    ("GLM-5 hat rund 744 Milliarden Parameter.", "de", "GLM-5 hat wie viele Parameter?"),
    ("GLM-5 dispose d'environ 744 milliards de paramètres.", "fr", "GLM-5 dispose de combien de paramètres?"),
    ("GLM-5 ha circa 744 miliardi di parametri.", "it", "GLM-5 ha quanti parametri?"),
    ("GLM-5 té uns 744 mil milions de paràmetres.", "ca", "GLM-5 té quants paràmetres?"),
    ("La società ha 300 persone.", "it", "La società ha quante persone?"),
    ("L'entreprise compte 120 employés.", "fr", "L'entreprise compte combien d'employés?"),
    ("Il 960PR arriva nel terzo trimestre del 2027.", "it", "Il 960PR arriva quando?"),
    ("El 960PR arriba el tercer trimestre de 2027.", "ca", "El 960PR arriba quan?"),
]


@pytest.mark.parametrize(("claim", "lang", "question"), SEVEN)
def test_a_claim_is_asked_in_its_own_words_in_every_interface_language(claim, lang, question):
    (fact,) = claim_values(analyse_claim(claim, lang))
    assert slot_question(claim, fact, lang) == question


@pytest.mark.parametrize("lang", ["es", "pt", "de", "fr", "it", "ca"])
def test_no_english_question_word_in_another_languages_question(lang):
    english = {w for phrase in slot_words("en").values() for w in phrase.split() if not w.startswith("{")}
    for claim, claim_lang, _ in SEVEN:
        if claim_lang == lang:
            (fact,) = claim_values(analyse_claim(claim, lang))
            asked = set(slot_question(claim, fact, lang).rstrip("?").split()) - set(claim.split())
            assert not asked & english, asked


def test_question_words_are_data_with_english_where_a_language_has_none():
    assert slot_words("es")["date"] == "cuándo" and slot_words("fr")["date"] == "quand"
    assert slot_words("it")["date"] == "quando" and slot_words("ca")["date"] == "quan"
    assert slot_words("nl") == slot_words("en")  # no Dutch word list: the English words ask
    for lang in ("en", "es", "pt", "de", "fr", "it", "ca"):
        assert {"date", "year", "quantity", "number", "money", "percent", "name"} <= set(slot_words(lang))


def test_a_claims_values_are_its_dates_quantities_and_value_names():
    parts = analyse_claim("The Clifton bridge was designed by Isambard Brunel in 1831.", "en")
    values = [(v.kind, v.text) for v in claim_values(parts)]
    assert values == [("name", "Isambard Brunel"), ("date", "1831")]
    assert claim_values(analyse_claim("Regular stretching helps prevent running injuries.", "en")) == []


# --- the claim's subject and who holds a value ----------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "lang", "subject"),
    [
        ("The 960PR arrives in the first quarter of 2027.", "en", "960PR"),
        ("The Clifton bridge was designed by Isambard Brunel in 1831.", "en", "Clifton"),
        ("In 2027, Huawei launched the Ascend 950.", "en", "Huawei"),
        ("El 960PR llega en el primer trimestre de 2027.", "es", "960PR"),
        ("El faro de Punta Brava se construyó en 1887.", "es", "Punta Brava"),
        ("Alibaba compró Nvidia en 2026.", "es", "Alibaba"),
    ],
)
def test_the_subject_is_the_claims_first_name_that_is_no_value(claim, lang, subject):
    parts = analyse_claim(claim, lang)
    at = claim_subject(parts, claim_values(parts))
    assert at is not None and claim[at.start : at.end] == subject


def test_a_claim_whose_names_are_all_values_has_no_subject():
    parts = analyse_claim("It was designed by Isambard Brunel.", "en")
    assert claim_subject(parts, claim_values(parts)) is None


@pytest.mark.parametrize(
    ("claim", "lang", "value", "question"),
    [
        ("The 960PR arrives in the first quarter of 2027.", "en", "third", "Who or what arrives in the third?"),
        (
            "El 960PR llega en el primer trimestre de 2027.",
            "es",
            "primer trimestre de 2027",
            "¿Quién o qué llega en el primer trimestre de 2027?",
        ),
        (
            "Der 960PR kommt im ersten Quartal 2027.",
            "de",
            "ersten Quartal 2027",
            "Wer oder was kommt im ersten Quartal 2027?",
        ),
        ("In 2027, Huawei launched the Ascend 950.", "en", "2027", "In 2027, who or what launched the Ascend 950?"),
    ],
)
def test_the_holder_question_masks_the_subject_and_asks_with_the_documents_value(claim, lang, value, question):
    parts = analyse_claim(claim, lang)
    values = [v for v in claim_values(parts) if v.kind == "date"]
    subject = claim_subject(parts, values)
    assert subject is not None
    assert holder_question(claim, subject, values[0], value, lang) == question
