"""What the Evaluate tab shows, as plain data and escaped HTML: no Gradio here.

The tab (built in :mod:`citeqa.app.web.ui`) calls these functions: the outcome of each graded
question, the question table and its filters, the detail of one question with the gold and
the given answer marked in its passages, the metrics and comparison tables, and the QA
files offered from the ``eval/`` folder. Every piece of document, question or file text
goes through :func:`citeqa.app.web.escape.safe`.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from citeqa.app.web.escape import cell_text, safe
from citeqa.app.web.table import Table
from citeqa.evaluation.compare import COLUMNS as COMPARE_COLUMNS
from citeqa.evaluation.compare import Comparison, format_delta
from citeqa.evaluation.grading import TOP_K, QuestionResult, is_relevant
from citeqa.evaluation.matching import answer_spans
from citeqa.evaluation.metrics import LANG_ORDER, Metrics
from citeqa.evaluation.report import table_rows
from citeqa.messages import UI_LANGUAGES, evaluate_labels, outcome_help, said_in
from citeqa.records import Citation, Highlight

if TYPE_CHECKING:
    from citeqa.app.web.evaluate.runner import RunStatus

RIGHT = "right"
WRONG_ANSWER = "wrong answer"
WRONG_DOCUMENT = "wrong document"
FALSE_ABSTENTION = "false abstention"
MISSED_ABSTENTION = "missed abstention"
RIGHT_ABSTENTION = "right abstention"
OUTCOMES = (RIGHT, WRONG_ANSWER, WRONG_DOCUMENT, FALSE_ABSTENTION, MISSED_ABSTENTION, RIGHT_ABSTENTION)
"""Every question has exactly one; the definitions are :func:`citeqa.messages.outcome_help`'s, and each is
shown by its name in the page's language (:func:`outcome_name`)."""

ALL = "all"
QUESTION_HEADERS = ["id", "lang", "outcome", "question", "answer", "confidence"]
ANSWER_CELL_CHARS = 160


def outcome(result: QuestionResult) -> str:
    """The outcome of one graded question (one of :data:`OUTCOMES`).

    An answerable question is *right* when the answer holds a gold answer (``correct``, the
    answer accuracy of the metrics table, whatever document it came from); otherwise it is a
    *wrong document* when the question names a gold document and the first citation is not
    from it, else a *wrong answer*. Abstaining is a *false abstention* on an answerable
    question and a *right abstention* on an unanswerable one; answering an unanswerable
    question is a *missed abstention*.
    """
    if not result.answerable:
        return RIGHT_ABSTENTION if result.abstained else MISSED_ABSTENTION
    if result.abstained:
        return FALSE_ABSTENTION
    if result.correct:
        return RIGHT
    gold = result.item.doc
    citations = result.answer.citations
    if gold is not None and (not citations or citations[0].doc_id != gold):
        return WRONG_DOCUMENT
    return WRONG_ANSWER


def outcome_counts(results: Iterable[QuestionResult]) -> dict[str, int]:
    """How many questions have each outcome, in :data:`OUTCOMES` order (zeros included)."""
    counts = Counter(outcome(r) for r in results)
    return {name: counts.get(name, 0) for name in OUTCOMES}


def outcome_name(name: str, lang: str = "en") -> str:
    """An outcome (one of :data:`OUTCOMES`) as the page names it in ``lang``."""
    return evaluate_labels(lang)["outcome_" + name.replace(" ", "_")]


def question_headers(lang: str = "en") -> list[str]:
    """The question table's column names (:data:`QUESTION_HEADERS`) in ``lang``."""
    lab = evaluate_labels(lang)
    return [lab[f"col_{name}"] for name in QUESTION_HEADERS]


