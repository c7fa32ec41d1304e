"""Answer scoring: general features of a candidate span and a logistic model over them.

The model's output is the probability that a span holds the answer, so it serves both
to pick the answer and as its ``confidence``; below a threshold the engine abstains.
The weights were fitted on half of ``eval/qa.jsonl`` (split A) by
``eval/fit_scorer.py`` and are reported on the other half (split B): see README.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from citeqa.text.analysis import cognate_keys, fold_accents, query_terms, terms, words
from citeqa.answer.answer_types import AnswerType, expected_type, type_match
from citeqa.answer.spans import Candidate

#: Names of the feature columns, in order.
FEATURES = (
    "overlap",  # IDF x local-rarity weighted share of question terms in the span (context counts half)
    "overlap_span",  # the same, in the span alone
    "coverage",  # IDF-weighted share of question terms anywhere in the passage
    "dense",  # cosine similarity of the passage to the question
    "passage",  # fused retrieval score of the passage / best fused score
    "type_match",  # 1: a fact of the expected kind next to a question term, 0.6 elsewhere, 0 none
    "expects_type",  # the question asks for a quantity, date, price or name
    "same_lang",  # the span is in the question's language
    "length",  # log(characters) / log(300)
    "heading",  # short line without a final stop: a title, not an answer
    "entity_passage",  # share of the question's names and numbers found in the passage
    "has_entities",  # the question names something (a proper noun, a model, a number)
)

#: Fitted on split A of eval/qa.jsonl by eval/fit_scorer.py (see README for the numbers).
WEIGHTS = (1.779, 1.861, 0.043, 0.714, 1.346, 1.054, -0.747, 0.525, 0.772, -0.874, 0.792, -0.128)
BIAS = -3.321
#: Confidence: logistic over (ranker score, *features) of the chosen span, fitted on split A.
CALIBRATION = (0.957, 0.000, 0.000, 1.649, 0.956, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000)
CALIB_BIAS = -2.374
#: Weight of the terms a follow-up borrows from the previous turn (see candidate_features).
HISTORY_WEIGHT = 0.5
#: Below this confidence the engine abstains (chosen on split A by eval/fit_scorer.py).
ABSTAIN_BELOW = 0.24


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate span with its features and probability of holding the answer."""

    candidate: Candidate
    features: tuple[float, ...]
    probability: float


@dataclass(frozen=True, slots=True)
class ScoringModel:
    """A logistic ranker over :data:`FEATURES`, and a calibration of the chosen span.

    The ranker orders the spans; the calibration turns the ranker score and the
    features of a span into the observed probability that it is a right answer.
    """

    weights: tuple[float, ...] = WEIGHTS
    bias: float = BIAS
    calibration: tuple[float, ...] = CALIBRATION
    calib_bias: float = CALIB_BIAS

    def scores(self, features: np.ndarray) -> np.ndarray:
        """The ranker's logit for each row of ``features``."""
        if len(features) == 0:
            return np.zeros(0)
        return features @ np.asarray(self.weights) + self.bias

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """Calibrated P(answer is right) for each row of ``features``."""
        if len(features) == 0:
            return np.zeros(0)
        z = calibration_inputs(self.scores(features), features) @ np.asarray(self.calibration) + self.calib_bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def calibration_inputs(scores: np.ndarray, features: np.ndarray) -> np.ndarray:
    """The calibration's input rows: the ranker score, then the features."""
    return np.column_stack([scores, features])


def local_weights(question_terms: Sequence[str], candidate_terms: Sequence[set[str]],
                  idf: Mapping[str, float], default_idf: float) -> dict[str, float]:
    """Weight each question term by global IDF times its rarity among the candidates.

    A term found in most candidate sentences (the passage's topic) says little about
    which sentence answers; a term found in one sentence says a lot.
    """
    n = max(1, len(candidate_terms))
    return {t: idf.get(t, default_idf) * math.log(1 + n / (1 + sum(t in c for c in candidate_terms)))
            for t in question_terms}


@dataclass(frozen=True)
class Passage:
    """What the scorer needs to know about a retrieved passage."""

    text: str
    lang: str
    dense: float
    fused: float


