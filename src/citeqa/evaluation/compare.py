"""Compare two runs question by question: metric changes with paired intervals, fixed and broken questions.

A run is a list of prediction records (the lines ``--predictions`` writes). Runs are
paired by question id. Every per-question value the records hold (``hit1``, ``correct``,
``f1``, ... and any flag added later) is compared, plus three outcomes derived from
``abstained``: ``right`` (a correct answer, or an abstention on an unanswerable question),
``abstain_right`` (abstained on an unanswerable question) and ``false_abstention``
(abstained on an answerable one; lower is better).

For each metric the change is the mean of the paired differences, with a BCa bootstrap
interval (``scipy.stats.bootstrap``, seeded, so a comparison is reproducible), and an exact
sign test (``scipy.stats.binomtest``) of
the questions that got better against those that got worse (for yes/no metrics this is
McNemar's exact test). A metric *regressed* when its whole interval lies on the worse side
of 0 and the sign test agrees (p < 0.05): with a handful of questions the bootstrap
interval alone can exclude 0 on one changed question.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citeqa.errors import QAFileError
from citeqa.evaluation.report import meta_path
from citeqa.evaluation.rows import collect_items, jsonl_records, read_text, text_lines
from citeqa.evaluation.user_json import BadInput, loads
from citeqa.messages import Said

RESAMPLES = 2000
"""Bootstrap resamples per metric."""

SEED = 0
"""Seed of the bootstrap's random generator: the same inputs always give the same interval."""

LEVEL = 0.95
"""Coverage of the bootstrap interval."""

NOT_METRICS = frozenset(
    {"rank", "citations_exact", "citations_total", "confidence", "latency_ms", "abstained", "answerable"}
)
"""Numeric or boolean record fields that are not per-question scores."""

LOWER_IS_BETTER = frozenset({"false_abstention"})

METRIC_ORDER = (
    "right", "hit1", "hit5", "rr", "correct", "short_correct", "exact", "f1", "abstain_right",
    "false_abstention", "lang_first",
)  # fmt: skip
"""Display order; metrics not listed follow alphabetically."""

LABELS: Mapping[str, str] = {
    "right": "right outcome",
    "hit1": "hit@1",
    "hit5": "hit@5",
    "rr": "MRR@10",
    "correct": "answer accuracy",
    "short_correct": "short accuracy",
    "exact": "exact match",
    "f1": "token F1",
    "abstain_right": "abstention recall",
    "false_abstention": "false abstention",
    "lang_first": "1st cite in lang",
}
"""Short names for the comparison table (it has to fit 80 columns)."""

_BATCH = 250
"""Resamples drawn at a time, so memory stays small on large QA sets."""


