"""Fit the verifier out of fold on traced questions, fit its bands and abstention level, and write it as data.

    python -m citeqa.fitting.verifier --traces out/verifier/traces [--write]

The traces are :mod:`citeqa.fitting.traces`' files: the dev sets (``qa``, ``dev2``, ``de``,
``fr``) and the generated sets of :mod:`citeqa.fitting.negatives` (``gen-<lang>``). Every
question whose answer the engine chose from a reader span gives one row of
:data:`~citeqa.qa.verifier.VERIFIER_FEATURES`, labelled right when its short answer matches a
gold answer (token F1 ≥ :data:`RIGHT_F1`); an unanswerable question's answer is never right.

Fitting: a logistic regression (standardised columns, L2) in :data:`FOLDS` folds grouped by the
question's source (a generated question and the one it came from share a fold). The
out-of-fold probabilities fit, in order, the abstention level (the highest that abstains on at
most :data:`MAX_FALSE_ABSTENTION` of the answerable dev questions) and the bands on the dev
questions' answers, the mix users ask (``high``: :data:`HIGH_PRECISION` of the answers given
right, ``likely``: :data:`LIKELY_PRECISION`). The
generated questions of the ``measure`` split are never fitted on: the final model (fitted on every
other row) is judged on them, per language. ``--write`` writes ``qa/weights/verifier.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from citeqa.evaluation.matching import token_f1
from citeqa.fitting.traces import Traced, load_traces
from citeqa.qa.answer_types import Wanted
from citeqa.qa.scoring import Band
from citeqa.qa.verifier import VERIFIER_FEATURES, Verifier, short_of, verifier_features, verifier_path

#: A short answer with at least this token F1 against a gold answer is right.
RIGHT_F1 = 0.5
FOLDS = 5
MAX_FALSE_ABSTENTION = 0.05
HIGH_PRECISION = 0.97
LIKELY_PRECISION = 0.85
#: A band's bound is judged on at least this many answers.
BAND_SUPPORT = 20
#: The dev sets (real questions); the others are generated.
DEV_SETS = ("qa", "dev2", "de", "fr")
L2 = 1.0
#: Weight of a dev question's rows against a generated one's: the dev sets are the questions users ask
#: (chosen out of fold among 1, 3 and 10, on unanswerable questions recognised at the abstention level).
DEV_WEIGHT = 10.0


#: Candidates judged per question: the scorer's choice and its runners-up (by the scorer's score).
TOP = 3


@dataclass(frozen=True)
class Row:
    """One traced question as the verifier sees it: its best candidates (the scorer's choice
    first), each a feature row and whether it is right."""

    set_name: str
    qid: str
    group: str
    lang: str
    kind: str
    split: str
    answerable: bool
    features: np.ndarray  # one row per candidate (none: the engine chose no reader span)
    right: np.ndarray  # per candidate
    reader_confidence: float  # the scorer's confidence today (what the verifier replaces)
    candidate_ceiling: bool  # some span of the trace holds a gold answer

    @property
    def dev(self) -> bool:
        return self.set_name in DEV_SETS

    @property
    def chosen_right(self) -> bool:
        return bool(len(self.right) and self.right[0])


def rows_of(traced: Sequence[Traced]) -> list[Row]:
    out = []
    for t in traced:
        trace = t.trace
        lang = t.lang_of_doc.get(str(t.row.get("doc")), trace.language)
        wanted = Wanted.of(trace.question, trace.query)
        order = _candidates(trace)
        feats, right = [], []
        for i in order:
            f = verifier_features(wanted, trace.language, trace.spans, i, trace.hits)
            feats.append([f[n] for n in VERIFIER_FEATURES])
            short = short_of(trace.spans[i])
            right.append(t.answerable and any(token_f1(short, a, lang) >= RIGHT_F1 for a in t.answers))
        ceiling = t.answerable and any(
            any(token_f1(short_of(s), a, lang) >= RIGHT_F1 for a in t.answers) for s in trace.spans
        )
        source = str(t.row.get("source_id") or t.row["id"])
        out.append(
            Row(
                t.set_name,
                str(t.row["id"]),
                f"{t.set_name.split('-')[0]}/{source}",
                str(t.row.get("lang") or trace.language),
                t.kind,
                t.split,
                t.answerable,
                np.array(feats, dtype=float).reshape(len(feats), len(VERIFIER_FEATURES)),
                np.array(right, dtype=bool),
                trace.confidence,
                ceiling,
            )
        )
    return out


def _candidates(trace: Any) -> list[int]:
    """The scorer's choice, then its best other reader spans, at most :data:`TOP` (none when the
    choice is no reader span)."""
    chosen = trace.chosen
    if chosen is None or trace.spans[chosen].read is None:
        return []
    others = sorted(
        (i for i, s in enumerate(trace.spans) if i != chosen and s.read is not None),
        key=lambda i: -trace.spans[i].score,
    )
    return [chosen, *others[: TOP - 1]]


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Weights on the raw scale and a bias, from an L2-penalised logistic regression on standardised columns."""
    from sklearn.linear_model import LogisticRegression

    mu, sd = x.mean(axis=0), x.std(axis=0)
    sd = np.where(sd > 1e-9, sd, 1.0)
    model = LogisticRegression(C=1.0 / L2, max_iter=5000)
    model.fit((x - mu) / sd, y, sample_weight=weight)
    w = model.coef_[0] / sd
    return w, float(model.intercept_[0] - w @ mu)


