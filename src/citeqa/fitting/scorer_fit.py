"""The answer scorer's fit on traced questions: the ranker, its calibration, the abstention threshold,
the headline level and the bands, and how a fitted scorer is judged out of fold.

:mod:`citeqa.fitting.scorer` traces the questions and writes the result; this module only computes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import numpy.typing as npt

from citeqa import evaluation as ev
from citeqa.qa.features import FEATURES
from citeqa.qa.pipeline import Trace
from citeqa.qa.scoring import RANKER_MARGIN, RANKER_SCORE, Band, ScoringModel, choose_span, fit_bands, margins
from citeqa.qa.spans import ScoredSpan, span_short

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]

#: Besides the ranker score and margin, the calibration sees these features of the chosen span.
CALIBRATION_FEATURES = (
    "coverage",
    "dense",
    "span_dense",
    "entity_passage",
    "type_missing",
    "overlap",
    "reader_null",
    "reader_score",
    "reader_best",
)
CALIBRATION_INPUTS = (RANKER_SCORE, RANKER_MARGIN, *CALIBRATION_FEATURES)
#: The most answerable questions (share) the threshold may turn into false abstentions.
MAX_FALSE_ABSTENTION = 0.05
#: Confidence at or above which an answer counts as "high confidence" in the reliability report.
HIGH_CONFIDENCE = 0.8
#: Share of answers at or above the headline level that must be right, out of fold ...
HEADLINE_PRECISION = 0.9
#: ... judged on at least this many answers (fewer: no level, nothing is headlined).
HEADLINE_SUPPORT = 10
#: The false-abstention shares at which :func:`abstention_ceiling` is printed.
CEILING_SHARES = (0.03, MAX_FALSE_ABSTENTION, 0.10)


class LanguageRule(Protocol):
    """The answer settings the span choice reads (:class:`citeqa.qa.settings.AnswerSettings` has them)."""

    @property
    def language_margin(self) -> float: ...

    @property
    def language_floor(self) -> float: ...


@dataclass(frozen=True)
class Question:
    """One question's trace and what is right in it."""

    set_name: str
    item: ev.QAItem
    trace: Trace
    labels: Flags  # per span: from the gold document and holding a gold answer
    right: Flags  # per span: holds a gold answer (what `citeqa eval` calls a correct answer)
    cited: Flags  # per span: its passage, the first citation, is relevant (`citeqa eval`'s hit@1)

    @property
    def langs(self) -> list[str]:
        return [s.candidate.lang for s in self.trace.spans]


@dataclass(frozen=True)
class Outcome:
    """One question judged with a model: answered right, cited right, abstained, confidence."""

    q: Question
    right: bool
    hit1: bool
    abstained: bool
    confidence: float
    short: str | None = None  #: the chosen reader span's short answer (None: a sentence candidate)


def written_in(item: ev.QAItem, trace: Trace) -> str:
    """The language ``item``'s gold answers are written in: its gold document's, when a passage of it
    was retrieved, else the question's (:func:`citeqa.evaluation.answer_language`)."""
    return ev.answer_language(item, {h.chunk.doc_id: h.chunk.lang for h in trace.hits})


def span_overlaps(span: ScoredSpan, answers: Sequence[str], lang: str) -> bool:
    """Whether a reader span's short answer shares a word with a gold answer (True for a sentence
    candidate): among the spans of a right sentence, the ranker learns to prefer the right words."""
    if span.read is None:
        return True
    short = span_short(span.candidate, span.read.span)
    at = span.candidate.offsets(short) if short is not None else None
    text = span.candidate.text[at.start : at.end] if at is not None else ""
    return any(ev.token_f1(text, a, lang) > 0 for a in answers)


def without(q: Question, names: Sequence[str]) -> Question:
    """The question with the feature columns ``names`` zeroed: a scorer fitted on it ignores them."""
    cols = [FEATURES.index(f) for f in names]
    features = q.trace.features.copy()
    features[:, cols] = 0.0
    spans = tuple(
        replace(s, features={k: (0.0 if k in names else v) for k, v in s.features.items()}) for s in q.trace.spans
    )
    return replace(q, trace=replace(q.trace, features=features, spans=spans))


def fold_of(q: Question, folds: int) -> int:
    return int(hashlib.sha1(f"{q.set_name}/{q.item.id}".encode()).hexdigest(), 16) % folds


