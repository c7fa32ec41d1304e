"""What a run leaves: the terminal table, predictions JSONL, report.json, questions.csv, metrics.png, reliability.png."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from citeqa.evaluation.grading import (
    QuestionResult,
)
from citeqa.evaluation.metrics import (
    Metrics,
    format_value,
    reliability,
)
from citeqa.evaluation.qa_file import LIST_SEPARATOR

METRIC_LABELS: tuple[tuple[str, str], ...] = (
    ("n", "questions"),
    ("n_answerable", "answerable"),
    ("n_unanswerable", "unanswerable"),
    ("n_abstained", "abstained"),
    ("hit1", "hit@1"),
    ("hit5", "hit@5"),
    ("mrr10", "MRR@10"),
    ("accuracy", "answer accuracy (sentence)"),
    ("short_accuracy", "short answer accuracy"),
    ("exact_match", "short answer exact match"),
    ("f1", "short answer token F1"),
    ("answer_len", "answer length (chars)"),
    ("lang_first", "1st citation in question lang"),
    ("n_lang_first", "questions for lang metric"),
    ("lang_detected", "question language detected"),
    ("abstain_precision", "abstention precision"),
    ("abstain_recall", "abstention recall"),
    ("false_abstention", "false abstention"),
    ("citation_exact", "exact citations"),
    ("n_citations", "citations"),
    ("latency_p50", "latency p50"),
    ("latency_p95", "latency p95"),
)
"""Table rows: (metric key, label), in display order; covers every Scores field."""


def table_rows(metrics: Metrics) -> list[list[str]]:
    """Header row then one row per metric: label, then a value per column."""
    columns = metrics.columns()
    rows = [["metric", *(name for name, _ in columns)]]
    for key, label in METRIC_LABELS:
        rows.append([label, *(format_value(key, getattr(s, key)) for _, s in columns)])
    return rows


def render_table(metrics: Metrics) -> str:
    """A plain-text table: rows = metrics, columns = overall then each language."""
    rows = table_rows(metrics)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(row: list[str]) -> str:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(rows[0]), rule, *(line(r) for r in rows[1:])])


def print_table(metrics: Metrics, console: Any = None) -> None:
    """Print the metrics as a rich Table (to ``console``, or a new stdout Console)."""
    from rich.console import Console
    from rich.table import Table

    header, *body = table_rows(metrics)
    table = Table(title="citeqa evaluation")
    table.add_column(header[0])
    for name in header[1:]:
        table.add_column(name, justify="right")
    for row in body:
        table.add_row(*row)
    (console if console is not None else Console()).print(table)


def prediction_record(result: QuestionResult) -> dict[str, Any]:
    """One predictions line: id, the answer record, the gold data and the flags."""
    return {
        "id": result.item.id,
        **result.answer.to_dict(),
        "lang": result.item.lang,
        "gold_answers": list(result.item.answers),
        "gold_doc": result.item.doc,
        **result.flags(),
    }


def write_predictions(
    results: Iterable[QuestionResult], path: Path, provenance: Mapping[str, Any] | None = None
) -> Path:
    """Write one JSON line per question (see :func:`prediction_record`); returns the path.

    ``provenance``, when given, goes to the sidecar :func:`meta_path`, so the JSONL stays
    one record per question.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for result in results:
            fh.write(json.dumps(prediction_record(result), ensure_ascii=False) + "\n")
    if provenance is not None:
        meta = {"predictions": path.name, "provenance": dict(provenance)}
        meta_path(path).write_text(json.dumps(meta, ensure_ascii=False, indent=2, default=str) + "\n", "utf-8")
    return path


def meta_path(predictions: Path) -> Path:
    """The provenance sidecar of a predictions file: ``pred.jsonl`` -> ``pred.meta.json``."""
    predictions = Path(predictions)
    return predictions.with_name(f"{predictions.stem}.meta.json")


