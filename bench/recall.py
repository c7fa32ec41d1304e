"""How much an index's HNSW graph loses against exact search: recall@10 and per-query latency, by efSearch.

Usage (an index built already; bench/run.py runs it on sizes >= 10000)::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/recall.py [--index index] [--out out/bench-recall]

recall@10 of the HNSW index citeqa built (``backends.build_dense(v, "hnsw")`` when the index is
flat) against an exact ``IndexFlatIP`` over the index's own vectors, on the benchmark and eval
questions' real embeddings, at the configured efSearch and a few others (the same graph), and
the per-query search latency of each. The vectors are distinct, so recall is id-level (a
tie-aware figure, counting a hit whose exact score reaches the 10th, is kept too).
bench/ann_sweep.py sweeps the graph's own parameters; bench/faiss_million.py goes to 10^6.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, add_common_flags, parse_args, pct, query_texts, run_alone

SCRIPT = Path(__file__).resolve()

EF_SWEEP = (64, 128, 256, 512, 768, 1024)


def faiss_recall(hnsw, vectors, queries: list, ann: str) -> dict:
    """HNSW (``hnsw``: the index citeqa answers with when ``ann`` is "hnsw") against exact search
    over ``vectors``, the index's own; ``queries``: one (1, d) float32 row each."""
    import numpy as np

    from citeqa.index.backends import HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH, HNSW_M, build_dense

    t0 = time.perf_counter()
    flat = build_dense(vectors, "flat")
    flat_build = time.perf_counter() - t0
    hnsw_build = None
    if ann != "hnsw":
        t0 = time.perf_counter()
        hnsw = build_dense(vectors, "hnsw")
        hnsw_build = time.perf_counter() - t0
    k = 10
    exact, flat_ms = [], []
    for q in queries:
        t0 = time.perf_counter()
        exact.append(flat.search(q, k))
        flat_ms.append((time.perf_counter() - t0) * 1000)
    sweep = {}
    for ef in sorted({*EF_SWEEP, HNSW_EF_SEARCH}):
        hnsw.hnsw.efSearch = ef
        ms, tie, strict = [], [], []
        for q, (fs, fi) in zip(queries, exact):
            t0 = time.perf_counter()
            hs, hi = hnsw.search(q, k)
            ms.append((time.perf_counter() - t0) * 1000)
            kth = fs[0][-1] - 1e-5
            tie.append(sum(1 for s, i in zip(hs[0], hi[0]) if i >= 0 and s >= kth) / k)
            strict.append(len(set(hi[0].tolist()) & set(fi[0].tolist())) / k)
        sweep[ef] = {
            "recall_at_10_ids": statistics.fmean(strict),
            "recall_at_10_ties": statistics.fmean(tie),
            "ms_p50": pct(ms, 0.5),
            "ms_p95": pct(ms, 0.95),
        }
    hnsw.hnsw.efSearch = HNSW_EF_SEARCH
    chosen = sweep[HNSW_EF_SEARCH]
    return {
        "vectors": int(len(vectors)),
        "distinct_vectors": int(len(np.unique(vectors, axis=0))),
        "queries": len(queries),
        "M": HNSW_M,
        "ef_construction": HNSW_EF_CONSTRUCTION,
        "ef_search": HNSW_EF_SEARCH,
        "recall_at_10": chosen["recall_at_10_ids"],
        "recall_at_10_ids": chosen["recall_at_10_ids"],
        "recall_at_10_ties": chosen["recall_at_10_ties"],
        "flat_ms_p50": pct(flat_ms, 0.5),
        "flat_ms_p95": pct(flat_ms, 0.95),
        "hnsw_ms_p50": chosen["ms_p50"],
        "hnsw_ms_p95": chosen["ms_p95"],
        "ef_sweep": sweep,
        "flat_build_s": flat_build,
        "hnsw_build_s": hnsw_build,
    }


def worker_recall(args: dict) -> dict:
    """Load the index at ``args["index"]`` and its model; :func:`faiss_recall` on the questions' vectors."""
    import numpy as np

    from citeqa import load_embedder
    from citeqa.index.backends import all_vectors
    from citeqa.index.store import load_index

    data = load_index(Path(args["index"]))
    embedder = load_embedder(data.manifest.model)
    queries = [np.ascontiguousarray(q.reshape(1, -1), dtype=np.float32) for q in embedder.encode(query_texts())]
    return faiss_recall(data.dense, all_vectors(data.dense), queries, data.manifest.ann)


WORKERS = {"recall": worker_recall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=ROOT / "index")
    add_common_flags(parser, out=ROOT / "out" / "bench-recall", rounds=None)
    args = parse_args(parser, argv, WORKERS)
    if args is None:
        return 0
    return 0 if "error" not in run_alone(SCRIPT, "recall", {"index": str(args.index)}, args.out) else 1


if __name__ == "__main__":
    raise SystemExit(main())
