"""FAISS at 10^6 vectors: HNSW (citeqa's setting) and IVF-PQ, build time, memory, recall@10, p50.

Usage::

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/faiss_million.py \\
        [--size 1000000] [--hnsw-size 200000] [--nlist 4096] [--pq-m 48,96] \\
        [--nprobe 8,16,32,64,128,256] [--ef-search 128,256,512,1024] [--refine 4,10] \\
        [--model multilingual-e5-small] [--cache out/faiss_vectors.npz] [--out out/faiss_million.json]

**Vectors**: bench/synth.py's composed vectors, not random ones. ``--size`` distinct
synthetic passages (seed 0) are drawn from the ~240 sentences of ``corpus/``, each sentence
is embedded once by the real model (``--model``), and a passage's vector is the L2-normalised
mean of its sentences' vectors. That keeps the structure of real embeddings (clusters by
language and topic, a low intrinsic dimension) that random unit vectors lack; random
vectors in 384 dimensions have no near neighbours worth the name and would understate
recall. The set is more redundant than a real corpus (each sentence is in thousands of
passages), which makes approximate search harder, so recall here is on the pessimistic side
(docs/benchmarks.md, "Distinct, realistic vectors").

**Queries**: the real embeddings (query side: e5's "query:" prefix) of the 30 benchmark and
137 eval questions; each is searched alone. Recall@10 is id-level against exact
``IndexFlatIP`` over the same vectors; p50/p95 are per single-query search, on all cores.

**HNSW** (``citeqa.index.backends``: M=64, efConstruction=200): built at ``--hnsw-size``
(default 2·10^5, because a 10^6 build takes too long for one run on 2 cores) and
extrapolated to ``--size`` from the measured bytes per vector and build time (n log n).
Give ``--hnsw-size 1000000`` to measure it whole.

**IVF-PQ** (``IndexIVFPQ``, inner product, 8-bit codes, ``--nlist`` lists, ``--pq-m`` sub-
quantisers): the lists' centroids by spherical k-means (20 iterations) on ``--train`` vectors,
once for every ``--pq-m``; the PQ codebooks on the same sample; holds all ``--size``; swept over
``--nprobe``, and re-ranked with exact vectors (``IndexRefineFlat``, ``--refine`` × k
candidates) at nprobe 64.

**Memory**: the serialised index size (what a process holds for it) and the process's RSS
growth while building. The 1-minute load average is recorded at each step.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

# OpenMP threads that sleep when idle: spinning ones lose 3x on a shared, loaded machine
# (measured: PQ training 61 s spinning, 20 s passive at load ~6).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, ints, load1, pct, rss_mb, search_each
from common import recall_at as recall


def index_mb(index) -> float:
    import faiss

    return faiss.serialize_index(index).nbytes / 1_048_576


def embed(model: str, sentences: list[str], questions: list[str]) -> tuple[np.ndarray, np.ndarray]:
    from citeqa.embedding import encode_queries, load_embedder

    embedder = load_embedder(model)
    return embedder.encode(sentences), encode_queries(embedder, questions)


def vectors_and_queries(args) -> tuple[np.ndarray, np.ndarray]:
    from ann_sweep import query_texts
    from synth import compose, corpus_sentences, flat_sentences, make_passages, member_matrix

    sentences = corpus_sentences(ROOT / "corpus")
    if args.cache and args.cache.exists():
        cached = np.load(args.cache)
        sentence_vectors, queries = cached["sentences"], cached["queries"]
    else:
        sentence_vectors, queries = embed(args.model, flat_sentences(sentences), query_texts())
        if args.cache:
            args.cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez(args.cache, sentences=sentence_vectors, queries=queries)
    t0 = time.perf_counter()
    members = member_matrix(make_passages(sentences, args.size, args.seed))
    vectors = compose(sentence_vectors, members)
    print(
        f"{len(vectors):,} composed vectors from {len(sentence_vectors)} sentence vectors in "
        f"{time.perf_counter() - t0:.0f} s; {len(queries)} queries",
        flush=True,
    )
    return np.ascontiguousarray(vectors, dtype=np.float32), np.ascontiguousarray(queries, dtype=np.float32)


def exact(vectors: np.ndarray, queries: np.ndarray, report: dict, key: str) -> np.ndarray:
    import faiss

    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    truth, ms = search_each(flat, queries)
    report[key] = {"vectors": len(vectors), "p50_ms": pct(ms, 0.5), "p95_ms": pct(ms, 0.95), "load": load1()}
    print(
        f"exact search over {len(vectors):,}: p50 {pct(ms, 0.5):.1f} ms, p95 {pct(ms, 0.95):.1f} ms (load {load1()})",
        flush=True,
    )
    return truth


def hnsw(vectors: np.ndarray, queries: np.ndarray, truth: np.ndarray, args, report: dict) -> None:
    import faiss

    from citeqa.index.backends import HNSW_EF_CONSTRUCTION, HNSW_M

    n = len(vectors)
    gc.collect()
    before = rss_mb()
    index = faiss.IndexHNSWFlat(vectors.shape[1], HNSW_M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    load = load1()
    t0 = time.perf_counter()
    index.add(vectors)
    build = time.perf_counter() - t0
    size = index_mb(index)
    out = {
        "vectors": n,
        "M": HNSW_M,
        "efConstruction": HNSW_EF_CONSTRUCTION,
        "build_s": build,
        "index_mb": size,
        "rss_growth_mb": rss_mb() - before,
        "load_build": (load, load1()),
        "sweep": [],
    }
    print(
        f"HNSW M={HNSW_M} efC={HNSW_EF_CONSTRUCTION} at {n:,}: build {build:.0f} s, {size:.0f} MB "
        f"(load {load} -> {load1()})",
        flush=True,
    )
    for ef in ints(args.ef_search):
        index.hnsw.efSearch = ef
        found, ms = search_each(index, queries)
        row = {
            "efSearch": ef,
            "recall@10": recall(found, truth),
            "p50_ms": pct(ms, 0.5),
            "p95_ms": pct(ms, 0.95),
            "load": load1(),
        }
        out["sweep"].append(row)
        print(
            f"  efSearch {ef:<5} recall@10 {row['recall@10']:.3f}  p50 {row['p50_ms']:.2f} ms  "
            f"p95 {row['p95_ms']:.2f} ms",
            flush=True,
        )
    scale = args.size / n
    out["projected"] = {
        "vectors": args.size,
        "index_mb": size * scale,
        "build_s": build * scale * math.log(args.size) / math.log(n),
    }
    report["hnsw"] = out
    del index
    gc.collect()


def coarse_quantizer(vectors: np.ndarray, args, report: dict):
    """The IVF lists' centroids (k-means on ``--train`` vectors), trained once for every PQ setting."""
    import faiss

    rng = np.random.default_rng(args.seed)
    sample = vectors[np.sort(rng.choice(len(vectors), size=min(args.train, len(vectors)), replace=False))]
    load = load1()
    t0 = time.perf_counter()
    kmeans = faiss.Kmeans(vectors.shape[1], args.nlist, niter=20, spherical=True, seed=args.seed)
    kmeans.train(sample)
    seconds = time.perf_counter() - t0
    quantizer = faiss.IndexFlatIP(vectors.shape[1])
    quantizer.add(kmeans.centroids)
    report["coarse"] = {
        "nlist": args.nlist,
        "train_vectors": len(sample),
        "train_s": seconds,
        "niter": 20,
        "load": (load, load1()),
    }
    print(
        f"k-means for {args.nlist} lists on {len(sample):,} vectors: {seconds:.0f} s (load {load} -> {load1()})",
        flush=True,
    )
    return quantizer, sample


