"""BM25 over citeqa's own terms on PostgreSQL shards, equal to the local index's (bm25s, Lucene's variant).

The global statistics (passages, total terms, each term's document frequency) are the
generation's, held by the catalogue and by the backend in memory: every shard ranks its
passages with the same IDF and average length, so a score does not depend on the shard.
A shard ranks in SQL (double precision) and returns its top ``n`` with their term
frequencies; the backend then recomputes each score with bm25s's own float32 arithmetic
(:func:`exact_score`), so scores equal the local index's to the bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from citeqa.index.backends import BM25_B, BM25_K1

#: One shard's top passages for a query: pid, passage length, and (query position, tf) pairs.
SQL = """
SELECT o.pid, min(o.dl) AS dl, array_agg(q.i) AS positions, array_agg(o.tf) AS tfs
FROM unnest(%(terms)s::text[], %(idf)s::float8[]) WITH ORDINALITY AS q(term, idf, i)
JOIN citeqa_postings o ON o.term = q.term
WHERE o.born <= %(gen)s AND o.died > %(gen)s
GROUP BY o.pid
ORDER BY sum(q.idf * o.tf / (o.tf + %(k1)s * (1 - %(b)s + %(b)s * o.dl / %(avgdl)s))) DESC, o.pid
LIMIT %(n)s
"""


@dataclass(frozen=True)
class Collection:
    """The statistics BM25 needs, of one generation."""

    passages: int
    tokens: int  # terms of all passages together
    df: dict[str, int]

    @property
    def avgdl(self) -> np.float64:
        """The mean passage length, as bm25s computes it (numpy's mean of the lengths)."""
        return np.float64(self.tokens) / self.passages if self.passages else np.float64(1.0)

    def idf(self, term: str) -> np.float32:
        """Lucene's IDF, rounded to float32 as bm25s stores it."""
        df, n = self.df[term], self.passages
        return np.float32(math.log(1 + (n - df + 0.5) / (df + 0.5)))

    def params(self, query: Sequence[str], n: int, gen: int) -> dict[str, Any]:
        """The parameters of :data:`SQL` for the indexed ``query`` terms."""
        return {
            "terms": list(query),
            "idf": [float(self.idf(t)) for t in query],
            "gen": gen,
            "k1": BM25_K1,
            "b": BM25_B,
            "avgdl": float(self.avgdl),
            "n": n,
        }


def exact_score(tfs: Sequence[int], dl: int, idfs: Sequence[np.float32], avgdl: np.float64) -> float:
    """A passage's BM25 score as bm25s computes it: each term's part in float64 stored as float32
    (``idf * tf / (k1 * (1 - b + b * dl / avgdl) + tf)``), the parts added in float32 in query order.

    ``tfs[i]`` is the passage's frequency of query term ``i`` (0: absent, adds nothing).
    """
    norm = BM25_K1 * ((1 - BM25_B) + BM25_B * dl / avgdl)
    total = np.float32(0.0)
    for tf, idf in zip(tfs, idfs):
        if tf:
            part = np.float32(np.float64(idf) * (np.float64(tf) / (norm + np.float64(tf))))
            total = np.float32(total + part)
    return float(total)
