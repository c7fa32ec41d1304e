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
        f"| reader on (int8 ONNX, the default reading) | {_ms(on['p50_ms'])} | {_ms(on['p95_ms'])} | "
        f"{on['read_p50_ms']:.1f} / {_ms(on['read_p95_ms'])} | {_mb(on['rss_mb'])} | {cold['reader_on']:.2f} s |",
        f"| reader off | {_ms(off['p50_ms'])} | {_ms(off['p95_ms'])} | – | {_mb(off['rss_mb'])} | {cold['reader_off']:.2f} s |",
        "| same weights, plain torch `BertForQuestionAnswering` (float32), same windows | | | "
        f"{peer['read_p50_ms']:.1f} / {_ms(peer['read_p95_ms'])} (read alone) | {_mb(peer['rss_mb'])} | |",
    ]
    whole = "passages_read_p50_ms" in peer  # results from before the peer read whole passages lack these
    if whole:
        rows.append(
            "| the same torch model reading the same passages whole | | | "
            f"{peer['passages_read_p50_ms']:.1f} / {_ms(peer['passages_read_p95_ms'])} (read alone) | | |"
        )
    rows += [
        "",
        f"The torch model picked the same best span as the int8 ONNX one for {peer['same_best_span']} questions.",
    ]
    if whole:
        rows.append(
            f"The reader ran {on['read_tokens_mean']:.0f} tokens a question (mean), windows of the passages it "
            f"was given; the torch model ran {peer['passages_tokens_mean']:.0f} reading those passages whole. "
            f"citeqa's read step took {r['read_ratio']['p50']:.2f} of the torch model's read of the same "
            f"passages and {r['read_ratio']['windows_p50']:.2f} of its read of the same windows (p50 over p50)."
        )
    elif "read_tokens_mean" in on:  # results of bench/reader.py before 2026-12-05 lack these two
        rows.append(
            f"The reader ran {on['read_tokens_mean']:.0f} tokens a question (mean); its read step took "
            f"{r['read_ratio']['p50']:.2f} of the torch model's read (p50 over p50)."
        )
    return "\n".join(rows)


def bounds_table(r: dict) -> str:
    """bench/bounds.py's report: each request alone, a normal one behind the worst ones, the two ratios."""
    s, heavy = r["summary"], r["heavy"]
    alone, engine = s["alone_s"], s["alone_engine_ms"]
    names = {
        "normal": "normal question (bench/questions.json, k=5)",
        "long": "2,000-character question",
        "worst": "worst legal request: 2,000 characters, 20 earlier ones of 2,000, k=10",
    }
    rows = ["| request | client, median | engine, median |", "|---|---|---|"]
    rows += [f"| {names[k]} | {alone[k]:.2f} s | {engine[k]:,.0f} ms |" for k in ("normal", "long", "worst")]
    rows += [
        f"| normal question {r['lead_s']:g} s after {heavy} worst ones | {s['behind_s']:.2f} s | "
        f"{s['behind_engine_ms']:,.0f} ms |",
        "",
        f"Worst / normal **{s['worst_over_normal']:.2f}x** (target ~3x), normal behind {heavy} worst / alone "
        f"**{s['behind_over_alone']:.2f}x** (target ~2x); {r['rounds']} rounds, load average "
        f"{r['machine']['loadavg_end'][0]:.1f} at the end, server peak RSS {_mb(r['serve_vm_hwm_mb'])}.",
    ]
    return "\n".join(rows)


def memory_table(r: dict) -> str:
    """bench/memory.py's report: what each part adds, then the real server at start and under load."""
    rows = ["| part (loaded in this order) | adds | resident after |", "|---|---|---|"]
    rows += [f"| {p['part']} | {p['added_mb']:+,.0f} MB | {_mb(p['rss_mb'])} |" for p in r["breakdown"]["steps"]]
    imported = [m for m, yes in r["breakdown"]["imported"].items() if yes]
    rows += [
        "",
        f"Of torch, transformers, sentence-transformers and tokenizers, these parts imported: {', '.join(imported) or 'none'}.",
        "",
    ]
    rows += ["| `citeqa serve` | requests | resident | peak so far |", "|---|---|---|---|"]
    for phase in r["server"]["phases"]:
        load = phase["load"]
        requests = (
            "–" if load is None else f"{load['requests']:,} ({load['errors']} errors, {load['mismatches']} differ)"
        )
        rows.append(f"| {phase['phase']} | {requests} | {_mb(phase['VmRSS'])} | {_mb(phase['VmHWM'])} |")
    top = ", ".join(f"{name} {mb:,.0f}" for name, mb in r["server"]["mappings"][:6])
    rows += ["", f"Largest mappings of the server at the end (MB): {top}."]
    return "\n".join(rows)


RENDERERS: dict[str, Callable[[dict], str]] = {"reader": reader_table, "bounds": bounds_table, "memory": memory_table}
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
