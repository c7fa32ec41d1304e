"""Recall@10 and per-query latency of FAISS HNSW settings against exact search.

``python bench/ann_sweep.py [--sizes 10000,100000] [--m 16,32] [--ef-construction 40,80]
[--ef-search 16,32,64,128,256]`` builds the benchmark's synthetic vectors (bench/synth.py:
distinct passages of real corpus sentences; a passage's vector is the normalised mean of
its sentences' real-model vectors), queries with the real embeddings of
bench/questions.json and eval/qa.jsonl, and prints, per size and setting, id-level
recall@10 against ``IndexFlatIP`` and p50/p95 ms per single-query search. It is how
:mod:`citeqa.index.backends`' HNSW constants were chosen (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, ints, pct, query_texts, recall_at, search_each


def main(argv: list[str] | None = None) -> int:
    import faiss
    from synth import compose, corpus_sentences, flat_sentences, make_passages, member_matrix

    from citeqa.embedding import SentenceTransformerEmbedder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--m", default="32")
    parser.add_argument("--ef-construction", default="80")
    parser.add_argument("--ef-search", default="16,32,64,128,256")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="reuse/save the sentence and query vectors here (.npz)")
    args = parser.parse_args(argv)
    sizes = ints(args.sizes)

    sentences = corpus_sentences(ROOT / "corpus")
    flat = flat_sentences(sentences)
    texts = query_texts()
    if args.cache and args.cache.exists():
        cached = np.load(args.cache)
        sentence_vectors, queries = cached["sentences"], cached["queries"]
    else:
        emb = SentenceTransformerEmbedder()
        sentence_vectors, queries = emb.encode(flat), emb.encode(texts)
        if args.cache:
            np.savez(args.cache, sentences=sentence_vectors, queries=queries)
    passages = make_passages(sentences, max(sizes), args.seed)
    vectors_all = compose(sentence_vectors, member_matrix(passages))
    print(
        f"{len(flat)} sentences, {len(queries)} queries, faiss {faiss.__version__}, "
        f"{faiss.omp_get_max_threads()} threads"
    )
    for size in sizes:
        vectors = np.ascontiguousarray(vectors_all[:size])
        distinct = len(np.unique(vectors, axis=0))
        exact = faiss.IndexFlatIP(vectors.shape[1])
        exact.add(vectors)
        truth, flat_ms = search_each(exact, queries)
        print(
            f"\n{size} vectors ({distinct} distinct): flat p50 {pct(flat_ms, 0.5):.2f} ms, "
            f"p95 {pct(flat_ms, 0.95):.2f} ms"
        )
        for m in ints(args.m):
            for efc in ints(args.ef_construction):
                index = faiss.IndexHNSWFlat(vectors.shape[1], m, faiss.METRIC_INNER_PRODUCT)
                index.hnsw.efConstruction = efc
                t0 = time.perf_counter()
                index.add(vectors)
                build = time.perf_counter() - t0
                for ef in ints(args.ef_search):
                    index.hnsw.efSearch = ef
                    found, ms = search_each(index, queries)
                    print(
                        f"  M={m:<3} efC={efc:<4} build {build:6.1f} s  efSearch={ef:<4} "
                        f"recall@10 {recall_at(found, truth):.4f}  p50 {pct(ms, 0.5):.3f} ms  "
                        f"p95 {pct(ms, 0.95):.3f} ms",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
