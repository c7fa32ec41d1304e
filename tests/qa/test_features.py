import math

import numpy as np
import pytest

from citeqa.qa.features import (
    FEATURES,
    READER_FEATURES,
    SPAN_FEATURES,
    Passage,
    candidate_features,
    question_entities,
)
from citeqa.qa.scoring import ScoringModel
from citeqa.qa.spans import Candidate
from citeqa.records import Span

OVERLAP = FEATURES.index("overlap_span")


def _features(question: str, query: str, question_lang: str, spans: list[tuple[str, str]]) -> np.ndarray:
    cands = [Candidate(i, Span(f"{i}.txt", 0, len(text)), text, lang) for i, (text, lang) in enumerate(spans)]
    passages = [Passage(text, lang, 0.5, 1.0) for text, lang in spans]
    return candidate_features(question, query, question_lang, cands, passages, {}, 1.0)


def test_a_span_in_another_language_is_matched_by_cognates():
    question = "Who makes the new processors?"
    spans = [("La división diseña los procesadores propios.", "es"), ("El mercado subió ayer.", "es")]
    across = _features(question, question, "en", spans)
    stems_only = _features(question, question, "es", spans)  # same language: stems, no cognate keys
    assert across[0, OVERLAP] > 0 == stems_only[0, OVERLAP]  # "processors" and "procesadores" meet as cognates
    assert across[1, OVERLAP] == 0.0


def test_terms_borrowed_from_history_weigh_less_than_the_question_own():
    spans = [("Huawei released the model openPangu.", "en"), ("It has 505 billion parameters.", "en")]
    asked = "Which model did Huawei release, with how many parameters?"
    follow_up = "How many parameters?"
    own = _features(asked, asked, "en", spans)
    borrowed = _features(follow_up, "Which model did Huawei release? " + follow_up, "en", spans)
    assert borrowed[0, OVERLAP] < own[0, OVERLAP]
    assert borrowed[1, OVERLAP] > own[1, OVERLAP]


def test_question_entities_are_names_and_numbers_not_the_first_word():
    assert question_entities("Which chip did Alibaba train on H20 in 2025?") == {"alibaba", "h20", "2025"}
    assert question_entities("¿Qué hizo PaddlePaddle?") == {"paddlepaddle"}


# --- each feature's meaning, on hand-made candidates ---------------------------------------------------------------

TALL = "How tall is the Punta Brava lighthouse?"  # a quantity; terms how, tall, punta, brava, lighthous


def _cand(hit: int, text: str, lang: str = "en", context: str = "", number: int = 0) -> Candidate:
    return Candidate(hit, Span(f"{hit}.txt", 10 * number, 10 * number + len(text)), text, lang, context, number)


def _columns(
    question: str,
    cands: list[Candidate],
    passages: list[Passage],
    *,
    question_lang: str = "en",
    idf: dict[str, float] | None = None,
    span_dense: tuple[float | None, ...] = (),
) -> dict[str, list[float]]:
    """Each feature's column by name, from :func:`candidate_features`."""
    rows = candidate_features(question, question, question_lang, cands, passages, idf or {}, 1.0, span_dense)
    assert rows.shape == (len(cands), len(SPAN_FEATURES))
    return {name: [float(v) for v in rows[:, i]] for i, name in enumerate(SPAN_FEATURES)}


def _passage(text: str = "", lang: str = "en", dense: float = 0.5, fused: float = 1.0) -> Passage:
    return Passage(text, lang, dense, fused)


def test_the_matrix_columns_follow_the_order_of_FEATURES_as_the_scorer_reads_them():
    assert FEATURES == SPAN_FEATURES + READER_FEATURES and len(set(FEATURES)) == len(FEATURES)
    cands = [_cand(0, "It is white."), _cand(1, "It stands on a rock.", lang="es")]
    passages = [_passage(dense=0.25, fused=2.0), _passage(dense=0.75, fused=4.0)]
    rows = candidate_features(TALL, TALL, "en", cands, passages, {}, 1.0)
    full = np.hstack([rows, np.zeros((len(rows), len(READER_FEATURES)))])
    for name, expected in (("dense", [0.25, 0.75]), ("passage", [0.5, 1.0]), ("same_lang", [1.0, 0.0])):
        only = ScoringModel({f: float(f == name) for f in FEATURES}, 0.0, {}, 0.0, 0.5)
        assert only.scores(full).tolist() == expected, name  # the weight named reads the column named
    empty = candidate_features(TALL, TALL, "en", [], passages, {}, 1.0)
    assert empty.shape == (0, len(SPAN_FEATURES))


