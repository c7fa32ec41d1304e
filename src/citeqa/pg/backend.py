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

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from citeqa.errors import IndexCorruptError, IndexMismatchError, IndexMissingError, ShardError
from citeqa.index.backends import dense_search, lexical_idf
from citeqa.index.manifest import Manifest, manifest_from
from citeqa.index.terms import Terms
from citeqa.messages import Said
from citeqa.pg import bm25, schema
from citeqa.pg.records import PassageIds, RemoteDocuments, RemotePassages
from citeqa.pg.rows import RowMap
from citeqa.pg.shards import REPLAYED_SQL, Shard, Shards, shard_of
from citeqa.records import Chunk

if TYPE_CHECKING:
    from citeqa.pg.spans import RemoteSpans

#: Approximate mode: how many graph neighbours pgvector visits (its maximum is 1000), and the
#: iterative scan that keeps filtering rows of other generations from starving the top n.
HNSW_EF_SEARCH = 400
#: work_mem: BM25 groups a query's postings by passage (246,000 of them for a 9-term question at 10^5
#: synthetic passages); with the default 4 MB the grouping sorted on disk.
#: Seconds one statement may run (statement_timeout): a shard that stops answering is an error, not a
#: hung question. On a replica a timeout moves the read to the next server; on a primary it is raised.
#: The default of a connection whose own settings chose none: a value from the URL's ``options``, the
#: role or the database (``ALTER ROLE … SET``) is kept; the server's configuration file is not.
STATEMENT_TIMEOUT_S = 30
_SETUP = (
    "SET hnsw.iterative_scan = relaxed_order",
    "SET work_mem = '64MB'",
    f"SELECT set_config('statement_timeout', '{STATEMENT_TIMEOUT_S}s', false) FROM pg_settings"
    " WHERE name = 'statement_timeout' AND source IN ('default', 'configuration file')",
)
_VISIBLE = "born <= %(gen)s AND died > %(gen)s"
#: Seconds a backend opening waits for a shard's replicas to replay the live generation.
REPLAY_WAIT_S = 10.0
#: What opening reads of one shard: passages per (document, language) as (doc id, language, count,
#: first pid, last pid), span offsets (pid, number, start, end arrays), ANN mode, documents per language,
#: whether it has pg_textsearch's ``bm25`` index.
_Part = tuple[list[tuple[str, str, int, int, int]], tuple[np.ndarray, ...], str, Counter[str], bool]
#: The generation's manifest without its documents, and each document's entry with its number of
#: passages in place of its chunk ids (10^5 strings at 10^5 passages, never held: read when asked for).
_GENERATION_SQL = (
    "SELECT manifest - 'documents',"
    " (SELECT jsonb_agg((d - 'chunk_ids') || jsonb_build_object('passages', jsonb_array_length(d->'chunk_ids'))"
    "  ORDER BY i) FROM jsonb_array_elements(manifest->'documents') WITH ORDINALITY AS e(d, i)),"
    " passages, tokens, shards FROM citeqa_generations WHERE gen = %s"
)
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
        found = self.shards.each(lambda s: fetch_rows(s, sql, params, Said("doing_vectors")))
        rows = [r for i, part in enumerate(found) for r in self.where.rows(i, [pid for pid, _ in part]).tolist()]
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
        if self.lexical == "bm25":
            params = self.collection.text_params(query, n, self.generation)
            tokens = params["tokens"]
            found = [
                [(pid, dl, bm25.frequencies(text, tokens)) for pid, dl, text in part]
                for part in self.shards.each(lambda s: fetch_rows(s, bm25.TEXT_SQL, params, Said("doing_terms")))
            ]
        else:
            params = self.collection.params(query, n, self.generation)
            found = [
                [(pid, dl, _per_term(positions, tfs, len(query))) for pid, dl, positions, tfs in part]
                for part in self.shards.each(lambda s: fetch_rows(s, bm25.SQL, params, Said("doing_terms")))
            ]
        idfs = [self.collection.idf(t) for t in query]
        scores: dict[int, float] = {}
        for i, part in enumerate(found):
            rows = self.where.rows(i, [p[0] for p in part]).tolist()
            for row, (_, dl, per_term) in zip(rows, part):
                score = bm25.exact_score(per_term, dl, idfs, self.collection.avgdl)
                if score > 0:
                    scores[row] = score
        return _best(scores, n)

    def lexical_idf(self) -> dict[str, float]:
        """IDF of every term of the generation (the local index's formula and statistics)."""
        return lexical_idf(self._terms, len(self.chunks))

    def majority_lang(self, default: str = "en") -> str:
        counts = self.passage_langs()
        return counts.most_common(1)[0][0] if counts else default

    def passage_langs(self) -> Counter[str]:
        """How many passages of the generation are in each language (in the order of each language's first
        row, as a count in row order has them locally: the same order breaks a tie in :meth:`majority_lang`)."""
        return Counter(self._passage_langs)

    def document_langs(self) -> Counter[str]:
        """How many documents of the generation are in each language."""
        return Counter(self._doc_langs)

    def first_passage(self, lang: str) -> Chunk | None:
        """The first passage (by row) in ``lang``: its row is known from opening, so one passage is read."""
        row = self._first_rows.get(lang)
        return None if row is None else self.chunks[row]

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
        """Read the live generation: catalogue first, then every shard's runs of passages at once."""
        catalogue = self.shards.catalogue
        with catalogue.connection(Said("doing_catalogue")) as conn:
            layout = schema.read_layout(conn)
            if layout is not None:
                schema.check_layout(layout, 0, self.shards.count)
            gen = schema.live_generation(conn)
            if gen == 0:
                raise IndexMissingError(f"no citeqa index in {catalogue.name}; run `citeqa index --backend ...`")
            row = conn.execute(_GENERATION_SQL, (gen,)).fetchone()
            terms = conn.execute("SELECT term, df FROM citeqa_terms WHERE gen = %s ORDER BY term", (gen,)).fetchall()
        if row is None:
            raise IndexCorruptError(
                f"generation {gen} is missing from {catalogue.name}; run `citeqa index --backend ...`"
            )
        manifest_data, entries, passages, tokens, count = row
        if count != self.shards.count:
            raise _count_mismatch(count, self.shards.count)
        self.generation = gen
        vocab = tuple(t for t, _ in terms)
        self._terms = Terms(vocab, np.zeros(0, np.int32), np.zeros(1, np.int64), np.asarray([d for _, d in terms]))
        self.collection = bm25.Collection(int(passages), int(tokens), dict(terms))
        self.shards.each(_await_replicas)
        parts = self.shards.each(lambda s: _records(s, gen))
        #: "hnsw" when the shards have the graph (approximate search), else "exact".
        self.ann = "hnsw" if any(p[2] == "hnsw" for p in parts) else "exact"
        #: Where BM25 finds its candidates: "bm25" (every shard has pg_textsearch's index, in approximate
        #: mode) or "postings" (every passage holding a query term: exact).
        approximate = self.ann == "hnsw" and not self.exact
        self.lexical = "bm25" if approximate and all(p[4] for p in parts) else "postings"
        self._assemble(manifest_data, entries or [], parts)

    def _assemble(self, manifest_data: dict[str, Any], entries: list[dict[str, Any]], parts: list[_Part]) -> None:
        """Each document's run of rows and pids (rows in the manifest's order, so they are the local
        index's), the languages and the span offsets; nothing per passage but the span offsets."""
        runs: dict[str, tuple[int, int, int, int]] = {}  # doc_id -> shard, first pid, last pid, passages
        firsts: dict[str, dict[str, int]] = {}  # doc_id -> lang -> its first pid there
        for shard, (found, *_) in enumerate(parts):
            for doc_id, lang, n, low, high in found:
                s, a, b, c = runs.get(doc_id, (shard, low, high, 0))
                runs[doc_id] = (s, min(a, low), max(b, high), c + n)
                firsts.setdefault(doc_id, {})[lang] = low
        doc_ids = [e["doc_id"] for e in entries]
        counts = [int(e["passages"]) for e in entries]
        runs.update((d, (shard_of(d, self.shards.count), 0, -1, 0)) for d, n in zip(doc_ids, counts) if n == 0)
        broken = [
            d for d, n in zip(doc_ids, counts) if d not in runs or runs[d][3] != n or runs[d][2] - runs[d][1] + 1 != n
        ]
        if broken or len(runs) != len(doc_ids):
            raise IndexCorruptError(
                f"the shards do not hold generation {self.generation} whole ({len(broken)} documents differ); "
                "run `citeqa index --rebuild --backend ...`"
            )
        where = RowMap(
            np.asarray(counts, dtype=np.int64),
            np.asarray([runs[d][0] for d in doc_ids], dtype=np.int32),
            np.asarray([runs[d][1] for d in doc_ids], dtype=np.int64),
            self.shards.count,
        )
        self.where = where
        self.chunks = RemotePassages(self.shards, where, self.generation)
        self.documents = RemoteDocuments(self.shards, doc_ids, self.generation)
        # The manifest without its chunk ids: a document's are read from its passages when asked for.
        ids = [PassageIds(self.chunks, int(where.first_rows[i]), n) for i, n in enumerate(counts)]
        documents = [{**e, "chunk_ids": ()} for e in entries]
        manifest = manifest_from({**manifest_data, "documents": documents, "files": {}})
        self.manifest: Manifest = replace(
            manifest,
            documents=tuple(replace(e, chunk_ids=i) for e, i in zip(manifest.documents, ids)),
        )
        # Languages counted in row order (the first row of each language first), as locally.
        first_row: dict[str, int] = {}
        totals: Counter[str] = Counter()
        for i, d in enumerate(doc_ids):
            for lang, low in firsts.get(d, {}).items():
                row = int(where.first_rows[i]) + low - runs[d][1]
                first_row[lang] = min(first_row.get(lang, row), row)
        for found, *_ in parts:
            for _, lang, n, _, _ in found:
                totals[lang] += n
        self._passage_langs = Counter({lang: totals[lang] for lang in sorted(first_row, key=first_row.__getitem__)})
        self._first_rows = first_row
        self._doc_langs = sum((p[3] for p in parts), Counter())
        self.spans = _span_offsets(parts, where, self.shards)


