"""The answer pipeline as a value: a trace holds every step, and the answer record follows from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.answer.features import FEATURES
from citeqa.engine import Engine


@pytest.fixture
def engine(built_index: Path, embedder) -> Engine:
    return Engine.open(built_index, embedder=embedder)


def test_trace_holds_every_step_and_its_answer_is_ask(engine: Engine):
    trace = engine.trace("¿En qué año se construyó el faro de Punta Brava?", k=3)
    assert trace.language == "es" and trace.prefer == "es" and trace.query == trace.question
    assert trace.hits and all(h.score >= 0 for h in trace.hits)
    assert trace.features.shape == (len(trace.spans), len(FEATURES))
    span = trace.chosen_span
    assert span is not None and set(span.features) == set(FEATURES)
    assert list(span.features.values()) == pytest.approx(list(trace.features[trace.chosen]))
    assert trace.answer.answer == span.candidate.text and trace.confidence == trace.answer.confidence
    assert {"language", "query", "encode", "dense", "lexical", "fusion", "candidates", "choose", "total"} <= set(
        trace.timings_ms
    )
    record = engine.ask("¿En qué año se construyó el faro de Punta Brava?", k=3).to_dict()
    record.pop("latency_ms")
    expected = trace.answer.to_dict()
    expected.pop("latency_ms")
    assert record == expected


def test_follow_up_trace_shows_the_borrowed_query(engine: Engine):
    trace = engine.trace("¿Y cuánto cuesta la entrada?", history=["¿Qué es hoy el faro de Punta Brava?"])
    assert trace.query.startswith("¿Qué es hoy el faro") and trace.history == ("¿Qué es hoy el faro de Punta Brava?",)


def test_language_any_removes_the_preference(engine: Engine):
    assert engine.trace("faro", language="any").prefer is None
    assert engine.trace("faro", language="pt").prefer == "pt"


def test_a_reader_span_cut_inside_a_word_is_widened_to_the_whole_word():
    from citeqa.answer.pipeline import whole_words

    text = "près de 60 tonnes de peinture"
    assert whole_words(text, 8, 15) == (8, 17)  # "60 tonn" -> "60 tonnes"
    assert whole_words(text, 9, 17) == (8, 17)  # "0 tonnes" -> "60 tonnes"
    assert whole_words(text, 8, 17) == (8, 17) and whole_words(text, 0, len(text)) == (0, len(text))
