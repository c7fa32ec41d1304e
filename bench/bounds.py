"""What one request may cost, and whether a normal question gets through behind expensive ones (issue [1/7], item 3).

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bounds.py [--index DIR] [--rounds 5] [--heavy 6] \\
        [--out out/bounds.json]

One real ``citeqa serve`` (default model, reader on, ``corpus/``, 127.0.0.1 only; bench/load.py's
``Server``) and ``gradio_client`` clients calling ``/ask``. Three requests:

* **normal**: a question of bench/questions.json (round ``r`` asks question ``r``), no history, k=5;
* **long**: a question of 2,000 characters (the schema's limit): real questions about the corpus
  one after another, so retrieval and reading have something to find;
* **worst**: the long question with 20 earlier turns of 2,000 characters each (the schema's limits)
  and k=10, the worst request the API accepts.

Phase 1, **alone**: ``--rounds`` rounds, each asking normal, long and worst one at a time
(interleaved, so a change of machine load hits all three alike); the medians and the ratio
worst / normal are printed. Phase 2, **behind heavy ones**: ``--rounds`` rounds, each starting
``--heavy`` worst requests at once (one client each), then, when all of them have been
submitted and ``--lead`` seconds have passed, a normal question; its latency against the
median normal one alone is the second ratio. Targets: worst <= ~3x normal, normal behind six
worst <= ~2x alone.

Latency is as a client sees it (submit to result). On a shared machine the seconds are slow
and noisy; the ratios are measured in the same run and are the figures to compare. The
server's engine time (``latency_ms``) is reported beside each. Exits 1 on any error record.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import load_questions, machine, vm_hwm_mb
from load import CORPUS, LOCAL_ENV, ROOT, Server, ensure_index, new_client

#: The request schema's limits (app/web/validation.py): characters of a question or an earlier turn, turns, k.
MAX_CHARS = 2000
MAX_TURNS = 20
MAX_K = 10


def long_text(questions: list[str], start: int, chars: int = MAX_CHARS) -> str:
    """``chars`` characters of real questions one after another, from question ``start`` on."""
    parts: list[str] = []
    i = start
    while sum(len(p) + 1 for p in parts) < chars:
        parts.append(questions[i % len(questions)])
        i += 1
    text = " ".join(parts)[:chars]
    return text[:-1] + "?" if text.endswith(" ") else text  # all ``chars`` count: none is a trailing space


def requests(questions: list[str], r: int) -> dict[str, tuple[str, list[str], int]]:
    """Round ``r``'s normal, long and worst request: (question, history, k), within the schema."""
    long = long_text(questions, r)
    history = [long_text(questions, r + 7 * (n + 1)) for n in range(MAX_TURNS)]
    return {"normal": (questions[r % len(questions)], [], 5), "long": (long, [], 5), "worst": (long, history, MAX_K)}


def ask(client, request: tuple[str, list[str], int], timeout: float) -> tuple[float, float | None]:
    """Client seconds and the engine's milliseconds of one ``/ask``; raises on an error record."""
    question, history, k = request
    t0 = time.perf_counter()
    record = client.submit(question, history, k, "auto", api_name="/ask").result(timeout=timeout)
    took = time.perf_counter() - t0
    if not isinstance(record, dict) or "error" in record:
        raise RuntimeError(f"/ask answered {str(record)[:200]}")
    return took, record.get("latency_ms")


def alone(url: str, questions: list[str], rounds: int, timeout: float) -> dict[str, list[dict]]:
    """Phase 1: each kind of request alone, interleaved round by round."""
    client = new_client(url)
    out: dict[str, list[dict]] = {"normal": [], "long": [], "worst": []}
    try:
        for r in range(rounds):
            for kind, request in requests(questions, r).items():
                took, engine_ms = ask(client, request, timeout)
                out[kind].append({"s": took, "engine_ms": engine_ms})
                print(f"  alone   round {r + 1}: {kind:<6} {took:6.2f} s", flush=True)
    finally:
        client.close()
    return out