def candidate_features(question: str, query: str, question_lang: str, cands: Sequence[Candidate],
                       passages: Sequence[Passage], idf: Mapping[str, float],
                       default_idf: float) -> np.ndarray:
    """One feature row (see :data:`FEATURES`) per candidate.

    ``question`` decides the expected answer type; ``query`` (the question, plus the
    previous turn for a follow-up) supplies the words to look for.
    """
    kind = expected_type(question)
    qwords = frozenset(fold_accents(w) for w in words(query))
    cand_terms = [_term_set(c.text, c.lang, question_lang) for c in cands]
    passage_terms = [_term_set(p.text, p.lang, question_lang) for p in passages]
    entities = question_entities(query)
    entity_in_passage = [_present_share(entities, p.text) for p in passages]
    best_fused = max((p.fused for p in passages), default=0.0)
    by_lang: dict[str, tuple[dict[str, float], dict[str, float]]] = {}
    rows = []
    for cand, present in zip(cands, cand_terms):
        if cand.lang not in by_lang:
            by_lang[cand.lang] = _question_weights(question, query, cand.lang, question_lang, cand_terms,
                                                   idf, default_idf)
        local, global_ = by_lang[cand.lang]
        passage = passages[cand.hit_index]
        around = _term_set(cand.context, cand.lang, question_lang) - present
        rows.append((
            _share(local, present) + 0.5 * _share(local, around),
            _share(local, present),
            _share(global_, passage_terms[cand.hit_index]),
            passage.dense,
            passage.fused / best_fused if best_fused > 0 else 0.0,
            type_match(cand.text, cand.lang, kind, qwords, set(local)),
            0.0 if kind is AnswerType.OTHER else 1.0,
            1.0 if cand.lang == question_lang else 0.0,
            math.log(max(2, len(cand.text))) / math.log(300),
            1.0 if len(cand.text) < 80 and cand.text.rstrip()[-1:] not in ".!?…»”\")" else 0.0,
            entity_in_passage[cand.hit_index],
            1.0 if entities else 0.0,
        ))
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(FEATURES))


def _term_set(text: str, lang: str, question_lang: str) -> set[str]:
    """Stems of a text in its own language; cognate keys when the question's differs."""
    return set(terms(text, lang)) if lang == question_lang else set(cognate_keys(text))


def _question_weights(question: str, query: str, lang: str, question_lang: str,
                      cand_terms: Sequence[set[str]], idf: Mapping[str, float],
                      default_idf: float) -> tuple[dict[str, float], dict[str, float]]:
    """Local and global weights of the query's terms against spans in ``lang``.

    Across languages the query is matched by cognate keys, for which the index keeps
    no document frequencies: every key gets the default IDF and local rarity decides.
    Terms that only the previous turn brings weigh :data:`HISTORY_WEIGHT` as much: a
    follow-up's own words say what it asks, the earlier turn only what it is about.
    """
    if lang == question_lang:
        q, own = query_terms(query, (lang,)), set(query_terms(question, (lang,)))
    else:
        q, own, idf = sorted(cognate_keys(query)), cognate_keys(question), {}
    scale = {t: 1.0 if t in own else HISTORY_WEIGHT for t in q}
    local = local_weights(q, cand_terms, idf, default_idf)
    return ({t: w * scale[t] for t, w in local.items()},
            {t: idf.get(t, default_idf) * scale[t] for t in q})


_NAMEISH = re.compile(r"[^\W_]*(?:\d|[A-ZÁÉÍÓÚÂÊÔÃÕÇÑ])[^\W_]*")


def question_entities(text: str) -> frozenset[str]:
    """Names and numbers a question mentions, folded: "Alibaba", "H20", "PaddlePaddle".

    Names travel across languages unchanged, so they tell whether a passage in any
    language is about what the question asks. The first word only counts when it has
    a digit or an inner capital (it is capitalised anyway).
    """
    found = set()
    for i, match in enumerate(_NAMEISH.finditer(text)):
        token = match.group(0)
        first = text[:match.start()].strip(" ¿¡\"'«“(") == ""
        inner_caps = any(c.isupper() for c in token[1:])
        if len(token) < 2 or (first and not (inner_caps or any(c.isdigit() for c in token))):
            continue
        found.add(fold_accents(token.casefold()))
    return frozenset(found)


def _present_share(entities: frozenset[str], text: str) -> float:
    """Share of ``entities`` among the folded words of ``text`` (1.0 when there are none)."""
    if not entities:
        return 1.0
    have = {fold_accents(w) for w in words(text)}
    return sum(1 for e in entities if e in have) / len(entities)


def _share(weights: Mapping[str, float], present: set[str]) -> float:
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in present) / total if total > 0 else 0.0