def write_report(
    results: Sequence[QuestionResult],
    metrics: Metrics,
    out_dir: Path,
    settings: Mapping[str, Any] | None = None,
    provenance: Mapping[str, Any] | None = None,
    lang: str = "en",
) -> list[Path]:
    """Write ``report.json``, ``questions.csv``, ``metrics.png`` and ``reliability.png`` into ``out_dir``
    (the charts' words in ``lang``).

    ``settings`` (model, index, thresholds, ...) and ``provenance`` (what produced the run,
    see :func:`citeqa.evaluation.provenance.collect_provenance`) are stored verbatim in
    report.json; values that JSON cannot hold (paths) are written as strings.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [
        _write_report_json(out / "report.json", metrics, settings, provenance),
        write_questions_csv(results, out / "questions.csv"),
        plot_metrics(metrics, out / "metrics.png", lang),
        plot_reliability(results, out / "reliability.png", lang=lang),
    ]


def _write_report_json(
    path: Path, metrics: Metrics, settings: Mapping[str, Any] | None, provenance: Mapping[str, Any] | None = None
) -> Path:
    """The metrics plus the run settings and provenance, as indented JSON."""
    from citeqa import __version__

    report = {
        "citeqa_version": __version__,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "provenance": dict(provenance) if provenance is not None else None,
        "settings": dict(settings) if settings is not None else {},
        "languages": list(metrics.by_lang),
        "metrics": metrics.to_dict(),
    }
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2, default=str) + "\n", "utf-8")
    return path


QUESTION_COLUMNS = (
    "id", "lang", "question", "gold_answers", "gold_doc", "answer", "short_answer", "abstained", "confidence",
    "rank", "hit1", "hit5", "correct", "short_correct", "exact", "f1", "lang_first",
    "citations_exact", "citations_total", "first_doc", "first_lang", "latency_ms",
)  # fmt: skip


def question_row(result: QuestionResult) -> dict[str, Any]:
    """One questions.csv row; booleans as 1/0, not-applicable as empty."""
    first = result.answer.citations[0] if result.answer.citations else None
    flags = result.flags()
    row: dict[str, Any] = {
        "id": result.item.id,
        "lang": result.item.lang,
        "question": result.item.question,
        "gold_answers": LIST_SEPARATOR.join(result.item.answers),
        "gold_doc": result.item.doc,
        "answer": result.answer.answer,
        "short_answer": result.answer.short_answer,
        "abstained": result.abstained,
        "confidence": round(result.answer.confidence, 4),
        **{k: flags[k] for k in QUESTION_COLUMNS if k in flags},
        "first_doc": first.doc_id if first is not None else None,
        "first_lang": first.lang if first is not None else None,
        "latency_ms": round(result.answer.latency_ms, 1),
    }
    return {k: _csv_cell(row[k]) for k in QUESTION_COLUMNS}


#: First characters a spreadsheet reads as a formula (OWASP "CSV injection"): such text cells get a ``'``.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value: Any) -> Any:
    """CSV-friendly value: None -> "", bool -> 1/0, float rounded to 4 places, and text that a
    spreadsheet would run as a formula (``=HYPERLINK(...)`` in a question) prefixed with ``'``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_questions_csv(results: Iterable[QuestionResult], path: Path) -> Path:
    """One row per question (see :data:`QUESTION_COLUMNS`); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=QUESTION_COLUMNS)
        writer.writeheader()
        writer.writerows(question_row(r) for r in results)
    return path


PLOT_METRICS: tuple[tuple[str, str], ...] = (
    ("hit1", "hit@1"),
    ("hit5", "hit@5"),
    ("mrr10", "MRR@10"),
    ("accuracy", "accuracy"),
    ("f1", "token F1"),
    ("lang_first", "1st citation\nin question lang"),
    ("abstain_recall", "abstention\nrecall"),
)


def chart_texts(lang: str = "en") -> dict[str, str]:
    """The words of the charts (the ``chart_*`` strings of the catalogue's ``evaluate`` section) in ``lang``,
    English for a language without a catalogue; keys without the ``chart_`` prefix."""
    from citeqa.messages import evaluate_labels

    return {key.removeprefix("chart_"): text for key, text in evaluate_labels(lang).items() if key.startswith("chart_")}


def metrics_figure(metrics: Metrics, lang: str = "en") -> Any:
    """The metrics chart of :func:`plot_metrics` as a matplotlib Figure, its words in ``lang``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    words = chart_texts(lang)
    columns = metrics.columns()
    width = 0.8 / len(columns)
    fig = Figure(figsize=(11, 5.5), dpi=110)
    FigureCanvasAgg(fig)  # Agg without touching pyplot's global backend
    ax = fig.add_subplot()
    for i, (name, scores) in enumerate(columns):
        offset = (i - (len(columns) - 1) / 2) * width
        xs = [g + offset for g in range(len(PLOT_METRICS))]
        values = [getattr(scores, key) for key, _ in PLOT_METRICS]
        heights = [v if v is not None else 0.0 for v in values]
        shown = words["overall"] if name == "overall" else name
        ax.bar(xs, heights, width, label=f"{shown} (n={scores.n})")
        for x, value in zip(xs, values):
            _bar_label(ax, x, value, words["na"])
    _style_axes(ax, metrics, words)
    fig.tight_layout()
    return fig


def plot_metrics(metrics: Metrics, path: Path, lang: str = "en") -> Path:
    """A grouped bar chart (one bar per column) of the main metrics, saved as PNG, its words in ``lang``."""
    fig = metrics_figure(metrics, lang)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path


def _bar_label(ax: Any, x: float, value: float | None, missing: str = "n/a") -> None:
    """The value inside the top of its bar (above short bars); ``missing`` ("n/a") when missing."""
    style = {"ha": "center", "rotation": 90, "fontsize": 7}
    if value is None:
        ax.text(x, 0.01, missing, va="bottom", color="grey", **style)
    elif value >= 0.15:
        ax.text(x, value - 0.01, f"{value:.2f}", va="top", **style)
    else:
        ax.text(x, value + 0.01, f"{value:.2f}", va="bottom", **style)


def _style_axes(ax: Any, metrics: Metrics, words: dict[str, str]) -> None:
    """Title, fixed 0-1 y axis, metric tick labels, grid and an outside legend (``words``: :func:`chart_texts`)."""
    ax.set_title(words["metrics_title"].format(n=metrics.overall.n))
    ax.set_ylim(0.0, 1.0)
    ax.set_ylabel(words["score"])
    ax.set_xticks(range(len(PLOT_METRICS)), [words["tick_" + key] for key, _ in PLOT_METRICS])
    ax.yaxis.grid(True, linestyle="--", alpha=0.5)
    ax.set_axisbelow(True)
    ax.legend(title=words["questions"], loc="upper left", bbox_to_anchor=(1.01, 1.0))


RELIABILITY_EDGES: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""Inner edges of the reliability diagram's ten confidence bins."""


def plot_reliability(
    results: Sequence[QuestionResult], path: Path, edges: Sequence[float] = RELIABILITY_EDGES, lang: str = "en"
) -> Path:
    """A reliability diagram, saved as PNG: share of right outcomes per confidence bin, with counts (its
    words in ``lang``; :func:`reliability_figure`).

    "Right" is as in :func:`citeqa.evaluation.metrics.reliability` (a correct answer, or an
    abstention on an unanswerable question). A well-calibrated confidence puts every bar on
    the diagonal; an empty bin has no bar and shows ``n=0``.
    """
    fig = reliability_figure(results, edges, lang)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path


def reliability_figure(
    results: Sequence[QuestionResult], edges: Sequence[float] = RELIABILITY_EDGES, lang: str = "en"
) -> Any:
    """The reliability diagram of :func:`plot_reliability` as a matplotlib Figure, its words in ``lang``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    words = chart_texts(lang)
    buckets = reliability(results, edges)
    fig = Figure(figsize=(7, 5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label=words["perfect"])
    label: str | None = words["right_legend"]
    for b in buckets:
        width = b.high - b.low
        middle = b.low + width / 2
        if b.right is not None:
            ax.bar(middle, b.right, width * 0.9, color="#4c72b0", label=label)
            label = None  # one legend entry for all bars
        top = b.right if b.right is not None else 0.0
        ax.text(middle, top + 0.01, f"n={b.n}", ha="center", va="bottom", fontsize=8, color="black" if b.n else "grey")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.1)
    ax.set_yticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_xticks([0.0, *edges, 1.0])
    ax.set_xlabel(words["confidence"])
    ax.set_ylabel(words["right"])
    ax.set_title(words["reliability_title"].format(n=len(results)))
    ax.yaxis.grid(True, linestyle="--", alpha=0.5)
    ax.set_axisbelow(True)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
