"""What a run leaves: the terminal header and table, predictions JSONL, report.json (also printed by
``citeqa eval --json``), questions.csv, metrics.png, reliability.png."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from citeqa.evaluation.grading import (
    QuestionResult,
)
from citeqa.evaluation.metrics import (
    Bucket,
    Metrics,
    SquadScores,
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

#: The rows of SQuAD v1.1's official figures (:class:`SquadScores` fields), shown after token F1 when asked for.
SQUAD_ROWS = ("exact_match", "f1")


def table_rows(metrics: Metrics, squad: Mapping[str, SquadScores] | None = None) -> list[list[str]]:
    """Header row then one row per metric: label, then a value per column; with ``squad``
    (:func:`~citeqa.evaluation.metrics.squad_scores`), SQuAD v1.1's official exact match and token F1
    follow token F1."""
    columns = metrics.columns()
    rows = [["metric", *(name for name, _ in columns)]]
    for key, label in METRIC_LABELS:
        rows.append([label, *(format_value(key, getattr(s, key)) for _, s in columns)])
        if key == "f1" and squad is not None:
            for field_name in SQUAD_ROWS:
                values = (getattr(squad[name], field_name) if name in squad else None for name, _ in columns)
                rows.append([_words()[f"metric_squad_{field_name}"], *(format_value(field_name, v) for v in values)])
    return rows


def _words(lang: str = "en") -> Mapping[str, str]:
    """The catalogue's ``evaluate`` strings in ``lang`` (the terminal's lines are English)."""
    from citeqa.messages import evaluate_labels

    return evaluate_labels(lang)


def render_table(metrics: Metrics, squad: Mapping[str, SquadScores] | None = None) -> str:
    """A plain-text table: rows = metrics, columns = overall then each language (``squad``: as :func:`table_rows`)."""
    rows = table_rows(metrics, squad)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(row: list[str]) -> str:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(rows[0]), rule, *(line(r) for r in rows[1:])])


def print_table(metrics: Metrics, console: Any = None, squad: Mapping[str, SquadScores] | None = None) -> None:
    """Print the metrics as a rich Table (to ``console``, or a new stdout Console); ``squad``: as :func:`table_rows`."""
    from rich.console import Console
    from rich.table import Table

    header, *body = table_rows(metrics, squad)
    table = Table(title="citeqa evaluation")
    table.add_column(header[0])
    for name in header[1:]:
        table.add_column(name, justify="right")
    for row in body:
        table.add_row(*row)
    (console if console is not None else Console()).print(table)


def table_notes(squad: bool, lang: str = "en") -> list[str]:
    """What the table's exact match and token F1 mean, said under it: each answer language's own
    articles dropped (MLQA's way), and with ``squad`` what SQuAD v1.1's official rows drop instead."""
    words = _words(lang)
    return [words["run_f1_note"], *([words["run_squad_note"]] if squad else [])]


def reliability_lines(buckets: Sequence[Bucket], lang: str = "en") -> list[str]:
    """The reliability table as lines: what "right" is (the sentence measure), then one line per bucket."""
    from citeqa.messages import counted

    words = _words(lang)
    lines = [words["run_right"]]
    for b in buckets:
        right = words["chart_na"] if b.right is None else f"{b.right:.2f}"
        lines.append(counted(words, "run_bucket", b.n, low=b.low, high=b.high, right=right))
    return lines


@dataclass(frozen=True, slots=True)
class RunHeader:
    """What produced a run, as the terminal's header says it (:func:`run_header`): the QA file as given
    and its sha256, the index (folder, or the PostgreSQL shards without user or password) and its model,
    the reader's weights file and its sha256 (None: answered without the reader), and the settings that
    differ from the defaults (name -> value; an option by its flag, ``-k``, an answer setting by its
    dotted name)."""

    qa_file: str
    qa_sha256: str | None
    index: str
    model: str
    reader: str | None
    reader_sha256: str | None
    changed: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "changed": dict(self.changed)}


def run_header(provenance: Mapping[str, Any], qa_file: Path, index: str, changed: Mapping[str, Any]) -> RunHeader:
    """The header of a run whose :func:`~citeqa.evaluation.provenance.collect_provenance` block is
    ``provenance`` (its QA file's hash, model and reader weights)."""
    qa = provenance.get("qa_file") or {}
    reader = provenance.get("reader")
    return RunHeader(
        qa_file=str(qa_file),
        qa_sha256=qa.get("sha256"),
        index=index,
        model=str(provenance.get("model")),
        reader=reader["weights"] if reader else None,
        reader_sha256=reader["weights_sha256"] if reader else None,
        changed=dict(changed),
    )


def header_lines(header: RunHeader, lang: str = "en") -> list[str]:
    """The header printed above the table, one line per part (``lang``: the catalogue's language)."""
    words = _words(lang)
    unknown = words["chart_na"]
    reader = (
        words["run_reader"].format(weights=header.reader, sha256=header.reader_sha256 or unknown)
        if header.reader is not None
        else words["run_reader_off"]
    )
    changed = ", ".join(
        f"{name} {value}" if name.startswith("-") else f"{name}={value}" for name, value in header.changed.items()
    )
    return [
        words["run_qa_file"].format(path=header.qa_file, sha256=header.qa_sha256 or unknown),
        words["run_index"].format(index=header.index, model=header.model),
        reader,
        words["run_changed"].format(settings=changed) if changed else words["run_defaults"],
    ]


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
    *,
    header: RunHeader | None = None,
    squad: Mapping[str, SquadScores] | None = None,
) -> list[Path]:
    """Write ``report.json``, ``questions.csv``, ``metrics.png`` and ``reliability.png`` into ``out_dir``
    (the charts' words in ``lang``).

    ``settings`` (model, index, thresholds, ...) and ``provenance`` (what produced the run,
    see :func:`citeqa.evaluation.provenance.collect_provenance`) are stored verbatim in
    report.json, with ``header`` and ``squad`` (see :func:`report_record`); values that JSON cannot
    hold (paths) are written as strings.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    record = report_record(metrics, settings, provenance, results=results, header=header, squad=squad)
    path = out / "report.json"
    path.write_text(report_json(record) + "\n", "utf-8")
    return [
        path,
        write_questions_csv(results, out / "questions.csv"),
        plot_metrics(metrics, out / "metrics.png", lang),
        plot_reliability(results, out / "reliability.png", lang=lang),
    ]


def report_record(
    metrics: Metrics,
    settings: Mapping[str, Any] | None = None,
    provenance: Mapping[str, Any] | None = None,
    *,
    results: Sequence[QuestionResult] = (),
    header: RunHeader | None = None,
    squad: Mapping[str, SquadScores] | None = None,
) -> dict[str, Any]:
    """The report of a run as JSON data: what ``report.json`` holds and ``citeqa eval --json`` prints.

    ``metrics`` per column; ``squad_v1``: SQuAD v1.1's official exact match and F1 per column when
    ``squad`` is given (else None); ``reliability``: the confidence buckets of ``results`` (``right``
    by the sentence measure); ``notes``: what the figures mean, as printed under the table.
    """
    from citeqa import __version__

    return {
        "citeqa_version": __version__,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "header": header.to_dict() if header is not None else None,
        "provenance": dict(provenance) if provenance is not None else None,
        "settings": dict(settings) if settings is not None else {},
        "languages": list(metrics.by_lang),
        "metrics": metrics.to_dict(),
        "squad_v1": {name: s.to_dict() for name, s in squad.items()} if squad is not None else None,
        "reliability": [b.to_dict() for b in reliability(results)],
        "notes": table_notes(squad is not None),
    }


def report_json(record: Mapping[str, Any]) -> str:
    """A report record as indented JSON (paths as strings)."""
    return json.dumps(record, ensure_ascii=False, indent=2, default=str)


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
