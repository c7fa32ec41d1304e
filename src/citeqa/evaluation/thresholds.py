"""``--fail-under``: parse metric thresholds and list the metrics that miss them."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from citeqa.errors import ConfigError
from citeqa.evaluation.metrics import (
    Metrics,
    format_value,
)

RATIO_METRICS = frozenset(
    {
        "hit1", "hit5", "mrr10", "accuracy", "short_accuracy", "exact_match", "f1", "lang_first", "lang_detected",
        "abstain_precision", "abstain_recall", "false_abstention", "citation_exact",
    }
)  # fmt: skip
MAX_METRICS = frozenset({"false_abstention", "latency_p50", "latency_p95"})
"""Thresholds on these are upper bounds (lower is better); all others are minimums."""

THRESHOLD_ALIASES: Mapping[str, str] = {
    "answer": "accuracy",
    "short": "short_accuracy",
    "acc": "accuracy",
    "em": "exact_match",
    "exact": "exact_match",
    "mrr": "mrr10",
    "mrr@10": "mrr10",
    "hit@1": "hit1",
    "hit@5": "hit5",
    "citations": "citation_exact",
    "p50": "latency_p50",
    "p95": "latency_p95",
}


def threshold_key(name: str) -> str:
    """The canonical metric for a threshold name or alias; ConfigError if unknown."""
    key = name.strip().lower()
    key = THRESHOLD_ALIASES.get(key, key)
    if key not in RATIO_METRICS | MAX_METRICS:
        known = ", ".join(sorted(RATIO_METRICS | MAX_METRICS | set(THRESHOLD_ALIASES)))
        raise ConfigError(f"unknown metric {name.strip()!r} in thresholds; use one of: {known}")
    return key


def number(key: str, raw: str) -> float:
    """The number a threshold gives; ConfigError when it is none."""
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"threshold for {key} is not a number: {raw.strip()!r}") from None


def _threshold_value(key: str, raw: str) -> float:
    """Parse a bound: a finite number, within [0, 1] for ratios, >= 0 for latency (ms)."""
    value = number(key, raw)
    if not math.isfinite(value):
        raise ConfigError(f"threshold for {key} must be a finite number, got {raw.strip()!r}")
    if key in RATIO_METRICS and not 0.0 <= value <= 1.0:
        raise ConfigError(f"threshold for {key} must be between 0 and 1, got {value:g}")
    if value < 0.0:
        raise ConfigError(f"threshold for {key} must not be negative, got {value:g}")
    return value


def parse_thresholds(spec: str | None) -> dict[str, float]:
    """Parse ``"hit1=0.9,answer=0.85"`` into ``{"hit1": 0.9, "accuracy": 0.85}``.

    Names may be aliases (``answer`` = accuracy, ``mrr`` = mrr10, ``p95`` = latency_p95,
    ...). Raises ConfigError on malformed parts, unknown names, bad or repeated values.
    """
    return parse_bounds(spec, threshold_key, _threshold_value, "hit1=0.9")


def parse_bounds(
    spec: str | None, key_of: Callable[[str], str], value_of: Callable[[str, str], float], example: str
) -> dict[str, float]:
    """``"name=value,..."`` as ``{key_of(name): value_of(key, value)}``; the two raise ConfigError for a
    name or value they refuse, and so does a part without ``=`` (``example`` shows one) or a repeated key."""
    bounds: dict[str, float] = {}
    for part in (spec if spec is not None else "").split(","):
        if not part.strip():
            continue
        name, sep, raw = part.partition("=")
        if not sep:
            raise ConfigError(f"threshold {part.strip()!r} must look like metric=value, e.g. {example}")
        key = key_of(name)
        if key in bounds:
            raise ConfigError(f"threshold for {key} is given twice")
        bounds[key] = value_of(key, raw)
    return bounds


def check_thresholds(metrics: Metrics, thresholds: Mapping[str, float]) -> list[str]:
    """Human-readable failures of the overall metrics; empty when all pass.

    A metric that is not applicable (None) fails its threshold: it was asked for and
    cannot be shown. Comparisons allow 1e-9 of float slack.
    """
    failures = []
    for name, bound in thresholds.items():
        key = threshold_key(name)
        value = getattr(metrics.overall, key)
        shown = format_value(key, bound)
        if value is None:
            failures.append(f"{key} is not applicable on this QA file (threshold {shown})")
        elif key in MAX_METRICS and value > bound + 1e-9:
            failures.append(f"{key} = {format_value(key, value)} is above the maximum {shown}")
        elif key not in MAX_METRICS and value < bound - 1e-9:
            failures.append(f"{key} = {format_value(key, value)} is below the required {shown}")
    return failures
