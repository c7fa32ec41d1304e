"""Run an engine over a QA file and grade every answer, in item order."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING

from citeqa.evaluation.grading import TOP_K, QuestionResult, score_question
from citeqa.evaluation.qa_file import QAItem
from citeqa.records import Answer

if TYPE_CHECKING:
    from citeqa.engine import Engine


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


def evaluate_engine(
    engine: Engine, items: Iterable[QAItem], k: int = TOP_K, progress: bool = False
) -> list[QuestionResult]:
    """Ask ``engine`` every question with ``k`` citations and grade the answers against its corpus."""
    docs = engine.documents
    return evaluate(
        lambda q, h: engine.ask(q, history=h, k=k),
        items,
        {d: doc.text for d, doc in docs.items()},
        set(engine.corpus_langs),
        progress=progress,
        doc_langs={d: doc.lang for d, doc in docs.items()},
    )
