"""How fast a warm ``Engine.ask`` answers, stage by stage; what opening the engine in-process costs; hit@1.

Usage (an index built already; bench/run.py runs it on each size it builds)::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/latency.py [--index index] [--rounds 3] [--eval] [--out out/bench-latency]

In a fresh subprocess: the engine's imports, ``Engine.open``, the model's load, the question
detector's load (lingua, through ``Engine.question_language``) and the first ask are timed one
after the other ("cold", in-process). Then ``--rounds`` rounds over bench/questions.json (10 es,
10 pt, 10 en) after 3 warm-up asks: p50/p95 of the wall time of ``Engine.trace``, and the
engine's own stage timings (``Trace.timings_ms``): language, query (follow-up rewrite), encode
(the question), dense, lexical, fusion, candidates (spans and their features), read (the reader),
choose (scores and the choice), verify (the verifier's judgement), answer (citations, highlight),
and "other" (the rest of the total: cleaning, bookkeeping). The process's peak RSS is read before anything else runs in it.

``--eval`` adds hit@1 on eval/qa.jsonl's answerable items: a passage is relevant when it is from
the gold document and contains a gold answer (citeqa.evaluation.is_relevant); citeqa is scored on
its answer's citations (as ``citeqa eval``) and on raw retrieval order, over every item and over
those without history.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    EVAL,
    ROOT,
    add_common_flags,
    latency_summary,
    load_questions,
    maxrss_mb,
    parse_args,
    pct,
    run_alone,
)

SCRIPT = Path(__file__).resolve()

#: Stages of ``Engine.trace(...).timings_ms`` reported by the benchmark, in pipeline order
#: ("other" is the rest of the total: cleaning, bookkeeping).
STAGES = (
    "language",
    "query",
    "encode",
    "dense",
    "lexical",
    "fusion",
    "candidates",
    "read",
    "choose",
    "verify",
    "answer",
)


def stage_times(timings: dict[str, float]) -> dict[str, float]:
    """The trace's milliseconds per stage, plus "other" (the total minus the stages)."""
    out = {name: timings.get(name, 0.0) for name in STAGES}
    out["other"] = timings["total"] - sum(out.values())
    return out


def worker_query(args: dict) -> dict:
    """Open the index cold (timed), then warm latency by stage, and hit@1 with ``eval``."""
    t0 = time.perf_counter()
    from citeqa import Engine

    t_import = time.perf_counter() - t0

    index = Path(args["index"])
    t0 = time.perf_counter()
    engine = Engine.open(index)
    t_open = time.perf_counter() - t0
    t0 = time.perf_counter()
    engine.embedder.warm_up()
    t_model = time.perf_counter() - t0
    questions = [q["question"] for q in load_questions()]
    t0 = time.perf_counter()
    engine.question_language(questions[0])  # lingua's question detector loads on first use
    t_lingua = time.perf_counter() - t0
    t0 = time.perf_counter()
    engine.ask(questions[0])
    t_first = time.perf_counter() - t0

    for q in questions[:3]:
        engine.ask(q)
    totals: list[float] = []
    by_lang: dict[str, list[float]] = defaultdict(list)
    stages: dict[str, list[float]] = defaultdict(list)
    items = load_questions()
    for _ in range(args["rounds"]):
        for item in items:
            t0 = time.perf_counter()
            trace = engine.trace(item["question"])
            total = (time.perf_counter() - t0) * 1000
            totals.append(total)
            by_lang[item["lang"]].append(total)
            for name, value in stage_times(trace.timings_ms).items():
                stages[name].append(value)
    result = {
        "chunks": engine.passage_count,
        "ann": engine.manifest.ann,
        "cold": {
            "import_s": t_import,
            "open_index_s": t_open,
            "model_load_s": t_model,
            "lingua_load_s": t_lingua,
            "first_ask_s": t_first,
        },
        "latency_ms": latency_summary(totals),
        "latency_by_lang_p50_ms": {lang: pct(v, 0.5) for lang, v in sorted(by_lang.items())},
        "stages_ms": {
            name: {"p50": pct(v, 0.5), "p95": pct(v, 0.95), "mean": statistics.fmean(v)} for name, v in stages.items()
        },
        "maxrss_mb": maxrss_mb(),
    }
    if args.get("eval"):
        result["hit1"] = citeqa_hit1(engine)
    return result


def as_citation(chunk, score=0.0):
    """A retrieved passage as a citation, the form :func:`citeqa.evaluation.first_relevant_rank` reads."""
    from citeqa import Citation

    return Citation(chunk.doc_id, "", chunk.lang, chunk.start, chunk.end, chunk.text, score)


def citeqa_hit1(engine) -> dict:
    """hit@1 of the answer's citations and of the retrieval order on eval/qa.jsonl's answerable items."""
    from citeqa.evaluation import first_relevant_rank, load_qa

    rows = []
    for item in load_qa(EVAL):
        if not item.answerable:
            continue
        trace = engine.trace(item.question, item.history, k=10)
        answer = trace.answer
        retrieved = [as_citation(h.chunk, h.score) for h in trace.hits]
        rows.append(
            (
                bool(item.history),
                first_relevant_rank(answer.citations, item) == 1,
                first_relevant_rank(retrieved, item) == 1,
            )
        )
    plain = [r for r in rows if not r[0]]
    return {
        "n": len(rows),
        "n_no_history": len(plain),
        "answer_citations": sum(r[1] for r in rows) / len(rows),
        "retrieval": sum(r[2] for r in rows) / len(rows),
        "answer_citations_no_history": sum(r[1] for r in plain) / len(plain),
        "retrieval_no_history": sum(r[2] for r in plain) / len(plain),
    }


WORKERS = {"query": worker_query}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=ROOT / "index")
    parser.add_argument("--eval", action="store_true", help="hit@1 on eval/qa.jsonl too")
    add_common_flags(parser, out=ROOT / "out" / "bench-latency")
    args = parse_args(parser, argv, WORKERS)
    if args is None:
        return 0
    spec = {"index": str(args.index), "rounds": args.rounds, "eval": args.eval}
    return 0 if "error" not in run_alone(SCRIPT, "query", spec, args.out) else 1


if __name__ == "__main__":
    raise SystemExit(main())
