"""Fit the answer scorer on every dev set, cross-validated over folds, and write it as data.

    python -m citeqa.fitting.scorer --set eval/qa.jsonl=index --set eval/dev2/qa.jsonl=out/dev2-index [--write]

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
   its margin over the next span and :data:`~citeqa.fitting.scorer_fit.CALIBRATION_FEATURES` of the chosen span;
3. the abstention threshold: the highest whose false abstentions stay within
   :data:`~citeqa.fitting.scorer_fit.MAX_FALSE_ABSTENTION` (a wrong "not found" costs a reader more than a visible low confidence);
4. the headline level, on the out-of-fold answers: the lowest confidence from which at least
   :data:`~citeqa.fitting.scorer_fit.HEADLINE_PRECISION` of the answers were right (the chat headlines those, and shows the
   others as a possible answer beside its source);
5. the confidence bands the chat names answers by (``high``, ``likely``, ``unsure``), on the same
   out-of-fold answers (:func:`citeqa.qa.scoring.fit_bands`), each with its measured precision.

``--write`` fits once more on all questions and writes the model's weights file
(citeqa/qa/weights/<model>.json) with the retrieval fusion weights (``--dense-weight``),
how it was fitted (``fitted``: the command, date, data, question and span counts) and the out-of-fold
numbers; the script never edits source code. The fit itself is :mod:`citeqa.fitting.scorer_fit`.
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any, cast

import numpy as np

from citeqa import evaluation as ev
from citeqa.engine import Engine
from citeqa.fitting.scorer_fit import (
    CALIBRATION_INPUTS,
    CEILING_SHARES,
    HEADLINE_PRECISION,
    HEADLINE_SUPPORT,
    MAX_FALSE_ABSTENTION,
    Outcome,
    Question,
    abstention_ceiling,
    cross_validate,
    fit,
    headline_level,
    judge,
    outcome_bands,
    span_overlaps,
    summary,
    without,
    written_in,
)
from citeqa.qa.features import FEATURES
from citeqa.qa.scoring import BAND_PRECISION, BAND_SUPPORT, READER_SUFFIX, ScoringModel, weights_path, write_scoring
from citeqa.qa.settings import READING_SETTINGS, AnswerSettings
from citeqa.reader.reader import Reader

#: The features a model's own vectors give; ``--generic`` fits without them, for models that have no weights.
DENSE_FEATURES = ("dense", "span_dense", "span_dense_gap", "prev_span_dense")
#: Name of the weights file for models without one of their own (see citeqa.qa.scoring.FALLBACK_MODEL).
GENERIC = "any-model"
#: The command that runs this module, as ``fitted.by`` records it.
COMMAND = "python -m citeqa.fitting.scorer"


def collect(engine: Engine, set_name: str, items: Sequence[ev.QAItem]) -> list[Question]:
    """The engine's trace of every question, with span labels."""
    out = []
    for item in items:
        trace = engine.trace(item.question, item.history, k=engine.settings.pool)
        right = np.array(
            [any(ev.contains_answer(s.candidate.text, a) for a in item.answers) for s in trace.spans], dtype=bool
        )
        lang = written_in(item, trace)
        right_span = np.array([span_overlaps(s, item.answers, lang) for s in trace.spans], dtype=bool)
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


class _Traces(pickle.Unpickler):
    """Reads a trace cache, also one written when this fit was the script ``eval/fit_scorer.py``
    (its questions pickled as ``__main__.Question``)."""

    def find_class(self, module: str, name: str) -> Any:
        if name == "Question" and module in {"__main__", "fit_scorer"}:
            return Question
        return super().find_class(module, name)


def load_questions(path: Path) -> list[Question]:
    """The questions of one trace cache file."""
    with path.open("rb") as fh:
        return cast(list[Question], _Traces(fh).load())


def cached_collect(cache: Path | None, key: str, make: Callable[[], list[Question]]) -> list[Question]:
    """``make()``'s questions, kept in ``cache`` under a hash of ``key`` and of the package's code,
    so that fitting experiments on unchanged traces skip the engine (minutes with the reader)."""
    if cache is None:
        return make()
    path = cache / f"{hashlib.sha1((key + _trace_code()).encode()).hexdigest()[:16]}.pkl"
    if path.is_file():
        return load_questions(path)
    questions = make()
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(questions))
    return questions


@functools.cache
def _trace_code() -> str:
    """A hash of the package files that make the traces (read once per run, not once per set)."""
    code = hashlib.sha1()
    package = Path(__file__).resolve().parents[1]
    for f in sorted(package.rglob("*")):
        relative = f.relative_to(package)
        if f.is_file() and f.suffix in {".py", ".json", ".safetensors"} and not _after_traces(relative):
            code.update(relative.as_posix().encode() + f.read_bytes())
    return code.hexdigest()


