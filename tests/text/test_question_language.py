"""The question decides its language among those the interface speaks and the corpus's; names and
numbers do not count, function words do; the page's language leans a close reading; the history,
then the corpus's languages break ties (eval/qlang measures it: docs/languages.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.engine import Engine
from citeqa.messages import catalogue_languages
from citeqa.text import language
from citeqa.text.language import (
    Detection,
    contenders,
    function_words,
    language_evidence,
    question_candidates,
    question_language,
)

UI = ("es", "pt", "en")
SHIPPED = frozenset({"es", "pt", "en"})  # the languages of corpus/


def every() -> tuple[str, ...]:
    """What a question to the shipped es/pt/en corpus may be read as."""
    return question_candidates(SHIPPED, catalogue_languages())


@pytest.mark.parametrize(
    ("question", "history", "lang"),
    [
        ("When did Huawei open-source openPangu 2.0?", (), "en"),  # German among six languages
        ("Who is the CEO of Huawei?", ("Quanto custa a API do GLM-Image por imagem?",), "en"),
        ("Quem é o CEO da Huawei?", ("How much does the GLM-Image API charge per image?",), "pt"),
        ("Qual chip a Baidu está testando?", ("¿Cuántos parámetros tiene GLM-5?",), "pt"),
        ("¿Y cuántos chips usó?", ("What did Zhipu release in February 2026?",), "es"),
    ],
)
def test_the_question_decides_whatever_the_history(question: str, history: tuple[str, ...], lang: str):
    assert question_language(question, history, UI, "es") == lang
    assert question_language(question, history, every(), "es", SHIPPED) == lang


def test_history_breaks_a_tie_and_the_corpus_decides_without_letters():
    assert question_language("GLM-5?", ("Quanto custa a API do GLM-Image por imagem?",), UI, "es") == "pt"
    assert question_language("GLM-5?", ("¿Cuántos parámetros tiene GLM-5?",), UI, "en") == "es"
    assert question_language("2026?", (), UI, "pt") == "pt"


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("Wie viele Parameter hat GLM-5?", "de"),  # read as English before, among es/pt/en only
        ("Quel est le prix de l'API de GLM-Image par image ?", "fr"),  # read as Portuguese before
        ("Combien de paramètres a GLM-5 ?", "fr"),
        ("Quanti parametri ha GLM-5?", "it"),
        ("Quants paràmetres té GLM-5?", "ca"),
        ("¿Cuántos parámetros tiene GLM-5?", "es"),
        ("Quantos parâmetros tem o GLM-5?", "pt"),
    ],
)
def test_every_interface_language_is_read_on_an_es_pt_en_corpus(question: str, lang: str):
    assert question_language(question, (), every(), "es", SHIPPED) == lang


@pytest.mark.parametrize(
    "claim",
    [
        "Huawei's openPangu 2.0 has 505 billion parameters.",  # read as German with de among the candidates
        "Nvidia built the Zhenwu chip for Alibaba in 2025.",
        "No LongText-Bench, o GLM-Image obteve 0,979 em chinês.",  # read as French
    ],
)
def test_names_and_numbers_do_not_decide_a_claims_language(claim: str):
    lang = "pt" if claim.startswith("No ") else "en"
    assert question_language(claim, (), every(), "es", SHIPPED) == lang


def test_names_numbers_and_codes_are_no_evidence_of_a_language():
    assert language_evidence("Wie viele Parameter hat GLM-5?") == "Wie viele hat"
    assert language_evidence("Huawei's openPangu 2.0 has 505 billion parameters.") == "has billion parameters"
    assert language_evidence("What's new in Python 3.12?") == "What's new in"
    assert language_evidence("Huawei?") == language_evidence("GLM-5 2026") == ""


def test_the_page_language_leans_a_close_reading_never_a_clear_one():
    close = "Com funciona la fotosíntesi?"  # lingua alone: es 0.52, ca 0.45
    assert question_language(close, (), every(), "es", SHIPPED, prior="ca") == "ca"
    assert question_language(close, (), every(), "es", SHIPPED, prior="es") == "es"
    assert question_language("How many moons does Jupiter have?", (), every(), "es", SHIPPED, prior="de") == "en"
    assert question_language("Wie viele Monde hat Jupiter?", (), every(), "es", SHIPPED, prior="fr") == "de"


def test_names_only_take_the_conversation_then_the_page_then_the_corpus():
    german = ("Wie viele Parameter hat GLM-5?",)
    assert question_language("GLM-Image?", german, every(), "es", SHIPPED, prior="fr") == "de"
    assert question_language("GLM-Image?", (), every(), "es", SHIPPED, prior="fr") == "fr"
    assert question_language("GLM-Image?", (), every(), "es", SHIPPED) == "es"


def test_the_corpus_languages_only_break_a_tie():
    # "Població de Girona?": es and ca within the margin; the corpus's Spanish wins, a Catalan page keeps ca
    assert question_language("Població de Girona?", (), every(), "es", SHIPPED) == "es"
    assert question_language("Població de Girona?", (), every(), "es", SHIPPED, prior="ca") == "ca"
    # a clear French question stays French on an es/pt/en corpus
    assert question_language("Quelle est la capitale de l'Australie ?", (), every(), "es", SHIPPED) == "fr"


def passes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records each lingua pass a reading makes: True for trigrams only, False for the full models."""
    made: list[bool] = []
    inner = language._confidences

    def recorded(text: str, codes: frozenset[str], low_accuracy: bool = False) -> list[tuple[str, float]]:
        made.append(low_accuracy)
        return inner(text, codes, low_accuracy)

    monkeypatch.setattr(language, "_confidences", recorded)
    return made