def outcome_choices(results: Sequence[QuestionResult], lang: str = "en") -> list[tuple[str, str]]:
    """The outcome filter's (label, value) choices, each label with its count: "all (12)", "right (5)", ..."""
    counts, every = outcome_counts(results), evaluate_labels(lang)["all"]
    named = ((f"{outcome_name(name, lang)} ({n})", name) for name, n in counts.items())
    return [(f"{every} ({len(results)})", ALL), *named]


def language_filter_choices(results: Sequence[QuestionResult], lang: str = "en") -> list[tuple[str, str]]:
    """The language filter's (label, value) choices: all, then es, pt, en, then the rest, with counts."""
    counts = Counter(r.item.lang for r in results)
    order = sorted(counts, key=lambda code: (LANG_ORDER.index(code), "") if code in LANG_ORDER else (9, code))
    every = evaluate_labels(lang)["all"]
    return [(f"{every} ({len(results)})", ALL), *((f"{code} ({counts[code]})", code) for code in order)]


def filtered(
    results: Iterable[QuestionResult], outcome_filter: str | None = ALL, language: str | None = ALL
) -> list[QuestionResult]:
    """The results with the chosen outcome and question language (``all`` or None: any)."""
    return [
        r
        for r in results
        if outcome_filter in (None, "", ALL) or outcome(r) == outcome_filter
        if language in (None, "", ALL) or r.item.lang == language
    ]


def question_rows(
    results: Iterable[QuestionResult],
    outcome_filter: str | None = ALL,
    language: str | None = ALL,
    lang: str = "en",
) -> list[list[str]]:
    """Rows of the question table (see :data:`QUESTION_HEADERS`), plain text in ``lang``, in run order."""
    rows = []
    for r in filtered(results, outcome_filter, language):
        given = evaluate_labels(lang)["abstained"] if r.abstained or r.answer.answer is None else r.answer.answer
        rows.append(
            [
                cell_text(r.item.id),
                cell_text(r.item.lang),
                outcome_name(outcome(r), lang),
                cell_text(r.item.question),
                cell_text(_shortened(given, ANSWER_CELL_CHARS)),
                f"{r.answer.confidence:.2f}",
            ]
        )
    return rows


def find_result(results: Iterable[QuestionResult], question_id: str | None) -> QuestionResult | None:
    """The result of the question with this id (ids are unique in a QA file), or None."""
    return next((r for r in results if r.item.id == question_id), None)


def metrics_table(metrics: Metrics, lang: str = "en") -> Table:
    """The metrics table as ``{"headers": [...], "data": [...]}``: a row per metric, a column per language,
    the metrics and the overall column named in ``lang``."""
    header, *rows = _metric_rows(metrics, lang)
    return {"headers": header, "data": rows}


def _metric_rows(metrics: Metrics, lang: str) -> list[list[str]]:
    """:func:`~citeqa.evaluation.report.table_rows` (as ``citeqa eval`` prints them) with the names in ``lang``."""
    from citeqa.evaluation.report import METRIC_LABELS

    lab = evaluate_labels(lang)
    header, *rows = table_rows(metrics)
    header = [lab["col_metric"], *(lab["col_overall"] if name == "overall" else name for name in header[1:])]
    return [header, *([lab[f"metric_{key}"], *row[1:]] for (key, _), row in zip(METRIC_LABELS, rows))]


