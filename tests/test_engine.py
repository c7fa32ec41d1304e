from pathlib import Path

import pytest

from citeqa.answer.pipeline import choose_span, clean_question, is_follow_up
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.errors import QuestionError


@pytest.fixture
def engine(built_index: Path) -> Engine:
    return Engine.open(built_index, embedder=KeywordEmbedder())


def assert_exact(engine: Engine, answer) -> None:
    for c in answer.citations:
        assert engine.doc_text(c.doc_id)[c.start : c.end] == c.text
    if not answer.abstained:
        assert answer.answer in answer.citations[0].text
        assert len(answer.answer) < len(answer.citations[0].text)
        place, first = answer.answer_span, answer.citations[0]
        assert engine.doc_text(place.doc_id)[place.start : place.end] == answer.answer
        assert place.doc_id == first.doc_id and first.start <= place.start and place.end <= first.end
        if answer.short_answer is not None:
            short = answer.short_answer_span
            assert engine.doc_text(short.doc_id)[short.start : short.end] == answer.short_answer
            assert place.start <= short.start and short.end <= place.end
    else:
        assert answer.answer_span is None and answer.short_answer_span is None


@pytest.mark.parametrize(
    "question,lang,doc,fact",
    [
        ("¿En qué año se construyó el faro de Punta Brava?", "es", "faro.txt", "1887"),
        ("Quando foi inaugurado o farol da Ilha Clara?", "pt", "nested/farol.md", "1912"),
        ("When was the windmill of Greyhill restored?", "en", "mill.html", "2004"),
    ],
)
def test_answers_in_each_language_with_exact_citations(engine: Engine, question, lang, doc, fact):
    answer = engine.ask(question)
    assert answer.language == lang
    assert answer.citations[0].doc_id == doc and answer.citations[0].lang == lang
    assert_exact(engine, answer)
    assert not answer.abstained and fact in answer.answer
    assert 0.0 <= answer.confidence <= 1.0 and answer.latency_ms > 0


def test_record_has_the_documented_fields(engine: Engine):
    record = engine.ask("How many people climb the windmill every year?", k=2).to_dict()
    assert set(record) == {
        "question",
        "language",
        "answer",
        "abstained",
        "confidence",
        "citations",
        "latency_ms",
        "highlight",
        "short_answer",
        "answer_span",
        "short_answer_span",
    }
    assert len(record["citations"]) == 2
    if record["short_answer"] is not None:  # the short answer is the highlighted phrase of the sentence
        h = record["highlight"]
        assert record["answer"][h["start"] : h["end"]] == record["short_answer"]


def test_short_answer_is_the_fact_the_question_asks_for(engine: Engine):
    answer = engine.ask("¿Cuánto cuesta la entrada al museo del faro?")
    assert answer.short_answer == "6 euros" and answer.short_answer in answer.answer
    assert engine.ask("¿Por qué se construyó el faro de Punta Brava?").short_answer is None


def test_follow_up_uses_history_only_when_needed(engine: Engine):
    assert engine.pipeline.retrieval_query("¿Y cuánto cuesta la entrada?", ["¿Qué es hoy el faro?"]).startswith(
        "¿Qué es"
    )
    assert (
        engine.pipeline.retrieval_query("When was the windmill built?", ["Who was João Pereira?"])
        == "When was the windmill built?"
    )
    assert engine.pipeline.retrieval_query("When was the windmill built?", []) == "When was the windmill built?"


def test_follow_up_detection():
    assert is_follow_up("¿Y cuántos chips usó?", 3)
    assert is_follow_up("E quanto custa?", 2)
    assert is_follow_up("And its height?", 1)
    assert not is_follow_up("How tall is the lighthouse of Punta Brava?", 4)


@pytest.mark.parametrize("bad", ["", "   \n\t ", "\x00\x01", None, 42, "x" * 5000])
def test_bad_questions_raise_question_error(engine: Engine, bad):
    with pytest.raises(QuestionError):
        engine.ask(bad)


def test_clean_question_strips_controls_and_surrogates():
    assert clean_question("  hola\x00 mundo\ud800 ") == "hola mundo"


def test_k_limits_citations(engine: Engine):
    assert len(engine.ask("faro", k=1).citations) == 1
    with pytest.raises(QuestionError):
        engine.ask("faro", k=0)


def test_a_likely_same_language_span_wins_over_a_likelier_foreign_one():
    import numpy as np

    probs = np.array([0.95, 0.6, 0.3])
    scores = np.log(probs / (1 - probs))
    langs = ["pt", "es", "en"]

    def chosen(floor: float, prefer: str) -> int | None:
        return choose_span(scores, probs, langs, prefer, margin=0.05, floor=floor)

    assert chosen(0.5, "es") == 1  # 0.6 >= floor: the question's language answers
    assert chosen(0.7, "es") == 0  # below the floor and far below the best: the foreign span
    assert chosen(0.5, "en") == 0  # 0.3: the English span does not answer
    assert chosen(0.5, "pt") == 0
    assert choose_span(np.zeros(0), np.zeros(0), [], "es", 0.05, 0.5) is None
