"""Reading less ([4/7] item 1): the cascade (the best passages first, the rest only when unsure),
windows around the best-ranked sentences instead of whole passages, and the tokens read in the trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.engine import Engine
from citeqa.qa.reading import focus_windows, widened
from citeqa.qa.spans import Candidate
from citeqa.records import Chunk, Highlight, Span

QUESTION = "¿Cuánto mide el faro de Punta Brava?"


class CountingReader:
    """Reads a span at the start of every passage it is given, as likely as ``sure(call)`` says
    against "no answer" (its no-answer score is 0), and asks for a turn of one token per character."""

    def __init__(self, scores: list[float]) -> None:
        self.scores = scores  #: the span score of each call's passages, call by call
        self.calls: list[list[Chunk]] = []

    def warm_up(self) -> None:
        pass

    def run(self, question: str, passages, top: int = 10, max_windows=None, turn=None):
        from citeqa.reader.decode import SpanScore
        from citeqa.reader.reader import Reading, placed

        score = self.scores[min(len(self.calls), len(self.scores) - 1)]
        self.calls.append(list(passages))
        if turn is not None:
            with turn(sum(len(p.text) for p in passages)):
                pass
        found = [SpanScore(i, 0, min(5, len(p.text)), score - i, 0.0) for i, p in enumerate(passages) if p.text]
        return placed(question, Reading(tuple(found[:top]), tuple(0.0 for _ in passages)), passages)


@pytest.fixture
def engine(built_index: Path, embedder) -> Engine:
    return Engine.open(built_index, embedder=embedder)


def reading(engine: Engine, reader: CountingReader, **settings) -> Engine:
    return engine.adjusted(engine.settings.with_overrides(settings), reader)


def test_by_default_every_reader_passage_is_read_whole_at_once_and_its_tokens_counted(engine: Engine):
    reader = CountingReader([5.0])
    trace = reading(engine, reader).trace(QUESTION, k=3)
    assert len(reader.calls) == 1
    read = reader.calls[0]
    assert 1 < len(read) <= engine.settings.reader_passages
    assert all(c in [h.chunk for h in trace.hits] for c in read)  # whole passages
    assert trace.read_tokens == sum(len(c.text) for c in read)
    assert engine.trace(QUESTION, k=3).read_tokens == 0  # no reader, nothing read


def test_a_sure_first_reading_reads_no_further(engine: Engine):
    reader = CountingReader([5.0, 5.0])  # probability 0.993 against no answer
    trace = reading(engine, reader, reader_first=1, reader_sure=0.9).trace(QUESTION, k=3)
    assert len(reader.calls) == 1 and len(reader.calls[0]) == 1
    assert reader.calls[0][0] == trace.hits[0].chunk  # the best-ranked passage
    assert trace.read_tokens == len(trace.hits[0].chunk.text)
    assert {a.passage for a in trace.read} == {0}


def test_an_unsure_first_reading_reads_the_rest_and_keeps_the_best_spans_of_both(engine: Engine):
    whole = CountingReader([1.0])
    everything = reading(engine, whole).trace(QUESTION, k=3)
    reader = CountingReader([1.0, 3.0])  # 0.73 < 0.9: the rest is read, and its spans score higher
    trace = reading(engine, reader, reader_first=1, reader_sure=0.9).trace(QUESTION, k=3)
    assert len(reader.calls) == 2 and len(reader.calls[0]) == 1
    assert reader.calls[0] + reader.calls[1] == whole.calls[0]  # the same passages in all
    assert trace.read_tokens == everything.read_tokens
    scores = [a.score for a in trace.read]
    assert scores == sorted(scores, reverse=True) and trace.read[0].passage != 0
    assert {a.passage for a in trace.read} == {a.passage for a in everything.read}


def test_reading_first_as_many_passages_as_are_read_is_no_cascade(engine: Engine):
    reader = CountingReader([1.0])
    reading(engine, reader, reader_first=engine.settings.reader_passages, reader_sure=0.99).trace(QUESTION, k=3)
    assert len(reader.calls) == 1


def test_focus_reads_windows_of_the_passages_not_the_passages(engine: Engine):
    whole = CountingReader([5.0])
    everything = reading(engine, whole).trace(QUESTION, k=3)
    reader = CountingReader([5.0])
    trace = reading(engine, reader, reader_focus=1, reader_context=2).trace(QUESTION, k=3)
    (windows,) = reader.calls
    assert len(windows) == 1 and 0 < trace.read_tokens < everything.read_tokens
    window = windows[0]
    text = engine.doc_text(window.doc_id)
    assert text[window.start : window.end] == window.text  # a slice of its document
    assert any(window.doc_id == c.doc_id and c.start <= window.start and window.end <= c.end for c in whole.calls[0])
    hit = trace.read[0].passage  # numbered by the hit it lies in, in document offsets
    chunk = trace.hits[hit].chunk
    assert chunk.start <= trace.read[0].span.start and trace.read[0].span.end <= chunk.end


def chunk(text: str, start: int = 100) -> Chunk:
    return Chunk.make("doc", start, start + len(text), text, "en")


def candidate(c: Chunk, hit: int, a: int, b: int) -> Candidate:
    return Candidate(hit, Span(c.doc_id, c.start + a, c.start + b), c.text[a:b], c.lang)


def _shown(text: str, at: Highlight) -> str:
    return text[at.start : at.end]


def test_a_window_is_its_sentence_and_so_many_whole_words_either_side():
    text = "one two three. Four five six. Seven eight nine."
    a, b = text.index("Four"), text.index("six.") + 4
    assert _shown(text, widened(text, a, b, 2)) == "two three. Four five six. Seven eight"
    assert _shown(text, widened(text, a, b, 0)) == "Four five six."
    assert widened(text, a, b, 50) == Highlight(0, len(text))
    assert _shown(text, widened(text, a + 1, b - 2, 0)) == "Four five six"  # whole words


def test_focus_windows_take_the_best_ranked_sentences_of_the_passages_read_and_merge_what_touches():
    first = chunk("Alpha beta. Gamma delta. Epsilon zeta. Eta theta.")
    second = chunk("Iota kappa. Lambda mu.", start=1000)
    cands = [
        candidate(first, 0, 0, 11),  # "Alpha beta."
        candidate(first, 0, 12, 24),  # "Gamma delta."
        candidate(first, 0, 39, 49),  # "Eta theta."
        candidate(second, 1, 0, 11),  # "Iota kappa."
        candidate(second, 2, 0, 11),  # a passage not read
    ]
    ranks = [3.0, 2.0, 4.0, 1.0, 9.0]
    got = focus_windows(cands, ranks, {0: first, 1: second}, focus=2, context=0)
    assert [(hit, c.text) for hit, c in got] == [(0, "Alpha beta."), (0, "Eta theta.")]
    assert got[0][1].start == 100 and got[1][1].start == 139 and got[1][1].doc_id == "doc"
    merged = focus_windows(cands, ranks, {0: first, 1: second}, focus=3, context=1)
    assert [(hit, c.text) for hit, c in merged] == [(0, "Alpha beta. Gamma delta. Epsilon"), (0, "zeta. Eta theta.")]
    touching = focus_windows(cands, ranks, {0: first, 1: second}, focus=3, context=2)
    assert [(hit, c.text) for hit, c in touching] == [(0, first.text)]
    assert focus_windows(cands, ranks, {0: first, 1: second}, focus=0, context=5) == []


def test_the_reading_settings_are_named_settings(engine: Engine):
    s = engine.settings.with_overrides({"reader_first": 2, "reader_sure": 1, "reader_focus": 3, "reader_context": 20})
    assert (s.reader_first, s.reader_sure, s.reader_focus, s.reader_context) == (2, 1.0, 3, 20)
    assert (engine.settings.reader_first, engine.settings.reader_focus) == (0, 0)  # today's reading by default


def test_the_focus_sentences_are_ranked_by_the_focus_ranker(engine: Engine):
    from dataclasses import replace

    flipped = replace(engine.settings.scoring, weights={k: -v for k, v in engine.settings.scoring.weights.items()})
    plain, other = CountingReader([5.0]), CountingReader([5.0])
    reading(engine, plain, reader_focus=1, reader_context=0).trace(QUESTION, k=3)
    settings = replace(engine.settings.with_overrides(reader_focus=1, reader_context=0), focus_ranker=flipped)
    engine.adjusted(settings, other).trace(QUESTION, k=3)
    assert plain.calls[0][0].text != other.calls[0][0].text


def test_with_the_reader_the_focus_is_ranked_by_the_scorer_fitted_without_it():
    from citeqa.qa.settings import AnswerSettings

    e5 = "multilingual-e5-small"
    assert AnswerSettings.for_model(e5, reader=True).focus_ranker == AnswerSettings.for_model(e5).scoring
    assert AnswerSettings.for_model(e5).focus_ranker is None  # the scorer itself then