def _per_term(positions: Sequence[int], tfs: Sequence[int], count: int) -> list[int]:
    """Each query term's frequency in a passage, from the postings' (query position, tf) pairs."""
    per_term = [0] * count
    for position, tf in zip(positions, tfs):
        per_term[position - 1] = tf
    return per_term


def _count_mismatch(built: int, given: int) -> IndexMismatchError:
    return IndexMismatchError(
        f"the index was built on {built} shards, --backend names {given}; give the same URLs in the same "
        "order, or run `citeqa index --rebuild --backend ...`"
    )


def _await_replicas(shard: Shard, wait_s: float | None = None) -> None:
    """Read from the replicas of ``shard`` once they have replayed what its primary had written now,
    after the live generation was read (so every row of it): waited for up to ``wait_s`` (default
    :data:`REPLAY_WAIT_S`); one that is behind after that, or down, is skipped (the primary and the
    others answer) and tried again after a back-off, when a new connection checks it has caught up,
    so no replica answers from an older generation."""
    if not shard.replicas:
        return
    with shard.connection(Said("doing_wal")) as conn:
        lsn = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    deadline = time.monotonic() + (REPLAY_WAIT_S if wait_s is None else wait_s)
    for replica in shard.replicas:
        while True:
            try:
                with replica.connection(Said("doing_replay")) as conn:
                    done = conn.execute(REPLAYED_SQL, (lsn,)).fetchone()[0]
            except ShardError:
                break  # down: skipped for a back-off already
            if done:
                break
            if time.monotonic() > deadline:
                replica.close()
                replica.skip()
                break
            time.sleep(0.05)
        replica.lsn = lsn
    shard.readers = shard.replicas


