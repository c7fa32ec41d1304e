"""What one claim check may cost, and whether a normal question gets through behind the worst ones (issue [3/6], item 1).

Usage::

    HF_HUB_OFFLINE=1 PYTHONPATH=src .venv/bin/python bench/check_bounds.py [--index DIR] [--rounds 5] \\
        [--heavy 16] [--part engine|server|both] [--out out/check_bounds.json]

The **worst legal claim** (:func:`worst_claims`): the ``/check`` schema takes a claim of up to 2,000
characters (and k up to 10). Two such claims, both 2,000 characters at most, in Spanish, from the
claims of ``eval/claims.jsonl`` (so that retrieval finds their documents and the judge has
sentences that hold their values):

* **joined**: the claims one after another, joined by commas into one long sentence (each brings
  its subject, its names and its values: 30 values, dozens of names);
* **listing**: one sentence listing the claims' names, then their values, over and over until
  it is full ("GLM-5, GLM-Image, ..., tienen, en este orden, 744 mil millones de parámetros, 7 mil
  millones de parámetros, enero de 2025, ...": 38 names, 106 values).

The **normal claim**: round ``r`` checks claim ``r`` of ``eval/claims.jsonl`` (k=5).

Part 1, **engine**: one process, the engine opened on ``--index`` and warmed up; each round checks
the normal claim and each worst claim (interleaved, so that a change of machine load hits all
alike, k=10 for the worst). Per kind: the median ms, and per check the reader's runs, the windows
and window tokens it ran (counted at the reader's model call), the claim's values, those read and
those not read (``ClaimCheck.unread``). The counts are the machine-independent figures; the ratio
worst / normal of the medians is the time target (<= ~3x).

Part 2, **server**: one real ``citeqa serve`` (default model, reader on, ``corpus/``, 127.0.0.1;
bench/load.py's ``Server``) and ``gradio_client`` clients. Alone: per round a normal ``/ask``
(question ``r`` of bench/questions.json), the normal ``/check`` and the worst (joined) ``/check``, one at
a time. Behind: per round ``--heavy`` worst ``/check`` at once (one client each), then, once all
are submitted and ``--lead`` seconds have passed, a normal ``/ask``; its latency against the
median ``/ask`` alone is the second target (<= ~2x). The server's peak RSS (``VmHWM``) at the end.

Part **verdicts** (``--part verdicts``, not in ``both``): every claim of ``eval/claims.jsonl``
checked (k=5), its verdict and readings (relation, margin, text read) and the values not read
written to ``--out``; ``--compare BEFORE AFTER`` prints the claims whose verdict or readings
differ between two such files (the bounds leave a normal claim as it was: run it on a ``git
archive`` of the code before with ``PYTHONPATH`` pointing there, and on this code).

On a shared machine the seconds are slow and noisy; the ratios are measured within one run and are
the figures to compare. Exits 1 on an error record.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import load_questions, machine, vm_hwm_mb
from load import CORPUS, LOCAL_ENV, ROOT, Server, ensure_index, new_client

#: The request schema's limits (app/web/validation.py): characters of a claim, k.
MAX_CHARS = 2000
MAX_K = 10
CLAIMS = ROOT / "eval" / "claims.jsonl"


def eval_claims(path: Path = CLAIMS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def joined_claim(claims: list[str], chars: int = MAX_CHARS) -> str:
    """``claims`` (without their full stops) joined by commas into one sentence of at most ``chars``."""
    parts: list[str] = []
    for claim in claims:
        part = claim.strip().rstrip(".")
        if len(", ".join([*parts, part])) + 1 > chars:
            break
        parts.append(part)
    return ", ".join(parts) + "."


def listing_claim(claims: list[str], lang: str, chars: int = MAX_CHARS) -> str:
    """One sentence of at most ``chars``: the claims' names, then their values, over and over until
    the sentence is full (a value listed twice is two values of the claim)."""
    from citeqa.claims.parts import analyse_claim

    names: list[str] = []
    values: list[str] = []
    for claim in claims:
        parts = analyse_claim(claim, lang)
        for a, b, tok in parts.tokens:
            word = claim[a:b]
            if tok in parts.names and word not in names:
                names.append(word)
        values.extend(f.text for f in parts.facts if f.text not in values)
    middle = " tienen, en este orden, "
    head = ", ".join(names)
    listed: list[str] = []
    while values:
        value = values[len(listed) % len(values)]
        if len(head) + len(middle) + len(", ".join([*listed, value])) + 1 > chars:
            break
        listed.append(value)
    return f"{head}{middle}{', '.join(listed)}."


def worst_claims(lang: str = "es", chars: int = MAX_CHARS) -> dict[str, str]:
    """The worst legal claims of the module's docstring, each at most ``chars`` characters."""
    claims = [c["claim"] for c in eval_claims() if c["lang"] == lang]
    out = {"joined": joined_claim(claims, chars), "listing": listing_claim(claims, lang, chars)}
    assert all(len(c) <= chars for c in out.values())
    return out


# --------------------------------------------------------------------------- part 1