def test_a_clear_question_is_read_from_trigrams_alone(monkeypatch: pytest.MonkeyPatch):
    made = passes(monkeypatch)
    assert question_language("¿Cuántos parámetros tiene GLM-5?", (), every(), "en", SHIPPED) == "es"
    assert made == [True]  # the full models (most of a cold ask) are not loaded


def test_the_full_models_read_what_the_trigrams_and_function_words_disagree_on(monkeypatch: pytest.MonkeyPatch):
    made = passes(monkeypatch)
    # the trigrams alone: Italian at 0.996 with the function words; its "how", "do", "my" are English
    assert question_language("How do I reset my password?", (), every(), "es", SHIPPED) == "en"
    assert made == [True, False]
    made.clear()
    # "de" is es, pt, fr and ca alike: no trigram reading could be clear, it only names the contenders
    assert question_language("Població de Girona?", (), every(), "es", SHIPPED) == "es"
    assert made == [True, False]


def test_the_full_models_read_only_the_languages_the_trigrams_leave_in_contention(monkeypatch: pytest.MonkeyPatch):
    read: list[frozenset[str]] = []
    inner = language._confidences

    def recorded(text: str, codes: frozenset[str], low_accuracy: bool = False) -> list[tuple[str, float]]:
        if not low_accuracy:
            read.append(codes)
        return inner(text, codes, low_accuracy)

    monkeypatch.setattr(language, "_confidences", recorded)
    # the trigrams read French (0.99) where the function words say Spanish: the full models settle it
    # between the likely ones, not over every candidate (each language's models cost 10-60 MB to load)
    assert question_language("¿En qué chip de Huawei se entrenó DeepSeek V4?", (), every(), "en", SHIPPED) == "es"
    assert len(read) == 1 and {"es", "fr"} <= read[0] < set(every())


def test_contenders_are_the_likely_languages_the_best_two_and_the_function_word_leader():
    found = (Detection("fr", 0.985), Detection("it", 0.011), Detection("es", 0.003), Detection("de", 0.001))
    candidates = ("es", "pt", "en", "fr", "it", "de")
    assert contenders(found, candidates, None) == {"fr", "it"}
    assert contenders(found, candidates, "en") == {"fr", "it", "en"}
    assert contenders((Detection("fr", 0.9999), Detection("es", 0.0001)), candidates, None) == {"fr", "es"}
    assert contenders(found, ("fr", "es"), "en") == {"fr"}  # never outside the candidates
    # fewer than 3 letters give the trigrams nothing to read: every candidate is read in full
    assert contenders((Detection("fr", 0.0), Detection("es", 0.0)), candidates, None) == set(candidates)
    assert contenders((), candidates, None) == set(candidates)


def test_every_interface_language_has_function_words():
    marks = function_words()
    assert set(catalogue_languages()) <= set(marks)
    assert all(len(words) >= 40 and all(w == w.lower() for w in words) for words in marks.values())


def test_a_german_question_to_an_es_pt_en_index_is_read_as_german(built_index: Path, embedder):
    engine = Engine.open(built_index, embedder=embedder)
    assert engine.question_language("When did Huawei open-source openPangu 2.0?") == "en"
    assert engine.question_language("Wann wurde die Mühle gebaut und wer hat sie bezahlt?") == "de"
    assert engine.question_language("Combien de paramètres a GLM-5 ?") == "fr"
    assert engine.question_language("Wo?", page_lang="fr") == "de"  # the question's own word decides
    assert engine.ask("Quand le phare a-t-il été construit ?", k=2).language == "fr"
    assert engine.check("Le phare a été construit en 1890.", page_lang="fr").language == "fr"
