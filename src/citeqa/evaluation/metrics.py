"""Metrics over graded questions: per language, abstention, latency, reliability of confidence."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

from citeqa.evaluation.grading import (
    QuestionResult,
    predicted_text,
    short_text,
)
from citeqa.evaluation.matching import squad_exact_match, squad_f1

LANG_ORDER = ("es", "pt", "en")


@dataclass(frozen=True, slots=True)
class Scores:
    """The metrics of one group of questions (all, or one question language).

    Ratios are in [0, 1] and None when their denominator is empty:

    * ``hit1``, ``hit5``, ``mrr10``, ``accuracy`` (the answer sentence holds a gold answer),
      ``short_accuracy``, ``exact_match``, ``f1`` (the short answer, SQuAD-style): over
      answerable questions (an abstention is a miss / wrong answer);
    * ``answer_len``: mean characters of the non-abstained answers (all questions);
    * ``lang_first``: over the ``n_lang_first`` questions it applies to (see score_question);
    * ``lang_detected``: questions whose detected language is the item's ``lang``;
    * ``abstain_precision``: unanswerable among abstentions (None if nothing abstained);
    * ``abstain_recall``: abstentions among unanswerable questions;
    * ``false_abstention``: abstentions among answerable questions;
    * ``citation_exact``: exact citations among all ``n_citations`` citations;
    * ``latency_p50``/``latency_p95``: ms, linear-interpolated percentiles.
    """

    n: int
    n_answerable: int
    n_unanswerable: int
    n_abstained: int
    hit1: float | None
    hit5: float | None
    mrr10: float | None
    accuracy: float | None
    short_accuracy: float | None
    exact_match: float | None
    f1: float | None
    answer_len: float | None
    lang_first: float | None
    n_lang_first: int
    lang_detected: float | None
    abstain_precision: float | None
    abstain_recall: float | None
    false_abstention: float | None
    citation_exact: float | None
    n_citations: int
    latency_p50: float | None
    latency_p95: float | None

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON-ready mapping, in field order."""
        return asdict(self)


METRIC_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Scores))


@dataclass(frozen=True)
class Metrics:
    """Scores overall and per question language (``by_lang`` in display order)."""

    overall: Scores
    by_lang: dict[str, Scores]

    def columns(self) -> list[tuple[str, Scores]]:
        """``("overall", ...)`` then each language: the table and chart columns."""
        return [("overall", self.overall), *self.by_lang.items()]

    def to_dict(self) -> dict[str, dict[str, float | int | None]]:
        """``{"overall": {...}, "es": {...}, ...}``."""
        return {name: scores.to_dict() for name, scores in self.columns()}


def summarize(results: Sequence[QuestionResult]) -> Metrics:
    """Aggregate per-question results overall and per question language."""
    langs = sorted({r.item.lang for r in results}, key=_lang_sort_key)
    by_lang = {lang: score_group([r for r in results if r.item.lang == lang]) for lang in langs}
    return Metrics(overall=score_group(results), by_lang=by_lang)


@dataclass(frozen=True, slots=True)
class SquadScores:
    """Exact match and token F1 as SQuAD v1.1's official script computes them (:func:`squad_scores`)."""

    exact_match: float | None
    f1: float | None

    def to_dict(self) -> dict[str, float | None]:
        return asdict(self)


def squad_scores(results: Sequence[QuestionResult]) -> dict[str, SquadScores]:
    """SQuAD v1.1's official exact match and token F1 per table column (``overall``, then each question
    language, as :meth:`Metrics.columns`), over answerable questions: the short answer judged as
    :func:`~citeqa.evaluation.matching.squad_normalize` reads it (English articles only), an
    abstention as the empty answer, as the official script scores ``--squad-predictions``.

    :attr:`Scores.exact_match` and :attr:`Scores.f1` differ in dropping each answer language's own
    articles (MLQA's and MKQA's lists) and folding accents and Unicode punctuation."""
    langs = sorted({r.item.lang for r in results}, key=_lang_sort_key)
    groups = {"overall": results, **{lang: [r for r in results if r.item.lang == lang] for lang in langs}}
    return {name: _squad_group(group) for name, group in groups.items()}


def _squad_group(results: Sequence[QuestionResult]) -> SquadScores:
    answerable = [r for r in results if r.answerable]
    predictions = [(short_text(r.answer), r.item.answers) for r in answerable]
    return SquadScores(
        exact_match=mean([float(any(squad_exact_match(p, g) for g in golds)) for p, golds in predictions]),
        f1=mean([max(squad_f1(p, g) for g in golds) for p, golds in predictions]),
    )


