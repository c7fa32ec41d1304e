"""Hybrid retrieval: dense (FAISS) and lexical (BM25) candidates, fused, language first."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from citeqa.index.backends import top_n
from citeqa.qa.backend import RetrievalBackend
from citeqa.qa.fusion import FusionMode, fuse
from citeqa.records import Hit
from citeqa.text.analysis import query_terms

__all__ = ["FITTED_RETRIEVAL", "RetrievalSettings", "Retriever", "prefer_language", "top_n"]

#: The retrieval settings a model's weights file sets (``python -m citeqa.fitting.scorer --dense-weight``).
FITTED_RETRIEVAL = frozenset({"dense_weight", "lexical_weight"})


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    """Knobs of the hybrid retriever. The fusion weights depend on the model's vectors and come
    from its weights file (:meth:`citeqa.qa.settings.AnswerSettings.for_model`); the others
    were chosen on the dev set (docs/evaluation.md, "Answer quality")."""

    dense_weight: float  #: weight of the dense (FAISS) scores in the fusion
    lexical_weight: float  #: weight of the BM25 scores
    candidates: int = 50
    fusion: FusionMode = FusionMode.WEIGHTED
    rrf_k: float = 60.0


class Retriever:
    """Finds the passages of one index that best match a question."""

    def __init__(self, data: RetrievalBackend, settings: RetrievalSettings) -> None:
        self.data = data
        self.settings = settings
        self.langs = tuple(sorted(data.passage_langs()))

    def dense_scores(self, query_vector: np.ndarray, n: int) -> dict[int, float]:
        """Cosine similarity of the top ``n`` passages to the question vector."""
        return self.data.dense_search(query_vector, n)

    def lexical_scores(self, question: str, n: int) -> dict[int, float]:
        """BM25 scores of the top ``n`` passages (question stemmed for every corpus language)."""
        return self.data.lexical_search(query_terms(question, self.langs), n)

    def search(
        self, question: str, query_vector: np.ndarray, k: int, timings: dict[str, float] | None = None
    ) -> list[Hit]:
        """The ``k`` best passages by fused score (the engine decides on language).

        ``timings``, when given, receives the milliseconds of each step (dense, lexical, fusion).
        """
        s = self.settings
        n = min(s.candidates, len(self.data.chunks))
        clock = timings if timings is not None else {}
        t0 = time.perf_counter()
        dense = self.dense_scores(query_vector, n)
        t1 = time.perf_counter()
        lexical = self.lexical_scores(question, n)
        t2 = time.perf_counter()
        fused = fuse([dense, lexical], [s.dense_weight, s.lexical_weight], s.fusion, s.rrf_k)
        kept = fused[:k]
        chunks = self.data.passages([i for i, _ in kept])
        hits = [Hit(c, score, dense.get(i, 0.0), lexical.get(i, 0.0), i) for c, (i, score) in zip(chunks, kept)]
        t3 = time.perf_counter()
        clock.update(dense=(t1 - t0) * 1000, lexical=(t2 - t1) * 1000, fusion=(t3 - t2) * 1000)
        return hits


def prefer_language(hits: Sequence[Hit], lang: str | None) -> list[Hit]:
    """Passages in ``lang`` first, each group keeping its order (all as is for None)."""
    if lang is None:
        return list(hits)
    return [h for h in hits if h.chunk.lang == lang] + [h for h in hits if h.chunk.lang != lang]
