"""What reading less buys: warm answers and the reader's step with each way of reading, one process each.

Usage (an index built already; a quiet machine)::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/reading_less.py [--index index] [--rounds 3] \
        [--reading '{}' --reading '{"reader_focus": 3, "reader_context": 30}' ...]

Each ``--reading`` is a JSON object of answer settings (``Engine.open``'s overrides; ``{}`` is
today's reading, the 4 best passages whole). For each, in a fresh process: 3 warm-up answers, then
``--rounds`` rounds over bench/questions.json (10 es, 10 pt, 10 en) through ``Engine.trace``;
p50/p95 of the whole answer and of its ``read`` step, and the mean tokens the reader ran
(``Trace.read_tokens``). What each reading costs in answers is measured out of fold by
``python -m citeqa.fitting.scorer --setting ...`` (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, pct, question_texts

DEFAULT_READINGS = ("{}", '{"reader_focus": 6, "reader_context": 30}', '{"reader_focus": 3, "reader_context": 30}')


def measure(index: str, reading: dict, rounds: int) -> dict:
    """Warm timings of ``rounds`` passes over the benchmark questions with ``reading``'s settings."""
    from citeqa.engine import Engine

    engine = Engine.open(index, overrides=reading)
    questions = question_texts()
    for question in questions[:3]:
        engine.trace(question, (), k=engine.settings.pool)
    total, read, tokens = [], [], []
    for _ in range(rounds):
        for question in questions:
            start = time.perf_counter()
            trace = engine.trace(question, (), k=engine.settings.pool)
            total.append((time.perf_counter() - start) * 1000)
            read.append(trace.timings_ms.get("read", 0.0))
            tokens.append(trace.read_tokens)
    return {
        "reading": reading,
        "answers": len(total),
        "total_ms": {"p50": pct(total, 0.5), "p95": pct(total, 0.95)},
        "read_ms": {"p50": pct(read, 0.5), "p95": pct(read, 0.95)},
        "tokens_mean": statistics.fmean(tokens),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=str(ROOT / "index"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reading", action="append", default=None, help="answer settings as JSON (repeatable)")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # the worker: one reading, JSON out
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.index, json.loads(args.one), args.rounds)))
        return 0
    print("| reading | tokens read (mean) | warm p50 / p95 | read step p50 / p95 |")
    print("|---|---|---|---|")
    for reading in args.reading or DEFAULT_READINGS:
        command = [sys.executable, __file__, "--index", args.index, "--rounds", str(args.rounds), "--one", reading]
        row = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
        total, read = row["total_ms"], row["read_ms"]
        print(
            f"| {reading} | {row['tokens_mean']:.0f} | {total['p50']:.0f} / {total['p95']:.0f} ms "
            f"| {read['p50']:.0f} / {read['p95']:.0f} ms |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
