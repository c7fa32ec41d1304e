"""The reader's step of the pipeline (citeqa.qa.reading): spans as candidates, short answers."""

from __future__ import annotations

import numpy as np

from citeqa.qa.features import FEATURES, READER_FEATURES
from citeqa.qa.reading import span_candidates, span_short, trimmed_words
from citeqa.qa.spans import candidates_from
from citeqa.reader.reader import ReadAnswer
from citeqa.records import Chunk, Span

PASSAGE = "The pier of Alvor was rebuilt in 1977. It is 60 tonnes heavy. The mill stopped in 1961."
OFFSET = 100  # the passage starts at character 100 of its document
DOC = " " * OFFSET + PASSAGE
CHUNKS = {0: Chunk.make("alvor.txt", OFFSET, len(DOC), PASSAGE, "en")}


def _at(phrase: str) -> tuple[int, int]:
    start = DOC.index(phrase)
    return start, start + len(phrase)


def _span(phrase: str) -> Span:
    return Span("alvor.txt", *_at(phrase))


def _read(span: Span, score: float, passage: int = 0) -> ReadAnswer:
    return ReadAnswer(span, passage, score, 0.5)


def _spans(*phrases_scores: tuple[str, float]) -> list[ReadAnswer]:
    return [_read(_span(p), score) for p, score in phrases_scores]


def test_each_span_becomes_a_candidate_with_the_sentence_that_holds_it():
    cands = candidates_from([(0, CHUNKS[0])])
    feats = np.arange(len(cands) * len(FEATURES), dtype=float).reshape(len(cands), len(FEATURES))
    spans = _spans(("1961", 9.0), ("60 tonn", 7.5), ("1977", 4.0))
    out, rows, kept = span_candidates(cands, feats, spans, {0: 2.0}, CHUNKS)
    assert [c.text for c in out] == [
        "The mill stopped in 1961.",
        "It is 60 tonnes heavy.",
        "The pier of Alvor was rebuilt in 1977.",
    ]
    assert all(DOC[c.start : c.end] == c.text for c in out)  # document offsets, unchanged frame
    assert kept == spans
    n = len(READER_FEATURES)
    assert rows[:, :-n].tolist() == [feats[2, :-n].tolist(), feats[1, :-n].tolist(), feats[0, :-n].tolist()]
    assert rows[:, -n:].tolist() == [[0.0, 1.0, -7.0, 9.0], [-1.5, 0.0, -7.0, 7.5], [-5.0, 0.0, -7.0, 4.0]]


def test_a_span_across_two_sentences_gets_both_and_spans_outside_are_dropped():
    cands = candidates_from([(0, CHUNKS[0])])
    feats = np.zeros((len(cands), len(FEATURES)))
    crossing = _read(_span("1977. It is 60"), 3.0)
    elsewhere = _read(Span("other.txt", 0, 4), 2.0, passage=5)  # a hit whose sentences are not candidates
    out, rows, kept = span_candidates(cands, feats, [crossing, elsewhere], {}, CHUNKS)
    assert [c.text for c in out] == ["The pier of Alvor was rebuilt in 1977. It is 60 tonnes heavy."]
    assert DOC[out[0].start : out[0].end] == out[0].text and kept == [crossing] and rows.shape == (1, len(FEATURES))


def test_the_short_answer_is_the_span_in_whole_words_without_stops():
    cand = candidates_from([(0, CHUNKS[0])])[1]
    short = span_short(cand, _span("60 tonn"))
    assert short is not None and short.doc_id == cand.span.doc_id and DOC[short.start : short.end] == "60 tonnes"
    at = cand.offsets(short)
    assert cand.text[at.start : at.end] == "60 tonnes" and cand.place(at) == short
    short = span_short(cand, _span("heavy."))
    assert short is not None and DOC[short.start : short.end] == "heavy"
    assert span_short(cand, _span(". ")) is None


def test_a_read_span_is_widened_to_whole_words_then_trimmed_of_stops():
    text = "It weighs «60 tonnes». Done"
    a, b = trimmed_words(text, text.index("«"), text.index("tonnes") + 4)  # "«60 tonn"
    assert text[a:b] == "60 tonnes"
    assert trimmed_words(text, text.index("»"), text.index("»") + 2) == (text.index(" Done"), text.index(" Done"))
