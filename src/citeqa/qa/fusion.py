"""Pure functions that merge ranked lists from several retrievers.

Both modes are guarded against empty inputs and against lists whose scores are all
equal (a zero range), which would otherwise divide by zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum


class FusionMode(str, Enum):
    """How dense and lexical results are combined."""

    RRF = "rrf"  #: reciprocal rank fusion: sum of weight / (k + rank)
    WEIGHTED = "weighted"  #: min-max normalised scores, weighted sum


def minmax(scores: Mapping[int, float]) -> dict[int, float]:
    """Scale scores to [0, 1]; a list whose scores are all equal maps to 1.0."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high - low <= 1e-12:
        return {key: 1.0 for key in scores}
    return {key: (value - low) / (high - low) for key, value in scores.items()}


def reciprocal_rank(rankings: Sequence[Sequence[int]], weights: Sequence[float], k: float = 60.0) -> dict[int, float]:
    """Reciprocal rank fusion (Cormack et al., 2009) of ranked id lists."""
    fused: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


def weighted_scores(score_maps: Sequence[Mapping[int, float]], weights: Sequence[float]) -> dict[int, float]:
    """Weighted sum of min-max normalised scores; an id missing from a list scores 0 there."""
    fused: dict[int, float] = {}
    for scores, weight in zip(score_maps, weights, strict=True):
        for key, value in minmax(scores).items():
            fused[key] = fused.get(key, 0.0) + weight * value
    return fused


def _best_first(scores: Mapping[int, float]) -> list[int]:
    """The ids of ``scores``, best first (ties broken by id)."""
    return sorted(scores, key=lambda key: (-scores[key], key))


def fuse(
    score_maps: Sequence[Mapping[int, float]],
    weights: Sequence[float],
    mode: FusionMode = FusionMode.WEIGHTED,
    rrf_k: float = 60.0,
) -> list[tuple[int, float]]:
    """Fuse score maps and return ``(id, score)`` best first (ties broken by id)."""
    if mode is FusionMode.RRF:
        rankings = [_best_first(m) for m in score_maps]
        fused = reciprocal_rank(rankings, weights, rrf_k)
    else:
        fused = weighted_scores(score_maps, weights)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))
