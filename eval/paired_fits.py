"""Compare fit_scorer runs question by question, out of fold, from their trace caches.

    .venv/bin/python eval/paired_fits.py out/cache/baseline out/cache/cascade [more caches...]

Each argument is a ``--cache`` folder of one ``eval/fit_scorer.py`` run over the same QA files (one
run per folder: the script reads every trace in it). Each run is cross-validated as fit_scorer does
(same folds, same fit), then compared with the first one on the same questions: answerable
questions whose answer sentence (and short answer, exact match) one got right and the other not,
with a two-sided sign test, and the mean short-F1 difference with a 95% interval. Also prints the
reader's tokens per question (``Trace.read_tokens``), which do not depend on the machine's load.
"""

from __future__ import annotations

import math
import pickle
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fit_scorer as fs
from fit_scorer import Question  # noqa: F401  (the caches pickle it as __main__.Question)

FOLDS = 5


def outcomes(cache: Path, order: list[str]) -> tuple[dict[tuple[str, str], dict], dict[str, float]]:
    """Per question (set, id): its out-of-fold outcome and tokens read; and the run's summary."""
    parts = [pickle.loads(f.read_bytes()) for f in sorted(cache.glob("*.pkl"))]
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


def main(caches: list[Path]) -> int:
    order = list(
        dict.fromkeys(q.set_name for f in sorted(caches[0].glob("*.pkl")) for q in pickle.loads(f.read_bytes()))
    )
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
        if cache == caches[0]:
            continue
        same = [k for k in rows if k in base and rows[k]["answerable"]]
        for name in ("right", "em"):
            gained = sum(rows[k][name] and not base[k][name] for k in same)
            lost = sum(base[k][name] and not rows[k][name] for k in same)
            print(f"   {name}: +{gained} -{lost} of {len(same)} answerable, sign test p {sign_p(gained, lost):.2f}")
        diff = np.array([rows[k]["f1"] - base[k]["f1"] for k in same])
        half = 1.96 * diff.std(ddof=1) / math.sqrt(len(diff)) if len(diff) > 1 else float("nan")
        print(f"   short F1 {diff.mean():+.3f} ± {half:.3f} (95%, paired)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    sys.exit(main([Path(a) for a in sys.argv[1:]]))
