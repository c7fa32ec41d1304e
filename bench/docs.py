"""Render the tables of docs/benchmarks.md from the benchmarks' own output, never by hand.

    .venv/bin/python bench/docs.py            # rewrite every marked block from bench/results/*.json
    .venv/bin/python bench/docs.py --check    # exit 1 when a block differs from its results file

A block is the text between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``; NAME picks the
renderer below and the results file ``bench/results/NAME.json`` (copied there from the OUT folder
of the run the section names, e.g. ``cp out/bench-reader/results.json bench/results/reader.json``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
RESULTS = ROOT / "bench" / "results"


def _ms(value: float) -> str:
    return f"{value:.1f} ms"


def _mb(value: float) -> str:
    return f"{value:,.0f} MB"


def reader_table(r: dict) -> str:
    """bench/reader.py's results: warm latency, the reader's own step, memory and cold start."""
    on, off, peer, cold = r["warm_reader_on"], r["warm_reader_off"], r["transformers_torch_fp32"], r["cold_ask_s"]
    rows = [
        "| | warm p50 | warm p95 | reader step p50 / p95 | peak RSS | cold `citeqa ask` |",
        "|---|---|---|---|---|---|",
        f"| reader on (int8 ONNX, 4 passages) | {_ms(on['p50_ms'])} | {_ms(on['p95_ms'])} | "
        f"{on['read_p50_ms']:.1f} / {_ms(on['read_p95_ms'])} | {_mb(on['rss_mb'])} | {cold['reader_on']:.2f} s |",
        f"| reader off | {_ms(off['p50_ms'])} | {_ms(off['p95_ms'])} | – | {_mb(off['rss_mb'])} | {cold['reader_off']:.2f} s |",
        "| same weights, plain torch `BertForQuestionAnswering` (float32), same passages and windows | | | "
        f"{peer['read_p50_ms']:.1f} / {_ms(peer['read_p95_ms'])} (read alone) | {_mb(peer['rss_mb'])} | |",
        "",
        f"The torch model picked the same best span as the int8 ONNX one for {peer['same_best_span']} questions.",
    ]
    return "\n".join(rows)


RENDERERS: dict[str, Callable[[dict], str]] = {"reader": reader_table}
BLOCK = re.compile(r"(<!-- bench:(?P<name>[a-z0-9_-]+) -->\n)(?P<body>.*?)(\n<!-- /bench:(?P=name) -->)", re.S)


def render(doc: str) -> str:
    """``doc`` with every marked block rendered from its results file."""

    def one(match: re.Match[str]) -> str:
        name = match["name"]
        data = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
        return match.group(1) + RENDERERS[name](data) + match.group(4)

    return BLOCK.sub(one, doc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on a difference")
    args = parser.parse_args(argv)
    doc = DOC.read_text(encoding="utf-8")
    new = render(doc)
    if args.check:
        print("docs/benchmarks.md is up to date" if new == doc else "docs/benchmarks.md differs from bench/results/")
        return 0 if new == doc else 1
    DOC.write_text(new, encoding="utf-8")
    print(f"rendered {len(BLOCK.findall(doc))} block(s) into {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
