"""Fit the answer scorer on every dev set, cross-validated over folds, and write it as data.

    .venv/bin/python eval/fit_scorer.py --set eval/qa.jsonl=index --set eval/dev2/qa.jsonl=out/dev2-index [--write]

Each ``--set QA=INDEX`` is a QA file and the index of its corpus (built with the model the
weights are for). The engine's own trace of every question gives the candidate spans and
their named features; a span is labelled 1 when it comes from the gold document and holds
a gold answer. Questions are split into ``--folds`` folds by a hash of set and id; for each
fold the scorer is fitted on the others and judged on it, so the numbers printed per set are
out-of-fold estimates. Fitting means, in order:

1. the ranker: listwise, a softmax over each question's candidate spans maximising the
   probability of its right spans (L2-penalised; questions without a right span teach nothing
   about ranking). On the two dev sets this beat a pointwise logistic regression over spans
   out of fold (answer accuracy 0.673/0.576 against 0.637/0.529);
2. the calibration: logistic regression of "the chosen span is right" on the ranker score,
   its margin over the next span and :data:`CALIBRATION_FEATURES` of the chosen span;
3. the abstention threshold: the highest whose false abstentions stay within
   :data:`MAX_FALSE_ABSTENTION` (a wrong "not found" costs a reader more than a visible low confidence);
4. the headline level, on the out-of-fold answers: the lowest confidence from which at least
   :data:`HEADLINE_PRECISION` of the answers were right (the chat headlines those, and shows the
   others as a possible answer beside its source);
5. the confidence bands the chat names answers by (``high``, ``likely``, ``unsure``), on the same
   out-of-fold answers (:func:`citeqa.qa.scoring.fit_bands`), each with its measured precision.

``--write`` fits once more on all questions and writes the model's weights file
(citeqa/qa/weights/<model>.json) with the retrieval fusion weights (``--dense-weight``),
how it was fitted and the out-of-fold numbers; the script never edits source code.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import pickle
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

import numpy as np

from citeqa import evaluation as ev
from citeqa.engine import Engine
from citeqa.qa.features import FEATURES
from citeqa.qa.pipeline import Trace
from citeqa.qa.scoring import (
    BAND_PRECISION,
    BAND_SUPPORT,
    RANKER_MARGIN,
    RANKER_SCORE,
    READER_SUFFIX,
    Band,
    ScoringModel,
    choose_span,
    fit_bands,
    margins,
    weights_path,
    write_scoring,
)
from citeqa.qa.settings import READING_SETTINGS
from citeqa.qa.spans import ScoredSpan, span_short
from citeqa.reader.reader import Reader

#: Besides the ranker score and margin, the calibration sees these features of the chosen span.
CALIBRATION_FEATURES = (
    "coverage",
    "dense",
    "span_dense",
    "entity_passage",
    "type_missing",
    "overlap",
    "reader_null",
    "reader_score",
    "reader_best",
)
CALIBRATION_INPUTS = (RANKER_SCORE, RANKER_MARGIN, *CALIBRATION_FEATURES)
#: The features a model's own vectors give; ``--generic`` fits without them, for models that have no weights.
DENSE_FEATURES = ("dense", "span_dense", "span_dense_gap", "prev_span_dense")
#: Name of the weights file for models without one of their own (see citeqa.qa.scoring.FALLBACK_MODEL).
GENERIC = "any-model"
#: The most answerable questions (share) the threshold may turn into false abstentions.
MAX_FALSE_ABSTENTION = 0.05
#: Confidence at or above which an answer counts as "high confidence" in the reliability report.
HIGH_CONFIDENCE = 0.8
#: Share of answers at or above the headline level that must be right, out of fold ...
HEADLINE_PRECISION = 0.9
#: ... judged on at least this many answers (fewer: no level, nothing is headlined).
HEADLINE_SUPPORT = 10


@dataclass(frozen=True)
class Question:
    """One question's trace and what is right in it."""

    set_name: str
    item: ev.QAItem
    trace: Trace
    labels: np.ndarray  # per span: from the gold document and holding a gold answer
    right: np.ndarray  # per span: holds a gold answer (what `citeqa eval` calls a correct answer)
    cited: np.ndarray  # per span: its passage, the first citation, is relevant (`citeqa eval`'s hit@1)

    @property
    def langs(self) -> list[str]:
        return [s.candidate.lang for s in self.trace.spans]


