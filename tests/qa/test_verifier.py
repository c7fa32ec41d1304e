"""The verifier's evidence, judgement and shipped weights (citeqa.qa.verifier)."""

from __future__ import annotations

import json

import pytest

from citeqa.errors import ConfigError
from citeqa.qa.answer_types import Wanted
from citeqa.qa.scoring import Band
from citeqa.qa.spans import Candidate, ScoredSpan
from citeqa.qa.verifier import (
    VERIFIER_FEATURES,
    Verifier,
    corroborations,
    disputed,
    judge,
    load_verifier,
    value_agreement,
    verifier_features,
    verifier_path,
)
from citeqa.reader.reader import ReadAnswer
from citeqa.records import Chunk, Hit, Span

HARDWARE = (
    "At Huawei Connect 2026 the company pulled the Ascend 960 forward: "
    "the 960DT arrives in the first quarter of 2027 and the 960PR in the third."
)
MEMORY_EN = "The 960DT is estimated at around 288 GB of memory."
MEMORY_ES = "Se estima que el 960DT tiene unos 288 GB de memoria."
MEMORY_OTHER = "Otros informes dan al 960DT unos 512 GB de memoria."


def _span(hit_index: int, chunk: Chunk, phrase: str, score: float, probability: float) -> ScoredSpan:
    """A reader span over ``phrase`` in ``chunk``, in a candidate holding the whole chunk."""
    at = chunk.text.index(phrase)
    cand = Candidate(hit_index, chunk.span, chunk.text, chunk.lang)
    read = ReadAnswer(
        Span(chunk.doc_id, chunk.start + at, chunk.start + at + len(phrase)), hit_index, score, probability
    )
    return ScoredSpan(cand, {"reader_null": -5.0, "span_dense": 0.8}, score, probability, read)


def _hits(*texts: tuple[str, str, str]) -> list[Hit]:
    return [Hit(Chunk.make(doc, 0, len(text), text, lang), 1.0) for doc, lang, text in texts]


def test_a_neighbours_value_is_seen_in_the_answer():
    hits = _hits(("004.txt", "en", HARDWARE))
    spans = [_span(0, hits[0].chunk, "960PR in the third", 9.9, 0.93)]
    wanted = Wanted.of("When does the 960DT arrive?", "When does the 960DT arrive?")
    f = verifier_features(wanted, "en", spans, 0, hits)
    assert f["neighbour_in_answer"] == 1.0
    right = [_span(0, hits[0].chunk, "first quarter of 2027", 9.9, 0.93)]
    assert verifier_features(wanted, "en", right, 0, hits)["neighbour_in_answer"] == 0.0


def test_an_answer_of_the_wrong_kind_misses_its_type():
    hits = _hits(("004.txt", "en", HARDWARE))
    spans = [_span(0, hits[0].chunk, "960PR in the third", 9.9, 0.93)]
    wanted = Wanted.of("What is the price of the 960DT?", "What is the price of the 960DT?")
    f = verifier_features(wanted, "en", spans, 0, hits)
    assert (f["expects_type"], f["type_ok"], f["type_missing"]) == (1.0, 0.0, 1.0)
    assert f["attribute_sentence"] == 0.0  # "price" is nowhere in the sentence
    assert set(f) == set(VERIFIER_FEATURES)


def test_the_same_value_in_another_language_corroborates():
    hits = _hits(("004.txt", "en", MEMORY_EN), ("001.txt", "es", MEMORY_ES))
    spans = [_span(0, hits[0].chunk, "288 GB", 10.0, 0.99), _span(1, hits[1].chunk, "288 GB", 9.0, 0.97)]
    also = corroborations(spans, 0, hits)
    assert [(c.doc_id, c.lang, c.text) for c in also] == [("001.txt", "es", "288 GB")]
    assert MEMORY_ES[also[0].start : also[0].end] == also[0].text  # document offsets
    wanted = Wanted.of("How much memory does the 960DT have?", "How much memory does the 960DT have?")
    assert not disputed(wanted, spans, 0, hits)


