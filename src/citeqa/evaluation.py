"""Score citeqa against a QA file: retrieval, answers, language, abstention, citations, latency.

The flow is ``load_qa`` -> ``evaluate`` (or ``score_question`` per item) -> ``summarize``
-> ``render_table`` / ``write_predictions`` / ``write_report`` / ``check_thresholds``.
Scoring is pure: it only looks at the :class:`~citeqa.models.Answer` records and the
document texts, so it can be tested without a model or an index.

Conventions (chosen so every number has one meaning):

* A citation is *relevant* when it comes from the gold document (any document when the
  item has no ``doc``) and its text contains a gold answer under :func:`contains_answer`.
* "Contains" compares :func:`normalize_text` forms (NFKC, casefold, collapsed whitespace)
  and requires whole-word edges, so the gold ``"2"`` does not match ``"2023"``.
* Retrieval and answer metrics cover answerable questions only; an abstention there
  counts as a wrong answer (exact match 0, F1 0).
* Every ratio whose denominator is empty is ``None`` ("not applicable"), never 0.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from citeqa.errors import ConfigError, QAFileError
from citeqa.models import Answer, Citation

TOP_K = 10
"""Citations beyond this rank are ignored by retrieval metrics (hit@k, MRR@10)."""

JSONL_SUFFIXES = (".jsonl", ".json")
CSV_SUFFIXES = (".csv",)
LIST_SEPARATOR = "|"
MAX_ERRORS_SHOWN = 3

ARTICLES = frozenset(
    {"the", "a", "an"}  # en
    | {"el", "la", "los", "las", "un", "una", "unos", "unas"}  # es
    | {"o", "os", "as", "um", "uma", "uns", "umas"}  # pt ("a" is above)
)
"""Articles dropped by :func:`normalize_answer` (compared after accents are stripped)."""

LANG_ORDER = ("es", "pt", "en")
"""Languages shown first, in this order; any other language follows alphabetically."""

_WHITESPACE = re.compile(r"\s+")


# --------------------------------------------------------------------------- QA file


@dataclass(frozen=True, slots=True)
class QAItem:
    """One evaluation question; ``answers == ()`` marks it unanswerable."""

    id: str
    question: str
    answers: tuple[str, ...]
    lang: str
    doc: str | None
    history: tuple[str, ...] = ()

    @property
    def answerable(self) -> bool:
        """Whether the corpus is expected to hold an answer."""
        return bool(self.answers)


class _BadRow(ValueError):
    """A row of a QA file is invalid; the message says why (no file or line)."""


def load_qa(path: Path) -> list[QAItem]:
    """Read and fully validate a QA file (JSONL or CSV) before returning any item.

    Raises :class:`QAFileError` naming the file and line of every problem found
    (the first few are listed), so a broken file never gives a partial evaluation.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in JSONL_SUFFIXES + CSV_SUFFIXES:
        raise QAFileError(
            f"{path}: unsupported QA file type {suffix or '(none)'!r}; use .jsonl, .json or .csv"
        )
    text = _read_text(path)
    records = _jsonl_records(text) if suffix in JSONL_SUFFIXES else _csv_records(text)
    return _build_items(path, records)


