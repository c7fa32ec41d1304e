"""Seconds per question of an Evaluate-tab run (issue [3/6], item 5): the figure behind
``citeqa.app.web.evaluate.runner.SECONDS_PER_QUESTION``, the time per question the tab's estimate
takes before a server has run an evaluation of its own.

Usage::

    HF_HUB_OFFLINE=1 PYTHONPATH=src .venv/bin/python bench/eval_rate.py [--index index] \\
        [--qa eval/qa.jsonl] [--runs 2] [--out out/eval_rate.json]

The engine is opened and warmed as ``citeqa serve`` opens and warms it (default model of the index,
reader ``auto``), then the tab's own :class:`~citeqa.app.web.evaluate.runner.EvaluationRunner` runs the
QA file ``--runs`` times, one run after another; each run's questions' wall time per question (its
:meth:`~EvaluationRunner.pace`, the report's writing not counted) and the engine's median answer time
are printed, with the machine and its load. On a shared machine the seconds are slow and noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import EVAL, ROOT, load1, machine, write_json


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=ROOT / "index", help="index folder (default: index/)")
    parser.add_argument("--qa", type=Path, default=EVAL, help="QA file (default: eval/qa.jsonl)")
    parser.add_argument("--runs", type=int, default=2, help="runs of the file, one after another (default 2)")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures here as JSON")
    args = parser.parse_args(argv)

    from citeqa.app.web.evaluate.runner import DONE, EvaluationRunner
    from citeqa.app.web.holder import EngineHolder
    from citeqa.engine import Engine
    from citeqa.evaluation import load_qa

    report: dict = {"machine": machine(), "index": str(args.index), "qa": str(args.qa), "runs": []}
    items = load_qa(args.qa)
    engine = Engine.open(args.index)
    engine.warm_up()
    with tempfile.TemporaryDirectory(prefix="citeqa-eval-rate-") as folder:
        runner = EvaluationRunner(EngineHolder(engine), root=Path(folder))
        try:
            for n in range(args.runs):
                load = load1()
                started = time.monotonic()
                runner.start(items, args.qa.name, args.qa)
                runner.wait()
                status, run = runner.status(), runner.finished()
                if status is None or status.state != DONE or run is None:
                    print(f"run {n + 1}: {status}", file=sys.stderr)
                    return 1
                engine_ms = statistics.median(r.answer.latency_ms for r in run.results)
                figures = {
                    "questions": len(items),
                    "seconds_per_question": round(runner.pace().seconds, 3),
                    "engine_p50_ms": round(engine_ms, 1),
                    "run_s": round(time.monotonic() - started, 1),
                    "load1_before": load,
                    "load1_after": load1(),
                }
                report["runs"].append(figures)
                print(f"run {n + 1}: " + ", ".join(f"{k} {v}" for k, v in figures.items()), flush=True)
        finally:
            runner.close()
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.out, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