def collect(engine: Engine, set_name: str, items: Sequence[ev.QAItem]) -> list[Question]:
    """The engine's trace of every question, with span labels."""
    out = []
    for item in items:
        trace = engine.trace(item.question, item.history, k=engine.settings.pool)
        right = np.array(
            [any(ev.contains_answer(s.candidate.text, a) for a in item.answers) for s in trace.spans], dtype=bool
        )
        lang = written_in(item, trace)
        right_span = np.array([_span_overlaps(s, item.answers, lang) for s in trace.spans], dtype=bool)
        gold = np.array(
            [item.doc is not None and trace.hits[s.candidate.hit_index].chunk.doc_id == item.doc for s in trace.spans],
            dtype=bool,
        )
        passage_ok = {
            i: item.doc is not None
            and h.chunk.doc_id == item.doc
            and any(ev.contains_answer(h.chunk.text, a) for a in item.answers)
            for i, h in enumerate(trace.hits)
        }
        cited = np.array([passage_ok[s.candidate.hit_index] for s in trace.spans], dtype=bool)
        out.append(Question(set_name, item, trace, right & gold & right_span, right, cited))
    return out


def cached_collect(cache: Path | None, key: str, make) -> list[Question]:
    """``make()``'s questions, kept in ``cache`` under a hash of ``key`` and of the package's code,
    so that fitting experiments on unchanged traces skip the engine (minutes with the reader)."""
    if cache is None:
        return make()
    path = cache / f"{hashlib.sha1((key + _trace_code()).encode()).hexdigest()[:16]}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    questions = make()
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(questions))
    return questions


@functools.cache
def _trace_code() -> str:
    """A hash of the package files that make the traces (read once per run, not once per set)."""
    code = hashlib.sha1()
    package = Path(__file__).resolve().parents[1] / "src" / "citeqa"
    for f in sorted(package.rglob("*")):
        relative = f.relative_to(package)
        if f.is_file() and f.suffix in {".py", ".json", ".safetensors"} and not _after_traces(relative):
            code.update(relative.as_posix().encode() + f.read_bytes())
    return code.hexdigest()


def _after_traces(path: Path) -> bool:
    """Whether a package file only acts after the traces (the app, the scorer this script refits)."""
    return path.parts[0] in {"app", "catalogue", "pg"} or path.parts[:2] in {
        ("qa", "weights"),
        ("qa", "scoring.py"),
        ("claims", "weights"),
    }


def written_in(item: ev.QAItem, trace: Trace) -> str:
    """The language ``item``'s gold answers are written in: its gold document's, when a passage of it
    was retrieved, else the question's (:func:`citeqa.evaluation.answer_language`)."""
    return ev.answer_language(item, {h.chunk.doc_id: h.chunk.lang for h in trace.hits})


def _span_overlaps(span: ScoredSpan, answers: Sequence[str], lang: str) -> bool:
    """Whether a reader span's short answer shares a word with a gold answer (True for a sentence
    candidate): among the spans of a right sentence, the ranker learns to prefer the right words."""
    if span.read is None:
        return True
    short = span_short(span.candidate, span.read.span)
    at = span.candidate.offsets(short) if short is not None else None
    text = span.candidate.text[at.start : at.end] if at is not None else ""
    return any(ev.token_f1(text, a, lang) > 0 for a in answers)


def without(q: Question, names: Sequence[str]) -> Question:
    """The question with the feature columns ``names`` zeroed: a scorer fitted on it ignores them."""
    cols = [FEATURES.index(f) for f in names]
    features = q.trace.features.copy()
    features[:, cols] = 0.0
    spans = tuple(
        replace(s, features={k: (0.0 if k in names else v) for k, v in s.features.items()}) for s in q.trace.spans
    )
    return replace(q, trace=replace(q.trace, features=features, spans=spans))


def fold_of(q: Question, folds: int) -> int:
    return int(hashlib.sha1(f"{q.set_name}/{q.item.id}".encode()).hexdigest(), 16) % folds