def cards_html(metrics: Metrics, lang: str = "en", mismatch: tuple[int, int] | None = None) -> str:
    """The headline metrics over all questions, each against its target, met or missed said in words.

    ``mismatch`` (gold documents indexed, of all) marks a run of a file for another corpus: the cards say
    so first, and no target is shown as met (green) for it: its scores say nothing of this index."""
    from citeqa.evaluation.metrics import format_value
    from citeqa.evaluation.report import METRIC_LABELS
    from citeqa.evaluation.targets import TARGETS

    scores, lab = metrics.overall, evaluate_labels(lang)
    names = {key: lab[f"metric_{key}"] for key, _ in METRIC_LABELS}
    cards = []
    for target in TARGETS:
        value = getattr(scores, target.metric)
        met = target.met(value)
        state = "none" if met is None else ("met" if met else "missed")
        shown_state = "mismatch" if mismatch is not None and state == "met" else state
        bound = lab["target_max" if target.at_most else "target_min"].format(bound=target.bound)
        cards.append(
            f'<div class="citeqa-card citeqa-card-{shown_state}"><div class="citeqa-card-name">{safe(names[target.metric])}'
            f'</div><div class="citeqa-card-value">{safe(format_value(target.metric, value))}</div>'
            f'<div class="citeqa-card-target">{safe(bound)} · <b>{safe(lab["target_" + shown_state])}</b></div></div>'
        )
    warning = ""
    if mismatch is not None:
        said = lab["mismatch_cards"].format(indexed=mismatch[0], gold=mismatch[1])
        warning = f'<p class="citeqa-fit-warning citeqa-cards-mismatch" role="note">{safe(said)}</p>'
    return f'{warning}<div class="citeqa-cards" role="list" aria-label="{safe(lab["cards"])}">{"".join(cards)}</div>'


def chart_alt(metrics: Metrics, lang: str = "en") -> str:
    """Alternative text of the metrics chart: each metric's value over all questions, in words."""
    lab = evaluate_labels(lang)
    header, *rows = _metric_rows(metrics, lang)
    overall = lab["col_overall"]
    column = header.index(overall) if overall in header else len(header) - 1
    summary = "; ".join(f"{row[0]} {row[column]}" for row in rows if len(row) > column)
    return lab["chart_alt"].format(summary=lab["over_all"].format(summary=summary) if summary else "")


def outcome_help_html(lang: str = "en") -> str:
    """The definitions of the outcomes, as a short list, in ``lang``."""
    items = "".join(
        f"<li><b>{safe(outcome_name(name, lang))}</b>: {safe(text)}</li>" for name, text in outcome_help(lang).items()
    )
    return f'<ul class="citeqa-outcomes">{items}</ul>'


# --------------------------------------------------------------------------- one question


def answers_marked(text: str, gold: Sequence[Highlight], given: Sequence[Highlight]) -> str:
    """``text`` escaped, gold-answer places in ``<mark class="citeqa-gold">`` and given-answer places
    in ``<mark class="citeqa-given">`` (both classes where they overlap)."""
    ends = (i for span in (*gold, *given) for i in (span.start, span.end))
    cuts = sorted({0, len(text), *(i for i in ends if 0 <= i <= len(text))})
    out = []
    for start, end in zip(cuts, cuts[1:]):
        piece = safe(text[start:end])
        classes = [
            name
            for name, spans in (("citeqa-gold", gold), ("citeqa-given", given))
            if any(s.start <= start and end <= s.end for s in spans)
        ]
        out.append(f'<mark class="{" ".join(classes)}">{piece}</mark>' if classes else piece)
    return "".join(out)


def gold_spans(text: str, answers: Iterable[str]) -> list[Highlight]:
    """Where any of the gold answers occurs in ``text`` (as grading finds it)."""
    return [at for gold in answers for at in answer_spans(text, gold)]


def given_spans(citation: Citation, result: QuestionResult) -> list[Highlight]:
    """Where the given answer lies in the cited passage, from the record's own place (none for an
    abstention, or in a passage that does not hold it)."""
    span = result.answer.answer_in(citation)
    return [span] if span is not None else []