def fetch_rows(shard: Shard, sql: str, params: dict[str, Any], doing: str) -> list[tuple[Any, ...]]:
    """Every row ``sql`` returns on ``shard`` (a replica's read, on the shard's deadline; ``doing`` names
    the read in its error)."""

    def work(conn: Any) -> list[tuple[Any, ...]]:
        with conn.cursor(binary=True) as cur:
            rows: list[tuple[Any, ...]] = cur.execute(sql, params).fetchall()
            return rows

    return shard.read(doing, work)


def _records(shard: Shard, gen: int) -> _Part:
    """One shard's passages of generation ``gen`` per document and language (doc id, language, count,
    first and last pid), its span offsets (pid, number, start, end as arrays), its ANN mode, and how
    many of its documents are in each language."""
    params = {"gen": gen}

    def work(conn: Any) -> _Part:
        found = schema.read_layout(conn)
        schema.check_layout(found, shard.number, shard.count)
        passages = conn.execute(
            f"SELECT doc_id, lang, count(*), min(pid), max(pid) FROM citeqa_passages WHERE {_VISIBLE}"
            " GROUP BY doc_id, lang",
            params,
        ).fetchall()
        doc_langs = Counter(
            dict(
                conn.execute(
                    f"SELECT record->>'lang', count(*) FROM citeqa_documents WHERE {_VISIBLE} GROUP BY 1", params
                )
            )
        )
        with conn.cursor(binary=True) as cur:
            cur.execute(
                'SELECT s.pid, s.number, s.start, s."end" FROM citeqa_spans s JOIN citeqa_passages p USING (pid)'
                " WHERE p.born <= %(gen)s AND p.died > %(gen)s",
                params,
            )
            spans = np.asarray(cur.fetchall(), dtype=np.int64).reshape(-1, 4)
        has_bm25 = conn.execute("SELECT to_regclass('citeqa_passages_bm25') IS NOT NULL").fetchone()[0]
        return passages, tuple(spans.T), found[3], doc_langs, bool(has_bm25)  # type: ignore[index]  # check_layout raised on None

    return shard.read(Said("doing_records"), work)