def fit_logistic(
    x: np.ndarray, y: np.ndarray, l2: float = 0.01, steps: int = 4000, lr: float = 0.5, balanced: bool = True
) -> tuple[np.ndarray, float]:
    """Gradient descent on the mean log loss with an L2 penalty (weights only), on standardised
    columns (features such as e5 cosines vary over a tenth of their range), returned on the raw scale."""
    mu, sd = x.mean(axis=0), x.std(axis=0)
    sd = np.where(sd > 1e-9, sd, 1.0)
    w, b = _descend((x - mu) / sd, y, l2, steps, lr, balanced)
    return w / sd, b - float((w / sd) @ mu)


def _descend(
    x: np.ndarray, y: np.ndarray, l2: float, steps: int, lr: float, balanced: bool
) -> tuple[np.ndarray, float]:
    w, b = np.zeros(x.shape[1]), 0.0
    pos = max(1.0, y.sum())
    sample_w = (
        np.where(y > 0, len(y) / (2 * pos), len(y) / (2 * max(1.0, len(y) - pos))) if balanced else np.ones(len(y))
    )
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(x @ w + b, -30, 30)))
        g = (p - y) * sample_w
        w -= lr * (x.T @ g / len(y) + l2 * w)
        b -= lr * g.mean()
    return w, b


def fit_listwise(train: Sequence[Question], l2: float = 0.01, steps: int = 3000, lr: float = 0.3) -> np.ndarray:
    """Ranker weights (raw feature scale) maximising, per question, the softmax share of its right spans."""
    rows = [q for q in train if len(q.trace.spans) and q.labels.any()]
    x_all = np.vstack([q.trace.features for q in rows])
    mu, sd = x_all.mean(axis=0), x_all.std(axis=0)
    sd = np.where(sd > 1e-9, sd, 1.0)
    groups = [((q.trace.features - mu) / sd, q.labels.astype(float)) for q in rows]
    w = np.zeros(x_all.shape[1])
    for _ in range(steps):
        grad = np.zeros_like(w)
        for x, y in groups:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            target = p * y / (p * y).sum()
            grad += x.T @ (p - target)
        w -= lr * (grad / len(groups) + l2 * w)
    return w / sd


def choose(model: ScoringModel, q: Question, settings) -> int | None:
    """The span the engine would choose with ``model`` (the same rule, on the stored features)."""
    feats = q.trace.features
    return choose_span(
        model.scores(feats),
        model.probabilities(feats),
        q.langs,
        q.trace.prefer,
        settings.language_margin,
        settings.language_floor,
    )


def calibration_row(model: ScoringModel, q: Question, best: int) -> list[float]:
    scores = model.scores(q.trace.features)
    span = q.trace.spans[best]
    return [float(scores[best]), float(margins(scores)[best]), *(span.features[f] for f in CALIBRATION_FEATURES)]


def fit(train: Sequence[Question], settings) -> ScoringModel:
    """Ranker, then calibration and threshold on the ranker's own choices, all on ``train``."""
    rows = [q for q in train if len(q.trace.spans)]
    weights = {f: round(float(v), 4) for f, v in zip(FEATURES, fit_listwise(rows))}
    b = 0.0  # a softmax ranker has no bias; the calibration supplies one
    ranker = ScoringModel(weights, b, {RANKER_SCORE: 1.0}, 0.0, 0.0)
    inputs, right, answerable = [], [], []
    for q in rows:
        best = choose(ranker, q, settings)
        inputs.append(calibration_row(ranker, q, best))
        right.append(float(q.right[best]))
        answerable.append(q.item.answerable)
    cw, cb = fit_logistic(np.asarray(inputs), np.asarray(right), l2=0.001, steps=20000, lr=0.1, balanced=False)
    calibration = {n: round(float(v), 3) for n, v in zip(CALIBRATION_INPUTS, cw)}
    model = ScoringModel(weights, round(float(b), 3), calibration, round(float(cb), 3), 0.0)
    confidence = np.array([model.probabilities(q.trace.features)[choose(model, q, settings)] for q in rows])
    return replace(model, abstain_below=best_threshold(confidence, np.asarray(answerable)))


def best_threshold(confidence: np.ndarray, answerable: np.ndarray) -> float:
    """The highest threshold whose false abstentions stay within :data:`MAX_FALSE_ABSTENTION`."""
    grid = np.round(np.arange(0.0, 1.0, 0.01), 2)
    n = max(1, int(answerable.sum()))
    return float(max(t for t in grid if ((confidence < t) & answerable).sum() / n <= MAX_FALSE_ABSTENTION))


