"""Build the two search structures: FAISS for vectors, bm25s for words."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

import numpy as np

from citeqa.records import Chunk
from citeqa.text.analysis import terms

#: Above this many vectors an HNSW graph replaces exact search (see docs/benchmarks.md).
HNSW_THRESHOLD = 50_000
#: Chosen by measurement on 10^5 distinct benchmark vectors (bench/ann_sweep.py, bench/run.py):
#: recall@10 against exact search 0.990-0.991 on two vector sets; M=32 reached 0.990 on one
#: and 0.975 on the other at any efSearch, efConstruction 80 stayed below 0.97.
HNSW_M = 64
HNSW_EF_CONSTRUCTION = 200
HNSW_EF_SEARCH = 1024


def ann_kind(count: int) -> str:
    """ "flat" (exact) for small collections, "hnsw" above :data:`HNSW_THRESHOLD`."""
    return "hnsw" if count > HNSW_THRESHOLD else "flat"


def build_dense(vectors: np.ndarray, kind: str) -> object:
    """An inner-product FAISS index over L2-normalised ``vectors``."""
    import faiss

    dim = vectors.shape[1]
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        index.hnsw.efSearch = HNSW_EF_SEARCH
    else:
        index = faiss.IndexFlatIP(dim)
    if len(vectors):
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def all_vectors(index: object) -> np.ndarray:
    """Every stored vector, in insertion order (used to reuse embeddings)."""
    n = index.ntotal  # type: ignore[attr-defined]
    if n == 0:
        return np.zeros((0, index.d), dtype=np.float32)  # type: ignore[attr-defined]
    return index.reconstruct_n(0, n)  # type: ignore[attr-defined]


def chunk_terms(chunk: Chunk) -> list[str]:
    """The BM25 terms of a passage, stemmed in the passage's own language.

    Terms are interned: 10^5 passages hold ~10^7 tokens but few distinct ones, and one
    string per distinct term instead of per token saves ~0.5 GB while bm25s indexes.
    """
    found = [sys.intern(t) for t in terms(chunk.text, chunk.lang)]
    return found if found else ["\x00empty"]


def build_lexical(chunks: Sequence[Chunk]) -> object:
    """A bm25s index over the passages' terms, in chunk order.

    Term ids follow the sorted vocabulary: bm25s numbers terms in the order of a ``set``,
    which changes with Python's per-process string hashing, so the same passages gave
    different files from one run to the next. Sorted, they give the same bytes.
    """
    import bm25s

    docs = [chunk_terms(c) for c in chunks]
    vocab = {term: i for i, term in enumerate(sorted({t for doc in docs for t in doc}))}
    ids = [[vocab[t] for t in doc] for doc in docs]
    del docs
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index((ids, vocab), show_progress=False)
    return retriever


def dense_search(index: object, vector: np.ndarray, n: int) -> dict[int, float]:
    """Inner product (cosine, for normalised vectors) of the top ``n`` passages to ``vector``."""
    if n <= 0 or index.ntotal == 0:  # type: ignore[attr-defined]
        return {}
    scores, ids = index.search(np.ascontiguousarray(vector.reshape(1, -1), dtype=np.float32), n)  # type: ignore[attr-defined]
    return {int(i): float(s) for s, i in zip(scores[0], ids[0]) if i >= 0}


def lexical_scores(bm25: object, query: Sequence[str]) -> np.ndarray | None:
    """BM25 score of every passage for the query terms, or None when no term is indexed."""
    vocab = bm25.vocab_dict  # type: ignore[attr-defined]
    known = _term_count(bm25)
    ids = [vocab[t] for t in query if vocab.get(t, known) < known]
    if not ids:
        return None
    return bm25.get_scores_from_ids(ids)  # type: ignore[attr-defined]


def lexical_search(bm25: object, query: Sequence[str], n: int) -> dict[int, float]:
    """BM25 score of the top ``n`` passages with a positive score (chunk index -> score)."""
    scores = lexical_scores(bm25, query)
    if scores is None:
        return {}
    return {int(i): float(scores[i]) for i in top_n(scores, n) if scores[i] > 0}


def top_n(scores: np.ndarray, n: int) -> np.ndarray:
    """Indexes of the ``n`` highest scores, best first, ties by index (a stable sort's order).

    A partial sort: O(len(scores)) instead of sorting every passage of a large index.
    """
    size = len(scores)
    if n >= size:
        return np.argsort(-scores, kind="stable")
    if n <= 0:
        return np.zeros(0, dtype=np.intp)
    kth = np.partition(scores, size - n)[size - n]  # the n-th highest score
    above = np.flatnonzero(scores > kth)
    tied = np.flatnonzero(scores == kth)[: n - len(above)]
    top = np.concatenate([above, tied])
    return top[np.lexsort((top, -scores[top]))]


def lexical_idf(bm25: object, n_docs: int) -> dict[str, float]:
    """IDF of every indexed term (Lucene's form), from the document frequencies bm25s stores."""
    df = np.diff(np.asarray(bm25.scores["indptr"]))  # type: ignore[attr-defined]
    n = max(1, n_docs)
    vocab = bm25.vocab_dict.items()  # type: ignore[attr-defined]
    return {term: math.log(1 + (n - df[i] + 0.5) / (df[i] + 0.5)) for term, i in vocab if i < len(df)}


def _term_count(bm25: object) -> int:
    """Terms with a posting list (bm25s's vocabulary may also hold an unindexed placeholder)."""
    return len(bm25.scores["indptr"]) - 1  # type: ignore[attr-defined]
