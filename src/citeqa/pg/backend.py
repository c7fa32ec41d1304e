"""A :class:`~citeqa.qa.backend.RetrievalBackend` over PostgreSQL shards (``--backend postgresql://...``).

Opened on the generation live at that moment (pinned: a publish meanwhile does not change
what it answers from; :meth:`PostgresBackend.reopen` moves to the new one). It loads where
each passage lives (shard and pid, in the manifest's order), the span offsets, the language
counts and the term statistics, and leaves passage texts, document records, vectors and
postings in PostgreSQL (:mod:`citeqa.pg.records`: the passages of a question's hits are read
once fused, a document's record when a citation names it). A query fans out to every shard at
once; each returns its top ``n`` of each list, and the backend merges them: dense candidates are
rescored with FAISS's own inner product on their stored float32 vectors, BM25 candidates with
bm25s's arithmetic (:mod:`citeqa.pg.bm25`), so exact mode gives the local index's scores
and the same answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from citeqa.errors import IndexCorruptError, IndexMismatchError, IndexMissingError
from citeqa.index.backends import dense_search, lexical_idf
from citeqa.index.manifest import Manifest, manifest_from
from citeqa.index.terms import Terms
from citeqa.pg import bm25, schema
from citeqa.pg.records import RemoteDocuments, RemotePassages
from citeqa.pg.shards import Shard, Shards
from citeqa.records import Chunk

if TYPE_CHECKING:
    from citeqa.pg.spans import RemoteSpans

#: Approximate mode: how many graph neighbours pgvector visits (its maximum is 1000), and the
#: iterative scan that keeps filtering rows of other generations from starving the top n.
HNSW_EF_SEARCH = 400
#: work_mem: BM25 groups a query's postings by passage (246,000 of them for a 9-term question at 10^5
#: synthetic passages); with the default 4 MB the grouping sorted on disk.
_SETUP = (
    "SET hnsw.iterative_scan = relaxed_order",
    "SET work_mem = '64MB'",
    "SET statement_timeout = '30s'",  # a shard that stops answering is an error, not a hung question
)
_VISIBLE = "born <= %(gen)s AND died > %(gen)s"
_DENSE_SQL = f"SELECT pid, embedding FROM citeqa_passages WHERE {_VISIBLE} ORDER BY embedding <#> %(q)s LIMIT %(n)s"
#: Exact mode: a sequential scan (``+ 0``: no index can serve that order), exact cosine.
_EXACT_SQL = (
    f"SELECT pid, embedding FROM citeqa_passages WHERE {_VISIBLE} ORDER BY (embedding <#> %(q)s) + 0 LIMIT %(n)s"
)


class PostgresBackend:
    """Dense and lexical search over one generation of a sharded PostgreSQL index.

    ``exact``: True forces exact cosine search (a sequential scan) even where an HNSW graph exists;
    ``ef_search``: the graph's search breadth in approximate mode (pgvector allows 1 to 1000).
    """

    def __init__(self, spec: str, exact: bool = False, ef_search: int = HNSW_EF_SEARCH) -> None:
        self.spec = spec
        self.exact = exact
        self.ef_search = ef_search
        self.shards = Shards(spec)
        for shard in self.shards.items:
            shard.setup = (*_SETUP, f"SET hnsw.ef_search = {int(ef_search)}")
        try:
            self._load()
        except BaseException:
            self.shards.close()
            raise

    # --- what the protocol asks -------------------------------------------------------------

    @property
    def model(self) -> str:
        return self.manifest.model

    def dense_search(self, vector: np.ndarray, n: int) -> dict[int, float]:
        """Each shard's ``n`` nearest by pgvector, rescored by FAISS's inner product; the best ``n``."""
        if n <= 0 or not len(self.chunks):
            return {}
        sql = _EXACT_SQL if self.exact or self.ann == "exact" else _DENSE_SQL
        query = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        params = {"gen": self.generation, "q": query, "n": n}
        found = self.shards.each(lambda s: _fetch(s, sql, params, "searching vectors"))
        rows = [self._rows[(i, pid)] for i, part in enumerate(found) for pid, _ in part]
        if not rows:
            return {}
        import faiss

        candidates = faiss.IndexFlatIP(query.shape[0])
        candidates.add(np.stack([v.to_numpy().astype(np.float32) for part in found for _, v in part]))
        scored = dense_search(candidates, query, len(rows))
        return _best({rows[i]: s for i, s in scored.items()}, n)

    def lexical_search(self, terms: Sequence[str], n: int) -> dict[int, float]:
        """Each shard's ``n`` best by BM25 with the global statistics, rescored exactly; the best ``n`` (> 0)."""
        query = [t for t in terms if t in self.collection.df]
        if not query or n <= 0:
            return {}
        params = self.collection.params(query, n, self.generation)
        found = self.shards.each(lambda s: _fetch(s, bm25.SQL, params, "searching terms"))
        idfs = [self.collection.idf(t) for t in query]
        scores: dict[int, float] = {}
        for i, part in enumerate(found):
            for pid, dl, positions, tfs in part:
                per_term = [0] * len(query)
                for position, tf in zip(positions, tfs):
                    per_term[position - 1] = tf
                score = bm25.exact_score(per_term, dl, idfs, self.collection.avgdl)
                if score > 0:
                    scores[self._rows[(i, pid)]] = score
        return _best(scores, n)

    def lexical_idf(self) -> dict[str, float]:
        """IDF of every term of the generation (the local index's formula and statistics)."""
        return lexical_idf(self._terms, len(self.chunks))

    def majority_lang(self, default: str = "en") -> str:
        counts = self.passage_langs()
        return counts.most_common(1)[0][0] if counts else default

    def passage_langs(self) -> Counter[str]:
        """How many passages of the generation are in each language (counted in row order, as locally:
        the same order breaks a tie in :meth:`majority_lang`)."""
        return Counter(self._lang_names[i] for i in self._langs.tolist())

    def document_langs(self) -> Counter[str]:
        """How many documents of the generation are in each language."""
        return Counter(self._doc_langs)

    def passages(self, rows: Sequence[int]) -> list[Chunk]:
        """The passages of ``rows``, in that order: read in one statement per shard that holds them."""
        return self.chunks.fetch(rows)

    # --- opening ------------------------------------------------------------------------------

    def reopen(self) -> PostgresBackend:
        """A backend on the generation live now (this one is closed)."""
        self.close()
        return PostgresBackend(self.spec, self.exact, self.ef_search)

    def close(self) -> None:
        self.shards.close()

    def _load(self) -> None:
        """Read the live generation: catalogue first, then every shard's records at once."""
        catalogue = self.shards.catalogue
        with catalogue.connection("reading the catalogue") as conn:
            layout = schema.read_layout(conn)
            if layout is not None:
                schema.check_layout(layout, 0, self.shards.count)
            gen = schema.live_generation(conn)
            if gen == 0:
                raise IndexMissingError(f"no citeqa index in {catalogue.name}; run `citeqa index --backend ...`")
            row = conn.execute(
                "SELECT manifest, passages, tokens, shards FROM citeqa_generations WHERE gen = %s", (gen,)
            ).fetchone()
            terms = conn.execute("SELECT term, df FROM citeqa_terms WHERE gen = %s ORDER BY term", (gen,)).fetchall()
        if row is None:
            raise IndexCorruptError(
                f"generation {gen} is missing from {catalogue.name}; run `citeqa index --backend ...`"
            )
        manifest_data, passages, tokens, count = row
        if count != self.shards.count:
            raise _count_mismatch(count, self.shards.count)
        self.generation = gen
        self.manifest: Manifest = replace(manifest_from(manifest_data), files={})
        vocab = tuple(t for t, _ in terms)
        self._terms = Terms(vocab, np.zeros(0, np.int32), np.zeros(1, np.int64), np.asarray([d for _, d in terms]))
        self.collection = bm25.Collection(int(passages), int(tokens), dict(terms))
        parts = self.shards.each(lambda s: _records(s, gen))
        #: "hnsw" when the shards have the graph (approximate search), else "exact".
        self.ann = "hnsw" if any(p[3] == "hnsw" for p in parts) else "exact"
        self._assemble(parts)

    def _assemble(self, parts: list[tuple[list, list, list, str, Counter]]) -> None:
        """Where each passage lives, in the manifest's order (so rows are the local index's), the
        document ids, the languages and the span offsets; no passage text or document record."""
        by_id: dict[str, tuple[int, int, int]] = {}
        held: set[str] = set()
        names: dict[str, int] = {}
        for shard, (passages, documents, _, _, _) in enumerate(parts):
            by_id.update((cid, (shard, pid, names.setdefault(lang, len(names)))) for pid, cid, lang in passages)
            held.update(documents)
        doc_ids = [d.doc_id for d in self.manifest.documents]
        order = [cid for d in self.manifest.documents for cid in d.chunk_ids]
        missing = [cid for cid in order if cid not in by_id]
        if missing or len(by_id) != len(order) or held != set(doc_ids):
            raise IndexCorruptError(
                f"the shards do not hold generation {self.generation} whole ({len(missing)} passages missing); "
                "run `citeqa index --backend ...`"
            )
        where = np.asarray([by_id[cid] for cid in order], dtype=np.int64).reshape(-1, 3)
        self._rows = {(s, p): row for row, (s, p, _) in enumerate(where.tolist())}
        self.chunks = RemotePassages(self.shards, where[:, 0].astype(np.int32), where[:, 1], self.generation)
        self.documents = RemoteDocuments(self.shards, doc_ids, self.generation)
        self._lang_names = list(names)
        self._langs = where[:, 2].astype(np.int16)  # row -> index in _lang_names
        self._doc_langs = sum((p[4] for p in parts), Counter())
        self.spans = _span_offsets(parts, self._rows, len(order), self.shards)