def ivfpq(
    vectors: np.ndarray,
    queries: np.ndarray,
    truth: np.ndarray,
    m: int,
    quantizer,
    sample: np.ndarray,
    args,
    report: dict,
) -> None:
    import faiss

    d = vectors.shape[1]
    gc.collect()
    before = rss_mb()
    index = faiss.IndexIVFPQ(faiss.clone_index(quantizer), d, args.nlist, m, 8, faiss.METRIC_INNER_PRODUCT)
    load = load1()
    t0 = time.perf_counter()
    index.train(sample)  # the lists' centroids are already there: this trains the PQ codebooks only
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    index.add(vectors)
    add = time.perf_counter() - t0
    size = index_mb(index)
    out = {
        "vectors": len(vectors),
        "nlist": args.nlist,
        "m": m,
        "pq_train_s": train,
        "add_s": add,
        "index_mb": size,
        "rss_growth_mb": rss_mb() - before,
        "load_build": (load, load1()),
        "sweep": [],
        "refine": [],
    }
    print(
        f"IVF{args.nlist},PQ{m} at {len(vectors):,}: PQ train {train:.0f} s, add {add:.0f} s, {size:.0f} MB "
        f"(load {load} -> {load1()})",
        flush=True,
    )
    for nprobe in ints(args.nprobe):
        index.nprobe = nprobe
        found, ms = search_each(index, queries)
        row = {
            "nprobe": nprobe,
            "recall@10": recall(found, truth),
            "p50_ms": pct(ms, 0.5),
            "p95_ms": pct(ms, 0.95),
            "load": load1(),
        }
        out["sweep"].append(row)
        print(
            f"  nprobe {nprobe:<4} recall@10 {row['recall@10']:.3f}  p50 {row['p50_ms']:.2f} ms  "
            f"p95 {row['p95_ms']:.2f} ms",
            flush=True,
        )
    if args.refine:
        index.nprobe = 64
        refined = faiss.IndexRefineFlat(index, faiss.swig_ptr(vectors))  # copies the vectors for re-ranking
        for factor in ints(args.refine):
            refined.k_factor = factor
            found, ms = search_each(refined, queries)
            row = {
                "nprobe": 64,
                "k_factor": factor,
                "recall@10": recall(found, truth),
                "p50_ms": pct(ms, 0.5),
                "p95_ms": pct(ms, 0.95),
                "load": load1(),
            }
            out["refine"].append(row)
            print(
                f"  + exact re-rank of {factor * 10} (nprobe 64): recall@10 {row['recall@10']:.3f}  "
                f"p50 {row['p50_ms']:.2f} ms",
                flush=True,
            )
        out["refine_extra_mb"] = len(vectors) * d * 4 / 1_048_576
        del refined
    report.setdefault("ivfpq", []).append(out)
    del index
    gc.collect()