#: The false-abstention shares at which :func:`abstention_ceiling` is printed.
CEILING_SHARES = (0.03, MAX_FALSE_ABSTENTION, 0.10)


def abstention_ceiling(answerable: Sequence[float], unanswerable: Sequence[float], share: float) -> float:
    """The share of unanswerable questions abstained on by the highest threshold on the confidence that
    abstains on at most ``share`` of the answerable ones: what any threshold can buy at that cost."""
    ranked = np.sort(np.asarray(answerable, dtype=float))
    allowed = int(np.floor(share * len(ranked) + 1e-9))  # answerable questions that may fall below
    if allowed >= len(ranked):
        return 1.0
    threshold = ranked[allowed]  # abstain below it: at most ``allowed`` answerable ones fall below
    return float(np.mean(np.asarray(unanswerable, dtype=float) < threshold)) if len(unanswerable) else float("nan")


def headline_level(outcomes: Sequence[Outcome]) -> float:
    """The lowest confidence from which :data:`HEADLINE_PRECISION` of the answers given were right
    (over at least :data:`HEADLINE_SUPPORT` answers); 1.0 when no level reaches it."""
    answered = [o for o in outcomes if not o.abstained]
    for t in np.round(np.arange(0.0, 1.0, 0.01), 2):
        above = [o.right for o in answered if o.confidence >= t]
        if len(above) >= HEADLINE_SUPPORT and sum(above) / len(above) >= HEADLINE_PRECISION:
            return float(t)
    return 1.0


def outcome_bands(outcomes: Sequence[Outcome]) -> tuple[Band, ...]:
    """The confidence bands (:func:`citeqa.qa.scoring.fit_bands`) of the answers given, out of fold."""
    answered = [o for o in outcomes if not o.abstained]
    return fit_bands([o.confidence for o in answered], [o.right for o in answered])


@dataclass(frozen=True)
class Outcome:
    """One question judged with a model: answered right, cited right, abstained, confidence."""

    q: Question
    right: bool
    hit1: bool
    abstained: bool
    confidence: float
    short: str | None = None  #: the chosen reader span's short answer (None: a sentence candidate)


def judge(model: ScoringModel, q: Question, settings) -> Outcome:
    best = choose(model, q, settings)
    if best is None:
        return Outcome(q, False, False, True, 0.0)
    confidence = float(model.probabilities(q.trace.features)[best])
    abstained = confidence < model.abstain_below
    span = q.trace.spans[best]
    short = None
    if span.read is not None:
        bounds = span_short(span.candidate, span.read.span)
        at = span.candidate.offsets(bounds) if bounds is not None else None
        short = span.candidate.text[at.start : at.end] if at is not None else ""
    right = bool(q.right[best]) and not abstained
    return Outcome(q, right, bool(q.cited[best]), abstained, confidence, short)


def summary(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """hit@1, accuracy, abstention and reliability of confidence, as `citeqa eval` defines them."""
    ans = [o for o in outcomes if o.q.item.answerable]
    una = [o for o in outcomes if not o.q.item.answerable]
    answered = [o for o in outcomes if not o.abstained]
    high = [o for o in answered if o.confidence >= HIGH_CONFIDENCE]

    def share(xs: Sequence[bool]) -> float:
        return round(sum(xs) / len(xs), 3) if xs else float("nan")

    return {
        "hit1": share([o.hit1 for o in ans]),
        "accuracy": share([o.right for o in ans]),
        "abstain_recall": share([o.abstained for o in una]),
        "false_abstention": share([o.abstained for o in ans]),
        "high_conf_share": share([o.confidence >= HIGH_CONFIDENCE for o in answered]),
        "high_conf_right": share([o.right if o.q.item.answerable else False for o in high]),
        "short_em": share([short_em(o) for o in ans]),
        "short_f1": round(float(np.mean([short_f1(o) for o in ans])), 3) if ans else float("nan"),
    }


def short_em(o: Outcome) -> bool:
    """The outcome's short answer matches a gold answer exactly (False for an abstention)."""
    lang = written_in(o.q.item, o.q.trace)
    return not o.abstained and any(ev.exact_match(o.short or "", a, lang) for a in o.q.item.answers)


def short_f1(o: Outcome) -> float:
    """The outcome's best token F1 against the gold answers (0 for an abstention or no answers)."""
    if o.abstained or not o.q.item.answers:
        return 0.0
    lang = written_in(o.q.item, o.q.trace)
    return max(ev.token_f1(o.short or "", a, lang) for a in o.q.item.answers)


def cross_validate(questions: Sequence[Question], folds: int, settings) -> list[Outcome]:
    """Out-of-fold outcomes: each fold judged by a scorer fitted on the others."""
    out = []
    for f in range(folds):
        model = fit([q for q in questions if fold_of(q, folds) != f], settings)
        out += [judge(model, q, settings) for q in questions if fold_of(q, folds) == f]
    return out


def report(outcomes: Sequence[Outcome], names: Sequence[str]) -> dict[str, dict[str, float]]:
    table = {name: summary([o for o in outcomes if o.q.set_name == name]) for name in names}
    table["all"] = summary(outcomes)
    for name, row in table.items():
        print(f"  {name:22s} " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()))
    return table


