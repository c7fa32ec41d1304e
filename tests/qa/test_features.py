import numpy as np

from citeqa.qa.features import FEATURES, Passage, candidate_features, question_entities
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