def behind(url: str, questions: list[str], rounds: int, heavy: int, lead: float, timeout: float) -> list[dict]:
    """Phase 2: per round, ``heavy`` worst requests at once, then a normal question behind them."""
    clients = [new_client(url) for _ in range(heavy + 1)]
    rows = []
    try:
        for r in range(rounds):
            reqs = requests(questions, r)
            submitted = threading.Barrier(heavy + 1)
            heavy_s: list[float] = []

            threads = [
                threading.Thread(target=_heavy, args=(c, reqs["worst"], submitted, heavy_s, timeout), daemon=True)
                for c in clients[:heavy]
            ]
            for t in threads:
                t.start()
            submitted.wait()
            time.sleep(lead)
            took, engine_ms = ask(clients[heavy], reqs["normal"], timeout)
            for t in threads:
                t.join(timeout + 30)
            rows.append({"s": took, "engine_ms": engine_ms, "heavy_s": sorted(heavy_s)})
            print(
                f"  behind  round {r + 1}: normal {took:6.2f} s (the {heavy} worst: "
                f"{min(heavy_s, default=0):.2f}-{max(heavy_s, default=0):.2f} s)",
                flush=True,
            )
    finally:
        for c in clients:
            c.close()
    return rows


def _heavy(client, request, submitted: threading.Barrier, seconds: list[float], timeout: float) -> None:
    """One worst-case request of phase 2: submitted, then waited for after every other is submitted."""
    question, history, k = request
    job = client.submit(question, history, k, "auto", api_name="/ask")
    t0 = time.perf_counter()
    submitted.wait()
    job.result(timeout=timeout)
    seconds.append(time.perf_counter() - t0)


def median(rows: list[dict], key: str = "s") -> float | None:
    values = [row[key] for row in rows if row.get(key) is not None]
    return statistics.median(values) if values else None


def summary(report: dict) -> dict:
    """Medians of both phases and the two ratios the targets are about."""
    a = {kind: median(rows) for kind, rows in report["alone"].items()}
    engine = {kind: median(rows, "engine_ms") for kind, rows in report["alone"].items()}
    b = median(report["behind"])
    normal = a["normal"]
    return {
        "alone_s": a,
        "alone_engine_ms": engine,
        "behind_s": b,
        "behind_engine_ms": median(report["behind"], "engine_ms"),
        "worst_over_normal": a["worst"] / normal if normal else None,
        "long_over_normal": a["long"] / normal if normal else None,
        "behind_over_alone": b / normal if normal and b is not None else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=None, help="index to reuse or build (default: a temp one)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--heavy", type=int, default=6, help="worst-case requests ahead of the normal one")
    parser.add_argument("--lead", type=float, default=0.3, help="seconds between the heavy ones and the normal one")
    parser.add_argument("--request-timeout", type=float, default=300.0)
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "bounds.json")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.heavy < 0:
        parser.error("--rounds must be positive and --heavy at least 0")
    for key, value in LOCAL_ENV.items():
        os.environ.setdefault(key, value)
    questions = [q["question"] for q in load_questions()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report: dict = {"machine": machine(), "rounds": args.rounds, "heavy": args.heavy, "lead_s": args.lead}
    with tempfile.TemporaryDirectory(prefix="citeqa-bounds-") as tmp:
        index = args.index or Path(tmp) / "index"
        ensure_index(index, args.corpus, args.out.with_suffix(".index.log"))
        server = Server(index, args.corpus, args.out.with_suffix(".serve.log"))
        try:
            report["start"] = server.wait_ready(questions[0], 600)
            print("phase 1: each request alone", flush=True)
            report["alone"] = alone(server.url, questions, args.rounds, args.request_timeout)
            print(f"phase 2: a normal question behind {args.heavy} worst-case ones", flush=True)
            report["behind"] = behind(server.url, questions, args.rounds, args.heavy, args.lead, args.request_timeout)
            report["serve_vm_hwm_mb"] = vm_hwm_mb(server.proc.pid)
        finally:
            server.stop()
    report["machine"]["loadavg_end"] = os.getloadavg()
    report["summary"] = s = summary(report)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    a, e = s["alone_s"], s["alone_engine_ms"]
    print(f"\nmedians of {args.rounds} rounds (client seconds; engine ms in brackets)")
    for kind in ("normal", "long", "worst"):
        print(f"  {kind:<28} {a[kind]:7.2f} s  [{e[kind] or 0:,.0f} ms]")
    print(f"  normal behind {args.heavy} worst{'':<11} {s['behind_s']:7.2f} s  [{s['behind_engine_ms'] or 0:,.0f} ms]")
    print(f"worst / normal          {s['worst_over_normal']:.2f}x  (target <= ~3x)")
    print(f"long / normal           {s['long_over_normal']:.2f}x")
    print(f"behind {args.heavy} / alone        {s['behind_over_alone']:.2f}x  (target <= ~2x)")
    print(f"server peak RSS {report['serve_vm_hwm_mb'] or 0:,.0f} MB; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