def _after_traces(path: Path) -> bool:
    """Whether a package file only acts after the traces (the app, the fitting code, the scorer it refits)."""
    return path.parts[0] in {"app", "catalogue", "pg", "fitting"} or path.parts[:2] in {
        ("qa", "weights"),
        ("qa", "scoring.py"),
        ("claims", "weights"),
    }


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
    metrics: Mapping[str, Any],
    dense_weight: float | None,
    reader: bool = False,
    command: Sequence[str] | None = None,
    counts: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """How the scorer was fitted; ``by`` is ``command`` (the module's arguments, less ``--cache``, which
    changes no figure) or, without it, the command these arguments name; ``counts``: questions and spans."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    fusion = f" --dense-weight {dense_weight}" if dense_weight is not None else ""
    flags = fusion + (" --reader" if reader else "") + " --write"
    by = " ".join(f"--set {qa}={idx}" for qa, idx in sets) + flags if command is None else shlex.join(command)
    return {
        "by": f"{COMMAND} {by}",
        "data": [qa for qa, _ in sets],
        **(dict(counts) if counts else {}),
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


def without_cache(argv: Sequence[str]) -> list[str]:
    """``argv`` less ``--cache`` and its folder."""
    out, skip = [], False
    for arg in argv:
        if skip or arg == "--cache" or arg.startswith("--cache="):
            skip = arg == "--cache"
            continue
        out.append(arg)
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=COMMAND, description=(__doc__ or "").splitlines()[0])
    p.add_argument("--set", action="append", required=True, metavar="QA=INDEX", help="a QA file and its index")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument(
        "--dense-weight",
        type=float,
        default=None,
        help="weight of the dense score in retrieval fusion (lexical gets the rest; default: the "
        "model's current weights file)",
    )
    p.add_argument(
        "--generic",
        action="store_true",
        help=f"fit without the dense features ({', '.join(DENSE_FEATURES)}) and write "
        f"weights/{GENERIC}.json, the weights of models that have none of their own",
    )
    p.add_argument(
        "--drop",
        action="append",
        default=[],
        choices=FEATURES,
        metavar="FEATURE",
        help="fit without this feature (repeatable): does it earn its place out of fold?",
    )
    p.add_argument(
        "--reader",
        action="store_true",
        help="answer with the trained reader and fit its features too; writes <model>+reader.json",
    )
    p.add_argument(
        "--candidates",
        choices=("sentences", "reader"),
        default="sentences",
        help="with --reader: choose among the reader's spans (each with its sentence) or among every sentence",
    )
    p.add_argument(
        "--setting", action="append", default=[], metavar="NAME=JSON", help="an answer setting to fit with (repeatable)"
    )
    p.add_argument(
        "--reader-delta",
        type=Path,
        default=None,
        help="with --reader: these reader weights (default: the shipped ones)",
    )
    p.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="keep the collected traces here, keyed by set, index, settings, reader and the package's code",
    )
    p.add_argument("--write", action="store_true", help="write citeqa/qa/weights/<model>.json")
    return p


def _sets(parser: argparse.ArgumentParser, given: Sequence[str]) -> list[tuple[str, str]]:
    """The ``--set QA=INDEX`` pairs."""
    pairs = [s.split("=", 1) for s in given]
    for s, pair in zip(given, pairs):
        if len(pair) != 2:
            parser.error(f"--set {s}: give a QA file and its index as QA=INDEX")
    return [(qa, index) for qa, index in pairs]


def _traced(args: argparse.Namespace, sets: Sequence[tuple[str, str]]) -> tuple[list[Question], list[Engine]]:
    """Every set's questions, traced by an engine on its index (or from ``--cache``), and the engines."""
    questions: list[Question] = []
    engines = []
    for qa, index in sets:
        overrides: dict[str, Any] = {}
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

        def make(engine: Engine = engine, qa: str = qa) -> list[Question]:
            return collect(engine, qa, ev.load_qa(Path(qa)))

        questions += cached_collect(args.cache, key, make)
    return questions, engines


def _print_fit(final: ScoringModel) -> None:
    print("ranker:", final.weights, "bias", final.bias)
    print("calibration:", final.calibration, "bias", final.calib_bias, "abstain below", final.abstain_below)
    print("headline from", final.headline_above, f"(out of fold, {HEADLINE_PRECISION:.0%} right)")
    for band in final.bands:
        print(f"  band {band.name:7s} from {band.above:.2f}: {band.precision} right of {band.support} (out of fold)")


def _write(
    args: argparse.Namespace,
    final: ScoringModel,
    settings: AnswerSettings,
    model_id: str,
    sets: Sequence[tuple[str, str]],
    metrics: Mapping[str, Any],
    counts: Mapping[str, int],
    argv: Sequence[str],
) -> None:
    """The model's weights file, with how it was fitted (``argv``: the module's arguments)."""
    model_id = GENERIC if args.generic else model_id
    stem = model_id.replace("/", "__") + (READER_SUFFIX if args.reader else "")
    path = weights_path(model_id).with_name(f"{stem}.json")
    fusion = {"dense_weight": settings.retrieval.dense_weight, "lexical_weight": settings.retrieval.lexical_weight}
    fitted = provenance(
        sets, model_id, args.folds, metrics, args.dense_weight, args.reader, without_cache(argv), counts
    )
    fitted["candidates"] = args.candidates if args.reader else "sentences"
    if args.reader:  # the scorer's features depend on what was read: it keeps how
        fitted["reading"] = {name: getattr(settings, name) for name in READING_SETTINGS}
    # With the reader only the scorer is written: fusion weights and claim thresholds stay in <model>.json.
    write_scoring(replace(final, fitted=fitted), path, retrieval=None if args.reader else fusion)
    print(f"wrote {path}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    sets = _sets(parser, args.set)
    questions, engines = _traced(args, sets)
    dropped = [*DENSE_FEATURES, *args.drop] if args.generic else args.drop
    if dropped:
        questions = [without(q, dropped) for q in questions]
    models = {e.manifest.model for e in engines}
    if len(models) != 1:
        raise SystemExit(f"the indexes were built with different models: {sorted(models)}")
    settings = engines[0].settings
    counts = {"questions": len(questions), "spans": sum(len(q.trace.spans) for q in questions)}
    print(f"{counts['questions']} questions, {counts['spans']} candidate spans; out-of-fold over {args.folds} folds:")
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
    _print_fit(final)
    if args.write:
        _write(args, final, settings, models.pop(), sets, metrics, counts, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
