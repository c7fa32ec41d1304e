"""citeqa speed and scale benchmark (issue 5/6). Prints a table, writes JSON and a plot.

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/run.py [--sizes real,10000,100000] [--out out/bench]

Needs the ``bench`` extra for the peer (``pip install -e '.[bench]'``); without it the
peer columns are empty. Everything is deterministic for a given ``--seed`` (default 0):
the synthetic corpora, their vectors and the question order; timings of course vary.

What is measured, per size ("real" = ``corpus/``; a number = about that many chunks):

* **indexing**: ``build_index(..., rebuild=True)`` in a fresh subprocess with the real
  model already loaded (model load reported apart). For the real corpus every passage is
  embedded. For the synthetic sizes embedding 10^4-10^5 passages on 2 cores takes hours,
  so the corpus is built by bench/synth.py: the real documents plus distinct passages made
  of real corpus sentences, each used once. Each unique sentence is embedded once with the
  real model (a measured step), and a synthetic passage's vector is the L2-normalised mean
  of its sentences' vectors, so the index holds as many *distinct* realistic vectors as
  chunks. The same step embeds ``--check`` synthetic passages whole and reports the cosine
  between their real and composed vectors, and the passage encode rate. For those sizes
  the table shows the measured build time *and* a projection for a corpus embedded whole:
  ``build time - encode time + chunks / measured passage encode rate``.
* **warm latency**: ``Engine.ask`` over bench/questions.json (10 es, 10 pt, 10 en),
  ``--rounds`` rounds after 3 warm-up asks; p50/p95 of the wall time. Stages are the
  engine's own timings (``Engine.trace(...).timings_ms``): language, query (follow-up
  rewrite), encode (the question), dense, lexical, fusion, candidates (spans and their
  features), choose (scores and the choice), answer (citations, highlight), and "other"
  (the rest of the total: cleaning, bookkeeping).
* **cold start**: wall time of ``citeqa ask Q --index DIR --json`` (2 runs) and of
  ``citeqa serve --index DIR --port P`` until its first ``/ask`` answer (gradio_client),
  plus an in-process breakdown (import, index load, model load, lingua load through
  ``Engine.question_language``, first ask).
* **memory**: peak RSS (``ru_maxrss``) of the query subprocess (before the FAISS
  comparison) and of the index subprocess; VmHWM of the ``serve`` process; index size on disk.
* **FAISS** (sizes >= 10000; its own subprocess, results under ``query.faiss``): recall@10 of ``backends.build_dense(v, "hnsw")`` against
  exact ``IndexFlatIP`` over the index's vectors, on the benchmark and eval questions'
  real embeddings, at the configured efSearch and a few others (same graph), and
  per-query search latency of each. The vectors are distinct, so recall is id-level
  (a tie-aware figure, counting a hit whose exact score reaches the 10th, is kept too).
* **peer**: Haystack (haystack-ai + sentence-transformers-haystack), built as its hybrid
  retrieval tutorial recommends: InMemoryDocumentStore, SentenceTransformersTextEmbedder
  (same packaged all-MiniLM-L6-v2), InMemoryBM25Retriever + InMemoryEmbeddingRetriever
  (top_k=10 each) joined by DocumentJoiner(join_mode="reciprocal_rank_fusion"). It is fed
  citeqa's own passages so the comparison is about retrieval, not chunking; on the real
  corpus it embeds them itself (SentenceTransformersDocumentEmbedder), on synthetic sizes
  it receives citeqa's vectors. Retrieval only: no answer extraction.
* **hit@1** (real corpus): on eval/qa.jsonl answerable items, a passage is relevant when
  it is from the gold document and contains a gold answer (citeqa.evaluation.is_relevant).
  citeqa is scored on its answer's citations (as ``citeqa eval``) and on raw retrieval
  order; the peer gets the question alone (it has no conversation history), so hit@1 is
  also given on items without history.

Each question has its script, runnable alone on an index (``--help``): bench/indexing.py
(indexing), bench/latency.py (warm latency, the in-process cold breakdown, hit@1),
bench/cold_start.py (cold ``ask`` and ``serve``), bench/recall.py (FAISS), bench/peer.py (the
peer), bench/report.py (the tables and the plot); bench/common.py holds what they share. This
script only drives them over the sizes. Each measurement runs in its own subprocess (the
script's ``--worker``) so memory numbers do not mix.
Results: OUT/results.json, OUT/bench.png, OUT/*.log. Synthetic corpora and indexes live
in a temporary folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cold_start import cold_ask, cold_serve
from common import BENCH, ROOT, add_common_flags, load_questions, machine, parse_args, run_worker, write_json
from indexing import count_real_chunks, index_size, prepare_pool
from peer import installed as peer_installed


def parse_sizes(text: str) -> list[str]:
    sizes = [s.strip() for s in text.split(",") if s.strip()]
    for s in sizes:
        if s != "real" and not s.isdigit():
            raise SystemExit(f"bad size {s!r}: use 'real' or a number of chunks")
    return sizes


def bench_size(size: str, args, work: Path, log_dir: Path, pool: dict | None, real_chunks: int | None) -> dict:
    """Every measurement of one size: index it, then latency (and recall), the peer, cold start."""
    tag = f"s-{size}"
    result, index = index_size(size, work, log_dir, pool, real_chunks)
    ix = result["index"]
    if "error" in ix:
        return result
    print(f"[{size}] {ix['chunks']} chunks in {ix['seconds']:.1f} s; warm latency …", flush=True)
    query = {"index": str(index), "rounds": args.rounds, "eval": size == "real"}
    result["query"] = run_worker(BENCH / "latency.py", "query", query, work, log_dir, tag)
    if size != "real" and int(size) >= 10000 and "error" not in result["query"]:
        print(f"[{size}] FAISS recall …", flush=True)
        result["query"]["faiss"] = run_worker(BENCH / "recall.py", "recall", {"index": str(index)}, work, log_dir, tag)
    if not args.no_peer:
        print(f"[{size}] peer …", flush=True)
        peer = {
            "index": str(index),
            "rounds": args.rounds if size == "real" else 1,
            "eval": size == "real",
            "embed_docs": size == "real",
        }
        result["peer"] = run_worker(BENCH / "peer.py", "peer", peer, work, log_dir, tag)
    question = load_questions()[0]["question"]
    print(f"[{size}] cold start …", flush=True)
    result["cold_ask"] = cold_ask(index, question)
    result["cold_serve"] = cold_serve(index, question, log_dir / f"{tag}-serve.log")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="real,10000,100000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--check", type=int, default=200, help="synthetic passages embedded whole to check the composed vectors"
    )
    parser.add_argument("--no-peer", action="store_true")
    add_common_flags(parser, out=ROOT / "out" / "bench")
    args = parse_args(parser, argv, {})
    if args is None:
        return 0
    if not args.no_peer and not peer_installed():
        print("peer not installed (pip install -e '.[bench]'); skipping it", flush=True)
        args.no_peer = True

    sizes = parse_sizes(args.sizes)
    args.out.mkdir(parents=True, exist_ok=True)
    log_dir = args.out
    report = {
        "command": "python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": machine(),
        "seed": args.seed,
        "rounds": args.rounds,
        "check": args.check,
        "sizes": [],
    }
    out_json = args.out / "results.json"
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="citeqa-bench-") as tmp:
        work = Path(tmp)
        pool = None
        real_chunks = None
        for size in sizes:
            if size != "real" and real_chunks is None:
                real_chunks = count_real_chunks()
            if size != "real" and pool is None:
                largest = max(int(x) for x in sizes if x != "real")
                pool = prepare_pool(work, log_dir, max(largest - real_chunks, args.check), args.check, args.seed)
                report["pool"] = {k: v for k, v in pool.items() if k != "passages"}
            result = bench_size(size, args, work, log_dir, pool, real_chunks)
            if size == "real" and "index" in result and "chunks" in result["index"]:
                real_chunks = result["index"]["chunks"]
            report["sizes"].append(result)
            report["machine"]["loadavg_end"] = os.getloadavg()
            report["total_s"] = time.perf_counter() - started
            write_json(out_json, report)
    from report import plot, print_tables

    print_tables(report)
    plot(report, args.out / "bench.png")
    print(f"wrote {out_json} and {args.out / 'bench.png'} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
