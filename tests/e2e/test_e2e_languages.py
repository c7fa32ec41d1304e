"""The German and French dev sets end to end with the real model: the figures docs/languages.md
quotes ("Measured", the reader before the verifier), with the same margin as the es/pt/en ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.embedding import DEFAULT_MODEL, load_embedder
from citeqa.engine import Engine
from citeqa.index.builder import update_index

pytestmark = pytest.mark.slow

#: `citeqa eval eval/<lang>/qa.jsonl` over its own corpus: hit@1, answer accuracy, abstention
#: recall, and the share of answered questions that carry a short answer.
REPORTED = {
    "de": {"hit1": 1.000, "accuracy": 0.971, "abstain_recall": 0.714, "short_given": 1.000},
    "fr": {"hit1": 0.917, "accuracy": 0.889, "abstain_recall": 0.286, "short_given": 1.000},
}
MARGIN = 0.03


@pytest.fixture(scope="module")
def embedder():
    return load_embedder(DEFAULT_MODEL)


@pytest.mark.parametrize("lang", sorted(REPORTED))
def test_new_language_dev_set_numbers_do_not_drop(lang: str, repo: Path, tmp_path: Path, embedder) -> None:
    from citeqa import evaluation as ev

    update_index(repo / "eval" / lang / "corpus", tmp_path / "index", embedder)
    engine = Engine.open(tmp_path / "index", embedder=embedder)
    results = ev.evaluate_engine(engine, ev.load_qa(repo / "eval" / lang / "qa.jsonl"), k=10)
    overall = ev.summarize(results).overall
    answered = [r.answer for r in results if not r.answer.abstained]
    got = {
        "hit1": overall.hit1,
        "accuracy": overall.accuracy,
        "abstain_recall": overall.abstain_recall,
        "short_given": sum(a.short_answer is not None for a in answered) / len(answered),
    }
    # abstention recall is a share of 7 unanswerable questions: one of them may flip between machines
    # whose float kernels differ (as in tests/e2e/test_e2e.py), so it is allowed one question
    unanswerable = sum(not r.item.answerable for r in results)
    for name, value in REPORTED[lang].items():
        margin = max(MARGIN, 1 / unanswerable) if name == "abstain_recall" else MARGIN
        assert got[name] >= value - margin, (name, got[name])
    assert {r.answer.language for r in results} <= {lang, "es", "pt", "en"}
    assert overall.citation_exact == 1.0
