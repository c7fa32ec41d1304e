"""The question decides its language; the history only breaks ties; only the corpus's and the UI's languages count."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.engine import Engine
from citeqa.text.language import question_language

UI = ("es", "pt", "en")


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


def test_history_breaks_a_tie_and_the_corpus_decides_without_letters():
    assert question_language("GLM-5?", ("Quanto custa a API do GLM-Image por imagem?",), UI, "es") == "pt"
    assert question_language("GLM-5?", ("¿Cuántos parámetros tiene GLM-5?",), UI, "en") == "es"
    assert question_language("2026?", (), UI, "pt") == "pt"


def test_a_language_no_document_or_label_has_is_never_chosen(built_index: Path, embedder):
    engine = Engine.open(built_index, embedder=embedder)
    assert engine.question_language("When did Huawei open-source openPangu 2.0?") == "en"
    assert engine.question_language("Wann wurde die Mühle gebaut und wer hat sie bezahlt?") in UI