def graded_citation_html(number: int, citation: Citation, result: QuestionResult, lang: str = "en") -> str:
    """One cited passage: where it comes from, whether it is from the gold document or relevant, marked text."""
    lab = evaluate_labels(lang)
    badges = []
    if result.item.doc is not None and citation.doc_id == result.item.doc:
        badges.append(f'<span class="citeqa-badge citeqa-from-gold">{safe(lab["from_gold"])}</span>')
    if result.answerable and is_relevant(citation, result.item):
        badges.append(f'<span class="citeqa-badge citeqa-relevant">{safe(lab["relevant"])}</span>')
    text = citation.text
    body = answers_marked(text, gold_spans(text, result.item.answers), given_spans(citation, result))
    return (
        f'<div class="citeqa-source citeqa-eval-source"><div class="citeqa-head"><b>[{number}] '
        f"{safe(citation.title)}</b> {' '.join(badges)}<br><small>{safe(citation.doc_id)} · "
        f"{safe(citation.lang)} · {safe(lab['where'].format(start=citation.start, end=citation.end))} · "
        f"{safe(lab['score'].format(score=citation.score))}"
        f'</small></div><div class="citeqa-passage">{body}</div></div>'
    )


def detail_html(result: QuestionResult | None, lang: str = "en") -> str:
    """Everything about one question: the question, its gold answers and document, the answer
    record, and every cited passage with the gold answers and the given answer marked (in ``lang``)."""
    lab = evaluate_labels(lang)
    if result is None:
        return f'<div class="citeqa-eval-detail"><em>{safe(lab["detail_empty"])}</em></div>'
    item, answer = result.item, result.answer
    name = outcome(result)
    parts = [
        f'<h3>{safe(item.id)} · {safe(item.lang)} · <span class="citeqa-outcome citeqa-outcome-'
        f'{name.replace(" ", "-")}">{safe(outcome_name(name, lang))}</span></h3>',
        f'<p class="citeqa-eval-question">{safe(item.question)}</p>',
    ]
    if item.history:
        earlier = "".join(f"<li>{safe(q)}</li>" for q in item.history)
        parts.append(f"<p><b>{safe(lab['history'])}</b></p><ol>{earlier}</ol>")
    golds = (
        ", ".join(f'<span class="citeqa-gold-answer">{safe(g)}</span>' for g in item.answers)
        if item.answers
        else f"<em>{safe(lab['unanswerable'])}</em>"
    )
    parts.append(
        f"<p><b>{safe(lab['gold_answers'])}</b>: {golds}<br><b>{safe(lab['gold_doc'])}</b>: "
        f"{safe(item.doc) if item.doc is not None else safe(lab['any_doc'])}</p>"
    )
    parts.append(
        f"<p><b>{safe(lab['answer'])}</b>: {_given_html(result, lang)}<br><small>{_answer_facts(result, lang)}</small></p>"
    )
    parts.append(
        f'<p class="citeqa-eval-key">{safe(lab["key"])} <span class="citeqa-key-gold">'
        f'{safe(lab["key_gold"])}</span> <span class="citeqa-key-given">{safe(lab["key_given"])}</span></p>'
    )
    parts.append(f"<h4>{safe(lab['passages'])}</h4>")
    if answer.citations:
        parts.extend(graded_citation_html(i, c, result, lang) for i, c in enumerate(answer.citations, start=1))
        if not answer.abstained and answer.answer and not any(given_spans(c, result) for c in answer.citations):
            parts.append(f"<p><em>{safe(lab['not_in_passage'])}</em></p>")
    else:
        parts.append(f"<p><em>{safe(lab['no_passages'])}</em></p>")
    record = json.dumps(answer.to_dict(), ensure_ascii=False, indent=2)
    parts.append(
        f'<details class="citeqa-context"><summary>{safe(lab["record"])}</summary>'
        f'<pre class="citeqa-record">{safe(record)}</pre></details>'
    )
    return f'<div class="citeqa-eval-detail">{"".join(parts)}</div>'


def _given_html(result: QuestionResult, lang: str = "en") -> str:
    """The given answer with the gold answers marked in it, or "abstained"."""
    answer = result.answer
    if answer.abstained or not answer.answer:
        return f"<em>{safe(evaluate_labels(lang)['abstained'])}</em>"
    text = answer.answer
    return f'<span class="citeqa-given-answer">{answers_marked(text, gold_spans(text, result.item.answers), [])}</span>'