@dataclass(frozen=True)
class Bucket:
    """Questions whose confidence falls in ``[low, high)`` and how often they were right (:func:`reliability`)."""

    low: float
    high: float
    n: int
    right: float | None

    def to_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def reliability(results: Sequence[QuestionResult], edges: Sequence[float] = (0.3, 0.8)) -> list[Bucket]:
    """Share of right outcomes per confidence bucket (a reliability table).

    An outcome is right when an answerable question got a correct answer by the sentence measure
    (:attr:`QuestionResult.correct`: the answer sentence holds a gold answer, as ``accuracy`` counts
    it, not the short answer), or an unanswerable one was abstained on.
    """
    bounds = [0.0, *edges, 1.0000001]
    buckets = []
    for low, high in zip(bounds, bounds[1:]):
        group = [r for r in results if low <= r.answer.confidence < high]
        right = [bool(r.correct) if r.answerable else r.abstained for r in group]
        buckets.append(Bucket(low, min(high, 1.0), len(group), ratio(sum(right), len(right))))
    return buckets


def _lang_sort_key(lang: str) -> tuple[int, str]:
    """es, pt, en first, then the rest alphabetically."""
    return (LANG_ORDER.index(lang), "") if lang in LANG_ORDER else (len(LANG_ORDER), lang)


def score_group(results: Sequence[QuestionResult]) -> Scores:
    """The :class:`Scores` of one group of results."""
    answerable = [r for r in results if r.answerable]
    lang_first = [r.lang_first for r in results if r.lang_first is not None]
    n_citations = sum(r.citations_total for r in results)
    latencies = [r.answer.latency_ms for r in results]
    return Scores(
        n=len(results),
        n_answerable=len(answerable),
        n_unanswerable=len(results) - len(answerable),
        n_abstained=sum(r.abstained for r in results),
        **_retrieval_and_answer(answerable),
        answer_len=mean([float(len(predicted_text(r.answer))) for r in results if not r.abstained]),
        lang_first=ratio(sum(lang_first), len(lang_first)),
        n_lang_first=len(lang_first),
        lang_detected=mean([float(r.answer.language == r.item.lang) for r in results]),
        **_abstention(results),
        citation_exact=ratio(sum(r.citations_exact for r in results), n_citations),
        n_citations=n_citations,
        latency_p50=percentile(latencies, 50),
        latency_p95=percentile(latencies, 95),
    )


def _retrieval_and_answer(answerable: Sequence[QuestionResult]) -> dict[str, float | None]:
    """Means of the per-question retrieval and answer values (answerable only)."""
    return {
        "hit1": mean([float(bool(r.hit1)) for r in answerable]),
        "hit5": mean([float(bool(r.hit5)) for r in answerable]),
        "mrr10": mean([r.rr if r.rr is not None else 0.0 for r in answerable]),
        "accuracy": mean([float(bool(r.correct)) for r in answerable]),
        "short_accuracy": mean([float(bool(r.short_correct)) for r in answerable]),
        "exact_match": mean([float(bool(r.exact)) for r in answerable]),
        "f1": mean([r.f1 if r.f1 is not None else 0.0 for r in answerable]),
    }


def _abstention(results: Sequence[QuestionResult]) -> dict[str, float | None]:
    """Abstention precision/recall (positive class: unanswerable) and false abstention."""
    abstained = [r for r in results if r.abstained]
    n_unanswerable = sum(not r.answerable for r in results)
    right = sum(not r.answerable for r in abstained)
    return {
        "abstain_precision": ratio(right, len(abstained)),
        "abstain_recall": ratio(right, n_unanswerable),
        "false_abstention": ratio(len(abstained) - right, len(results) - n_unanswerable),
    }


def ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``, or None when the denominator is 0 (not applicable)."""
    return None if denominator == 0 else numerator / denominator


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean, or None for no values."""
    return ratio(math.fsum(values), len(values))


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile with linear interpolation (numpy's default); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def format_value(key: str, value: float | int | None) -> str:
    """A metric value for display: counts as integers, latency in ms, ratios to 3 places."""
    if value is None:
        return "n/a"
    if key == "n" or key.startswith("n_"):
        return str(int(value))
    if key.startswith("latency"):
        return f"{value:.0f} ms"
    if key == "answer_len":
        return f"{value:.1f}"
    return f"{value:.3f}"