def _best(scores: dict[int, float], n: int) -> dict[int, float]:
    """The ``n`` best of merged candidates, best first, ties by row (bm25s's stable order; FAISS keeps
    an arbitrary one of passages tied exactly at the cut, so there the two may differ)."""
    return dict(sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:n])


def _span_offsets(parts: Sequence[_Part], where: RowMap, shards: Shards) -> RemoteSpans:
    """The span offsets of every passage (CSR, as :class:`~citeqa.index.spans.SpanVectors`); vectors stay
    remote, and where a span's vector lives follows from its row (its passage's shard and pid, its number)."""
    from citeqa.pg.spans import RemoteSpans

    rows, numbers, bounds = [], [], []
    for s, (_, (pid, number, start, end), *_) in enumerate(parts):
        rows.append(where.rows(s, pid))
        numbers.append(number)
        bounds.append(np.stack([start, end], axis=1))
    row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    number = np.concatenate(numbers) if numbers else np.zeros(0, np.int64)
    order = np.lexsort((number, row))
    ptr = np.zeros(len(where) + 1, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=len(where)), out=ptr[1:])
    bound = np.concatenate(bounds)[order].astype(np.int32) if bounds else np.zeros((0, 2), np.int32)
    return RemoteSpans(ptr, bound.reshape(-1, 2), where, shards)