def _answer_facts(result: QuestionResult, lang: str = "en") -> str:
    """Short answer, confidence, language, rank of the first relevant citation, latency."""
    lab, answer = evaluate_labels(lang), result.answer
    facts = []
    if answer.short_answer:
        facts.append(f"{safe(lab['short_answer'])}: {safe(answer.short_answer)}")
    facts.append(f"{safe(lab['confidence'])} {answer.confidence:.2f}")
    facts.append(f"{safe(lab['answer_language'])} {safe(answer.language)}")
    if result.answerable:
        rank = f"[{result.rank}]" if result.rank is not None else lab["no_rank"].format(k=TOP_K)
        facts.append(f"{safe(lab['rank'])}: {safe(rank)}")
    facts.append(f"{safe(lab['latency'])} {answer.latency_ms:.0f} ms")
    return " · ".join(facts)


# --------------------------------------------------------------------------- comparison


#: The page's name of each comparison column (:data:`~citeqa.evaluation.compare.COLUMNS`); n, +/- and p stay.
COMPARE_HEADERS = {
    "metric": "col_metric",
    "before": "cmp_before",
    "after": "cmp_after",
    "change": "cmp_change",
    "95% interval": "cmp_interval",
    "": "verdict",
}
#: The page's name of each metric of a comparison (:data:`~citeqa.evaluation.compare.LABELS`).
COMPARE_METRICS = {
    "right": "cmp_right",
    "hit1": "metric_hit1",
    "hit5": "metric_hit5",
    "rr": "metric_mrr10",
    "correct": "metric_accuracy",
    "short_correct": "metric_short_accuracy",
    "exact": "metric_exact_match",
    "f1": "metric_f1",
    "abstain_right": "metric_abstain_recall",
    "false_abstention": "metric_false_abstention",
    "lang_first": "metric_lang_first",
}


def comparison_headers(lang: str = "en") -> list[str]:
    """The comparison table's column names (those of ``citeqa eval --compare``) in ``lang``."""
    lab = evaluate_labels(lang)
    return [lab[COMPARE_HEADERS[name]] if name in COMPARE_HEADERS else name for name in COMPARE_COLUMNS]


def comparison_table(comparison: Comparison, lang: str = "en") -> Table:
    """The metric changes as ``{"headers": [...], "data": [...]}``, the columns of ``citeqa eval --compare``,
    the metrics, the verdicts and "n/a" said in ``lang``."""
    lab = evaluate_labels(lang)
    words = {"n/a": lab["chart_na"], "better": lab["cmp_better"], "worse": lab["cmp_worse"]}
    rows = []
    for delta in comparison.deltas:
        name, *cells = format_delta(delta)
        key = COMPARE_METRICS.get(delta.metric)
        rows.append([lab[key] if key else name, *(words.get(cell, cell) for cell in cells)])
    return {"headers": comparison_headers(lang), "data": rows}


def chart_paths(
    files: Mapping[str, Path], results: Sequence[QuestionResult], metrics: Metrics, lang: str = "en"
) -> tuple[Path, ...]:
    """The metrics chart and the reliability diagram of a finished run (``files``: its files by name) in
    ``lang``: the run's own (English) ones, or ``metrics.<lang>.png`` and ``reliability.<lang>.png`` drawn
    next to them on first use (and removed with them). The English ones when the run's folder is gone."""
    from citeqa.evaluation.report import plot_metrics, plot_reliability

    english = (Path(files["metrics.png"]), Path(files["reliability.png"]))
    if lang == "en" or lang not in UI_LANGUAGES or not english[0].parent.is_dir():
        return english
    drawn = tuple(p.with_name(f"{p.stem}.{lang}.png") for p in english)
    plots: tuple[Callable[[Path], Path], ...] = (
        lambda p: plot_metrics(metrics, p, lang),
        lambda p: plot_reliability(results, p, lang=lang),
    )
    for path, plot in zip(drawn, plots):
        if path.exists():
            continue
        partial = path.with_name(f".{path.name}.{threading.get_ident()}.part")  # two pages may draw it at once
        try:
            plot(partial)
            os.replace(partial, path)
        except OSError:
            partial.unlink(missing_ok=True)
            return english
    return drawn