def _read_text(path: Path) -> str:
    """The file's text (UTF-8, BOM tolerated), or a QAFileError saying why not."""
    if not path.exists():
        raise QAFileError(f"{path}: QA file not found")
    if not path.is_file():
        raise QAFileError(f"{path}: not a file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise QAFileError(f"{path}: not UTF-8 text (bad byte at offset {exc.start})") from exc
    except OSError as exc:
        raise QAFileError(f"{path}: cannot read the file ({exc.strerror})") from exc
    if not text.strip():
        raise QAFileError(f"{path}: the QA file is empty")
    return text


def _build_items(
    path: Path, records: Iterable[tuple[int, dict[str, Any] | str]]
) -> list[QAItem]:
    """Validate parsed records into items; collect every problem, then raise once."""
    items: list[QAItem] = []
    errors: list[tuple[int, str]] = []
    first_line: dict[str, int] = {}
    for lineno, record in records:
        try:
            if isinstance(record, str):
                raise _BadRow(record)
            item = _item_from_record(record, lineno)
            if item.id in first_line:
                first = first_line[item.id]
                raise _BadRow(f"duplicate id {item.id!r} (first used on line {first})")
        except _BadRow as exc:
            errors.append((lineno, str(exc)))
            continue
        first_line[item.id] = lineno
        items.append(item)
    if errors:
        raise QAFileError(_errors_message(path, errors))
    if not items:
        raise QAFileError(f"{path}: the QA file holds no questions")
    return items


def _errors_message(path: Path, errors: Sequence[tuple[int, str]]) -> str:
    """One short message: the first few problems with their line numbers."""
    shown = "; ".join(f"line {line}: {msg}" for line, msg in errors[:MAX_ERRORS_SHOWN])
    more = len(errors) - MAX_ERRORS_SHOWN
    suffix = f"; and {more} more problem{'s' if more > 1 else ''}" if more > 0 else ""
    return f"{path}: {shown}{suffix}"


def _jsonl_records(text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, object or error message) for each non-blank JSONL line."""
    # split on "\n" only: str.splitlines would also split on U+2028 inside JSON strings
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        hint = " (a JSONL file holds one JSON object per line)" if line.lstrip()[:1] == "[" else ""
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield lineno, f"invalid JSON ({exc.msg} at column {exc.colno}){hint}"
            continue
        if not isinstance(record, dict):
            yield lineno, f"expected a JSON object, got {type(record).__name__}{hint}"
            continue
        yield lineno, record


def _csv_records(text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(first line number, record or error message) for each non-blank CSV row."""
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    try:
        while True:
            lineno = reader.line_num + 1
            row = next(reader, None)
            if row is None:
                return
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                header = [cell.strip().lower() for cell in row]
                problem = _header_problem(header)
                if problem:
                    yield lineno, problem
                    return
                continue
            yield lineno, _csv_record(header, row)
    except csv.Error as exc:
        yield reader.line_num, f"malformed CSV ({exc})"


def _header_problem(header: list[str]) -> str | None:
    """Why a CSV header cannot be used, or None when it is fine."""
    missing = [c for c in ("question", "answers", "lang") if c not in header]
    if missing:
        return f"CSV header lacks column(s) {', '.join(missing)}"
    duplicated = sorted({c for c in header if c and header.count(c) > 1})
    if duplicated:
        return f"CSV header repeats column(s) {', '.join(duplicated)}"
    return None


def _csv_record(header: list[str], row: list[str]) -> dict[str, Any] | str:
    """A CSV row as a JSONL-like record: ``|`` lists split, empty ``doc``/``id`` dropped."""
    if len(row) != len(header):
        return f"expected {len(header)} fields, got {len(row)}"
    record: dict[str, Any] = dict(zip(header, row))
    for key in ("answers", "history"):
        if key in record:
            cell = record[key].strip()
            record[key] = [p.strip() for p in cell.split(LIST_SEPARATOR)] if cell else []
    for key in ("doc", "id"):
        if key in record and not record[key].strip():
            del record[key]
    return record


def _item_from_record(record: Mapping[str, Any], lineno: int) -> QAItem:
    """Validate one record; raises _BadRow with a short reason."""
    return QAItem(
        id=_item_id(record.get("id"), lineno),
        question=_required_text(record, "question"),
        answers=_string_list(record, "answers", required=True),
        lang=_required_text(record, "lang").lower(),
        doc=_optional_text(record, "doc"),
        history=_string_list(record, "history", required=False),
    )


def _item_id(value: Any, lineno: int) -> str:
    """The item id: a string or integer, or ``line-N`` when absent."""
    if value is None or value == "":
        return f"line-{lineno}"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise _BadRow("id must be a non-empty string")
    return value.strip()


def _required_text(record: Mapping[str, Any], key: str) -> str:
    """A required, non-blank string field, stripped."""
    value = record.get(key)
    if value is None:
        raise _BadRow(f"missing {key}")
    if not isinstance(value, str):
        raise _BadRow(f"{key} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise _BadRow(f"empty {key}")
    return value.strip()


def _optional_text(record: Mapping[str, Any], key: str) -> str | None:
    """An optional string field; absent, null or blank means None."""
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _BadRow(f"{key} must be a string or null, got {type(value).__name__}")
    return value.strip() or None


def _string_list(record: Mapping[str, Any], key: str, *, required: bool) -> tuple[str, ...]:
    """A list of non-blank strings; ``answers`` must be present (``[]`` = unanswerable)."""
    if key not in record or record[key] is None:
        if required:
            raise _BadRow(f"missing {key} (use [] for an unanswerable question)")
        return ()
    value = record[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _BadRow(f"{key} must be a list of strings")
    for i, v in enumerate(value):
        if not v.strip():
            raise _BadRow(f"{key}[{i}] is empty")
    return tuple(v.strip() for v in value)


# --------------------------------------------------------------------------- text matching


def normalize_text(text: str) -> str:
    """NFKC, casefold, whitespace collapsed: the form used for "contains an answer"."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def strip_accents(text: str) -> str:
    """Drop combining marks (``ação`` -> ``acao``) so accent slips do not cost a token."""
    decomposed = unicodedata.normalize("NFD", text)
    kept = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
    return unicodedata.normalize("NFC", kept)


def normalize_answer(text: str) -> str:
    """SQuAD-style form for exact match and F1: lower, no accents/punctuation/articles."""
    lowered = strip_accents(normalize_text(text))
    no_punct = "".join(ch for ch in lowered if not _is_punctuation(ch))
    return " ".join(tok for tok in no_punct.split() if tok not in ARTICLES)


def _is_punctuation(ch: str) -> bool:
    """Unicode punctuation (``¿``, ``¡``, ``«``) or ASCII punctuation/symbols (as SQuAD)."""
    return unicodedata.category(ch).startswith("P") or ch in string.punctuation


def contains_answer(text: str, gold: str) -> bool:
    """Whether normalised ``gold`` occurs in normalised ``text`` with whole-word edges."""
    needle, haystack = normalize_text(gold), normalize_text(text)
    if not needle:
        return False
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        if _is_edge(haystack, start - 1, needle[0]) and _is_edge(haystack, end, needle[-1]):
            return True
        start = haystack.find(needle, start + 1)
    return False


def _is_edge(text: str, index: int, boundary_char: str) -> bool:
    """True when ``text[index]`` does not glue a word onto the match's boundary char."""
    if not boundary_char.isalnum() or index < 0 or index >= len(text):
        return True
    return not text[index].isalnum()


def exact_match(prediction: str, gold: str) -> bool:
    """SQuAD exact match: equal after :func:`normalize_answer`."""
    return normalize_answer(prediction) == normalize_answer(gold)


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 after :func:`normalize_answer`; two empty strings score 1."""
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


# --------------------------------------------------------------------------- per question


def citation_is_exact(citation: Citation, doc_texts: Mapping[str, str]) -> bool:
    """Whether the citation's offsets reproduce its text in its document."""
    text = doc_texts.get(citation.doc_id)
    if text is None or not 0 <= citation.start <= citation.end <= len(text):
        return False
    return text[citation.start : citation.end] == citation.text


def is_relevant(citation: Citation, item: QAItem) -> bool:
    """From the gold document (any, if the item names none) and containing a gold answer."""
    if item.doc is not None and citation.doc_id != item.doc:
        return False
    return any(contains_answer(citation.text, gold) for gold in item.answers)


def first_relevant_rank(citations: Sequence[Citation], item: QAItem, k: int = TOP_K) -> int | None:
    """1-based rank of the first relevant citation among the first ``k``, or None."""
    for rank, citation in enumerate(citations[:k], start=1):
        if is_relevant(citation, item):
            return rank
    return None


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """One scored question. Values that do not apply to it are None.

    Retrieval and answer fields (``rank`` ... ``f1``) are None for unanswerable items;
    ``rank`` is also None when no relevant citation is in the first ``TOP_K``.
    ``lang_first`` is None unless the item counts for the language metric.
    """

    item: QAItem
    answer: Answer
    rank: int | None
    hit1: bool | None
    hit5: bool | None
    rr: float | None
    correct: bool | None
    exact: bool | None
    f1: float | None
    lang_first: bool | None
    citations_exact: int
    citations_total: int

    @property
    def answerable(self) -> bool:
        """Whether the item has gold answers."""
        return self.item.answerable

    @property
    def abstained(self) -> bool:
        """Whether the system declined to answer."""
        return self.answer.abstained

    def flags(self) -> dict[str, Any]:
        """The per-question values as JSON-ready data."""
        return {
            "answerable": self.answerable,
            **{f: getattr(self, f) for f in _FLAG_FIELDS},
        }


_FLAG_FIELDS = (
    "rank", "hit1", "hit5", "rr", "correct", "exact", "f1",
    "lang_first", "citations_exact", "citations_total",
)  # fmt: skip


def score_question(
    item: QAItem,
    answer: Answer,
    doc_texts: Mapping[str, str],
    corpus_langs: Collection[str],
    doc_langs: Mapping[str, str] | None = None,
) -> QuestionResult:
    """Score one answer against its item (pure).

    ``doc_texts`` maps doc_id to full text (to check citation offsets); ``corpus_langs``
    are the languages the corpus holds; ``doc_langs`` (doc_id -> language), when given,
    excludes cross-lingual items (gold document in another language) from ``lang_first``.
    """
    common = {
        "item": item,
        "answer": answer,
        "lang_first": _lang_first(item, answer, corpus_langs, doc_langs),
        "citations_exact": sum(citation_is_exact(c, doc_texts) for c in answer.citations),
        "citations_total": len(answer.citations),
    }
    if not item.answerable:
        return QuestionResult(
            **common, rank=None, hit1=None, hit5=None, rr=None, correct=None, exact=None, f1=None
        )
    rank = first_relevant_rank(answer.citations, item)
    predicted = predicted_text(answer)
    return QuestionResult(
        **common,
        rank=rank,
        hit1=rank == 1,
        hit5=rank is not None and rank <= 5,
        rr=1.0 / rank if rank is not None else 0.0,
        correct=bool(predicted) and any(contains_answer(predicted, g) for g in item.answers),
        exact=bool(predicted) and any(exact_match(predicted, g) for g in item.answers),
        f1=max(token_f1(predicted, g) for g in item.answers) if predicted else 0.0,
    )


def predicted_text(answer: Answer) -> str:
    """The answer text, or "" for an abstention (abstentions never score)."""
    if answer.abstained or answer.answer is None:
        return ""
    return answer.answer


def _lang_first(
    item: QAItem,
    answer: Answer,
    corpus_langs: Collection[str],
    doc_langs: Mapping[str, str] | None,
) -> bool | None:
    """First citation in the question's language; None when the item does not count.

    Counts answerable items whose language the corpus holds, except cross-lingual ones
    (gold document known to be in another language). No citation counts as False.
    """
    lang = item.lang.lower()
    if not item.answerable or lang not in {x.lower() for x in corpus_langs}:
        return None
    if doc_langs is not None and item.doc is not None:
        gold_lang = doc_langs.get(item.doc)
        if gold_lang is not None and gold_lang.lower() != lang:
            return None
    return bool(answer.citations) and answer.citations[0].lang.lower() == lang


def evaluate(
    ask: Callable[[str, tuple[str, ...]], Answer],
    items: Iterable[QAItem],
    doc_texts: Mapping[str, str],
    corpus_langs: Collection[str],
    progress: bool = True,
    *,
    doc_langs: Mapping[str, str] | None = None,
) -> list[QuestionResult]:
    """Ask every question (with its history) and score the answers, in item order.

    Exceptions raised by ``ask`` propagate: a failing system should fail the run.
    """
    results: list[QuestionResult] = []
    for item in _with_progress(list(items), progress):
        answer = ask(item.question, item.history)
        if not isinstance(answer, Answer):
            raise TypeError(f"ask() returned {type(answer).__name__}, expected Answer")
        results.append(score_question(item, answer, doc_texts, corpus_langs, doc_langs))
    return results


def _with_progress(items: list[QAItem], enabled: bool) -> Iterable[QAItem]:
    """Wrap items in a tqdm bar (on stderr) when enabled."""
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="Evaluating", unit="q")


# --------------------------------------------------------------------------- metrics


@dataclass(frozen=True, slots=True)
class Scores:
    """The metrics of one group of questions (all, or one question language).

    Ratios are in [0, 1] and None when their denominator is empty:

    * ``hit1``, ``hit5``, ``mrr10``, ``accuracy``, ``exact_match``, ``f1``: over answerable
      questions (an abstention is a miss / wrong answer);
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


@dataclass(frozen=True)
class Bucket:
    """Questions whose confidence falls in ``[low, high)`` and how often they were right."""

    low: float
    high: float
    n: int
    right: float | None


def reliability(results: Sequence[QuestionResult], edges: Sequence[float] = (0.3, 0.8)) -> list[Bucket]:
    """Share of right outcomes per confidence bucket (a reliability table).

    An outcome is right when an answerable question got a correct answer, or an
    unanswerable one was abstained on.
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


# --------------------------------------------------------------------------- display

METRIC_LABELS: tuple[tuple[str, str], ...] = (
    ("n", "questions"),
    ("n_answerable", "answerable"),
    ("n_unanswerable", "unanswerable"),
    ("n_abstained", "abstained"),
    ("hit1", "hit@1"),
    ("hit5", "hit@5"),
    ("mrr10", "MRR@10"),
    ("accuracy", "answer accuracy"),
    ("exact_match", "exact match"),
    ("f1", "token F1"),
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


# --------------------------------------------------------------------------- files


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


def write_predictions(results: Iterable[QuestionResult], path: Path) -> Path:
    """Write one JSON line per question (see :func:`prediction_record`); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for result in results:
            fh.write(json.dumps(prediction_record(result), ensure_ascii=False) + "\n")
    return path


def write_report(
    results: Sequence[QuestionResult],
    metrics: Metrics,
    out_dir: Path,
    settings: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write ``report.json``, ``questions.csv`` and ``metrics.png`` into ``out_dir``.

    ``settings`` (model, index, thresholds, ...) is stored verbatim in report.json;
    values that JSON cannot hold (paths) are written as strings.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [
        _write_report_json(out / "report.json", metrics, settings),
        write_questions_csv(results, out / "questions.csv"),
        plot_metrics(metrics, out / "metrics.png"),
    ]


def _write_report_json(path: Path, metrics: Metrics, settings: Mapping[str, Any] | None) -> Path:
    """The metrics plus the run settings, as indented JSON."""
    from citeqa import __version__

    report = {
        "citeqa_version": __version__,
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "settings": dict(settings) if settings is not None else {},
        "languages": list(metrics.by_lang),
        "metrics": metrics.to_dict(),
    }
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2, default=str) + "\n", "utf-8")
    return path


QUESTION_COLUMNS = (
    "id", "lang", "question", "gold_answers", "gold_doc", "answer", "abstained", "confidence",
    "rank", "hit1", "hit5", "correct", "exact", "f1", "lang_first",
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
        "abstained": result.abstained,
        "confidence": round(result.answer.confidence, 4),
        **{k: flags[k] for k in QUESTION_COLUMNS if k in flags},
        "first_doc": first.doc_id if first is not None else None,
        "first_lang": first.lang if first is not None else None,
        "latency_ms": round(result.answer.latency_ms, 1),
    }
    return {k: _csv_cell(row[k]) for k in QUESTION_COLUMNS}


def _csv_cell(value: Any) -> Any:
    """CSV-friendly value: None -> "", bool -> 1/0, float rounded to 4 places."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return round(value, 4)
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


def plot_metrics(metrics: Metrics, path: Path) -> Path:
    """A grouped bar chart (one bar per column) of the main metrics, saved as PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

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
        ax.bar(xs, heights, width, label=f"{name} (n={scores.n})")
        for x, value in zip(xs, values):
            _bar_label(ax, x, value)
    _style_axes(ax, metrics)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path


def _bar_label(ax: Any, x: float, value: float | None) -> None:
    """The value inside the top of its bar (above short bars); "n/a" when missing."""
    style = {"ha": "center", "rotation": 90, "fontsize": 7}
    if value is None:
        ax.text(x, 0.01, "n/a", va="bottom", color="grey", **style)
    elif value >= 0.15:
        ax.text(x, value - 0.01, f"{value:.2f}", va="top", **style)
    else:
        ax.text(x, value + 0.01, f"{value:.2f}", va="bottom", **style)


def _style_axes(ax: Any, metrics: Metrics) -> None:
    """Title, fixed 0-1 y axis, metric tick labels, grid and an outside legend."""
    ax.set_title(f"citeqa evaluation: main metrics by question language (n={metrics.overall.n})")
    ax.set_ylim(0.0, 1.0)
    ax.set_ylabel("score (0-1)")
    ax.set_xticks(range(len(PLOT_METRICS)), [label for _, label in PLOT_METRICS])
    ax.yaxis.grid(True, linestyle="--", alpha=0.5)
    ax.set_axisbelow(True)
    ax.legend(title="questions", loc="upper left", bbox_to_anchor=(1.01, 1.0))


# --------------------------------------------------------------------------- thresholds

RATIO_METRICS = frozenset(
    {
        "hit1", "hit5", "mrr10", "accuracy", "exact_match", "f1", "lang_first", "lang_detected",
        "abstain_precision", "abstain_recall", "false_abstention", "citation_exact",
    }
)  # fmt: skip
MAX_METRICS = frozenset({"false_abstention", "latency_p50", "latency_p95"})
"""Thresholds on these are upper bounds (lower is better); all others are minimums."""

THRESHOLD_ALIASES: Mapping[str, str] = {
    "answer": "accuracy",
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


def _threshold_value(key: str, raw: str) -> float:
    """Parse a bound: a finite number, within [0, 1] for ratios, >= 0 for latency (ms)."""
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"threshold for {key} is not a number: {raw.strip()!r}") from None
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
    thresholds: dict[str, float] = {}
    for part in (spec if spec is not None else "").split(","):
        if not part.strip():
            continue
        name, sep, raw = part.partition("=")
        if not sep:
            example = "e.g. hit1=0.9"
            raise ConfigError(f"threshold {part.strip()!r} must look like metric=value, {example}")
        key = threshold_key(name)
        if key in thresholds:
            raise ConfigError(f"threshold for {key} is given twice")
        thresholds[key] = _threshold_value(key, raw)
    return thresholds


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