class Counts:
    """What the reader of one engine ran: its runs, and the windows and tokens of its model calls."""

    def __init__(self, reader: Any) -> None:
        self.runs = self.windows = self.tokens = 0
        run, logits = reader.run, reader.logits

        def counted_run(*args: Any, **kwargs: Any) -> Any:
            self.runs += 1
            return run(*args, **kwargs)

        def counted_logits(windows: Any) -> Any:
            self.windows += len(windows)
            self.tokens += sum(len(w.ids) for w in windows)
            return logits(windows)

        reader.run, reader.logits = counted_run, counted_logits  # instance attributes: read() calls self.logits

    def snapshot(self) -> tuple[int, int, int]:
        return self.runs, self.windows, self.tokens


def engine_part(index: Path, rounds: int) -> dict[str, list[dict]]:
    """Part 1: the normal claim and each worst one in one warm process, interleaved round by round."""
    from citeqa.claims.parts import analyse_claim
    from citeqa.claims.questions import claim_values
    from citeqa.engine import Engine

    engine = Engine.open(index)
    engine.warm_up()
    if engine.reader is None:
        raise SystemExit("the engine has no reader: part 1 measures the reading of claims")
    counts = Counts(engine.reader)
    normal = [c["claim"] for c in eval_claims()]
    worst = worst_claims()
    out: dict[str, list[dict]] = {"normal": [], **{name: [] for name in worst}}
    for r in range(rounds):
        for kind, claim, k in [("normal", normal[r % len(normal)], 5), *((n, c, MAX_K) for n, c in worst.items())]:
            before = counts.snapshot()
            t0 = time.perf_counter()
            check = engine.check(claim, k=k)
            ms = (time.perf_counter() - t0) * 1e3
            runs, windows, tokens = (a - b for a, b in zip(counts.snapshot(), before))
            values = len(claim_values(analyse_claim(check.claim, check.language)))
            unread = len(getattr(check, "unread", ()))
            row = {"ms": ms, "runs": runs, "windows": windows, "tokens": tokens, "values": values, "unread": unread}
            out[kind].append({**row, "chars": len(claim), "verdict": check.verdict})
            print(
                f"  round {r + 1}: {kind:<8} {ms:8.0f} ms  reader runs {runs:3}  windows {windows:3}  "
                f"tokens {tokens:6}  values {values:3} (not read {unread})  {check.verdict}",
                flush=True,
            )
    return out


def verdicts_part(index: Path) -> list[dict]:
    """Every claim of eval/claims.jsonl: its verdict, readings and values not read."""
    from citeqa.engine import Engine

    engine = Engine.open(index)
    out = []
    for item in eval_claims():
        check = engine.check(item["claim"])
        readings = [[r.relation, r.margin, r.text] for r in check.readings]
        unread = list(getattr(check, "unread", ()))
        out.append({"id": item["id"], "verdict": check.verdict, "readings": readings, "unread": unread})
    return out


def compare(before: Path, after: Path) -> int:
    """Print the claims whose verdict or readings differ between two ``--part verdicts`` files."""
    old = {row["id"]: row for row in json.loads(before.read_text("utf-8"))["verdicts"]}
    new = {row["id"]: row for row in json.loads(after.read_text("utf-8"))["verdicts"]}
    differ = [
        i
        for i in old
        if i not in new or (old[i]["verdict"], old[i]["readings"]) != (new[i]["verdict"], new[i]["readings"])
    ]
    for i in differ:
        print(f"  {i}: {old[i]} -> {new.get(i)}")
    print(f"{len(differ)} of {len(old)} claims differ in verdict or readings")
    return 0 if not differ else 1


# --------------------------------------------------------------------------- part 2


def _call(client: Any, api: str, args: tuple, timeout: float) -> tuple[float, float | None]:
    """Client seconds and the engine's milliseconds of one call; raises on an error record."""
    t0 = time.perf_counter()
    record = client.submit(*args, api_name=api).result(timeout=timeout)
    took = time.perf_counter() - t0
    if not isinstance(record, dict) or "error" in record:
        raise RuntimeError(f"{api} answered {str(record)[:200]}")
    return took, record.get("latency_ms")


def server_part(url: str, questions: list[str], rounds: int, heavy: int, lead: float, timeout: float) -> dict:
    """Part 2: each request alone, then a normal /ask behind ``heavy`` worst /check per round."""
    normal_claims = [c["claim"] for c in eval_claims()]
    worst = worst_claims()["joined"]
    client = new_client(url)
    alone: dict[str, list[dict]] = {"ask": [], "check": [], "worst_check": []}
    try:
        for r in range(rounds):
            calls = {
                "ask": ("/ask", (questions[r % len(questions)], [], 5, "auto")),
                "check": ("/check", (normal_claims[r % len(normal_claims)], 5)),
                "worst_check": ("/check", (worst, MAX_K)),
            }
            for kind, (api, args) in calls.items():
                took, engine_ms = _call(client, api, args, timeout)
                alone[kind].append({"s": took, "engine_ms": engine_ms})
                print(f"  alone   round {r + 1}: {kind:<12} {took:6.2f} s", flush=True)
    finally:
        client.close()
    clients = [new_client(url) for _ in range(heavy + 1)]
    behind = []
    try:
        for r in range(rounds):
            submitted = threading.Barrier(heavy + 1)
            heavy_s: list[float] = []
            threads = [
                threading.Thread(target=_heavy, args=(c, worst, submitted, heavy_s, timeout), daemon=True)
                for c in clients[:heavy]
            ]
            for t in threads:
                t.start()
            submitted.wait()
            time.sleep(lead)
            took, engine_ms = _call(clients[heavy], "/ask", (questions[r % len(questions)], [], 5, "auto"), timeout)
            for t in threads:
                t.join(timeout + 30)
            behind.append({"s": took, "engine_ms": engine_ms, "heavy_s": sorted(heavy_s)})
            print(
                f"  behind  round {r + 1}: /ask {took:6.2f} s (the {heavy} worst /check: "
                f"{min(heavy_s, default=0):.2f}-{max(heavy_s, default=0):.2f} s, {len(heavy_s)} answered)",
                flush=True,
            )
    finally:
        for c in clients:
            c.close()
    return {"alone": alone, "behind": behind}


