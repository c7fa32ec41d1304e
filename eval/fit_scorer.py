"""Fit the answer scorer (citeqa.answer.features) on split A of a QA file; report A and B.

    .venv/bin/python eval/fit_scorer.py eval/qa.jsonl --index index

Split A/B is fixed by a hash of each question id (even -> A, odd -> B). Every answer
candidate the engine considers for a split-A question is labelled 1 when it comes
from the gold document and contains a gold answer, else 0 (all 0 for unanswerable
questions); a logistic regression with L2 penalty is fitted to those labels. The
script prints the fitted constants (``--write`` puts them into scoring.py), then the
metrics of the engine with them on split A (fitted on) and split B (held out).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

import numpy as np

from citeqa import evaluation as ev
from citeqa import scoring
from citeqa.engine import Engine
from dataclasses import replace

from citeqa.answer.features import FEATURES, ScoringModel, calibration_inputs


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
    parser.add_argument("--write", action="store_true", help="write the fitted constants into scoring.py")
    args = parser.parse_args()
    engine = Engine.open(args.index)
    items = ev.load_qa(args.qa_file)
    train = [i for i in items if split_of(i.id) == "A"]
    x, y, _ = labelled_rows(engine, train)
    w, b = fit_logistic(x, y)
    print(f"ranker fitted on split A: {len(train)} questions, {len(y)} candidates, {int(y.sum())} positive")
    for name, value in zip(FEATURES, w):
        print(f"  {name:14s} {value:+.3f}")
    identity = (1.0,) + (0.0,) * len(FEATURES)
    ranker = ScoringModel(tuple(float(v) for v in w), float(b), identity, 0.0)
    engine = Engine(engine.data, engine.embedder, replace(engine.settings, scoring=ranker, abstain_below=0.0))
    inputs, right, answerable = chosen_rows(engine, train)
    # Platt scaling of the ranker score and of how much of the question the passage
    # covers at all. With a few dozen answers per split, a calibration over every
    # feature overfits (tried: on split B it abstained on 39% of answerable questions).
    used = [0] + [1 + FEATURES.index(name) for name in CALIBRATION_FEATURES]
    fitted_w, cb = fit_logistic(inputs[:, used], right, l2=0.0, steps=20000, lr=0.2, balanced=False)
    cw = np.zeros(1 + len(FEATURES))
    cw[used] = fitted_w
    fitted = ScoringModel(ranker.weights, ranker.bias, tuple(float(v) for v in cw), float(cb))
    probs = 1 / (1 + np.exp(-(inputs @ cw + cb)))
    threshold = best_threshold(probs, right, answerable)
    print(f"calibration fitted on split A ({len(right)} chosen answers, {int(right.sum())} right); "
          f"abstain below {threshold:.2f}")
    if args.write:
        write_constants(Path(scoring.__file__), fitted, threshold)
        print(f"wrote the constants into {scoring.__file__}")
    settings = replace(engine.settings, scoring=fitted, abstain_below=threshold)
    report_splits(Engine(engine.data, engine.embedder, settings), items)
    return 0


#: Besides the ranker score, the calibration sees these features of the chosen span.
CALIBRATION_FEATURES = ("coverage", "dense")


def chosen_rows(engine: Engine, items: list[ev.QAItem]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Calibration inputs of the span the engine picks per question, whether it is a
    right answer, and whether the question is answerable."""
    rows, right, answerable = [], [], []
    for item in items:
        lang = engine.question_language(item.question, item.history)
        query = engine.retrieval_query(item.question, item.history)
        hits = engine.retrieve(query, engine.settings.pool)
        cands, feats = engine.candidates(item.question, query, lang, lang, hits)
        if not cands:
            continue
        best, _ = engine.choose(cands, feats, lang)
        model = engine.settings.scoring
        rows.append(calibration_inputs(model.scores(feats[[best]]), feats[[best]])[0])
        right.append(1.0 if any(ev.contains_answer(cands[best].text, a) for a in item.answers) else 0.0)
        answerable.append(bool(item.answers))
    return np.asarray(rows), np.asarray(right), np.asarray(answerable)


#: The most answerable questions (share) the threshold may turn into false abstentions.
MAX_FALSE_ABSTENTION = 0.10


def best_threshold(probs: np.ndarray, right: np.ndarray, answerable: np.ndarray) -> float:
    """The highest abstention threshold whose false abstentions on answerable questions
    stay within :data:`MAX_FALSE_ABSTENTION`: abstain as often as that budget allows.

    A wrong "not found" on a question the documents answer costs a reader more than
    an answer with a visible low confidence, hence a budget rather than a balance.
    """
    grid = np.round(np.arange(0.0, 1.0, 0.01), 2)
    n_answerable = max(1, int(answerable.sum()))
    allowed = [t for t in grid if ((probs < t) & answerable).sum() / n_answerable <= MAX_FALSE_ABSTENTION]
    return float(max(allowed))


def write_constants(path: Path, model: ScoringModel, threshold: float) -> None:
    """Replace the fitted constants in scoring.py with ``model``'s and ``threshold``."""
    text = path.read_text(encoding="utf-8")
    values = {
        "WEIGHTS": f"({', '.join(f'{v:.3f}' for v in model.weights)})",
        "BIAS": f"{model.bias:.3f}",
        "CALIBRATION": f"({', '.join(f'{v:.3f}' for v in model.calibration)})",
        "CALIB_BIAS": f"{model.calib_bias:.3f}",
        "ABSTAIN_BELOW": f"{threshold:.2f}",
    }
    for name, value in values.items():
        text, count = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, count=1, flags=re.M)
        if count != 1:
            raise SystemExit(f"{name} not found in {path}")
    path.write_text(text, encoding="utf-8")


def overall_scores(engine: Engine, items: list[ev.QAItem]) -> ev.Scores:
    """The engine's overall metrics on ``items`` (10 citations per question, for MRR@10)."""
    docs = engine.data.documents
    results = ev.evaluate(lambda q, h: engine.ask(q, history=h, k=10), items,
                          {d: doc.text for d, doc in docs.items()}, set(engine.corpus_langs),
                          progress=False, doc_langs={d: doc.lang for d, doc in docs.items()})
    return ev.summarize(results).overall


def report_splits(engine: Engine, items: list[ev.QAItem]) -> None:
    """Metrics of the engine with the fitted scorer, per split (A fitted on, B held out)."""
    for part in ("A", "B"):
        chosen = [i for i in items if split_of(i.id) == part]
        o = overall_scores(engine, chosen)
        print(f"split {part} ({len(chosen)} questions, current settings): hit@1 {o.hit1:.3f}, "
              f"hit@5 {o.hit5:.3f}, accuracy {o.accuracy:.3f}, abstention recall {o.abstain_recall:.3f}, "
              f"false abstention {o.false_abstention:.3f}")


if __name__ == "__main__":
    sys.exit(main())
