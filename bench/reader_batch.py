"""Does a bigger reader batch raise throughput here? The reader's ONNX session over the windows the
engine really reads, one question per run (as shipped) against several questions' windows in one run.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/reader_batch.py [--index index] [--rounds 7] [--merge 1,2,4]

1. **Windows.** The engine answers the 30 questions of bench/questions.json once with the reader
   on; every batch its reader runs is recorded (the windows, as :meth:`Reader.logits` got them).
2. **Timing.** For each ``--merge`` k, the questions' batches are run k questions to a run
   (their windows together, sorted by length, padded to the run's longest; k = 0: each window
   alone), every batch once; a round times each k once, the order rotated each round; the
   medians over ``--rounds`` are reported as windows per second and ms per question, with the
   tokens the runs hold once padded. Also the first 8 windows (of the first questions, sorted
   by length) in runs of 1, 2, 4 and 8 windows (``single``), and 8 windows cut to their first
   96 tokens, so that no run pads anything (``single_96``), the same way.
3. **Same results?** The logits of each question's windows run alone against run merged with the
   next questions' windows: the largest difference, and how often the best span differs. The
   reader's MatMul activations are quantised per run (dynamic int8: one scale over the whole
   input), so a window's logits depend on its batch-mates.

Prints a JSON summary (and writes ``--out`` when given). Numbers depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

from common import load1
from common import question_texts as questions


def record(index: str) -> tuple[Any, list[list[Any]]]:
    """The engine's reader and, per question, the windows of each batch it ran."""
    from citeqa.engine import Engine

    engine = Engine.open(index, reader="on")
    engine.warm_up()
    reader = engine.pipeline.reader
    assert reader is not None
    batches: list[list[Any]] = []
    original = reader.logits

    def recorded(windows):  # type: ignore[no-untyped-def]
        batches.append(list(windows))
        return original(windows)

    reader.logits = recorded
    per_question = []
    for q in questions():
        batches.clear()
        engine.trace(q)
        per_question.append([w for b in batches for w in b])
    del reader.logits  # the class's method again
    return reader, [ws for ws in per_question if ws]


def merged(groups: Sequence[list[Any]], k: int) -> list[list[Any]]:
    """The groups' windows, k groups to a run, each run sorted by length (k = 0: each window alone)."""
    if k == 0:
        return [[w] for g in groups for w in g]
    runs = []
    for lo in range(0, len(groups), k):
        run = [w for g in groups[lo : lo + k] for w in g]
        runs.append(sorted(run, key=lambda w: len(w.ids)))
    return runs


def timed(reader: Any, runs: Sequence[list[Any]]) -> float:
    t0 = time.perf_counter()
    for run in runs:
        reader.logits(run)
    return time.perf_counter() - t0


def agreement(reader: Any, groups: Sequence[list[Any]], k: int) -> dict[str, Any]:
    """Each group's logits alone against merged with the next k-1 groups': largest difference, best-span changes."""
    import numpy as np

    from citeqa.reader.decode import best_spans, window_spans

    def best(ws: Sequence[Any], starts: Any, ends: Any) -> Any:
        spans = [s for w, a, b in zip(ws, starts, ends) for s in window_spans(w, a, b, 10)]
        top = best_spans(spans, 1)
        return (top[0].passage, top[0].start, top[0].end) if top else None

    diff, changed, n = 0.0, 0, 0
    for lo in range(0, len(groups) - k + 1, k):
        own = groups[lo]
        rest = [w for g in groups[lo + 1 : lo + k] for w in g]
        s1, e1 = reader.logits(own)
        s2, e2 = reader.logits(own + rest)
        s2, e2 = s2[: len(own)], e2[: len(own)]
        for w, a, b, c, d in zip(own, s1, e1, s2, e2):
            m = len(w.ids)
            diff = max(diff, float(np.abs(a[:m] - c[:m]).max()), float(np.abs(b[:m] - d[:m]).max()))
        changed += best(own, s1, e1) != best(own, s2, e2)
        n += 1
    return {"merge": k, "max_logit_diff": round(diff, 4), "best_span_changed": f"{changed}/{n}"}


def cut(window: Any, n: int) -> Any:
    """``window``'s first ``n`` tokens (for timing: windows of one length need no padding)."""
    from dataclasses import replace

    return replace(window, ids=window.ids[:n], starts=window.starts[:n], ends=window.ends[:n])


def by_size(reader: Any, windows: list[Any], rounds: int, sizes: Sequence[int] = (1, 2, 4, 8)) -> dict[str, Any]:
    """``windows`` in runs of each of ``sizes`` (all of them once per round, the order rotated each
    round): median ms to run them all, per run size."""
    seconds: dict[int, list[float]] = {n: [] for n in sizes}
    for r in range(rounds):
        for n in list(sizes[r % len(sizes) :]) + list(sizes[: r % len(sizes)]):
            seconds[n].append(timed(reader, [windows[i : i + n] for i in range(0, len(windows), n)]))
    return {
        "tokens": [len(w.ids) for w in windows],
        "ms_by_run_size": {n: round(statistics.median(seconds[n]) * 1000, 1) for n in sizes},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default="index")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--merge", default="1,2,4")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    ks = [int(x) for x in args.merge.split(",")]
    reader, groups = record(args.index)
    windows = sum(len(g) for g in groups)
    tokens = [len(w.ids) for g in groups for w in g]
    loads = [load1()]
    eight = [w for g in groups for w in g][:8]  # the first questions' windows, 80-210 tokens
    short = [cut(w, 96) for g in groups for w in g if len(w.ids) >= 96][:8]  # no padding at all
    out: dict[str, Any] = {
        "questions": len(groups),
        "windows": windows,
        "tokens": sum(tokens),
        "tokens_median": statistics.median(tokens),
        "threads": os.cpu_count(),
        "single": by_size(reader, sorted(eight, key=lambda w: len(w.ids)), args.rounds),
        "single_96": by_size(reader, short, args.rounds),
    }
    seconds: dict[int, list[float]] = {k: [] for k in ks}
    for r in range(args.rounds):
        order = ks[r % len(ks) :] + ks[: r % len(ks)]
        for k in order:
            seconds[k].append(timed(reader, merged(groups, k)))
        loads.append(load1())
    out["merge"] = [
        {
            "questions_per_run": k,
            "windows_per_s": round(windows / statistics.median(seconds[k]), 1),
            "ms_per_question": round(statistics.median(seconds[k]) * 1000 / len(groups), 1),
            "padded_tokens": sum(len(run) * max(len(w.ids) for w in run) for run in merged(groups, k)),
            "seconds": [round(s, 2) for s in seconds[k]],
        }
        for k in ks
    ]
    out["agreement"] = [agreement(reader, groups, k) for k in ks if k > 1]
    out["load1"] = [min(loads), max(loads)]
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