@dataclass(frozen=True, slots=True)
class PredictionRun:
    """The records of one predictions file and its provenance sidecar (None when absent)."""

    path: Path | None
    records: tuple[Mapping[str, Any], ...]
    provenance: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class MetricDelta:
    """The change of one per-question metric between two runs, over the questions both score.

    ``low``/``high`` bound the change (new - old) at :data:`LEVEL`; ``better_ids`` and
    ``worse_ids`` are the questions whose value improved or got worse; ``p_value`` is the
    exact two-sided sign test of those counts (McNemar's exact test for a yes/no metric).
    """

    metric: str
    n: int
    old: float | None
    new: float | None
    delta: float | None
    low: float | None
    high: float | None
    binary: bool
    higher_is_better: bool
    better_ids: tuple[str, ...]
    worse_ids: tuple[str, ...]
    p_value: float | None
    level: float = LEVEL

    @property
    def label(self) -> str:
        """A readable name for tables."""
        return LABELS.get(self.metric, self.metric)

    @property
    def significant(self) -> bool:
        """Whether the interval excludes 0 and the sign test rejects "no change" at 1 - ``level``."""
        if self.low is None or self.high is None or self.p_value is None:
            return False
        return (self.low > 0 or self.high < 0) and self.p_value < 1.0 - self.level

    @property
    def regressed(self) -> bool:
        """Whether the metric got significantly worse."""
        if not self.significant or self.low is None or self.high is None:  # (significant: neither is None)
            return False
        return self.high < 0 if self.higher_is_better else self.low > 0

    @property
    def improved(self) -> bool:
        """Whether the metric got significantly better."""
        if not self.significant or self.low is None or self.high is None:  # (significant: neither is None)
            return False
        return self.low > 0 if self.higher_is_better else self.high < 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data, with the verdicts."""
        names = ("metric", "n", "old", "new", "delta", "low", "high", "binary", "higher_is_better", "p_value", "level")
        return {
            **{k: getattr(self, k) for k in names},
            "label": self.label,
            "regressed": self.regressed,
            "improved": self.improved,
            "better_ids": list(self.better_ids),
            "worse_ids": list(self.worse_ids),
        }


@dataclass(frozen=True, slots=True)
class QuestionChange:
    """A question whose outcome changed: what was asked and both answers."""

    id: str
    question: str
    lang: str
    old_answer: str | None
    new_answer: str | None


@dataclass(frozen=True)
class Comparison:
    """Two runs compared: per-metric changes, fixed and broken questions, unpaired ids.

    ``fixed``/``broken`` follow the ``right`` outcome; ``changed_settings`` lists the
    provenance entries that differ between the runs (empty when either has none).
    """

    deltas: tuple[MetricDelta, ...]
    fixed: tuple[QuestionChange, ...]
    broken: tuple[QuestionChange, ...]
    n_paired: int
    only_old: tuple[str, ...]
    only_new: tuple[str, ...]
    changed_settings: tuple[str, ...] = ()
    resamples: int = RESAMPLES
    seed: int = SEED
    level: float = LEVEL

    @property
    def regressions(self) -> tuple[MetricDelta, ...]:
        """The metrics that got significantly worse."""
        return tuple(d for d in self.deltas if d.regressed)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (``--compare-report``)."""
        return {
            "n_paired": self.n_paired,
            "only_old": list(self.only_old),
            "only_new": list(self.only_new),
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "level": self.level},
            "changed_settings": list(self.changed_settings),
            "metrics": [d.to_dict() for d in self.deltas],
            "regressions": [d.metric for d in self.regressions],
            "fixed": [asdict(c) for c in self.fixed],
            "broken": [asdict(c) for c in self.broken],
        }


# --------------------------------------------------------------------------- loading


def load_predictions(path: Path) -> PredictionRun:
    """Read a predictions JSONL file (and its sidecar, if any), validated whole.

    Every line must be a JSON object with a non-empty string ``id`` (unique), and the
    booleans ``answerable`` and ``abstained``; a problem raises :class:`QAFileError`
    naming the file and line.
    """
    path = Path(path)
    lines = text_lines(path, "predictions")  # one at a time: the file is never held whole
    records = collect_items(path, jsonl_records(lines), _record, "predictions_none", _id_of)
    return PredictionRun(path, tuple(records), _read_meta(meta_path(path)))


def _record(record: Mapping[str, Any], lineno: int) -> Mapping[str, Any]:
    """One predictions line, validated; ValueError says what is wrong."""
    if not isinstance(record.get("id"), str) or not record["id"].strip():
        raise ValueError(Said("id_missing"))
    for key in ("answerable", "abstained"):
        if not isinstance(record.get(key), bool):
            raise ValueError(Said("flag_bad", key=key))
    return record


def _id_of(record: Mapping[str, Any]) -> str:
    ident: str = record["id"]  # checked a non-empty str when the record was read
    return ident


def _read_meta(path: Path) -> Mapping[str, Any] | None:
    """The sidecar's provenance block; a missing, unreadable or malformed sidecar is no provenance."""
    try:
        data = loads(read_text(path, "provenance"))
    except (QAFileError, BadInput):
        return None
    block = data.get("provenance") if isinstance(data, dict) else None
    return block if isinstance(block, dict) else None


# --------------------------------------------------------------------------- comparing


def outcomes(record: Mapping[str, Any]) -> dict[str, bool | float | None]:
    """Every per-question metric of one record: its flags plus the derived abstention outcomes."""
    values: dict[str, bool | float | None] = {}
    for key, value in record.items():
        if key in NOT_METRICS or not _is_number(value):
            continue
        values[key] = value
    answerable, abstained = bool(record["answerable"]), bool(record["abstained"])
    values["right"] = bool(record.get("correct")) if answerable else abstained
    values["abstain_right"] = None if answerable else abstained
    values["false_abstention"] = abstained if answerable else None
    return values


