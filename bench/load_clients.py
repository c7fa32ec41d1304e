"""The load figure of issue [2/6]: 8, 16 and 32 concurrent /ask clients against the real `citeqa serve`.

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/load_clients.py [--index DIR] [--clients 8,16,32] \\
        [--seconds 20] [--out out/load_clients.json]

One ``citeqa serve`` (real model, real corpus, the guarded server, 127.0.0.1 only) for
the whole run; the method is bench/load.py's (same questions, clients, barrier and
comparison): a serial phase whose first record per question is the reference, then
one phase per client count. Each phase prints requests, answers per second, client
latency p50/p95/max, errors and answers that differ from the reference (latency
aside), and the server's peak RSS so far. Exits 1 on any error or differing answer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import load_questions, machine, vm_hwm_mb
from load import CORPUS, LOCAL_ENV, ROOT, Server, complete_reference, ensure_index, run_phase, summarize


def parse_counts(text: str) -> list[int]:
    """``"8,16,32"`` as ``[8, 16, 32]``; every count must be positive."""
    counts = [int(part) for part in text.split(",") if part.strip()]
    if not counts or min(counts) < 1:
        raise ValueError(f"client counts must be positive integers, got {text!r}")
    return counts


def row(name: str, s: dict, rss: float | None) -> str:
    lat = s["latency_ms"]
    fmt = lambda v: "-" if v is None else f"{v:,.0f}"
    per_s = "-" if s["throughput_per_s"] is None else f"{s['throughput_per_s']:.2f}"
    return (
        f"{name:>8} {s['requests']:>8} {per_s:>9} {fmt(lat['p50']):>8} {fmt(lat['p95']):>8} "
        f"{fmt(lat['max']):>8} {s['errors']:>6} {s['mismatches']:>8} {fmt(rss):>8}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=None, help="index to reuse or build (default: a temp one)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--clients", default="8,16,32", help="client counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    parser.add_argument("--request-timeout", type=float, default=180.0)
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "load_clients.json")
    args = parser.parse_args(argv)
    try:
        counts = parse_counts(args.clients)
    except ValueError as exc:
        parser.error(str(exc))
    for key, value in LOCAL_ENV.items():
        os.environ.setdefault(key, value)
    questions = [q["question"] for q in load_questions()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report: dict = {"machine": machine(), "seconds": args.seconds, "questions": len(questions), "phases": {}}
    header = (
        f"{'clients':>8} {'requests':>8} {'answers/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} "
        f"{'errors':>6} {'differ':>8} {'RSS MB':>8}"
    )
    ok = True
    with tempfile.TemporaryDirectory(prefix="citeqa-load-") as tmp:
        index = args.index or Path(tmp) / "index"
        ensure_index(index, args.corpus, args.out.with_suffix(".index.log"))
        server = Server(index, args.corpus, args.out.with_suffix(".serve.log"))
        try:
            report["start"] = server.wait_ready(questions[0], 600)
            print(header, flush=True)
            phase, reference = run_phase(
                "serial", server.url, questions, 1, args.seconds, 10_000, args.request_timeout, None
            )
            complete_reference(server.url, questions, reference, args.request_timeout)
            for name, clients in [("serial", None), *((str(n), n) for n in counts)]:
                if clients is not None:
                    phase, _ = run_phase(
                        f"load-{clients}",
                        server.url,
                        questions,
                        clients,
                        args.seconds,
                        10_000,
                        args.request_timeout,
                        reference,
                    )
                summary = summarize(phase)
                rss = vm_hwm_mb(server.proc.pid)
                report["phases"][name] = {**summary, "serve_vm_hwm_mb": rss}
                print(row("1" if name == "serial" else name, summary, rss), flush=True)
                ok = ok and summary["errors"] == 0 and summary["mismatches"] == 0
        finally:
            server.stop()
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
