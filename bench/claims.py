"""What a claim check costs beside a question, in the same run: ms per ``Engine.check`` (with the reader:
one reader question per value of the claim over the few best passages) against ms per ``Engine.ask``.

    HF_HUB_OFFLINE=1 PYTHONPATH=src .venv/bin/python bench/claims.py --index out/dev2-index \\
        --claims eval/dev2/claims-reading.jsonl --questions eval/dev2/qa.jsonl [--n 20] [--reader on]

The engine is opened once and warmed up; then the first ``--n`` claims are checked and the first
``--n`` questions asked, alternating (a busy machine slows both alike). Prints the median, mean and
90th percentile of each in ms, the reader's runs per check (a question per value of the claim, and a
short one per value read asking who holds it, where the rule asks holders: ``holder_margin``), the
characters of the passages it was given per check, and the ratio of the medians. Numbers depend on the
machine's load: run it quiet.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from citeqa.engine import Engine
from citeqa.evaluation.claims_file import load_claims


def _questions(path: Path, n: int) -> list[str]:
    out = []
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            out.append(json.loads(line)["question"])
        if len(out) >= n:
            break
    return out


def _line(label: str, ms: list[float]) -> str:
    ms = sorted(ms)
    p90 = ms[min(len(ms) - 1, int(0.9 * len(ms)))]
    return f"  {label:6} n={len(ms):3}  median {statistics.median(ms):8.1f}  mean {statistics.fmean(ms):8.1f}  p90 {p90:8.1f}"


class Counted:
    """The engine's reader, counting its runs and the tokens of the passages it is given."""

    def __init__(self, reader: Any) -> None:
        self.reader, self.runs, self.chars = reader, 0, 0

    def warm_up(self) -> None:
        self.reader.warm_up()

    def run(self, question: str, passages: Any, **kwargs: Any) -> Any:
        self.runs += 1
        self.chars += sum(len(p.text) for p in passages)
        return self.reader.run(question, passages, **kwargs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, default=Path("index"))
    ap.add_argument("--claims", type=Path, default=Path("eval/claims.jsonl"))
    ap.add_argument("--questions", type=Path, default=Path("eval/qa.jsonl"))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--reader", choices=("auto", "on", "off"), default="auto")
    args = ap.parse_args()
    engine = Engine.open(args.index, reader=args.reader)
    engine.warm_up()
    counted = Counted(engine.reader) if engine.reader is not None else None
    if counted is not None:
        engine = engine.adjusted(reader=counted)  # type: ignore[arg-type]
    claims = [c.claim for c in load_claims(args.claims)][: args.n]
    questions = _questions(args.questions, args.n)
    check_ms, ask_ms, runs, chars = [], [], [], []
    for i in range(max(len(claims), len(questions))):
        if i < len(claims):
            before = (counted.runs, counted.chars) if counted is not None else (0, 0)
            t = time.perf_counter()
            engine.check(claims[i])
            check_ms.append((time.perf_counter() - t) * 1e3)
            if counted is not None:
                runs.append(counted.runs - before[0])
                chars.append(counted.chars - before[1])
        if i < len(questions):
            t = time.perf_counter()
            engine.ask(questions[i])
            ask_ms.append((time.perf_counter() - t) * 1e3)
    print(f"index {args.index}, reader {'on' if engine.reader is not None else 'off'} (ms per call)")
    read = (
        f"  reader runs per check {statistics.fmean(runs):.2f}, passage chars {statistics.fmean(chars):.0f}"
        if runs
        else ""
    )
    print(_line("check", check_ms) + read)
    print(_line("ask", ask_ms))
    print(f"  check / ask (medians): {statistics.median(check_ms) / statistics.median(ask_ms):.2f}")


if __name__ == "__main__":
    main()
