"""Compare scorer fits question by question, out of fold, from their trace caches.

    python -m citeqa.fitting.paired out/cache/baseline out/cache/cascade [more caches...]

Each argument is a ``--cache`` folder of one :mod:`citeqa.fitting.scorer` run over the same QA files
(one run per folder: the module reads every trace in it). Each run is cross-validated as the scorer's
fit is (same folds, same fit), then compared with the first one on the same questions: answerable
questions whose answer sentence (and short answer, exact match) one got right and the other not,
with a two-sided sign test, and the mean short-F1 difference with a 95% interval. Also prints the
reader's tokens per question (``Trace.read_tokens``), which do not depend on the machine's load.
Writes nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from citeqa.fitting import scorer_fit as fs
from citeqa.fitting.scorer import load_questions

FOLDS = 5
#: A question's key: its set and id.
Key = tuple[str, str]


def outcomes(cache: Path, order: list[str]) -> tuple[dict[Key, dict[str, Any]], dict[str, float]]:
    """Per question (set, id): its out-of-fold outcome and tokens read; and the run's summary."""
    parts = [load_questions(f) for f in sorted(cache.glob("*.pkl"))]
    parts.sort(key=lambda qs: order.index(qs[0].set_name) if qs and qs[0].set_name in order else len(order))
    questions = [q for part in parts for q in part]
    settings = SimpleNamespace(language_margin=0.05, language_floor=0.5)  # AnswerSettings' defaults
    outs = fs.cross_validate(questions, FOLDS, settings)
    rows = {}
    for o in outs:
        item = o.q.item
        rows[(o.q.set_name, item.id)] = {
            "answerable": item.answerable,
            "right": o.right,
            "abstained": o.abstained,
            "em": fs.short_em(o),
            "f1": fs.short_f1(o),
            "tokens": o.q.trace.read_tokens,
        }
    return rows, fs.summary(outs)


def sign_p(gained: int, lost: int) -> float:
    """Two-sided sign test of ``gained`` against ``lost`` discordant questions."""
    n, k = gained + lost, min(gained, lost)
    return 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def _compare(rows: dict[Key, dict[str, Any]], base: dict[Key, dict[str, Any]]) -> None:
    same = [k for k in rows if k in base and rows[k]["answerable"]]
    for name in ("right", "em"):
        gained = sum(rows[k][name] and not base[k][name] for k in same)
        lost = sum(base[k][name] and not rows[k][name] for k in same)
        print(f"   {name}: +{gained} -{lost} of {len(same)} answerable, sign test p {sign_p(gained, lost):.2f}")
    diff = np.array([rows[k]["f1"] - base[k]["f1"] for k in same])
    half = 1.96 * diff.std(ddof=1) / math.sqrt(len(diff)) if len(diff) > 1 else float("nan")
    print(f"   short F1 {diff.mean():+.3f} ± {half:.3f} (95%, paired)")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m citeqa.fitting.paired", description=(__doc__ or "").splitlines()[0])
    p.add_argument("caches", nargs="+", type=Path, help="--cache folders of scorer runs; the first is the baseline")
    caches: list[Path] = p.parse_args(argv).caches
    if len(caches) < 2:
        p.error("give at least two caches: the baseline, then the runs to compare with it")
    order = list(dict.fromkeys(q.set_name for f in sorted(caches[0].glob("*.pkl")) for q in load_questions(f)))
    runs = {cache: outcomes(cache, order) for cache in caches}
    base = runs[caches[0]][0]
    for cache in caches:
        rows, s = runs[cache]
        tokens = [r["tokens"] for r in rows.values()]
        print(
            f"{cache.name}: answer sentence {s['accuracy']:.3f}, short EM {s['short_em']:.3f} / F1 "
            f"{s['short_f1']:.3f}, abstention {s['abstain_recall']:.3f} ({s['false_abstention']:.3f}), "
            f"tokens read per question {np.mean(tokens):.0f} (median {np.median(tokens):.0f})"
        )
        if cache != caches[0]:
            _compare(rows, base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
