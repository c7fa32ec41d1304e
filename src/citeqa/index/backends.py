"""Build and search the two search structures: FAISS for vectors, bm25s for words (terms: terms.py)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from citeqa.index.terms import Terms

if TYPE_CHECKING:  # both load only when used
    import bm25s
    import faiss

#: Above this many vectors an HNSW graph replaces exact search (see docs/benchmarks.md).
HNSW_THRESHOLD = 50_000
#: Chosen by measurement on 10^5 distinct benchmark vectors (bench/ann_sweep.py, bench/run.py):
#: recall@10 against exact search 0.990-0.991 on two vector sets; M=32 reached 0.990 on one
#: and 0.975 on the other at any efSearch, efConstruction 80 stayed below 0.97.
HNSW_M = 64
HNSW_EF_CONSTRUCTION = 200
HNSW_EF_SEARCH = 1024
#: BM25 (Lucene's variant, as bm25s computes it): term saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75


def ann_kind(count: int) -> str:
    """ "flat" (exact) for small collections, "hnsw" above :data:`HNSW_THRESHOLD`."""
    return "hnsw" if count > HNSW_THRESHOLD else "flat"


def build_dense(vectors: np.ndarray, kind: str) -> faiss.Index:
    """An inner-product FAISS index over L2-normalised ``vectors``."""
    import faiss

    dim = vectors.shape[1]
    index: faiss.Index
    if kind == "hnsw":
        hnsw = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        hnsw.hnsw.efSearch = HNSW_EF_SEARCH
        index = hnsw
    else:
        index = faiss.IndexFlatIP(dim)
    if len(vectors):
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def all_vectors(index: faiss.Index) -> np.ndarray:
    """Every stored vector, in insertion order (used to reuse embeddings)."""
    n = index.ntotal
    if n == 0:
        return np.zeros((0, index.d), dtype=np.float32)
    vectors: np.ndarray = index.reconstruct_n(0, n)  # faiss's SWIG bindings are untyped
    return vectors


def build_lexical(terms: Terms) -> bm25s.BM25:
    """A bm25s index over the passages' term ids, in passage order.

    Term ids follow the sorted vocabulary: bm25s numbers terms in the order of a ``set``,
    which changes with Python's per-process string hashing, so the same passages gave
    different files from one run to the next. Sorted, they give the same bytes.
    """
    import bm25s

    ids = [terms.row(i).tolist() for i in range(terms.passages)]
    retriever = bm25s.BM25(method="lucene", k1=BM25_K1, b=BM25_B)
    retriever.index((ids, terms.index), show_progress=False)
    return retriever


def dense_search(index: faiss.Index, vector: np.ndarray, n: int) -> dict[int, float]:
    """Inner product (cosine, for normalised vectors) of the top ``n`` passages to ``vector``."""
    if n <= 0 or index.ntotal == 0:
        return {}
    scores, ids = index.search(np.ascontiguousarray(vector.reshape(1, -1), dtype=np.float32), n)
    return {int(i): float(s) for s, i in zip(scores[0], ids[0]) if i >= 0}


class LexicalScorer(Protocol):
    """What searching needs of a BM25 index: every passage's score for some term ids."""

    def get_scores_from_ids(self, query_tokens_ids: list[int]) -> np.ndarray: ...


class SavedBM25:
    """A saved bm25s index (``bm25s.BM25.save``) read back without importing bm25s, whose import
    (scipy.sparse, tqdm) cost more than the rest of opening an index. It holds the same arrays as
    ``bm25s.BM25.load(folder, load_corpus=False, allow_pickle=False)`` and scores with bm25s's own
    arithmetic (each term's postings added in the query's order with ``np.add.at``), so the scores
    are the same numbers, bit for bit (tests/index/test_index.py)."""

    def __init__(self, folder: Path) -> None:
        params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
        if params.get("method") in ("bm25l", "bm25+"):  # they add a non-occurrence score: not read here
            raise ValueError(f"BM25 method {params['method']!r} is not read without bm25s")
        self.folder = folder
        self.dtype = np.dtype(params["dtype"])
        self.int_dtype = np.dtype(params["int_dtype"])
        self.scores = {
            "data": np.load(folder / "data.csc.index.npy", allow_pickle=False),
            "indices": np.load(folder / "indices.csc.index.npy", allow_pickle=False),
            "indptr": np.load(folder / "indptr.csc.index.npy", allow_pickle=False),
            "num_docs": params["num_docs"],
        }

    @cached_property
    def vocab_dict(self) -> dict[str, int]:
        """bm25s's vocabulary (term -> column); searching uses :class:`Terms`' instead."""
        vocab: dict[str, int] = json.loads((self.folder / "vocab.index.json").read_text(encoding="utf-8"))
        return vocab

    def get_scores_from_ids(self, query_tokens_ids: list[int]) -> np.ndarray:
        """BM25 score of every passage for the term ids, as ``bm25s.BM25.get_scores_from_ids``."""
        data, indices, indptr = self.scores["data"], self.scores["indices"], self.scores["indptr"]
        ids = np.asarray(query_tokens_ids, dtype=self.int_dtype)
        if int(ids.max(initial=0)) >= len(indptr) - 1:
            raise ValueError("a query term id is beyond the index's vocabulary")
        starts, ends = indptr[ids], indptr[ids + 1]
        scores = np.zeros(self.scores["num_docs"], dtype=self.dtype)
        for start, end in zip(starts, ends):
            np.add.at(scores, indices[start:end], data[start:end])
        return scores


def lexical_scores(bm25: LexicalScorer, terms: Terms, query: Sequence[str]) -> np.ndarray | None:
    """BM25 score of every passage for the query terms, or None when no term is indexed."""
    index = terms.index
    ids = [index[t] for t in query if t in index]
    if not ids:
        return None
    return bm25.get_scores_from_ids(ids)


def lexical_search(bm25: LexicalScorer, terms: Terms, query: Sequence[str], n: int) -> dict[int, float]:
    """BM25 score of the top ``n`` passages with a positive score (chunk index -> score)."""
    scores = lexical_scores(bm25, terms, query)
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


def lexical_idf(terms: Terms, n_docs: int) -> dict[str, float]:
    """IDF of every indexed term (Lucene's form), from the document frequencies stored at build time."""
    n = max(1, n_docs)
    return {term: math.log(1 + (n - df + 0.5) / (df + 0.5)) for term, df in zip(terms.vocab, terms.df.tolist())}
