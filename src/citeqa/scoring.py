"""Answer scoring: general features of a candidate span and a logistic model over them.

The model's output is the probability that a span holds the answer, so it serves both
to pick the answer and as its ``confidence``; below a threshold the engine abstains.
The weights were fitted on half of ``eval/qa.jsonl`` (split A) by
``eval/fit_scorer.py`` and are reported on the other half (split B): see README.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .analysis import fold_accents, query_terms, terms, words
from .extract import AnswerType, Candidate, expected_type, type_match

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
)

#: Fitted on split A of eval/qa.jsonl by eval/fit_scorer.py (see README for the numbers).
WEIGHTS = (1.728, 1.712, 0.032, 0.594, 1.633, 0.956, -0.690, 0.225, 0.913, -0.934)
BIAS = -2.762
CALIB_SCALE = 1.246
CALIB_SHIFT = -1.392


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate span with its features and probability of holding the answer."""

    candidate: Candidate
    features: tuple[float, ...]
    probability: float


@dataclass(frozen=True, slots=True)
class ScoringModel:
    """A logistic ranker over :data:`FEATURES`, then Platt scaling of its score.

    The ranker orders the spans; the calibration maps a span's score to the observed
    probability that the engine's chosen answer was right.
    """

    weights: tuple[float, ...] = WEIGHTS
    bias: float = BIAS
    calib_scale: float = CALIB_SCALE
    calib_shift: float = CALIB_SHIFT

    def scores(self, features: np.ndarray) -> np.ndarray:
        """The ranker's logit for each row of ``features``."""
        if len(features) == 0:
            return np.zeros(0)
        return features @ np.asarray(self.weights) + self.bias

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """Calibrated P(answer is right) for each row of ``features``."""
        z = self.calib_scale * self.scores(features) + self.calib_shift
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


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
    cand_terms = [set(terms(c.text, c.lang)) for c in cands]
    passage_terms = [set(terms(p.text, p.lang)) for p in passages]
    best_fused = max((p.fused for p in passages), default=0.0)
    by_lang: dict[str, tuple[dict[str, float], dict[str, float]]] = {}
    rows = []
    for cand, present in zip(cands, cand_terms):
        if cand.lang not in by_lang:
            q = query_terms(query, (cand.lang,))
            by_lang[cand.lang] = (local_weights(q, cand_terms, idf, default_idf),
                                  {t: idf.get(t, default_idf) for t in q})
        local, global_ = by_lang[cand.lang]
        passage = passages[cand.hit_index]
        around = set(terms(cand.context, cand.lang)) - present
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
        ))
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(FEATURES))


def _share(weights: Mapping[str, float], present: set[str]) -> float:
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in present) / total if total > 0 else 0.0
