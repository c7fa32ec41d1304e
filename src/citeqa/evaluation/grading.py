"""One question graded: retrieval rank, answer correctness, language, exact citations (pure)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citeqa.evaluation.matching import contains_answer, exact_match, token_f1
from citeqa.evaluation.qa_file import QAItem
from citeqa.records import Answer, Citation

TOP_K = 10
"""Citations beyond this rank are ignored by retrieval metrics (hit@k, MRR@10)."""


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

    ``correct`` judges the answer sentence; ``short_correct``, ``exact`` and ``f1`` judge the
    short answer (the sentence when the record has none, as for why/how questions).
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
    short_correct: bool | None
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
    "rank", "hit1", "hit5", "rr", "correct", "short_correct", "exact", "f1",
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
    common: dict[str, Any] = {
        "item": item,
        "answer": answer,
        "lang_first": _lang_first(item, answer, corpus_langs, doc_langs),
        "citations_exact": sum(citation_is_exact(c, doc_texts) for c in answer.citations),
        "citations_total": len(answer.citations),
    }
    if not item.answerable:
        return QuestionResult(
            **common, rank=None, hit1=None, hit5=None, rr=None, correct=None, short_correct=None, exact=None, f1=None
        )
    rank = first_relevant_rank(answer.citations, item)
    predicted, short = predicted_text(answer), short_text(answer)
    written = answer_language(item, doc_langs)
    return QuestionResult(
        **common,
        rank=rank,
        hit1=rank == 1,
        hit5=rank is not None and rank <= 5,
        rr=1.0 / rank if rank is not None else 0.0,
        correct=bool(predicted) and any(contains_answer(predicted, g) for g in item.answers),
        short_correct=bool(short) and any(contains_answer(short, g) for g in item.answers),
        exact=bool(short) and any(exact_match(short, g, written) for g in item.answers),
        f1=max(token_f1(short, g, written) for g in item.answers) if short else 0.0,
    )


def answer_language(item: QAItem, doc_langs: Mapping[str, str] | None) -> str:
    """The language an item's gold answers are written in: its gold document's when known (a
    question may ask across languages; its answers are copied from the document), else its own."""
    if doc_langs is not None and item.doc is not None:
        return doc_langs.get(item.doc, item.lang)
    return item.lang


def short_text(answer: Answer) -> str:
    """The short answer, else the answer sentence, or "" for an abstention: what EM and F1 judge."""
    if answer.abstained or answer.answer is None:
        return ""
    return answer.short_answer if answer.short_answer is not None else answer.answer


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
