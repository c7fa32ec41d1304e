"""Score the reader as users run it (the ONNX file built from the shipped weights) on held-out questions.

    python -m citeqa.fitting.reader.evaluate --data out/reader-data/dev.jsonl [--delta FILE] [--sample tests/data/reader-dev.jsonl]
        [--per-lang N] [--write src/citeqa/reader/weights/e5-small-reader.json]

Prints exact match and token F1 (``citeqa eval``'s definitions) per language and per source
file, over the answerable questions of an article-level split no training saw, each read
with its whole paragraph. ``--sample`` also scores a small file of such questions shipped for
the test that checks the shipped weights; ``--write`` records every figure in the model's
metadata file (its ``metrics`` block), with the command that gave it.

In the languages whose dev split has unanswerable questions, the same sample size of them is
read too, and the no-answer score is judged by the margin of the best span over it: ``null_auc``
is the chance that an answerable question gets the higher margin, ``null_recall_at_5`` the share
of unanswerable ones below the margin that only 5% of answerable ones fall under (the sample's own
threshold: how separable the two are, not an operating point).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

from citeqa.fitting.reader.squad import Example, load_examples, squad_scores
from citeqa.reader.reader import Reader


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m citeqa.fitting.reader.evaluate", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True, help="dev.jsonl from python -m citeqa.fitting.reader.prepare")
    p.add_argument("--delta", type=Path, default=None, help="reader weights (default: the shipped ones)")
    p.add_argument("--cache", type=Path, default=None, help="where the ONNX file is built (default: citeqa's cache)")
    p.add_argument("--sample", type=Path, default=None, help="also score this small file (the test's sample)")
    p.add_argument("--write", type=Path, default=None, help="record the figures in this metadata file")
    p.add_argument(
        "--per-lang", type=int, default=None, help="score a fixed sample of this many questions per language"
    )
    args = p.parse_args(argv)
    reader = Reader(cache=args.cache, delta=args.delta)
    reader.warm_up()
    examples = load_examples(args.data)
    dev, unanswerable = [e for e in examples if e.answers], [e for e in examples if not e.answers]
    if args.per_lang is not None:  # a seeded sample, the same for every model scored
        dev, unanswerable = _per_lang(dev, args.per_lang), _per_lang(unanswerable, args.per_lang)
    started = time.perf_counter()
    preds = [read_one(reader, e) for e in dev]
    per_q = (time.perf_counter() - started) / max(1, len(dev)) * 1000
    metrics = {"split": str(args.data), "questions": len(dev), "ms_per_question": round(per_q, 1)}
    for key in sorted({e.lang for e in dev}) + sorted({e.source for e in dev}):
        part = [(e, x) for e, x in zip(dev, preds) if key in (e.lang, e.source)]
        em, f1 = squad_scores([e for e, _ in part], [x for _, x in part])
        metrics[key] = {"questions": len(part), "em": em, "f1": f1}
        print(f"{key:36s} {len(part):5d} questions  EM {em:.3f}  F1 {f1:.3f}")
    for lang in sorted({e.lang for e in unanswerable}):
        una = [margin(reader, e) for e in unanswerable if e.lang == lang]
        ans = [margin(reader, e) for e in dev if e.lang == lang]
        metrics[f"{lang}_null"] = null_separation(np.array(ans), np.array(una))
        print(f"{lang + ' no-answer':36s} {len(una):5d} unanswerable  {metrics[f'{lang}_null']}")
    if args.sample is not None:
        sample = load_examples(args.sample)
        em, f1 = squad_scores(sample, [read_one(reader, e) for e in sample])
        metrics["test_sample"] = {"file": str(args.sample), "questions": len(sample), "em": em, "f1": f1}
        print(f"{'test sample ' + str(args.sample):36s} {len(sample):5d} questions  EM {em:.3f}  F1 {f1:.3f}")
    if args.write is not None:
        meta = json.loads(args.write.read_text()) if args.write.is_file() else {}
        from citeqa.reader.onnx_build import RECIPE

        build = {"recipe": RECIPE}  # the figures are of this build of the weights
        meta["metrics"] = {
            **metrics,
            "build": build,
            "by": "python -m citeqa.fitting.reader.evaluate " + " ".join(argv or sys.argv[1:]),
            "date": date.today().isoformat(),
        }
        args.write.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {args.write}")


def _per_lang(examples: list[Example], n: int) -> list[Example]:
    examples = list(examples)
    random.Random(0).shuffle(examples)
    return [e for lang in sorted({e.lang for e in examples}) for e in [x for x in examples if x.lang == lang][:n]]


def margin(reader: Reader, e: Example) -> float:
    """The best span's score minus the paragraph's no-answer score (below 0: the reader says no answer)."""
    reading = reader.read(e.question, [e.context])
    return reading.best.score - reading.null[0] if reading.best is not None else float("-inf")


def null_separation(answerable: np.ndarray, unanswerable: np.ndarray) -> dict[str, float]:
    """How well the margin tells answerable from unanswerable questions (see the module's docstring)."""
    auc = float(
        (answerable[:, None] > unanswerable[None, :]).mean()
        + 0.5 * (answerable[:, None] == unanswerable[None, :]).mean()
    )
    cut = float(np.quantile(answerable, 0.05))
    return {
        "unanswerable": len(unanswerable),
        "null_auc": round(auc, 3),
        "null_recall_at_5": round(float((unanswerable < cut).mean()), 3),
        "null_recall_at_0": round(float((unanswerable < 0).mean()), 3),
        "false_null_at_0": round(float((answerable < 0).mean()), 3),
    }


def read_one(reader: Reader, e: Example) -> str:
    """The reader's best span for the question over its own paragraph."""
    best = reader.read(e.question, [e.context]).best
    return e.context[best.start : best.end] if best is not None else ""


if __name__ == "__main__":
    main()