def test_another_documents_value_disputes_the_answer():
    hits = _hits(("004.txt", "en", MEMORY_EN), ("009.txt", "es", MEMORY_OTHER))
    spans = [_span(0, hits[0].chunk, "288 GB", 10.0, 0.99), _span(1, hits[1].chunk, "512 GB", 9.0, 0.9)]
    wanted = Wanted.of("How much memory does the 960DT have?", "How much memory does the 960DT have?")
    assert disputed(wanted, spans, 0, hits)
    assert corroborations(spans, 0, hits) == ()
    unsure = [spans[0], _span(1, hits[1].chunk, "512 GB", 1.0, 0.2)]
    assert not disputed(wanted, unsure, 0, hits)  # the reader doubts the other value


def _verifier(**weights: float) -> Verifier:
    bands = (Band("high", 0.9, 0.97, 100), Band("likely", 0.6, 0.86, 50), Band("unsure", 0.0, 0.5, 40))
    return Verifier(weights, -1.0, 0.2, bands, {"by": "test"})


def test_judge_weighs_the_evidence():
    hits = _hits(("004.txt", "en", HARDWARE))
    spans = [_span(0, hits[0].chunk, "960PR in the third", 9.9, 0.93)]
    wanted = Wanted.of("When does the 960DT arrive?", "When does the 960DT arrive?")
    low = judge(_verifier(neighbour_in_answer=-5.0), wanted, "en", spans, 0, hits)
    high = judge(_verifier(neighbour_in_answer=5.0), wanted, "en", spans, 0, hits)
    assert low.probability < 0.01 < 0.98 < high.probability


def test_verifier_round_trips_and_refuses_unknown_features():
    v = _verifier(scorer=0.5, type_missing=-1.5)
    assert Verifier.from_dict(json.loads(json.dumps(v.to_dict()))) == v
    with pytest.raises(ConfigError, match="unknown features"):
        _verifier(no_such_feature=1.0)
    with pytest.raises(ConfigError):
        Verifier.from_dict({"weights": {}, "bias": 0})


def test_the_shipped_verifier_is_complete_and_says_how_it_was_fitted():
    v = load_verifier(verifier_path())
    assert v is not None
    assert set(v.weights) == set(VERIFIER_FEATURES)
    assert [b.name for b in v.bands] == ["high", "likely", "unsure"]
    assert 0.0 < v.abstain_below < v.bands[1].above <= v.bands[0].above
    for band in v.bands[:2]:  # measured out of fold, with their support
        assert band.precision is not None and band.support
    assert v.fitted["by"].startswith("python -m citeqa.fitting.verifier")
    assert {"out_of_fold", "held_out_generated", "auc_verifier", "auc_reader_confidence"} <= set(v.fitted)


@pytest.mark.parametrize(
    "a,lang_a,b,lang_b,agree",
    [
        ("agosto", "es", "in August", "en", True),
        ("primer trimestre de 2027", "es", "the first quarter of 2027", "en", True),
        ("2028", "en", "2029", "en", False),
        ("744 mil millones", "es", "744 billion", "en", True),
        ("744 bilhões", "pt", "505 mil millones", "es", False),
        ("2025", "en", "August", "en", None),  # a year and a month: nothing shared to compare
        ("Halloway United", "en", "Ashby Town", "en", None),
    ],
)
def test_values_agree_across_languages(a, lang_a, b, lang_b, agree):
    assert value_agreement(a, lang_a, b, lang_b) is agree


def test_a_month_in_another_language_corroborates_and_a_question_word_disputes_nothing():
    hits = _hits(
        ("001.txt", "pt", "CANN foi aberto em agosto de 2025."),
        ("004.txt", "en", "CANN was open-sourced in August."),
        ("000.txt", "es", "En 2025 CANN se abrió."),
    )
    spans = [
        _span(0, hits[0].chunk, "agosto", 10.0, 0.99),
        _span(1, hits[1].chunk, "August", 9.0, 0.99),
        _span(2, hits[2].chunk, "2025", 5.0, 0.9),
    ]
    wanted = Wanted.of("Em que mês de 2025 o CANN foi aberto?", "Em que mês de 2025 o CANN foi aberto?")
    assert [c.doc_id for c in corroborations(spans, 0, hits)] == ["004.txt"]
    assert not disputed(wanted, spans, 0, hits)