def fit_logistic(
    x: Floats, y: Floats, l2: float = 0.01, steps: int = 4000, lr: float = 0.5, balanced: bool = True
) -> tuple[Floats, float]:
    """Gradient descent on the mean log loss with an L2 penalty (weights only), on standardised
    columns (features such as e5 cosines vary over a tenth of their range), returned on the raw scale."""
    mu, sd = x.mean(axis=0), x.std(axis=0)
    sd = np.where(sd > 1e-9, sd, 1.0)
    w, b = _descend((x - mu) / sd, y, l2, steps, lr, balanced)
    return w / sd, b - float((w / sd) @ mu)


def _descend(x: Floats, y: Floats, l2: float, steps: int, lr: float, balanced: bool) -> tuple[Floats, float]:
    w, b = np.zeros(x.shape[1]), 0.0
    pos = max(1.0, y.sum())
    sample_w = (
        np.where(y > 0, len(y) / (2 * pos), len(y) / (2 * max(1.0, len(y) - pos))) if balanced else np.ones(len(y))
    )
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(x @ w + b, -30, 30)))
        g = (p - y) * sample_w
        w -= lr * (x.T @ g / len(y) + l2 * w)
        b -= lr * g.mean()
    return w, b


def fit_listwise(train: Sequence[Question], l2: float = 0.01, steps: int = 3000, lr: float = 0.3) -> Floats:
    """Ranker weights (raw feature scale) maximising, per question, the softmax share of its right spans."""
    rows = [q for q in train if len(q.trace.spans) and q.labels.any()]
    x_all = np.vstack([q.trace.features for q in rows])
    mu, sd = x_all.mean(axis=0), x_all.std(axis=0)
    sd = np.where(sd > 1e-9, sd, 1.0)
    groups = [((q.trace.features - mu) / sd, q.labels.astype(float)) for q in rows]
    w = np.zeros(x_all.shape[1])
    for _ in range(steps):
        grad = np.zeros_like(w)
        for x, y in groups:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            target = p * y / (p * y).sum()
            grad += x.T @ (p - target)
        w -= lr * (grad / len(groups) + l2 * w)
    result: Floats = w / sd
    return result


def choose(model: ScoringModel, q: Question, settings: LanguageRule) -> int | None:
    """The span the engine would choose with ``model`` (the same rule, on the stored features)."""
    feats = q.trace.features
    return choose_span(
        model.scores(feats),
        model.probabilities(feats),
        q.langs,
        q.trace.prefer,
        settings.language_margin,
        settings.language_floor,
    )


def calibration_row(model: ScoringModel, q: Question, best: int) -> list[float]:
    scores = model.scores(q.trace.features)
    span = q.trace.spans[best]
    return [float(scores[best]), float(margins(scores)[best]), *(span.features[f] for f in CALIBRATION_FEATURES)]


def fit(train: Sequence[Question], settings: LanguageRule) -> ScoringModel:
    """Ranker, then calibration and threshold on the ranker's own choices, all on ``train``."""
    rows = [q for q in train if len(q.trace.spans)]
    weights = {f: round(float(v), 4) for f, v in zip(FEATURES, fit_listwise(rows))}
    b = 0.0  # a softmax ranker has no bias; the calibration supplies one
    ranker = ScoringModel(weights, b, {RANKER_SCORE: 1.0}, 0.0, 0.0)
    inputs, right, answerable = [], [], []
    for q in rows:
        best = choose(ranker, q, settings)
        assert best is not None  # a question with spans always has a best one
        inputs.append(calibration_row(ranker, q, best))
        right.append(float(q.right[best]))
        answerable.append(q.item.answerable)
    cw, cb = fit_logistic(np.asarray(inputs), np.asarray(right), l2=0.001, steps=20000, lr=0.1, balanced=False)
    calibration = {n: round(float(v), 3) for n, v in zip(CALIBRATION_INPUTS, cw)}
    model = ScoringModel(weights, round(float(b), 3), calibration, round(float(cb), 3), 0.0)
    confidence = np.array([model.probabilities(q.trace.features)[choose(model, q, settings)] for q in rows])
    return replace(model, abstain_below=best_threshold(confidence, np.asarray(answerable)))


def best_threshold(confidence: Floats, answerable: Flags) -> float:
    """The highest threshold whose false abstentions stay within :data:`MAX_FALSE_ABSTENTION`."""
    grid = np.round(np.arange(0.0, 1.0, 0.01), 2)
    n = max(1, int(answerable.sum()))
    return float(max(t for t in grid if ((confidence < t) & answerable).sum() / n <= MAX_FALSE_ABSTENTION))


