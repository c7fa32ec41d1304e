"""BM25 over citeqa's own terms on PostgreSQL shards, equal to the local index's (bm25s, Lucene's variant).

The global statistics (passages, total terms, each term's document frequency) are the
generation's, held by the catalogue and by the backend in memory: every shard ranks its
passages with the same IDF and average length, so a score does not depend on the shard.
A shard ranks in SQL (double precision) and returns its top ``n`` with their term
frequencies; the backend then recomputes each score with bm25s's own float32 arithmetic
(:func:`exact_score`), so scores equal the local index's to the bit.

Two ways to find a shard's candidates. Exact mode reads citeqa's postings (:data:`SQL`): every
passage that holds a query term is scored, so the top ``n`` is bm25s's. Approximate mode (the
shards published with ``--ann hnsw`` on a server with pg_textsearch) asks pg_textsearch's ``bm25``
index (Block-Max WAND: it stops once no other passage can enter the top) for the shard's
:func:`candidates` best by its own statistics (that shard's passage count, document frequencies
and mean length, over every row the index holds), then scores them as above with the global
ones (:data:`TEXT_SQL`). A score is then still bm25s's to the bit; what may differ is which
passages are scored, where a passage of the global top ``n`` is not in its shard's local top
``candidates(n)`` (measured in docs/scale.md). The index reads each passage's terms as one
string of tokens (:func:`index_token`) under the ``simple`` configuration: every token is a run of
ASCII letters, so PostgreSQL's parser neither splits (``l'eau``, ``0.979``) nor folds them.
"""

from __future__ import annotations

import math
import re
from collections import Counter
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


#: One shard's candidates from the ``bm25`` index, with their length and terms (:func:`frequencies`
#: counts the query's tokens in them: in the client, cheaper than one SQL subplan per passage and token).
TEXT_SQL = """
SELECT pid, dl, terms FROM citeqa_passages WHERE born <= %(gen)s AND died > %(gen)s
ORDER BY terms <@> to_bm25query(%(query)s, 'citeqa_passages_bm25') LIMIT %(m)s
"""
#: The text search configuration of the ``bm25`` index: no stemming, no stopwords.
TEXT_CONFIG = "simple"
#: A token that is kept as it is: ASCII letters, not starting with the escape letter.
_PLAIN = re.compile(r"[a-pr-z][a-z]*")
#: UTF-8 bytes as letters: each byte's two hex digits, 0-f written a-p.
_HEX_LETTERS = str.maketrans("0123456789abcdef", "abcdefghijklmnop")


def index_token(term: str) -> str:
    """citeqa's term as one token the ``simple`` configuration keeps whole and as it is: the term
    itself where it is ASCII letters not starting with ``q``, else ``q`` and its UTF-8 bytes as
    letters (``0.979`` -> ``qdadoejdjdj``). One to one: a plain token never starts with ``q``."""
    if _PLAIN.fullmatch(term):
        return term
    return "q" + term.encode("utf-8", "surrogatepass").hex().translate(_HEX_LETTERS)


def index_text(terms: Sequence[str]) -> str:
    """A passage's terms as the ``bm25`` index reads them (one token per term, in order)."""
    return " ".join(index_token(t) for t in terms)


def frequencies(terms: str, tokens: Sequence[str]) -> list[int]:
    """How often each query token (in query order, repeats too) is among a passage's ``terms`` tokens."""
    counts = Counter(terms.split(" "))
    return [counts[t] for t in tokens]


def candidates(n: int) -> int:
    """How many passages a shard's ``bm25`` index is asked for, to return ``n`` by global BM25."""
    return 2 * n + 20


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

    def text_params(self, query: Sequence[str], n: int, gen: int) -> dict[str, Any]:
        """The parameters of :data:`TEXT_SQL`: the query's tokens (once each) and :func:`candidates`."""
        tokens = [index_token(t) for t in query]
        return {"tokens": tokens, "query": " ".join(dict.fromkeys(tokens)), "gen": gen, "m": candidates(n)}


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