def test_overlap_counts_the_question_terms_of_the_span_and_half_those_of_its_context():
    context = "The Punta Brava lighthouse."
    cands = [
        _cand(0, "It stands 42 metres high.", context=context),  # no question term of its own
        _cand(0, context),  # the context as a span
        _cand(0, "The Punta Brava lighthouse is tall.", context=context),  # the context adds nothing new
        _cand(0, "The market rose."),
    ]
    col = _columns(TALL, cands, [_passage(" ".join(c.text for c in cands))])
    assert col["overlap_span"][0] == 0.0 and col["overlap"][0] == pytest.approx(0.5 * col["overlap_span"][1])
    assert col["overlap"][1] == col["overlap_span"][1] > 0  # no context
    assert col["overlap"][2] == col["overlap_span"][2] > col["overlap_span"][1]  # "tall" as well
    assert col["overlap"][3] == col["overlap_span"][3] == 0.0
    assert all(0.0 <= v <= 1.0 for v in col["overlap_span"])


def test_overlap_weighs_a_term_rare_among_the_candidates_above_the_passage_topic():
    cands = [
        _cand(0, "The lighthouse is white.", number=0),
        _cand(0, "The lighthouse is old.", number=1),
        _cand(0, "The tall lighthouse.", number=2),  # the only one with "tall"
        _cand(0, "Tall trees grow.", number=3),  # "tall" but not the topic
    ]
    col = _columns(TALL, cands, [_passage()])
    assert col["overlap_span"][0] == col["overlap_span"][1] > 0
    assert col["overlap_span"][3] > col["overlap_span"][0]  # "tall" in 2 of 4 beats "lighthouse" in 3 of 4
    assert col["overlap_span"][2] == pytest.approx(col["overlap_span"][0] + col["overlap_span"][3])


def test_coverage_is_the_idf_weighted_share_of_the_question_terms_in_the_passage():
    cands = [_cand(0, "One."), _cand(0, "Two.", number=1), _cand(1, "Three."), _cand(2, "Four.")]
    passages = [
        _passage("Punta Brava."),  # punta, brava: 5 + 1 of 5 + 1 + 1 + 1 + 1
        _passage("How tall is the Punta Brava lighthouse, then?"),
        _passage("Nothing of it."),
    ]
    col = _columns(TALL, cands, passages, idf={"punta": 5.0})
    assert col["coverage"] == pytest.approx([6 / 9, 6 / 9, 1.0, 0.0])  # the passage's, whatever the span


def test_dense_is_the_passage_cosine_and_passage_its_fused_score_over_the_best():
    cands = [_cand(0, "A."), _cand(1, "B."), _cand(2, "C.")]
    col = _columns(TALL, cands, [_passage(dense=0.3, fused=1.0), _passage(dense=0.9, fused=4.0), _passage(fused=2.0)])
    assert col["dense"] == [0.3, 0.9, 0.5]
    assert col["passage"] == [0.25, 1.0, 0.5]
    none = _columns(TALL, [_cand(0, "A.")], [_passage(fused=0.0)])
    assert none["passage"] == [0.0]  # no fused score anywhere: 0, not a division by 0


def test_type_match_expects_type_and_type_missing_follow_the_kind_asked():
    cands = [
        _cand(0, "The Punta Brava lighthouse is 42 metres tall."),  # a quantity next to "tall"
        _cand(0, "The keepers carried 60 tonnes of coal up the hill every single winter.", number=1),  # elsewhere
        _cand(0, "It is white.", number=2),  # none
    ]
    col = _columns(TALL, cands, [_passage()])
    assert col["type_match"] == [1.0, 0.6, 0.0]
    assert col["expects_type"] == [1.0, 1.0, 1.0]
    assert col["type_missing"] == [0.0, 0.0, 1.0]
    why = _columns("Why was the Punta Brava lighthouse built?", cands, [_passage()])  # no kind of fact asked
    assert why["type_match"] == why["expects_type"] == why["type_missing"] == [0.0, 0.0, 0.0]


