"""Evaluate claim checking on a claim file: accuracy per gold verdict, overall and per language,
the confusion matrix, and the count of ``not_found`` claims called ``supported`` (the error
that matters most: it tells a reader the documents say something they do not)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from citeqa.claims.check import NOT_FOUND, SUPPORTED, VERDICTS, ClaimCheck
from citeqa.errors import ConfigError
from citeqa.evaluation.claims_file import ClaimItem
from citeqa.evaluation.metrics import percentile
from citeqa.evaluation.thresholds import number, parse_bounds

#: ``--fail-under`` names for a claim file; ``not_found_as_supported`` is an upper bound (a count).
CLAIM_METRICS = (
    "accuracy",
    "supported",
    "conflicting",
    "not_found",
    "supported_precision",
    "not_found_as_supported",
)
CLAIM_ALIASES = {
    "acc": "accuracy",
    "claim_accuracy": "accuracy",
    "nf_as_supported": "not_found_as_supported",
    "not_found_supported": "not_found_as_supported",
}


@dataclass(frozen=True)
class ClaimResult:
    """One claim, the check's result and whether the verdict is the gold one."""

    item: ClaimItem
    check: ClaimCheck

    @property
    def correct(self) -> bool:
        return self.check.verdict == self.item.verdict


@dataclass(frozen=True)
class ClaimMetrics:
    """Accuracy overall, per gold verdict and per language; confusion[gold][predicted] counts."""

    n: int
    accuracy: float
    per_verdict: dict[str, float | None]
    per_lang: dict[str, float]
    confusion: dict[str, dict[str, int]]
    not_found_as_supported: int
    latency_p50: float | None = None
    latency_p95: float | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def supported_precision(self) -> float | None:
        """Share of the claims called ``supported`` that are: what a "supported" is worth."""
        called = sum(row[SUPPORTED] for row in self.confusion.values())
        return self.confusion[SUPPORTED][SUPPORTED] / called if called else None

    def value(self, key: str) -> float | None:
        if key == "accuracy":
            return self.accuracy
        if key == "supported_precision":
            return self.supported_precision
        if key == "not_found_as_supported":
            return float(self.not_found_as_supported)
        return self.per_verdict.get(key)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: the fields, with ``supported_precision``."""
        return {**asdict(self), "supported_precision": self.supported_precision}


def evaluate_claims(check: Callable[[str], ClaimCheck], items: Iterable[ClaimItem]) -> list[ClaimResult]:
    """Check every claim, in file order."""
    return [ClaimResult(item, check(item.claim)) for item in items]


def summarize_claims(results: Sequence[ClaimResult]) -> ClaimMetrics:
    confusion = {g: dict.fromkeys(VERDICTS, 0) for g in VERDICTS}
    for r in results:
        confusion[r.item.verdict][r.check.verdict] += 1
    counts = {g: sum(row.values()) for g, row in confusion.items()}
    per_verdict = {g: (confusion[g][g] / counts[g] if counts[g] else None) for g in VERDICTS}
    langs = sorted({r.item.lang or r.check.language for r in results})
    per_lang = {}
    for lang in langs:
        group = [r for r in results if (r.item.lang or r.check.language) == lang]
        per_lang[lang] = sum(r.correct for r in group) / len(group)
    latencies = [r.check.latency_ms for r in results]
    n = len(results)
    return ClaimMetrics(
        n,
        sum(r.correct for r in results) / n if n else math.nan,
        per_verdict,
        per_lang,
        confusion,
        confusion[NOT_FOUND][SUPPORTED],
        percentile(latencies, 50),
        percentile(latencies, 95),
        counts,
    )


def claims_table(metrics: ClaimMetrics) -> list[list[str]]:
    """Rows of the terminal table: header, accuracy per gold verdict, overall, per language."""
    rows = [["gold verdict", "claims", "accuracy", *(f"→ {v}" for v in VERDICTS)]]
    for g in VERDICTS:
        acc = metrics.per_verdict[g]
        rows.append(
            [
                g,
                str(metrics.counts.get(g, 0)),
                "n/a" if acc is None else f"{acc:.3f}",
                *(str(metrics.confusion[g][p]) for p in VERDICTS),
            ]
        )
    rows.append(["overall", str(metrics.n), f"{metrics.accuracy:.3f}", "", "", ""])
    for lang, acc in metrics.per_lang.items():
        rows.append([f"lang {lang}", "", f"{acc:.3f}", "", "", ""])
    return rows


def print_claims_table(metrics: ClaimMetrics, console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    header, *body = claims_table(metrics)
    table = Table(title="citeqa claim checking")
    for i, name in enumerate(header):
        table.add_column(name, justify="left" if i == 0 else "right")
    for row in body:
        table.add_row(*row)
    console = console if console is not None else Console(highlight=False)
    console.print(table)
    precision = metrics.supported_precision
    console.print(
        f"precision of supported: {'n/a' if precision is None else f'{precision:.3f}'}; "
        f"not_found claims called supported: {metrics.not_found_as_supported}"
    )
    if metrics.latency_p50 is not None:
        console.print(f"latency p50 {metrics.latency_p50:.0f} ms, p95 {metrics.latency_p95:.0f} ms")


def parse_claim_thresholds(spec: str | None) -> dict[str, float]:
    """``"accuracy=0.85,not_found_as_supported=0"``: minimums, except the count, which is a maximum."""
    return parse_bounds(spec, _claim_key, _claim_bound, "accuracy=0.85")


def _claim_key(name: str) -> str:
    key = CLAIM_ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in CLAIM_METRICS:
        raise ConfigError(
            f"unknown claim metric {name.strip()!r} in thresholds; use one of: {', '.join(CLAIM_METRICS)}"
        )
    return key


def _claim_bound(key: str, raw: str) -> float:
    value = number(key, raw)
    if not math.isfinite(value) or value < 0 or (key != "not_found_as_supported" and value > 1):
        raise ConfigError(
            f"threshold for {key} must be between 0 and 1 (a count >= 0 for "
            f"not_found_as_supported), got {raw.strip()!r}"
        )
    return value


def check_claim_thresholds(metrics: ClaimMetrics, thresholds: Mapping[str, float]) -> list[str]:
    failures = []
    for key, bound in thresholds.items():
        value = metrics.value(key)
        if value is None:
            failures.append(f"{key} is not applicable on this claim file (threshold {bound:g})")
        elif key == "not_found_as_supported" and value > bound:
            failures.append(f"{key} = {value:g} is above the maximum {bound:g}")
        elif key != "not_found_as_supported" and value < bound - 1e-9:
            failures.append(f"{key} = {value:.3f} is below the required {bound:g}")
    return failures


def write_claim_predictions(results: Sequence[ClaimResult], path: Path) -> Path:
    """One JSON line per claim: the check record plus ``id``, ``gold`` and ``correct``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in results:
            record = {"id": r.item.id, "gold": r.item.verdict, "correct": r.correct, **r.check.to_dict()}
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path
