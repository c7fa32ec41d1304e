"""What the trained reader costs: warm answers with and without it, cold ``citeqa ask``, memory,
and the same weights in a plain ``transformers`` question-answering pipeline.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/reader.py [--index index] [--rounds 3] [--out out/bench-reader]

* warm: ``Engine.trace`` over bench/questions.json (10 es, 10 pt, 10 en), ``--rounds`` rounds after
  warm-up, reader on and off in the same process; p50/p95 of the total and of the reader's own step
  (``timings_ms["read"]``, the engine's trace), and the mean tokens the reader ran a question
  (``Trace.read_tokens``).
* cold: wall time of ``citeqa ask Q --json`` in a new process, reader on and off (median of 3).
* memory: peak RSS of a process that answered every question with the reader, and of one without.
* peer: the same weights as a plain float32 torch ``transformers.BertForQuestionAnswering`` (what
  a user would pick instead; transformers 5 has no question-answering pipeline any more), twice:
  reading exactly the windows the engine's reader read for each answer (its p50/p95 for the read
  alone, its RSS, and how often its best span equals citeqa's, int8 ONNX, over the same windows),
  and reading whole the passages the engine gave its reader (the best ``reader_passages`` of each
  answer's pool, of which citeqa reads windows), as a plain reader given the same passages does
  (``passages_read_p50_ms`` and the tokens it ran). One read before the questions warms it up.
* ``read_ratio``: citeqa's read step p50 over the peer's, ``p50`` against the peer reading the same
  passages whole (what the reader is given; citeqa reads windows of them) and ``windows_p50``
  against the peer reading the same windows (the kernels alone).

Prints a table and writes OUT/results.json. Numbers depend on the machine's load: run it quiet.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT, maxrss_mb
from common import question_texts as questions


def nearest_rank(values: list[float], q: float) -> float:
    """The ``q`` quantile by nearest rank, to 0.1 ms: not common.pct's interpolation, so that these
    figures stay comparable with bench/results/reader.json and docs/benchmarks.md."""
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 1)


def warm(index: str, reader: str, rounds: int) -> dict:
    """Warm latency and peak RSS of one process answering every question ``rounds`` times."""
    from citeqa.engine import Engine

    engine = Engine.open(index, reader=reader)
    engine.warm_up()
    totals, reads, tokens = [], [], []
    for _ in range(rounds):
        for q in questions():
            trace = engine.trace(q)
            totals.append(trace.timings_ms["total"])
            reads.append(trace.timings_ms.get("read", 0.0))
            tokens.append(trace.read_tokens)
    rss = maxrss_mb()
    return {
        "p50_ms": nearest_rank(totals, 0.5),
        "p95_ms": nearest_rank(totals, 0.95),
        "read_p50_ms": nearest_rank(reads, 0.5),
        "read_p95_ms": nearest_rank(reads, 0.95),
        "read_tokens_mean": round(statistics.mean(tokens), 1),
        "rss_mb": round(rss, 1),
    }


def peer(index: str) -> dict:
    """The same weights as a plain torch ``BertForQuestionAnswering`` (float32), reading exactly the
    windows citeqa's reader read (every ``Reader.run`` call of each answer, recorded), through the
    same span decoding: its p50/p95 for the read alone, its RSS, and how often its best span equals
    the best of citeqa's int8 ONNX reader over the same calls.

    transformers 5 removed its ``question-answering`` pipeline, so the model is called directly.
    """
    import torch

    from citeqa.engine import Engine
    from citeqa.reader.decode import best_spans, window_spans
    from citeqa.reader.delta import read_delta
    from citeqa.reader.e5_file import read_e5
    from citeqa.reader.onnx_build import shipped_path
    from citeqa.reader.tokenizer import E5Tokenizer
    from citeqa.reader.torch_model import base_state, build_reader
    from citeqa.reader.windows import batch_arrays, first_windows, make_windows

    weights = read_e5()
    model = build_reader(weights, read_delta(shipped_path(), base_state(weights), weights.sha256)).eval()
    tok = E5Tokenizer(weights.vocab)
    engine = Engine.open(index, reader="on")
    engine.warm_up()
    reader = engine.pipeline.reader
    assert reader is not None
    calls: list[tuple] = []
    original = reader.run

    def recorded(question, passages, top=10, max_windows=None, turn=None):  # type: ignore[no-untyped-def]
        result = original(question, passages, top=top, max_windows=max_windows, turn=turn)
        calls.append((question, list(passages), top, max_windows, result))
        return result

    reader.run = recorded  # type: ignore[method-assign]
    pipeline = engine.pipeline
    given: list[tuple] = []  # the question and passages the pipeline gave its reading step (before any windows)
    read_step = pipeline.read

    def given_passages(question, hits, pool, *args, **kwargs):  # type: ignore[no-untyped-def]
        given.append((question, [hits[i].chunk for i in sorted(pool)[: pipeline.settings.reader_passages]]))
        return read_step(question, hits, pool, *args, **kwargs)

    pipeline.read = given_passages  # type: ignore[method-assign]

    def forward(windows):  # type: ignore[no-untyped-def]
        """The torch model over ``windows`` as one padded batch: its output and the tokens it ran."""
        ids, mask = batch_arrays(windows, tok.pad)
        with torch.no_grad():
            out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
        return out, int(mask.sum())

    forward(make_windows(tok, "warm-up", ["a passage to read " * 40] * 2))
    times, same = [], 0
    whole_times, whole_tokens = [], []
    asked = questions()
    for q in asked:
        calls.clear()
        given.clear()
        engine.trace(q)
        text, whole = given[0] if given else (q, [])
        if whole:
            t0 = time.perf_counter()
            _, tokens = forward(make_windows(tok, text, [c.text for c in whole]))
            whole_times.append((time.perf_counter() - t0) * 1000)
            whole_tokens.append(tokens)
        t0 = time.perf_counter()
        theirs = []  # (score, doc span) of torch's best span in each call
        for question, passages, top, max_windows, _ in calls:
            windows = first_windows(make_windows(tok, question, [c.text for c in passages]), max_windows)
            if not windows:
                continue
            out, _ = forward(windows)
            spans = []
            for w, st, en in zip(windows, out.start_logits.numpy(), out.end_logits.numpy()):
                spans.extend(window_spans(w, st, en, top))
            best = best_spans(spans, 1)
            if best:
                chunk = passages[best[0].passage]
                theirs.append((best[0].score, (chunk.doc_id, chunk.start + best[0].start, chunk.start + best[0].end)))
        times.append((time.perf_counter() - t0) * 1000)
        mine = [a for *_, result in calls for a in result.answers]
        if theirs and mine:
            top_mine = max(mine, key=lambda a: a.score).span
            same += max(theirs)[1] == (top_mine.doc_id, top_mine.start, top_mine.end)
    rss = maxrss_mb()
    return {
        "read_p50_ms": nearest_rank(times, 0.5),
        "read_p95_ms": nearest_rank(times, 0.95),
        "rss_mb": round(rss, 1),
        "same_best_span": f"{same}/{len(asked)}",
        "passages_read_p50_ms": nearest_rank(whole_times, 0.5),
        "passages_read_p95_ms": nearest_rank(whole_times, 0.95),
        "passages_tokens_mean": round(statistics.mean(whole_tokens), 1),
    }


def cold(index: str, reader: str, runs: int = 3) -> float:
    """Median wall seconds of ``citeqa ask`` in a fresh process."""
    exe = str(Path(sys.executable).with_name("citeqa"))
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        cmd = [exe, "ask", questions()[0], "--index", index, "--json", "--reader", reader]
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 2)


def in_subprocess(what: str, index: str, rounds: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", what, "--index", index, "--rounds", str(rounds)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--index", default=str(ROOT / "index"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", type=Path, default=ROOT / "out" / "bench-reader")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker is not None:
        result = peer(args.index) if args.worker == "peer" else warm(args.index, args.worker, args.rounds)
        print(json.dumps(result))
        return 0
    results = {
        "warm_reader_on": in_subprocess("on", args.index, args.rounds),
        "warm_reader_off": in_subprocess("off", args.index, args.rounds),
        "transformers_torch_fp32": in_subprocess("peer", args.index, args.rounds),
        "cold_ask_s": {"reader_on": cold(args.index, "on"), "reader_off": cold(args.index, "off")},
    }
    # the figure: citeqa's read step over torch's read of the same passages, medians of one run
    mine, theirs = results["warm_reader_on"]["read_p50_ms"], results["transformers_torch_fp32"]
    results["read_ratio"] = {
        "p50": round(mine / theirs["passages_read_p50_ms"], 2),
        "windows_p50": round(mine / theirs["read_p50_ms"], 2),
    }
    for name, row in results.items():
        print(f"{name:24s} " + ", ".join(f"{k} {v}" for k, v in row.items()))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