def test_same_lang_is_whether_the_span_is_in_the_question_language():
    cands = [_cand(0, "El faro mide 42 metros.", lang="es"), _cand(0, "It is 42 metres tall.", number=1)]
    assert _columns(TALL, cands, [_passage()])["same_lang"] == [0.0, 1.0]
    assert _columns(TALL, cands, [_passage()], question_lang="es")["same_lang"] == [1.0, 0.0]


def test_length_is_the_log_of_the_characters_on_a_scale_where_300_is_1():
    texts = ["x" * 300, "x" * 30, "x", "x" * 3000]
    col = _columns(TALL, [_cand(0, t, number=i) for i, t in enumerate(texts)], [_passage()])
    assert col["length"] == pytest.approx(
        [1.0, math.log(30) / math.log(300), math.log(2) / math.log(300), 1.4036], abs=1e-4
    )


def test_heading_is_a_short_line_without_a_final_stop():
    texts = [
        "Punta Brava lighthouse",  # a title
        "Punta Brava lighthouse  ",  # spaces after do not make it a sentence
        "It is 42 metres tall.",
        "Is it tall?",
        "He said «tall»",
        "A lighthouse (tall)",
        "x " * 40,  # 80 characters: too long to be a heading
    ]
    col = _columns(TALL, [_cand(0, t, number=i) for i, t in enumerate(texts)], [_passage()])
    assert col["heading"] == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_entity_passage_is_the_share_of_the_question_names_and_numbers_in_the_passage():
    question = "Which chip did Alibaba train on in 2025?"  # names and numbers: alibaba, 2025
    cands = [_cand(0, "A."), _cand(1, "B."), _cand(2, "C.")]
    passages = [_passage("ALIBABA trained it."), _passage("Alibabá trained on it in 2025."), _passage("No names.")]
    col = _columns(question, cands, passages)
    assert col["entity_passage"] == [0.5, 1.0, 0.0]  # case and accents folded
    assert col["has_entities"] == [1.0, 1.0, 1.0]
    plain = _columns("how tall is the lighthouse?", cands, passages)  # names nothing
    assert plain["entity_passage"] == [1.0, 1.0, 1.0] and plain["has_entities"] == [0.0, 0.0, 0.0]


def test_a_name_of_letters_and_digits_is_found_in_the_passage_that_has_it():
    passages = [_passage("Alibaba trained on the H20 chip."), _passage("Alibaba trained on the H100 chip, not H 20.")]
    col = _columns("Did Alibaba train on H20?", [_cand(0, "A."), _cand(1, "B.")], passages)
    assert col["entity_passage"] == [1.0, 0.5]


def test_span_dense_its_gap_to_the_best_and_the_previous_span_of_the_passage():
    cands = [
        _cand(0, "First.", number=0),
        _cand(0, "Second.", number=1),  # no vector: its passage's cosine
        _cand(0, "Third.", number=2),
        _cand(1, "Other.", number=1),  # its passage's span 0 is no candidate
        _cand(1, "Last.", number=5),  # beyond the span_dense given: its passage's cosine too
    ]
    col = _columns(TALL, cands, [_passage(dense=0.4), _passage(dense=0.1)], span_dense=(0.2, None, 0.7, 0.3))
    assert col["span_dense"] == [0.2, 0.4, 0.7, 0.3, 0.1]
    assert col["span_dense_gap"] == pytest.approx([-0.5, -0.3, 0.0, -0.4, -0.6])
    assert col["prev_span_dense"] == [0.4, 0.2, 0.4, 0.1, 0.1]  # the first of a passage: the passage's cosine


def test_novelty_is_the_share_of_the_span_terms_the_question_does_not_use():
    cands = [
        _cand(0, "The Punta Brava lighthouse."),  # nothing new
        _cand(0, "The lighthouse stands 42 metres high.", number=1),  # lighthous; stand, 42, metr, high new
        _cand(0, "The.", number=2),  # no terms at all
    ]
    assert _columns(TALL, cands, [_passage()])["novelty"] == [0.0, 0.8, 0.0]