def _count_mismatch(built: int, given: int) -> IndexMismatchError:
    return IndexMismatchError(
        f"the index was built on {built} shards, --backend names {given}; give the same URLs in the same "
        "order, or run `citeqa index --rebuild --backend ...`"
    )


def _fetch(shard: Shard, sql: str, params: dict, doing: str) -> list[tuple]:
    with shard.connection(doing) as conn, conn.cursor(binary=True) as cur:
        return cur.execute(sql, params).fetchall()


def _records(shard: Shard, gen: int) -> tuple[list, list, list, str, Counter]:
    """One shard's passages (pid, chunk id, language), document ids and span offsets of generation
    ``gen``, its ANN mode, and how many of its documents are in each language."""
    params = {"gen": gen}
    with shard.connection("reading its records") as conn:
        found = schema.read_layout(conn)
        schema.check_layout(found, shard.number, shard.count)
        passages = conn.execute(f"SELECT pid, chunk_id, lang FROM citeqa_passages WHERE {_VISIBLE}", params).fetchall()
        documents = [r[0] for r in conn.execute(f"SELECT doc_id FROM citeqa_documents WHERE {_VISIBLE}", params)]
        doc_langs = Counter(
            dict(
                conn.execute(
                    f"SELECT record->>'lang', count(*) FROM citeqa_documents WHERE {_VISIBLE} GROUP BY 1", params
                )
            )
        )
        spans = conn.execute(
            'SELECT s.pid, s.number, s.start, s."end" FROM citeqa_spans s JOIN citeqa_passages p USING (pid)'
            " WHERE p.born <= %(gen)s AND p.died > %(gen)s",
            params,
        ).fetchall()
    return passages, documents, spans, found[3], doc_langs  # type: ignore[index]  # check_layout raised on None


