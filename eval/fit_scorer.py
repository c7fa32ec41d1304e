"""Fit the answer scorer (citeqa.scoring) on split A of a QA file; report A and B.

    .venv/bin/python eval/fit_scorer.py eval/qa.jsonl --index index

Split A/B is fixed by a hash of each question id (even -> A, odd -> B). Every answer
candidate the engine considers for a split-A question is labelled 1 when it comes
from the gold document and contains a gold answer, else 0 (all 0 for unanswerable
questions); a logistic regression with L2 penalty is fitted to those labels. The
script prints the weights to paste into scoring.py, then the metrics of the engine as
currently configured on split A (fitted on) and split B (held out).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

from citeqa import evaluation as ev
from citeqa.engine import Engine
from dataclasses import replace

from citeqa.scoring import FEATURES, ScoringModel


def split_of(qid: str) -> str:
    """"A" or "B", stable across runs and machines."""
    return "A" if int(hashlib.sha1(qid.encode()).hexdigest(), 16) % 2 == 0 else "B"


def labelled_rows(engine: Engine, items: list[ev.QAItem]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Feature rows, labels and question index of every candidate of every item."""
    xs, ys, groups = [], [], []
    for n, item in enumerate(items):
        question = item.question
        lang = engine.question_language(question, item.history)
        query = engine.retrieval_query(question, item.history)
        hits = engine.retrieve(query, engine.settings.pool)
        cands, feats = engine.candidates(question, query, lang, lang, hits)
        for cand, row in zip(cands, feats):
            good = (item.doc is not None and hits[cand.hit_index].chunk.doc_id == item.doc
                    and any(ev.contains_answer(cand.text, a) for a in item.answers))
            xs.append(row)
            ys.append(1.0 if good else 0.0)
            groups.append(n)
    return np.asarray(xs), np.asarray(ys), np.asarray(groups)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 0.01, steps: int = 4000, lr: float = 0.5,
                 balanced: bool = True) -> tuple[np.ndarray, float]:
    """Gradient descent on the mean log loss with an L2 penalty (weights only).

    ``balanced`` weighs the rare positive class up, which suits a ranker; calibration
    is fitted unbalanced so that its output is a plain probability.
    """
    w, b = np.zeros(x.shape[1]), 0.0
    pos = max(1.0, y.sum())
    sample_w = (np.where(y > 0, len(y) / (2 * pos), len(y) / (2 * max(1.0, len(y) - pos)))
                if balanced else np.ones(len(y)))
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = (p - y) * sample_w
        w -= lr * (x.T @ g / len(y) + l2 * w)
        b -= lr * g.mean()
    return w, b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("qa_file", type=Path)
    parser.add_argument("--index", type=Path, default=Path("index"))
    args = parser.parse_args()
    engine = Engine.open(args.index)
    items = ev.load_qa(args.qa_file)
    train = [i for i in items if split_of(i.id) == "A"]
    x, y, _ = labelled_rows(engine, train)
    w, b = fit_logistic(x, y)
    print(f"ranker fitted on split A: {len(train)} questions, {len(y)} candidates, {int(y.sum())} positive")
    for name, value in zip(FEATURES, w):
        print(f"  {name:14s} {value:+.3f}")
    ranker = ScoringModel(tuple(float(v) for v in w), float(b), 1.0, 0.0)
    engine = Engine(engine.data, engine.embedder, replace(engine.settings, scoring=ranker, abstain_below=0.0))
    top, right = chosen_scores(engine, train)
    scale, shift = fit_logistic(top.reshape(-1, 1), right, l2=0.0, balanced=False)
    print(f"calibration fitted on split A: P(right) = sigmoid({scale[0]:.3f} * score + {shift:.3f})")
    print(f"WEIGHTS = ({', '.join(f'{v:.3f}' for v in w)})")
    print(f"BIAS = {b:.3f}")
    print(f"CALIB_SCALE = {scale[0]:.3f}")
    print(f"CALIB_SHIFT = {shift:.3f}")
    report_splits(Engine(engine.data, engine.embedder), items)
    return 0


def report_splits(engine: Engine, items: list[ev.QAItem]) -> None:
    """Metrics of the engine as configured in the code (not the fit above) per split."""
    docs = engine.data.documents
    texts = {d: doc.text for d, doc in docs.items()}
    langs = {d: doc.lang for d, doc in docs.items()}
    for part in ("A", "B"):
        chosen = [i for i in items if split_of(i.id) == part]
        results = ev.evaluate(lambda q, h: engine.ask(q, history=h, k=10), chosen, texts,
                              set(engine.corpus_langs), progress=False, doc_langs=langs)
        o = ev.summarize(results).overall
        print(f"split {part} ({len(chosen)} questions, current settings): hit@1 {o.hit1:.3f}, "
              f"hit@5 {o.hit5:.3f}, accuracy {o.accuracy:.3f}, abstention recall {o.abstain_recall:.3f}, "
              f"false abstention {o.false_abstention:.3f}")


def chosen_scores(engine: Engine, items: list[ev.QAItem]) -> tuple[np.ndarray, np.ndarray]:
    """The ranker score of the answer the engine picks, and whether it is right."""
    scores, right = [], []
    for item in items:
        answer = engine.ask(item.question, history=item.history, k=1)
        p = min(max(answer.confidence, 1e-6), 1 - 1e-6)
        scores.append(float(np.log(p / (1 - p))))
        ok = bool(item.answers) and answer.answer is not None and any(
            ev.contains_answer(answer.answer, a) for a in item.answers)
        right.append(1.0 if ok else 0.0)
    return np.asarray(scores), np.asarray(right)


if __name__ == "__main__":
    sys.exit(main())
