"""The answer pipeline as a value: a trace holds every step, and the answer record follows from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.engine import Engine
from citeqa.qa.features import FEATURES


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
    from citeqa.qa.spans import whole_words
    from citeqa.records import Highlight

    text = "près de 60 tonnes de peinture"
    assert whole_words(text, 8, 15) == Highlight(8, 17)  # "60 tonn" -> "60 tonnes"
    assert whole_words(text, 9, 17) == Highlight(8, 17)  # "0 tonnes" -> "60 tonnes"
    assert whole_words(text, 8, 17) == Highlight(8, 17) and whole_words(text, 0, len(text)) == Highlight(0, len(text))


def test_a_sentence_said_twice_is_placed_at_the_copy_that_was_chosen(tmp_path: Path, embedder):
    from citeqa.index.builder import update_index

    said = "Its height is 32 metres."
    text = f"Notes\n\n{said}\n\nThe Greyhill lighthouse was restored in 2004. {said}\n"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "twice.txt").write_text(text, encoding="utf-8")
    update_index(corpus, tmp_path / "index", embedder)
    engine = Engine.open(tmp_path / "index", embedder=embedder)
    trace = engine.trace("What is the height of the Greyhill lighthouse?")
    answer, chosen = trace.answer, trace.chosen_span
    assert answer.answer == said and chosen is not None
    second = text.rindex(said)
    assert (answer.answer_span.start, answer.answer_span.end) == (chosen.candidate.start, chosen.candidate.end)
    assert answer.answer_span.start == second != text.index(said)  # the copy read in its context, not the first
    assert text[answer.answer_span.start : answer.answer_span.end] == said
    short = answer.short_answer_span
    assert answer.short_answer == "32 metres" and text[short.start : short.end] == "32 metres" and short.start > second


class PhraseReader:
    """A reader that finds ``phrase`` wherever it is in the passages, scored by passage order."""

    def __init__(self, phrase: str) -> None:
        self.phrase = phrase

    def warm_up(self) -> None:
        pass

    def run(self, question: str, passages, top: int = 10, max_windows=None, turn=None):
        from citeqa.reader.decode import SpanScore
        from citeqa.reader.reader import Reading, placed

        texts = [p.text for p in passages]
        found = [
            SpanScore(i, p.index(self.phrase), p.index(self.phrase) + len(self.phrase) - 2, 10.0 - i, 0.0)
            for i, p in enumerate(texts)
            if self.phrase in p
        ]
        return placed(question, Reading(tuple(found[:top]), tuple(0.0 for _ in texts)), passages)


def test_with_the_readers_spans_as_candidates_the_answer_holds_the_chosen_span(engine: Engine):
    """Item 3 of [2/7]: the candidates are the reader's spans; the answer is the sentence that holds the
    chosen one and the short answer is that span, widened to whole words, in document offsets."""
    from dataclasses import replace

    never_abstains = replace(engine.settings.scoring, abstain_below=0.0)
    settings = engine.settings.with_overrides(candidates="reader", scoring=never_abstains)
    reading = engine.adjusted(settings, PhraseReader("42 metros"))
    trace = reading.trace("¿Cuánto mide el faro de Punta Brava?", k=3)
    assert trace.spans and all(s.read is not None for s in trace.spans)
    assert all(s.candidate.start <= s.read.span.start and s.read.span.end <= s.candidate.end for s in trace.spans)
    answer = trace.answer
    assert not answer.abstained and answer.short_answer == "42 metros" and "42 metros" in answer.answer
    text = reading.doc_text(answer.short_answer_span.doc_id)
    assert text[answer.short_answer_span.start : answer.short_answer_span.end] == "42 metros"
    assert text[answer.answer_span.start : answer.answer_span.end] == answer.answer
    sentences = engine.trace("¿Cuánto mide el faro de Punta Brava?", k=3)
    assert len(trace.spans) < len(sentences.spans)  # not every sentence