def abstention_ceiling(answerable: Sequence[float], unanswerable: Sequence[float], share: float) -> float:
    """The share of unanswerable questions abstained on by the highest threshold on the confidence that
    abstains on at most ``share`` of the answerable ones: what any threshold can buy at that cost."""
    ranked = np.sort(np.asarray(answerable, dtype=float))
    allowed = int(np.floor(share * len(ranked) + 1e-9))  # answerable questions that may fall below
    if allowed >= len(ranked):
        return 1.0
    threshold = ranked[allowed]  # abstain below it: at most ``allowed`` answerable ones fall below
    return float(np.mean(np.asarray(unanswerable, dtype=float) < threshold)) if len(unanswerable) else float("nan")


def headline_level(outcomes: Sequence[Outcome]) -> float:
    """The lowest confidence from which :data:`HEADLINE_PRECISION` of the answers given were right
    (over at least :data:`HEADLINE_SUPPORT` answers); 1.0 when no level reaches it."""
    answered = [o for o in outcomes if not o.abstained]
    for t in np.round(np.arange(0.0, 1.0, 0.01), 2):
        above = [o.right for o in answered if o.confidence >= t]
        if len(above) >= HEADLINE_SUPPORT and sum(above) / len(above) >= HEADLINE_PRECISION:
            return float(t)
    return 1.0


def outcome_bands(outcomes: Sequence[Outcome]) -> tuple[Band, ...]:
    """The confidence bands (:func:`citeqa.qa.scoring.fit_bands`) of the answers given, out of fold."""
    answered = [o for o in outcomes if not o.abstained]
    return fit_bands([o.confidence for o in answered], [o.right for o in answered])


def judge(model: ScoringModel, q: Question, settings: LanguageRule) -> Outcome:
    best = choose(model, q, settings)
    if best is None:
        return Outcome(q, False, False, True, 0.0)
    confidence = float(model.probabilities(q.trace.features)[best])
    abstained = confidence < model.abstain_below
    span = q.trace.spans[best]
    short = None
    if span.read is not None:
        bounds = span_short(span.candidate, span.read.span)
        at = span.candidate.offsets(bounds) if bounds is not None else None
        short = span.candidate.text[at.start : at.end] if at is not None else ""
    right = bool(q.right[best]) and not abstained
    return Outcome(q, right, bool(q.cited[best]), abstained, confidence, short)


def summary(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """hit@1, accuracy, abstention and reliability of confidence, as `citeqa eval` defines them."""
    ans = [o for o in outcomes if o.q.item.answerable]
    una = [o for o in outcomes if not o.q.item.answerable]
    answered = [o for o in outcomes if not o.abstained]
    high = [o for o in answered if o.confidence >= HIGH_CONFIDENCE]

    def share(xs: Sequence[bool]) -> float:
        return round(sum(xs) / len(xs), 3) if xs else float("nan")

    return {
        "hit1": share([o.hit1 for o in ans]),
        "accuracy": share([o.right for o in ans]),
        "abstain_recall": share([o.abstained for o in una]),
        "false_abstention": share([o.abstained for o in ans]),
        "high_conf_share": share([o.confidence >= HIGH_CONFIDENCE for o in answered]),
        "high_conf_right": share([o.right if o.q.item.answerable else False for o in high]),
        "short_em": share([short_em(o) for o in ans]),
        "short_f1": round(float(np.mean([short_f1(o) for o in ans])), 3) if ans else float("nan"),
    }


def short_em(o: Outcome) -> bool:
    """The outcome's short answer matches a gold answer exactly (False for an abstention)."""
    lang = written_in(o.q.item, o.q.trace)
    return not o.abstained and any(ev.exact_match(o.short or "", a, lang) for a in o.q.item.answers)


def short_f1(o: Outcome) -> float:
    """The outcome's best token F1 against the gold answers (0 for an abstention or no answers)."""
    if o.abstained or not o.q.item.answers:
        return 0.0
    lang = written_in(o.q.item, o.q.trace)
    return max(ev.token_f1(o.short or "", a, lang) for a in o.q.item.answers)


def cross_validate(questions: Sequence[Question], folds: int, settings: LanguageRule) -> list[Outcome]:
    """Out-of-fold outcomes: each fold judged by a scorer fitted on the others."""
    out = []
    for f in range(folds):
        model = fit([q for q in questions if fold_of(q, folds) != f], settings)
        out += [judge(model, q, settings) for q in questions if fold_of(q, folds) == f]
    return out