def _heavy(client: Any, claim: str, submitted: threading.Barrier, seconds: list[float], timeout: float) -> None:
    job = client.submit(claim, MAX_K, api_name="/check")
    t0 = time.perf_counter()
    submitted.wait()
    record = job.result(timeout=timeout)
    if isinstance(record, dict) and "error" not in record:
        seconds.append(time.perf_counter() - t0)


def median(rows: list[dict], key: str) -> float | None:
    values = [row[key] for row in rows if row.get(key) is not None]
    return statistics.median(values) if values else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=None, help="index to reuse or build (default: a temp one)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--heavy", type=int, default=16, help="worst /check requests ahead of the /ask")
    parser.add_argument("--lead", type=float, default=0.3, help="seconds between the heavy ones and the /ask")
    parser.add_argument("--part", choices=("engine", "server", "both", "verdicts"), default="both")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="compare two verdicts files")
    parser.add_argument("--request-timeout", type=float, default=600.0)
    parser.add_argument("--show", action="store_true", help="print the worst claims and exit")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "check_bounds.json")
    args = parser.parse_args(argv)
    if args.show:
        for name, claim in worst_claims().items():
            print(f"{name} ({len(claim)} characters):\n{claim}\n")
        return 0
    if args.compare:
        return compare(*args.compare)
    for key, value in LOCAL_ENV.items():
        os.environ.setdefault(key, value)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report: dict = {"machine": machine(), "rounds": args.rounds, "heavy": args.heavy, "lead_s": args.lead}
    ok = True
    with tempfile.TemporaryDirectory(prefix="citeqa-check-bounds-") as tmp:
        index = args.index or Path(tmp) / "index"
        ensure_index(index, args.corpus, args.out.with_suffix(".index.log"))
        if args.part == "verdicts":
            report["verdicts"] = verdicts_part(index)
            print(f"{len(report['verdicts'])} claims checked")
        if args.part in ("engine", "both"):
            print("part 1: the engine, one warm process", flush=True)
            rows = report["engine"] = engine_part(index, args.rounds)
            normal = median(rows["normal"], "ms") or 0.0
            print(f"\nmedians of {args.rounds} rounds")
            for kind, kind_rows in rows.items():
                ms = median(kind_rows, "ms") or 0.0
                counts = ", ".join(f"{key} {median(kind_rows, key):.0f}" for key in ("runs", "windows", "tokens"))
                print(f"  {kind:<8} {ms:8.0f} ms  {ms / normal if normal else 0:5.2f}x normal  ({counts})")
        if args.part in ("server", "both"):
            print("part 2: citeqa serve", flush=True)
            questions = [q["question"] for q in load_questions()]
            server = Server(index, args.corpus, args.out.with_suffix(".serve.log"))
            try:
                report["start"] = server.wait_ready(questions[0], 600)
                try:
                    report["server"] = server_part(
                        server.url, questions, args.rounds, args.heavy, args.lead, args.request_timeout
                    )
                except RuntimeError as exc:
                    print(f"error: {exc}", flush=True)
                    ok = False
                report["serve_vm_hwm_mb"] = vm_hwm_mb(server.proc.pid)
            finally:
                server.stop()
            if "server" in report:
                s = report["server"]
                alone = {kind: median(rows, "s") for kind, rows in s["alone"].items()}
                behind = median(s["behind"], "s")
                ask = alone["ask"] or 0.0
                print(f"\nmedians of {args.rounds} rounds (client seconds)")
                for kind, sec in alone.items():
                    print(f"  {kind:<34} {sec:7.2f} s")
                print(f"  /ask behind {args.heavy} worst /check{'':<12} {behind:7.2f} s")
                if alone["check"]:
                    print(f"worst /check / normal /check   {(alone['worst_check'] or 0) / alone['check']:.2f}x")
                print(f"/ask behind / alone            {behind / ask if ask and behind else 0:.2f}x  (target <= ~2x)")
                print(f"server peak RSS {report['serve_vm_hwm_mb'] or 0:,.0f} MB")
    report["machine"]["loadavg_end"] = os.getloadavg()
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