def comparison_html(comparison: Comparison, old_label: str, limit: int = 100, lang: str = "en") -> str:
    """The heading, unpaired ids, changed settings, and the fixed and broken questions, escaped, in ``lang``."""
    lab = evaluate_labels(lang)
    abstained = f"<em>{safe(lab['abstained'])}</em>"
    parts = [
        f"<h4>{safe(lab['compare_heading'].format(old=old_label, n=comparison.n_paired))}</h4>",
        f"<p><small>{safe(lab['compare_note'])}</small></p>",
    ]
    for key, ids in (("only_old", comparison.only_old), ("only_new", comparison.only_new)):
        if ids:
            shown = ", ".join(ids[:limit]) + (" …" if len(ids) > limit else "")
            parts.append(f"<p>{safe(lab[key])}: {len(ids)}: {safe(shown)}</p>")
    if comparison.changed_settings:
        parts.append(f"<p>{safe(lab['changed'])}: {safe(', '.join(comparison.changed_settings))}</p>")
    for key, changes in (("fixed", comparison.fixed), ("broken", comparison.broken)):
        items = "".join(
            f"<li><b>{safe(c.id)}</b> [{safe(c.lang)}] {safe(c.question)}<br><small>{safe(lab['before'])}: "
            f"{safe(c.old_answer) if c.old_answer is not None else abstained} · {safe(lab['now'])}: "
            f"{safe(c.new_answer) if c.new_answer is not None else abstained}</small></li>"
            for c in changes[:limit]
        )
        more = f"<li>{safe(lab['and_more'].format(n=len(changes) - limit))}</li>" if len(changes) > limit else ""
        parts.append(f'<div class="citeqa-{key}"><b>{safe(lab[key])} ({len(changes)})</b><ul>{items}{more}</ul></div>')
    return f'<div class="citeqa-comparison">{"".join(parts)}</div>'


# --------------------------------------------------------------------------- helpers


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# --------------------------------------------------------------------------- status


def status_html(status: RunStatus | None, error: str | None = None, lang: str = "en") -> str:
    """The line under the buttons, in ``lang``: an error (a refused file, with its line and reason), or the
    run's state, with a progress bar while it runs."""
    lab = evaluate_labels(lang)
    if error is not None:
        return f'<div class="citeqa-eval-status citeqa-eval-error" role="alert">{safe(error)}</div>'
    if status is None:
        return '<div class="citeqa-eval-status"></div>'
    facts = {
        "source": status.source,
        "done": status.done,
        "total": status.total,
        "seconds": status.seconds,
        "error": said_in(status.error, lang) if status.error else "",  # an engine's error, in ``lang`` too
    }
    text = lab["cancelling" if status.running and status.cancelling else status.state]
    line = safe(text.format(**facts))
    if status.running:
        bar = (
            f'<progress class="citeqa-eval-progress" max="{max(status.total, 1)}" value="{status.done}">'
            f"{status.done}/{status.total}</progress>"
        )
        return f'<div class="citeqa-eval-status citeqa-eval-running">{bar} {line}</div>'
    cls = "citeqa-eval-error" if status.state == "failed" else f"citeqa-eval-{status.state}"
    return f'<div class="citeqa-eval-status {cls}">{line}</div>'


def other_run_html(status: RunStatus, lang: str = "en") -> str:
    """The line a page shows while another page's run holds the server's one run: how far it is, not what."""
    said = evaluate_labels(lang)["busy_other"].format(done=status.done, total=status.total)
    return f'<div class="citeqa-eval-status citeqa-eval-other">{safe(said)}</div>'