def _is_number(value: Any) -> bool:
    return isinstance(value, bool | int | float) and (isinstance(value, bool) or math.isfinite(value))


def compare_runs(
    old: Sequence[Mapping[str, Any]],
    new: Sequence[Mapping[str, Any]],
    *,
    old_provenance: Mapping[str, Any] | None = None,
    new_provenance: Mapping[str, Any] | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Comparison:
    """Compare two runs' prediction records, paired by id (deterministic for a given ``seed``)."""
    old_by_id = {r["id"]: r for r in old}
    new_by_id = {r["id"]: r for r in new}
    paired = [i for i in new_by_id if i in old_by_id]
    old_values = {i: outcomes(old_by_id[i]) for i in paired}
    new_values = {i: outcomes(new_by_id[i]) for i in paired}
    names = {k for v in (*old_values.values(), *new_values.values()) for k in v}
    deltas = tuple(
        metric_delta(
            name,
            [(i, old_values[i].get(name), new_values[i].get(name)) for i in paired],
            resamples=resamples,
            seed=seed,
            level=level,
        )
        for name in sorted(names, key=_metric_sort_key)
    )
    right = next((d for d in deltas if d.metric == "right"), None)
    return Comparison(
        deltas=deltas,
        fixed=tuple(_change(old_by_id[i], new_by_id[i]) for i in (right.better_ids if right else ())),
        broken=tuple(_change(old_by_id[i], new_by_id[i]) for i in (right.worse_ids if right else ())),
        n_paired=len(paired),
        only_old=tuple(i for i in old_by_id if i not in new_by_id),
        only_new=tuple(i for i in new_by_id if i not in old_by_id),
        changed_settings=changed_provenance(old_provenance, new_provenance),
        resamples=resamples,
        seed=seed,
        level=level,
    )


def _metric_sort_key(name: str) -> tuple[int, str]:
    return (METRIC_ORDER.index(name), "") if name in METRIC_ORDER else (len(METRIC_ORDER), name)


def metric_delta(
    metric: str,
    pairs: Sequence[tuple[str, bool | float | None, bool | float | None]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> MetricDelta:
    """The change of one metric over ``(id, old value, new value)`` pairs; pairs with a None are left out."""
    used = [(i, a, b) for i, a, b in pairs if a is not None and b is not None]
    binary = bool(used) and all(isinstance(a, bool) and isinstance(b, bool) for _, a, b in used)
    old = np.array([float(a) for _, a, _ in used])
    new = np.array([float(b) for _, _, b in used])
    higher = metric not in LOWER_IS_BETTER
    diff = new - old
    better = tuple(i for (i, _, _), d in zip(used, diff) if (d > 0) == higher and d != 0)
    worse = tuple(i for (i, _, _), d in zip(used, diff) if (d < 0) == higher and d != 0)
    low, high = bootstrap_interval(diff, resamples, seed, level)
    return MetricDelta(
        metric=metric,
        n=len(used),
        old=float(old.mean()) if used else None,
        new=float(new.mean()) if used else None,
        delta=float(diff.mean()) if used else None,
        low=low,
        high=high,
        binary=binary,
        higher_is_better=higher,
        better_ids=better,
        worse_ids=worse,
        p_value=sign_test(len(better), len(worse)) if used else None,
        level=level,
    )


def bootstrap_interval(
    diff: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> tuple[float | None, float | None]:
    """BCa bootstrap interval (``scipy.stats.bootstrap``) of the mean of paired differences; (None, None) when empty.

    Constant differences have no spread to resample: their interval is that value.
    """
    from scipy.stats import bootstrap

    n = len(diff)
    if n == 0:
        return None, None
    if not np.any(diff != diff[0]):
        return float(diff[0]), float(diff[0])
    result = bootstrap(
        (diff,),
        np.mean,
        n_resamples=resamples,
        batch=_BATCH,
        confidence_level=level,
        method="BCa",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def sign_test(better: int, worse: int) -> float:
    """Two-sided exact sign test (McNemar's exact test on yes/no pairs): ``scipy.stats.binomtest`` at 1/2."""
    from scipy.stats import binomtest

    n = better + worse
    return 1.0 if n == 0 else float(binomtest(better, n, 0.5).pvalue)


def _change(old: Mapping[str, Any], new: Mapping[str, Any]) -> QuestionChange:
    return QuestionChange(
        str(new["id"]),
        str(new.get("question") or old.get("question") or ""),
        str(new.get("lang") or old.get("lang") or ""),
        _shown(old),
        _shown(new),
    )


def _shown(record: Mapping[str, Any]) -> str | None:
    """The answer a record gave (None for an abstention)."""
    return None if record.get("abstained") else record.get("answer")


def changed_provenance(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Dotted provenance keys whose values differ (the run date aside); empty without both blocks."""
    if old is None or new is None:
        return ()
    a, b = dict(_flatten(old)), dict(_flatten(new))
    return tuple(k for k in sorted(a.keys() | b.keys()) if k not in VOLATILE and a.get(k) != b.get(k))


VOLATILE = frozenset({"date"})
"""Provenance entries that differ on every run."""


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        if isinstance(value, Mapping):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


# --------------------------------------------------------------------------- output


def format_delta(delta: MetricDelta) -> list[str]:
    """One table row: metric, n, before, after, change, interval, better/worse, p, verdict."""

    def num(value: float | None, signed: bool = False) -> str:
        return "n/a" if value is None else (f"{value:+.3f}" if signed else f"{value:.3f}")

    interval = "n/a" if delta.low is None else f"[{delta.low:+.3f}, {delta.high:+.3f}]"
    verdict = "worse" if delta.regressed else ("better" if delta.improved else "")
    p = "" if delta.p_value is None else f"{delta.p_value:.3g}"
    return [
        delta.label,
        str(delta.n),
        num(delta.old),
        num(delta.new),
        num(delta.delta, True),
        interval,
        f"{len(delta.better_ids)}/{len(delta.worse_ids)}",
        p,
        verdict,
    ]


COLUMNS = ("metric", "n", "before", "after", "change", "95% interval", "+/-", "p", "")
"""The table's columns; ``+/-`` counts questions better/worse, ``p`` is the sign test of those counts."""


def print_comparison(comparison: Comparison, old_label: str = "before", console: Any = None, limit: int = 50) -> None:
    """Print the metric changes as a rich table, then the fixed and broken questions (up to ``limit`` each)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = console if console is not None else Console()
    table = Table(
        title=f"citeqa comparison: {old_label} -> this run ({comparison.n_paired} questions in both)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        collapse_padding=True,
        pad_edge=False,
    )
    for i, name in enumerate(COLUMNS):
        table.add_column(name, justify="left" if i == 0 else "right", overflow="fold")
    for delta in comparison.deltas:
        table.add_row(*format_delta(delta), style="red" if delta.regressed else None)
    console.print(table)
    for line in comparison_lines(comparison, limit):
        console.print(line, markup=False, highlight=False)


def comparison_lines(comparison: Comparison, limit: int = 50) -> list[str]:
    """The plain-text lines under the table: unpaired ids, changed settings, fixed and broken questions."""
    lines = []
    for name, ids in (("only in the earlier run", comparison.only_old), ("only in this run", comparison.only_new)):
        if ids:
            lines.append(f"{name}: {len(ids)} question(s): {', '.join(ids[:limit])}{' ...' * (len(ids) > limit)}")
    if comparison.changed_settings:
        lines.append(f"changed between the runs: {', '.join(comparison.changed_settings)}")
    for name, changes in (("fixed", comparison.fixed), ("broken", comparison.broken)):
        lines.append(f"{name} ({len(changes)}):")
        for change in changes[:limit]:
            lines.append(f"  {change.id} [{change.lang}] {change.question}")
        if len(changes) > limit:
            lines.append(f"  ... and {len(changes) - limit} more (see --compare-report)")
    return lines


def regression_lines(comparison: Comparison) -> list[str]:
    """One line per regressed metric, for ``--fail-on-regression``."""
    return [
        f"{d.label} fell from {d.old:.3f} to {d.new:.3f} (95% interval of the change "
        f"[{d.low:+.3f}, {d.high:+.3f}], {len(d.worse_ids)} questions worse, {len(d.better_ids)} better)"
        for d in comparison.regressions
    ]


def write_comparison(comparison: Comparison, path: Path) -> Path:
    """Write the comparison as indented JSON; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(comparison.to_dict(), ensure_ascii=False, indent=2) + "\n", "utf-8")
    return path