def _best(scores: dict[int, float], n: int) -> dict[int, float]:
    """The ``n`` best of merged candidates, best first, ties by row (bm25s's stable order; FAISS keeps
    an arbitrary one of passages tied exactly at the cut, so there the two may differ)."""
    return dict(sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:n])


def _span_offsets(
    parts: Sequence[tuple[list, list, list, str, Counter]],
    rows: dict[tuple[int, int], int],
    passages: int,
    shards: Shards,
) -> RemoteSpans:
    """The span offsets of every passage (CSR, as :class:`~citeqa.index.spans.SpanVectors`); vectors stay remote."""
    from citeqa.pg.spans import RemoteSpans

    found = sorted(
        (rows[(s, pid)], number, start, end, s, pid)
        for s, (_, _, spans, *_) in enumerate(parts)
        for pid, number, start, end in spans
    )
    ptr = np.zeros(passages + 1, dtype=np.int64)
    np.add.at(ptr, np.asarray([f[0] + 1 for f in found], dtype=np.int64), 1)
    np.cumsum(ptr, out=ptr)
    bounds = np.asarray([(f[2], f[3]) for f in found], dtype=np.int32).reshape(-1, 2)
    keys = [(f[4], f[5], f[1]) for f in found]
    return RemoteSpans(ptr, bounds, keys, shards)
