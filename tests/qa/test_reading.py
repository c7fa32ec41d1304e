"""The reader's step of the pipeline (citeqa.qa.reading): spans as candidates, short answers."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import numpy as np
import pytest

from citeqa.qa.features import FEATURES, READER_FEATURES, SPAN_FEATURES
from citeqa.qa.reading import (
    NO_SPAN_GAP,
    NULL_CLIP,
    SCORE_CLIP,
    focus_windows,
    read_passages,
    reader_features,
    reader_short,
    span_candidates,
)
from citeqa.qa.retrieval import RetrievalSettings
from citeqa.qa.scoring import ScoringModel
from citeqa.qa.settings import AnswerSettings
from citeqa.qa.spans import Candidate, candidates_from, span_short, trimmed_span, trimmed_words, whole_words
from citeqa.reader.reader import ReadAnswer, ReaderResult
from citeqa.records import Chunk, Highlight, Hit, Span

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


def _shown(text: str, at: Highlight) -> str:
    return text[at.start : at.end]


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
    assert _shown(text, trimmed_words(text, text.index("«"), text.index("tonnes") + 4)) == "60 tonnes"  # "«60 tonn"
    assert trimmed_words(text, text.index("»"), text.index("»") + 2) == Highlight(
        text.index(" Done"), text.index(" Done")
    )


# --- reader_features: the reader's columns of each candidate sentence -------------------------------------------

GAP, BEST, NULL, SCORE = range(len(READER_FEATURES))


def test_reader_columns_are_named_in_this_order():
    assert READER_FEATURES == ("reader_gap", "reader_best", "reader_null", "reader_score")


def test_without_any_span_every_candidate_gets_the_no_span_defaults():
    cands = candidates_from([(0, CHUNKS[0])])
    rows = reader_features(cands, [], {0: 3.0})
    assert rows.shape == (3, len(READER_FEATURES))
    assert rows.tolist() == [[NO_SPAN_GAP, 0.0, 0.0, -SCORE_CLIP]] * 3


def test_each_candidate_gets_its_best_span_inside_relative_to_the_best_read_anywhere():
    cands = candidates_from([(0, CHUNKS[0])])  # the pier (1977), 60 tonnes, the mill (1961)
    spans = _spans(("1961", 9.0), ("tonnes heavy", 8.0), ("60 tonn", 7.5))  # best first
    rows = reader_features(cands, spans, {0: 2.0})
    assert rows.shape == (3, len(READER_FEATURES))
    assert rows[:, GAP].tolist() == [NO_SPAN_GAP, -1.0, 0.0]  # the pier holds no span; 60 tonnes: its best, 8.0
    assert rows[:, BEST].tolist() == [0.0, 0.0, 1.0]  # only the mill holds the best span
    assert rows[:, NULL].tolist() == [-7.0, -7.0, -7.0]  # the passage's no-answer score minus the best span's
    assert rows[:, SCORE].tolist() == [-SCORE_CLIP, 8.0, 9.0]


def test_a_span_counts_only_inside_one_candidate_of_its_own_hit():
    cands = candidates_from([(0, CHUNKS[0])])
    crossing = _read(_span("1977. It is"), 6.0)  # across the border of two sentences: inside neither
    other_hit = _read(_span("60 tonn"), 5.0, passage=1)  # the same offsets, read in another hit
    rows = reader_features(cands, [crossing, other_hit], {})
    assert rows[:, GAP].tolist() == [NO_SPAN_GAP] * 3
    assert rows[:, BEST].tolist() == [0.0] * 3  # the best span lies in no candidate: none is marked
    assert rows[:, SCORE].tolist() == [-SCORE_CLIP] * 3


SECOND = "The tower of Sagres is 32 metres tall. It was built in 1793."
SECOND_CHUNK = Chunk.make("sagres.txt", 0, len(SECOND), SECOND, "en")


def test_the_null_margin_is_each_candidate_hit_own_and_0_for_a_hit_not_read():
    cands = candidates_from([(0, CHUNKS[0]), (1, SECOND_CHUNK), (2, SECOND_CHUNK)])
    rows = reader_features(cands, _spans(("1977", 4.0)), {0: 1.0, 1: 10.0})
    by_hit = {c.hit_index: rows[i, NULL] for i, c in enumerate(cands)}
    assert by_hit == {0: -3.0, 1: 6.0, 2: 0.0}  # hit 2 has no no-answer score: its margin is 0


def test_the_null_margin_and_the_span_score_are_clipped():
    cands = candidates_from([(0, CHUNKS[0]), (1, SECOND_CHUNK)])
    high = reader_features(cands, _spans(("1977", 45.0)), {0: 100.0, 1: -100.0})
    assert high[0, SCORE] == SCORE_CLIP and high[0, GAP] == 0.0  # the gap is not clipped
    assert (
        high[0, NULL] == NULL_CLIP
        and [high[i, NULL] for i, c in enumerate(cands) if c.hit_index == 1] == [-NULL_CLIP] * 2
    )
    low = reader_features(cands, _spans(("1977", -50.0), ("1961", -70.0)), {0: -60.0})
    assert low[0, SCORE] == -SCORE_CLIP and low[2, SCORE] == -SCORE_CLIP
    assert low[2, GAP] == -20.0  # -70 - -50: the gap itself stays as read
    assert low[0, NULL] == -10.0  # inside the bounds: as it is


# --- span_candidates -----------------------------------------------------------------------------------------


def test_no_span_no_candidate():
    cands = candidates_from([(0, CHUNKS[0])])
    out, rows, kept = span_candidates(cands, np.ones((len(cands), len(FEATURES))), [], {0: 1.0}, CHUNKS)
    assert out == [] and kept == [] and rows.shape == (0, len(FEATURES))


def test_two_spans_of_one_sentence_are_two_candidates_with_their_own_reader_columns():
    cands = candidates_from([(0, CHUNKS[0])])
    feats = np.zeros((len(cands), len(FEATURES)))
    spans = _spans(("60 tonnes", 6.0), ("heavy", 50.0 - 46.0))
    out, rows, kept = span_candidates(cands, feats, spans, {0: 30.0}, CHUNKS)
    assert [c.text for c in out] == ["It is 60 tonnes heavy."] * 2 and kept == spans
    n = len(READER_FEATURES)
    assert rows[:, -n:].tolist() == [[0.0, 1.0, NULL_CLIP, 6.0], [-2.0, 0.0, NULL_CLIP, 4.0]]


# --- short answers: whole words, no stops, in document offsets --------------------------------------------------


def test_the_reader_short_answer_is_the_best_span_inside_the_candidate_not_the_best_anywhere():
    cands = candidates_from([(0, CHUNKS[0])])
    read = _spans(("1961", 9.0), ("60 tonn", 7.5), ("60", 7.0))
    short = reader_short(cands[1], read)
    assert short is not None and DOC[short.start : short.end] == "60 tonnes"
    mill = reader_short(cands[2], read)
    assert mill is not None and DOC[mill.start : mill.end] == "1961"
    assert reader_short(cands[0], read) is None  # no span inside the pier's sentence


def test_a_span_of_nothing_but_stops_and_spaces_is_no_short_answer():
    cand = candidates_from([(0, CHUNKS[0])])[0]
    assert reader_short(cand, [_read(_span("1977."), 3.0)]) is not None
    dot = DOC.index("1977.") + 4
    assert reader_short(cand, [_read(Span("alvor.txt", dot, dot + 1), 3.0)]) is None


def test_every_span_inside_a_candidate_gives_a_substring_of_it_in_whole_words_without_stops():
    text = "El faro «Punta Brava», de 42 metros, ¿se ve?"
    doc = "x" * 37 + text  # the sentence starts at character 37 of its document
    cand = Candidate(0, Span("faro.txt", 37, len(doc)), text, "es")
    stops = " .,;:!?¿¡«»"
    for a in range(cand.start, cand.end):
        for b in range(a + 1, cand.end + 1):
            short = span_short(cand, Span("faro.txt", a, b))
            if short is None:
                assert not any(ch.isalnum() for ch in doc[a:b])  # nothing but spaces and stops was read
                continue
            shown = doc[short.start : short.end]
            assert short.doc_id == "faro.txt" and cand.start <= short.start < short.end <= cand.end
            at = cand.offsets(short)
            assert cand.text[at.start : at.end] == shown
            assert shown[0] not in stops and shown[-1] not in stops
            assert at.start == 0 or not (text[at.start - 1].isalnum() and text[at.start].isalnum())  # no word cut
            assert at.end == len(text) or not (text[at.end - 1].isalnum() and text[at.end].isalnum())
            assert all(short.start <= i < short.end for i in range(a, b) if doc[i].isalnum())  # nothing read is lost
    brava = span_short(cand, Span("faro.txt", 37 + text.index("unta"), 37 + text.index("ava»") + 2))
    assert brava is not None and doc[brava.start : brava.end] == "Punta Brava"


def test_trimmed_span_works_in_the_frame_of_the_text_it_is_given():
    passage = CHUNKS[0]
    span = _span("onnes heavy. The")  # read inside the passage, across two of its sentences
    short = trimmed_span(span, passage.span, passage.text)
    assert DOC[short.start : short.end] == "tonnes heavy. The" and short.doc_id == "alvor.txt"
    beyond = Span("alvor.txt", DOC.index("1961"), len(DOC) + 9)  # past the text's end: cut at it
    short = trimmed_span(beyond, passage.span, passage.text)
    assert DOC[short.start : short.end] == "1961" and short.end <= passage.end


def test_whole_words_widens_over_letters_and_digits_in_any_script_only():
    text = "Exportações de França: 1.200 t, well-known"
    a = text.index("ranç")
    assert _shown(text, whole_words(text, a, a + 2)) == "França"
    a = text.index("xport")
    assert _shown(text, whole_words(text, a, a + 3)) == "Exportações"
    a = text.index("200")
    assert _shown(text, whole_words(text, a, a + 1)) == "200"  # the point is no letter or digit: kept as a border
    a = text.index("known")
    assert _shown(text, whole_words(text, a, a + 2)) == "known"
    assert whole_words(text, 0, len(text)) == Highlight(0, len(text))
    assert whole_words(text, 3, 3) == Highlight(0, len("Exportações"))  # a point inside a word takes the word


# --- focus_windows: what the reader reads instead of whole passages ----------------------------------------------

LONG = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota. Kappa lambda mu. Nu xi omicron."
LONG_CHUNK = Chunk.make("greek.txt", 500, 500 + len(LONG), LONG, "en")


def _mid_word(chunk: Chunk, hit: int, phrase: str) -> Candidate:
    """A candidate of ``phrase`` without its first letter (its start inside a word)."""
    a = chunk.text.index(phrase) + 1
    b = a + len(phrase) - 1
    return Candidate(hit, Span(chunk.doc_id, chunk.start + a, chunk.start + b), chunk.text[a:b], chunk.lang)


def test_focus_windows_are_slices_of_their_passage_in_document_offsets_never_cutting_a_word():
    cands = [_mid_word(LONG_CHUNK, 0, "Eta theta iota."), _mid_word(SECOND_CHUNK, 1, "32 metres")]
    for context in (0, 1, 3, 100):
        got = focus_windows(cands, [1.0, 2.0], {0: LONG_CHUNK, 1: SECOND_CHUNK}, focus=2, context=context)
        assert [hit for hit, _ in got] == [0, 1]  # in passage order, whatever the ranks
        for hit, window in got:
            passage = LONG_CHUNK if hit == 0 else SECOND_CHUNK
            a, b = window.start - passage.start, window.end - passage.start
            assert 0 <= a < b <= len(passage.text)  # within the passage
            assert window.text == passage.text[a:b] and window.doc_id == passage.doc_id
            assert window.lang == passage.lang
            assert a == 0 or not passage.text[a - 1].isalnum()  # never a word cut in two
            assert b == len(passage.text) or not passage.text[b].isalnum()
    assert [w.text for _, w in focus_windows(cands, [1.0, 2.0], {0: LONG_CHUNK}, focus=2, context=0)] == [
        "Eta theta iota."
    ]  # a candidate of a passage not read is no focus
    got = focus_windows(cands, [1.0, 2.0], {0: LONG_CHUNK, 1: SECOND_CHUNK}, focus=2, context=1)
    assert [w.text for _, w in got] == ["zeta. Eta theta iota. Kappa", "is 32 metres tall."]
    whole = focus_windows(cands, [1.0, 2.0], {0: LONG_CHUNK, 1: SECOND_CHUNK}, focus=2, context=100)
    assert [w.text for _, w in whole] == [LONG, SECOND]  # no further than the passage's ends


def test_overlapping_focus_windows_of_a_passage_merge_into_one_in_document_order():
    cands = candidates_from([(0, LONG_CHUNK)])
    ranks = [5.0, 0.0, 0.0, 0.0, 4.0]  # the first and the last sentences
    apart = focus_windows(cands, ranks, {0: LONG_CHUNK}, focus=2, context=1)
    assert [w.text for _, w in apart] == ["Alpha beta gamma. Delta", "mu. Nu xi omicron."]
    assert apart[0][1].start < apart[1][1].start
    ranks = [0.0, 4.0, 0.0, 5.0, 0.0]  # the second and the fourth, one sentence between them
    merged = focus_windows(cands, ranks, {0: LONG_CHUNK}, focus=2, context=2)
    assert [w.text for _, w in merged] == ["beta gamma. Delta epsilon zeta. Eta theta iota. Kappa lambda mu. Nu xi"]
    assert merged[0][1].start == LONG_CHUNK.start + LONG.index("beta") and merged[0][
        1
    ].end == LONG_CHUNK.start + LONG.index(" omicron")


# --- read_passages: what the reader reads, the cascade and the tokens counted --------------------------------------

TEXTS = [
    "Punta Brava lighthouse stands 42 metres high.",
    "The lighthouse was lit in 1902.",
    "Its lamp was electrified in 1951 by the port.",
    "The keepers left the island in 1989.",
    "A museum opened there in 2004.",
]
HITS = [Hit(Chunk.make(f"doc{i}.txt", 10 * i, 10 * i + len(t), t, "en"), 1.0 - i / 10) for i, t in enumerate(TEXTS)]


class ScriptedReader:
    """Reads a span at the first word of each passage it is given, scored ``scores[call] - i`` for the
    ``i``-th passage (no span at all where that score is None), against a no-answer score ``null``;
    asks for a turn of one token per character read."""

    def __init__(self, scores: Sequence[float | None], null: float = 0.0) -> None:
        self.scores, self.null = list(scores), null
        self.calls: list[list[Chunk]] = []
        self.windows: list[int | None] = []

    def warm_up(self) -> None:
        pass

    def run(self, question: str, passages: Sequence[Chunk], top: int = 10, max_windows=None, turn=None) -> ReaderResult:
        from citeqa.reader.decode import SpanScore
        from citeqa.reader.reader import Reading, placed

        score = self.scores[min(len(self.calls), len(self.scores) - 1)]
        self.calls.append(list(passages))
        self.windows.append(max_windows)
        if turn is not None:
            with turn(sum(len(p.text) for p in passages)):
                pass
        found = (
            []
            if score is None
            else [SpanScore(i, 0, p.text.index(" "), score - i, self.null) for i, p in enumerate(passages)]
        )
        nulls = tuple(self.null + i for i in range(len(passages)))
        return placed(question, Reading(tuple(found[:top]), nulls), passages)


class Tally:
    """A ticket that admits every call at once and keeps the cost of each."""

    def __init__(self) -> None:
        self.costs: list[int] = []

    def turn(self, cost: int) -> contextlib.AbstractContextManager[None]:
        self.costs.append(cost)
        return contextlib.nullcontext()


def _settings(**overrides: object) -> AnswerSettings:
    scoring = ScoringModel({f: float(f == "dense") for f in FEATURES}, 0.0, {}, 0.0, 0.5)
    return AnswerSettings(RetrievalSettings(0.5, 0.5), scoring).with_overrides(overrides)


def _run(reader: ScriptedReader, pool: Sequence[int] = (0, 1, 2, 3, 4), **settings: object):
    tally = Tally()
    read, null, spent = read_passages(reader, _settings(**settings), "How high?", HITS, pool, tally)  # type: ignore[arg-type]
    assert spent == sum(tally.costs)  # every token the ticket was asked for is counted, and only those
    return read, null, spent


def test_the_best_reader_passages_of_the_pool_are_read_at_once_and_numbered_by_hit():
    reader = ScriptedReader([5.0])
    read, null, spent = _run(reader, pool=[4, 2, 0, 3], reader_passages=3)
    assert reader.calls == [[HITS[0].chunk, HITS[2].chunk, HITS[3].chunk]]  # the pool's first 3, whole
    assert reader.windows == [8]  # the bounds' windows
    assert [a.passage for a in read] == [0, 2, 3]  # by hit index, not by place among those read
    assert [
        TEXTS[a.passage][a.span.start - HITS[a.passage].chunk.start : a.span.end - HITS[a.passage].chunk.start]
        for a in read
    ] == [
        "Punta",
        "Its",
        "The",
    ]  # document offsets
    assert null == {0: 0.0, 2: 1.0, 3: 2.0}
    assert spent == len(TEXTS[0]) + len(TEXTS[2]) + len(TEXTS[3])


def test_nothing_to_read_reads_nothing():
    reader = ScriptedReader([5.0])
    assert _run(reader, pool=[]) == ((), {}, 0) and reader.calls == []


def test_a_sure_first_reading_reads_no_further():
    reader = ScriptedReader([5.0])  # 0.993 against no answer
    read, null, spent = _run(reader, reader_passages=3, reader_first=1, reader_sure=0.9)
    assert reader.calls == [[HITS[0].chunk]] and set(null) == {0} and {a.passage for a in read} == {0}
    assert spent == len(TEXTS[0])
    assert reader.windows == [3]  # its share of the 8 windows: 1 passage of 3, rounded up


def test_an_unsure_first_reading_reads_the_rest_and_keeps_the_best_spans_of_both():
    reader = ScriptedReader([1.0, 3.0])  # 0.73 < 0.9
    read, null, spent = _run(reader, reader_passages=3, reader_first=1, reader_sure=0.9, reader_spans=2)
    assert reader.calls == [[HITS[0].chunk], [HITS[1].chunk, HITS[2].chunk]]
    assert reader.windows == [3, 5]  # the rest reads what the first reading left of the 8
    assert [(a.passage, a.score) for a in read] == [(1, 3.0), (2, 2.0)]  # best first, at most reader_spans
    assert null == {0: 0.0, 1: 0.0, 2: 1.0}
    assert spent == len(TEXTS[0]) + len(TEXTS[1]) + len(TEXTS[2])


def test_the_cascade_reads_on_only_below_reader_sure():
    at = ScriptedReader([0.0])  # a probability of exactly 0.5
    _run(at, reader_passages=3, reader_first=2, reader_sure=0.5)
    assert len(at.calls) == 1 and len(at.calls[0]) == 2
    below = ScriptedReader([0.0])
    _run(below, reader_passages=3, reader_first=2, reader_sure=0.51)
    assert [len(c) for c in below.calls] == [2, 1]


def test_a_first_reading_that_finds_nothing_reads_the_rest():
    reader = ScriptedReader([None, 4.0])
    read, _, _ = _run(reader, reader_passages=2, reader_first=1, reader_sure=0.1)
    assert len(reader.calls) == 2 and {a.passage for a in read} == {1}


@pytest.mark.parametrize("first", [0, 3, 7])
def test_reading_first_none_or_all_of_the_passages_is_no_cascade(first: int):
    reader = ScriptedReader([-5.0])  # never sure
    _run(reader, reader_passages=3, reader_first=first, reader_sure=0.99)
    assert [len(c) for c in reader.calls] == [3] and reader.windows == [8]


def _focus_inputs(dense_of: dict[str, float]) -> tuple[list[Candidate], np.ndarray]:
    cands = candidates_from([(i, h.chunk) for i, h in enumerate(HITS)])
    feats = np.zeros((len(cands), len(SPAN_FEATURES)))  # the rows before reading: no reader columns yet
    for i, c in enumerate(cands):
        feats[i, SPAN_FEATURES.index("dense")] = dense_of.get(c.text, 0.0)
    return cands, feats


def test_with_focus_the_reader_reads_windows_around_the_best_ranked_sentences_of_the_passages_read():
    cands, feats = _focus_inputs({TEXTS[3]: 3.0, TEXTS[1]: 2.0, TEXTS[4]: 9.0})  # hit 4 is not read
    reader = ScriptedReader([5.0])
    tally = Tally()
    settings = _settings(reader_passages=4, reader_focus=2, reader_context=0)
    read, null, spent = read_passages(reader, settings, "When?", HITS, range(5), tally, cands, feats)  # type: ignore[arg-type]
    assert [c.text for c in reader.calls[0]] == [TEXTS[1], TEXTS[3]]
    assert {a.passage for a in read} == {1, 3} and set(null) == {1, 3}
    assert spent == sum(tally.costs) == len(TEXTS[1]) + len(TEXTS[3])
    flipped = ScoringModel({f: -float(f == "dense") for f in FEATURES}, 0.0, {}, 0.0, 0.5)
    other = ScriptedReader([5.0])
    from dataclasses import replace

    read_passages(other, replace(settings, focus_ranker=flipped), "When?", HITS, range(5), Tally(), cands, feats)  # type: ignore[arg-type]
    assert [c.text for c in other.calls[0]] == [TEXTS[0], TEXTS[2]]  # ranked by the focus ranker, when there is one
    whole = ScriptedReader([5.0])
    read_passages(whole, settings, "When?", HITS, range(5), Tally(), cands, None)  # type: ignore[arg-type]
    assert len(whole.calls[0]) == 4  # no rows to rank by: the passages whole


def test_focus_windows_outside_the_first_passages_are_read_at_once():
    cands, feats = _focus_inputs({TEXTS[2]: 3.0})
    reader = ScriptedReader([-5.0])
    settings = _settings(reader_passages=4, reader_focus=1, reader_context=0, reader_first=1, reader_sure=0.9)
    read_passages(reader, settings, "When?", HITS, range(5), Tally(), cands, feats)  # type: ignore[arg-type]
    assert [[c.text for c in call] for call in reader.calls] == [[TEXTS[2]]] and reader.windows == [8]
