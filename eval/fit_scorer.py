"""Fit the answer scorer on split A of a QA file and report splits A and B.

    .venv/bin/python eval/fit_scorer.py eval/qa.jsonl --index index [--write]

Split A/B is fixed by a hash of each question id (even -> A, odd -> B). Every candidate
span in the engine's own trace of a split-A question is labelled 1 when it comes from the
gold document and contains a gold answer, else 0 (all 0 for unanswerable questions); a
logistic regression with L2 penalty is fitted to those labels, by feature name. Then a
calibration is fitted on the span the engine chooses per question, and the abstention
threshold. ``--write`` writes the result to citeqa/answer/weights.json (with how it was
fitted); the script never edits source code.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np

from citeqa import evaluation as ev
from citeqa.answer.features import FEATURES
from citeqa.answer.scoring import RANKER_SCORE, WEIGHTS_FILE, ScoringModel, write_scoring
from citeqa.engine import Engine

#: Besides the ranker score, the calibration sees these features of the chosen span. With a
#: few dozen answers per split, a calibration over every feature overfits (tried: on split B
#: it abstained on 39% of answerable questions).
CALIBRATION_FEATURES = ("coverage", "dense")
#: The most answerable questions (share) the threshold may turn into false abstentions.
MAX_FALSE_ABSTENTION = 0.10


def split_of(qid: str) -> str:
    """"A" or "B", stable across runs and machines."""
    return "A" if int(hashlib.sha1(qid.encode()).hexdigest(), 16) % 2 == 0 else "B"


def is_right(trace_hit_doc: str, text: str, item: ev.QAItem) -> bool:
    """A span from the gold document that holds a gold answer."""
    return item.doc is not None and trace_hit_doc == item.doc and any(ev.contains_answer(text, a) for a in item.answers)


def labelled_rows(engine: Engine, items: list[ev.QAItem]) -> tuple[np.ndarray, np.ndarray]:
    """Feature rows and labels of every candidate span in the engine's traces of ``items``."""
    xs, ys = [], []
    for item in items:
        trace = engine.trace(item.question, item.history, k=engine.settings.pool)
        for span, row in zip(trace.spans, trace.features):
            xs.append(row)
            ys.append(float(is_right(trace.hits[span.candidate.hit_index].chunk.doc_id, span.candidate.text, item)))
    return np.asarray(xs).reshape(-1, len(FEATURES)), np.asarray(ys)


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


def chosen_rows(engine: Engine, items: list[ev.QAItem]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Calibration inputs (ranker score, then :data:`CALIBRATION_FEATURES`) of the span the
    engine chooses per question, whether it is a right answer, and whether the question is answerable."""
    rows, right, answerable = [], [], []
    for item in items:
        trace = engine.trace(item.question, item.history, k=engine.settings.pool)
        span = trace.chosen_span
        if span is None:
            continue
        rows.append([span.score, *(span.features[f] for f in CALIBRATION_FEATURES)])
        right.append(float(any(ev.contains_answer(span.candidate.text, a) for a in item.answers)))
        answerable.append(bool(item.answers))
    return np.asarray(rows), np.asarray(right), np.asarray(answerable)


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


def with_scoring(engine: Engine, model: ScoringModel) -> Engine:
    """The same index and model, answering with ``model``."""
    return Engine(engine.data, engine.embedder, replace(engine.settings, scoring=model))


def fit(engine: Engine, train: list[ev.QAItem]) -> ScoringModel:
    """Ranker, then calibration and threshold on the ranker's choices, all on ``train``."""
    x, y = labelled_rows(engine, train)
    w, b = fit_logistic(x, y)
    print(f"ranker fitted: {len(train)} questions, {len(y)} candidates, {int(y.sum())} positive")
    for name, value in zip(FEATURES, w):
        print(f"  {name:14s} {value:+.3f}")
    weights = {f: round(float(v), 3) for f, v in zip(FEATURES, w)}
    ranker = ScoringModel(weights, round(float(b), 3), {RANKER_SCORE: 1.0}, 0.0, abstain_below=0.0)
    inputs, right, answerable = chosen_rows(with_scoring(engine, ranker), train)
    cw, cb = fit_logistic(inputs, right, l2=0.0, steps=20000, lr=0.2, balanced=False)
    probs = 1 / (1 + np.exp(-(inputs @ cw + cb)))
    threshold = best_threshold(probs, right, answerable)
    print(f"calibration fitted ({len(right)} chosen answers, {int(right.sum())} right); abstain below {threshold:.2f}")
    calibration = {n: round(float(v), 3) for n, v in zip((RANKER_SCORE, *CALIBRATION_FEATURES), cw)}
    return ScoringModel(weights, round(float(b), 3), calibration, round(float(cb), 3), threshold)


def split_scores(engine: Engine, items: list[ev.QAItem]) -> dict[str, dict[str, float]]:
    """hit@1, accuracy and abstention per split (A fitted on, B held out)."""
    out = {}
    for part in ("A", "B"):
        o = ev.summarize(ev.evaluate_engine(engine, [i for i in items if split_of(i.id) == part], k=10)).overall
        out[part] = {"hit1": o.hit1, "accuracy": o.accuracy, "abstain_recall": o.abstain_recall,
                     "false_abstention": o.false_abstention}
        print(f"split {part}: " + ", ".join(f"{k} {v:.3f}" for k, v in out[part].items()))
    return out


def provenance(qa_file: Path, engine: Engine, metrics: dict) -> dict:
    """How the weights were fitted, stored beside them."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return {"by": f"eval/fit_scorer.py {qa_file} --write", "data": f"{qa_file}, split A (questions whose id's sha1 is even)",
            "folds": "one split: fitted on A, held out B", "model": engine.data.manifest.model,
            "commit": commit or None, "date": date.today().isoformat(), "metrics": metrics}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("qa_file", type=Path)
    parser.add_argument("--index", type=Path, default=Path("index"))
    parser.add_argument("--write", action="store_true", help=f"write the fitted scorer to citeqa/answer/{WEIGHTS_FILE}")
    args = parser.parse_args()
    engine = Engine.open(args.index)
    items = ev.load_qa(args.qa_file)
    model = fit(engine, [i for i in items if split_of(i.id) == "A"])
    fitted = with_scoring(engine, model)
    metrics = split_scores(fitted, items)
    if args.write:
        import citeqa.answer

        path = Path(citeqa.answer.__file__).with_name(WEIGHTS_FILE)
        write_scoring(replace(model, fitted=provenance(args.qa_file, engine, metrics)), path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