def provenance(
    sets: Sequence[tuple[str, str]],
    model_id: str,
    folds: int,
    metrics: dict,
    dense_weight: float | None,
    reader: bool = False,
    command: Sequence[str] | None = None,
) -> dict:
    """How the scorer was fitted; ``by`` is ``command`` (the script's arguments, less ``--cache``, which
    changes no figure) or, without it, the command these arguments name."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    fusion = f" --dense-weight {dense_weight}" if dense_weight is not None else ""
    flags = fusion + (" --reader" if reader else "") + " --write"
    by = " ".join(f"--set {qa}={idx}" for qa, idx in sets) + flags if command is None else shlex.join(command)
    return {
        "by": "eval/fit_scorer.py " + by,
        "data": [qa for qa, _ in sets],
        "folds": f"{folds} folds by sha1(set/id); metrics are out-of-fold",
        "model": model_id,
        "commit": commit or None,
        "date": date.today().isoformat(),
        "ranker": "listwise softmax over each question's candidate spans, L2-penalised",
        "calibration": "logistic regression of the chosen span being right on " + ", ".join(CALIBRATION_INPUTS),
        "abstain_below": f"highest threshold whose false abstentions stay within {MAX_FALSE_ABSTENTION:.0%}",
        "headline_above": f"lowest confidence from which {HEADLINE_PRECISION:.0%} of the out-of-fold answers "
        f"were right (at least {HEADLINE_SUPPORT})",
        "bands": "citeqa.qa.scoring.fit_bands on the out-of-fold answers given: high from the lowest level "
        f"from which {BAND_PRECISION['high']:.0%} were right, likely from the lowest from which "
        f"{BAND_PRECISION['likely']:.0%} of those below high were (at least {BAND_SUPPORT} each), unsure below; "
        "precision and support measured in each band",
        "metrics": metrics,
    }


def _without_cache(argv: Sequence[str]) -> list[str]:
    out, skip = [], False
    for arg in argv:
        if skip or arg == "--cache" or arg.startswith("--cache="):
            skip = arg == "--cache"
            continue
        out.append(arg)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True, metavar="QA=INDEX", help="a QA file and its index")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument(
        "--dense-weight",
        type=float,
        default=None,
        help="weight of the dense score in retrieval fusion (lexical gets the rest; default: the "
        "model's current weights file)",
    )
    parser.add_argument(
        "--generic",
        action="store_true",
        help=f"fit without the dense features ({', '.join(DENSE_FEATURES)}) and write "
        f"weights/{GENERIC}.json, the weights of models that have none of their own",
    )
    parser.add_argument(
        "--drop",
        action="append",
        default=[],
        choices=FEATURES,
        metavar="FEATURE",
        help="fit without this feature (repeatable): does it earn its place out of fold?",
    )
    parser.add_argument(
        "--reader",
        action="store_true",
        help="answer with the trained reader and fit its features too; writes <model>+reader.json",
    )
    parser.add_argument(
        "--candidates",
        choices=("sentences", "reader"),
        default="sentences",
        help="with --reader: choose among the reader's spans (each with its sentence) or among every sentence",
    )
    parser.add_argument(
        "--setting", action="append", default=[], metavar="NAME=JSON", help="an answer setting to fit with (repeatable)"
    )
    parser.add_argument(
        "--reader-delta",
        type=Path,
        default=None,
        help="with --reader: these reader weights (default: the shipped ones)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="keep the collected traces here, keyed by set, index, settings, reader and the package's code",
    )
    parser.add_argument("--write", action="store_true", help="write citeqa/qa/weights/<model>.json")
    args = parser.parse_args()
    sets = [tuple(s.split("=", 1)) for s in args.set]
    questions, engines = [], []
    for qa, index in sets:
        overrides = {}
        if args.dense_weight is not None:
            overrides = {"retrieval.dense_weight": args.dense_weight, "retrieval.lexical_weight": 1 - args.dense_weight}
        overrides["candidates"] = args.candidates
        overrides.update({k: json.loads(v) for k, v in (s.split("=", 1) for s in args.setting)})
        engine = Engine.open(index, reader="off", overrides=overrides)
        if args.reader:  # features with the reader, scored by the reader-less settings until refitted
            engine = engine.adjusted(reader=Reader(delta=args.reader_delta))
        engines.append(engine)
        delta = args.reader_delta.read_bytes() if args.reader and args.reader_delta else b""
        current = Path(index, "CURRENT")  # the live generation's name: a rebuild changes it
        built = current.read_text() if current.is_file() else ""
        key = (
            json.dumps([qa, Path(qa).read_text(), index, built, args.reader, overrides])
            + hashlib.sha1(delta).hexdigest()
        )
        questions += cached_collect(
            args.cache, key, lambda engine=engine, qa=qa: collect(engine, qa, ev.load_qa(Path(qa)))
        )
    dropped = [*DENSE_FEATURES, *args.drop] if args.generic else args.drop
    if dropped:
        questions = [without(q, dropped) for q in questions]
    models = {e.manifest.model for e in engines}
    if len(models) != 1:
        raise SystemExit(f"the indexes were built with different models: {sorted(models)}")
    settings = engines[0].settings
    print(
        f"{len(questions)} questions, {sum(len(q.trace.spans) for q in questions)} candidate spans; "
        f"out-of-fold over {args.folds} folds:"
    )
    outcomes = cross_validate(questions, args.folds, settings)
    metrics = report(outcomes, [qa for qa, _ in sets])
    answerable = [o.confidence for o in outcomes if o.q.item.answerable]
    unanswerable = [o.confidence for o in outcomes if not o.q.item.answerable]
    ceiling = ", ".join(f"{abstention_ceiling(answerable, unanswerable, s):.3f} at {s:.0%}" for s in CEILING_SHARES)
    print(f"unanswerable recognised by the best threshold on these confidences, at a false abstention of: {ceiling}")
    offered = np.mean([q.right.any() for q in questions if q.item.answerable])
    print(
        f"answerable questions with a candidate that holds a gold answer (the most any scorer gets right): {offered:.3f}"
    )
    final = replace(fit(questions, settings), headline_above=headline_level(outcomes), bands=outcome_bands(outcomes))
    print("fitted on all questions (in-sample):")
    report([judge(final, q, settings) for q in questions], [qa for qa, _ in sets])
    print("ranker:", final.weights, "bias", final.bias)
    print("calibration:", final.calibration, "bias", final.calib_bias, "abstain below", final.abstain_below)
    print("headline from", final.headline_above, f"(out of fold, {HEADLINE_PRECISION:.0%} right)")
    for band in final.bands:
        print(f"  band {band.name:7s} from {band.above:.2f}: {band.precision} right of {band.support} (out of fold)")
    if args.write:
        model_id = GENERIC if args.generic else models.pop()
        stem = model_id.replace("/", "__") + (READER_SUFFIX if args.reader else "")
        path = weights_path(model_id).with_name(f"{stem}.json")
        fusion = {"dense_weight": settings.retrieval.dense_weight, "lexical_weight": settings.retrieval.lexical_weight}
        fitted = provenance(
            sets, model_id, args.folds, metrics, args.dense_weight, args.reader, command=_without_cache(sys.argv[1:])
        )
        fitted["candidates"] = args.candidates if args.reader else "sentences"
        if args.reader:  # the scorer's features depend on what was read: it keeps how
            fitted["reading"] = {name: getattr(settings, name) for name in READING_SETTINGS}
        # With the reader only the scorer is written: fusion weights and claim thresholds stay in <model>.json.
        write_scoring(replace(final, fitted=fitted), path, retrieval=None if args.reader else fusion)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