def predict(w: np.ndarray, b: float, x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(x @ w + b, -30, 30))))


def fold_of(row: Row) -> int:
    return int(hashlib.sha1(row.group.encode()).hexdigest(), 16) % FOLDS


def stacked(rows: Sequence[Row], dev_weight: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every candidate row of ``rows``, its label and its weight (``dev_weight`` for the dev sets' questions)."""
    used = [r for r in rows if len(r.features)]
    if not used:
        return np.zeros((0, len(VERIFIER_FEATURES))), np.zeros(0), np.zeros(0)
    x = np.vstack([r.features for r in used])
    y = np.concatenate([r.right for r in used]).astype(float)
    w = np.concatenate([np.full(len(r.features), dev_weight if r.dev else 1.0) for r in used])
    return x, y, w


def out_of_fold(rows: Sequence[Row], dev_weight: float) -> list[np.ndarray]:
    """Each row's candidates' probabilities from a model fitted on the other folds."""
    out: list[np.ndarray] = [np.zeros(len(r.features)) for r in rows]
    folds = np.array([fold_of(r) for r in rows])
    for k in range(FOLDS):
        w, b = fit_logistic(*stacked([r for r, f in zip(rows, folds) if f != k], dev_weight))
        for i in map(int, np.flatnonzero(folds == k)):
            if len(rows[i].features):
                out[i] = predict(w, b, rows[i].features)
    return out


def outcomes(rows: Sequence[Row], probs: Sequence[np.ndarray], rerank: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per question: the confidence of the answer given and whether it is right, the answer being the
    scorer's choice or (``rerank``) the candidate the verifier trusts most."""
    conf, right = np.zeros(len(rows)), np.zeros(len(rows), dtype=bool)
    for i, (r, p) in enumerate(zip(rows, probs)):
        if len(p):
            j = int(np.argmax(p)) if rerank else 0
            conf[i], right[i] = p[j], r.right[j]
    return conf, right


def abstention_level(p: np.ndarray, answerable: np.ndarray, share: float = MAX_FALSE_ABSTENTION) -> float:
    """The highest level that abstains on at most ``share`` of the answerable questions."""
    ranked = np.sort(p[answerable])
    allowed = int(np.floor(share * len(ranked) + 1e-9))
    return float(ranked[allowed]) if allowed < len(ranked) else 1.0


def fit_bands(p: np.ndarray, right: np.ndarray, abstain: float) -> tuple[Band, ...]:
    """``high`` from the lowest level whose answers are right :data:`HIGH_PRECISION` of the time,
    ``likely`` below it down to the lowest level keeping :data:`LIKELY_PRECISION`, ``unsure`` below."""
    given = p >= abstain
    conf, ok = p[given], right[given]
    levels = np.unique(np.round(conf, 4))

    def lowest(ceiling: float, share: float) -> float:
        for t in levels:
            inside = ok[(conf >= t) & (conf < ceiling)]
            if t < ceiling and len(inside) >= BAND_SUPPORT and inside.mean() >= share:
                return float(t)
        return ceiling

    high = min(lowest(np.inf, HIGH_PRECISION), 1.0)
    likely = lowest(high, LIKELY_PRECISION)
    bands = []
    for name, low, ceiling in (("high", high, np.inf), ("likely", likely, high), ("unsure", 0.0, likely)):
        inside = ok[(conf >= low) & (conf < ceiling)]
        bands.append(
            Band(name, round(low, 4), round(float(inside.mean()), 3) if len(inside) else None, int(len(inside)))
        )
    return tuple(bands)


def auc(score: np.ndarray, label: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(label, score)) if 0 < label.sum() < len(label) else float("nan")


def report(rows: Sequence[Row], conf: np.ndarray, right: np.ndarray, abstain: float) -> dict[str, Any]:
    """What the level does to each set: abstentions, false abstentions, precision of the answers given."""
    out: dict[str, Any] = {}
    by_set: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_set[r.set_name].append(i)
        by_set["dev" if r.dev else "generated"].append(i)
    for name, idx in sorted(by_set.items()):
        ans = np.array([rows[i].answerable for i in idx])
        given = conf[idx] >= abstain
        ok = right[idx]
        out[name] = {
            "questions": len(idx),
            "unanswerable": int((~ans).sum()),
            "unanswerable_abstained": _share(~given[~ans]),
            "false_abstention": _share(~given[ans]),
            "answered_right": _share(ok[given]),
            "accuracy_answerable": _share((ok & given)[ans]),
        }
    return out


def _share(x: np.ndarray) -> float | None:
    return round(float(x.mean()), 3) if len(x) else None


def load(traces: Path) -> list[Traced]:
    out: list[Traced] = []
    for f in sorted(traces.glob("*.pkl")):
        out += load_traces(f)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m citeqa.fitting.verifier", description=__doc__.split("\n")[0] if __doc__ else None
    )
    p.add_argument("--traces", type=Path, required=True)
    p.add_argument("--rerank", action="store_true", help="the answer is the candidate the verifier trusts most")
    p.add_argument("--dev-weight", type=float, default=DEV_WEIGHT, help="weight of a dev question's rows")
    p.add_argument("--write", action="store_true")
    args = p.parse_args(argv)
    rows = rows_of(load(args.traces))
    fit_rows = [r for r in rows if r.split != "measure"]
    held = [r for r in rows if r.split == "measure"]
    oof = out_of_fold(fit_rows, args.dev_weight)
    conf, right = outcomes(fit_rows, oof, args.rerank)
    ans = np.array([r.answerable for r in fit_rows])
    dev = np.array([r.dev for r in fit_rows])
    abstain = abstention_level(conf[dev], ans[dev])
    bands = fit_bands(conf[dev], right[dev], abstain)  # on real questions: the generated are mostly unanswerable
    w, b = fit_logistic(*stacked(fit_rows, args.dev_weight))
    held_conf, held_right = outcomes(
        held, [predict(w, b, r.features) if len(r.features) else np.zeros(0) for r in held], args.rerank
    )
    base_conf, base_right = outcomes(
        fit_rows, [np.array([r.reader_confidence] * len(r.features)) for r in fit_rows], False
    )
    held_una = {
        lang: _share(held_conf[[i for i, r in enumerate(held) if r.lang == lang and not r.answerable]] < abstain)
        for lang in sorted({r.lang for r in held})
    }
    summary = {
        "rerank": args.rerank,
        "out_of_fold": report(fit_rows, conf, right, abstain),
        "held_out_generated": report(held, held_conf, held_right, abstain),
        "held_out_unanswerable_abstained_by_language": held_una,
        "auc_verifier": round(auc(conf[dev], right[dev]), 3),
        "auc_reader_confidence": round(auc(base_conf[dev], base_right[dev]), 3),
        "auc_verifier_all": round(auc(conf, right), 3),
        "auc_reader_confidence_all": round(auc(base_conf, base_right), 3),
        "candidate_ceiling_dev": _share(np.array([r.candidate_ceiling for r in fit_rows if r.dev and r.answerable])),
        "high_share_of_answers_dev": _share((conf[dev] >= bands[0].above)[conf[dev] >= abstain]),
        "dev_weight": args.dev_weight,
    }
    print(
        json.dumps({"abstain_below": round(abstain, 4), "bands": [bd.to_dict() for bd in bands], **summary}, indent=1)
    )
    if args.write:
        fitted = {
            "by": "python -m citeqa.fitting.verifier " + " ".join(argv if argv is not None else sys.argv[1:]),
            "date": date.today().isoformat(),
            "rows": len(fit_rows),
            "held_out_rows": len(held),
            "label": f"short answer token F1 >= {RIGHT_F1} against a gold answer; unanswerable never right",
            **summary,
        }
        weights = {n: round(float(v), 5) for n, v in zip(VERIFIER_FEATURES, w)}
        v = Verifier(weights, round(b, 5), round(abstain, 4), bands, fitted)
        verifier_path().write_text(json.dumps(v.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {verifier_path()}", file=sys.stderr)


if __name__ == "__main__":
    main()