def main(argv: list[str] | None = None) -> int:
    import faiss

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--hnsw-size", type=int, default=200_000)
    parser.add_argument("--ef-search", default="128,256,512,1024")
    parser.add_argument("--nlist", type=int, default=4096)
    parser.add_argument("--pq-m", default="48,96")
    parser.add_argument("--train", type=int, default=200_000)
    parser.add_argument("--nprobe", default="8,16,32,64,128,256")
    parser.add_argument("--refine", default="4,10")
    parser.add_argument("--model", default="multilingual-e5-small")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="reuse/save the sentence and query vectors here (.npz)")
    parser.add_argument("--out", type=Path, default=Path("out/faiss_million.json"))
    args = parser.parse_args(argv)

    started = time.perf_counter()
    report: dict = {
        "machine": {
            "cpus": os.cpu_count(),
            "faiss": faiss.__version__,
            "threads": faiss.omp_get_max_threads(),
            "loadavg_start": os.getloadavg(),
        },
        "model": args.model,
        "size": args.size,
    }
    vectors, queries = vectors_and_queries(args)
    truth = exact(vectors, queries, report, "exact")
    if args.hnsw_size:
        sub = np.ascontiguousarray(vectors[: args.hnsw_size])
        sub_truth = truth if len(sub) == len(vectors) else exact(sub, queries, report, "exact_hnsw_size")
        hnsw(sub, queries, sub_truth, args, report)
        del sub
    if args.pq_m:
        quantizer, sample = coarse_quantizer(vectors, args, report)
        for m in ints(args.pq_m):
            ivfpq(vectors, queries, truth, m, quantizer, sample, args, report)
    report["machine"]["loadavg_end"] = os.getloadavg()
    report["seconds"] = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(f"wrote {args.out} after {report['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
