"""The short-answer rules behind their one entry (citeqa.qa.rules.rule_answer)."""

from __future__ import annotations

import pytest

from citeqa.qa import answer_types, questions
from citeqa.qa.answer_types import Wanted
from citeqa.qa.rules import RuleAnswer, rule_answer
from citeqa.qa.rules.short_answer import highlight_in, short_answer_in
from citeqa.records import Highlight
from citeqa.text.analysis import query_terms


def test_the_short_answer_is_the_supported_fact_and_also_the_key_phrase():
    question = "¿Cuántos coches vendió la fábrica de Vigo en 2025?"
    text = "En 2025 la fábrica de Vigo vendió 200 mil coches, un 5 % más."
    found = rule_answer(Wanted.of(question, question), text, "es")
    assert found.short is not None and text[found.short.start : found.short.end] == "200 mil"
    assert found.key == found.short


def test_without_a_short_answer_the_key_phrase_is_a_fact_of_any_kind():
    question = "¿Por qué cerró la fábrica?"  # asks for no fact: no short answer
    text = "La fábrica cerró en 2019 por falta de pedidos."
    found = rule_answer(Wanted.of(question, question), text, "es")
    key = highlight_in(text, questions.AnswerType.OTHER, frozenset(), "es")
    assert isinstance(key, Highlight) and found == RuleAnswer(None, key)  # offsets into the answer
    assert found.key is not None and text[found.key.start : found.key.end] == "2019"


@pytest.mark.parametrize(
    ("question", "query", "text", "lang"),
    [
        ("¿Cuándo abrió el museo?", "¿Cuándo abrió el museo?", "El museo abrió en marzo de 1998 en Lugo.", "es"),
        ("And the price?", "What does the X5 cost? And the price?", "The X5 costs US$ 43 in the shop.", "en"),
        ("Quem fundou a editora?", "Quem fundou a editora?", "A editora foi fundada por Ana Lima em 1990.", "pt"),
    ],
)
def test_the_entry_answers_as_the_rules_called_directly(question: str, query: str, text: str, lang: str):
    """What the pipeline did before the rules had one entry: the same offsets, question by question."""
    wanted = Wanted.of(question, query)
    direct = short_answer_in(text, lang, wanted.kind, wanted.words, set(query_terms(query, (lang,))), question=question)
    assert rule_answer(wanted, text, lang).short == direct


def test_a_question_is_worked_out_once(monkeypatch: pytest.MonkeyPatch):
    """Its shape once, its terms once per language, a sentence's facts once per kind."""
    calls = {"shape": 0, "facts": 0}
    shape, find = questions.question_shape, answer_types.find_entities

    def counted_shape(question):
        calls["shape"] += 1
        return shape(question)

    def counted_find(*args, **kwargs):
        calls["facts"] += 1
        return find(*args, **kwargs)

    monkeypatch.setattr(answer_types, "question_shape", counted_shape)
    monkeypatch.setattr(answer_types, "find_entities", counted_find)
    question = "¿Cuándo abrió el museo?"
    text = "El museo abrió en marzo de 1998 en Lugo."
    wanted = Wanted.of(question, question)
    kind = wanted.kind
    feature = answer_types.type_match(text, "es", kind, wanted.words, {"muse"}, wanted.find_entities)
    found = rule_answer(wanted, text, "es")
    again = rule_answer(wanted, text, "es")
    assert feature == 1.0 and found == again and found.short is not None
    assert calls == {"shape": 1, "facts": 1}
    assert wanted.query_terms("es") is wanted.query_terms("es")
    assert list(wanted.question_terms("es")) == query_terms(question, ("es",))
