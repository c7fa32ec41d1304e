"""Publish a local index generation to PostgreSQL shards as a new generation, switched in atomically.

``citeqa index --backend postgresql://...`` builds the local generation as always (reading,
chunking, reuse by hash, embedding, terms: :mod:`citeqa.index.builder`), then this writer
sends what changed: documents whose ``(doc_id, sha256)`` the live PostgreSQL generation does
not hold are inserted with their passages, vectors, terms and span vectors; documents it holds
that the local generation does not are retired. Unchanged documents are not sent again. The
new generation becomes live in one transaction on the catalogue (:mod:`citeqa.pg.schema`).
The CLI publishes from the generation folder, :data:`BATCH` passages at a time
(:func:`publish_folder`, :mod:`citeqa.pg.source`): the writer's memory stays bounded at any size.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citeqa.errors import ConfigError, IndexMismatchError, IndexMissingError
from citeqa.index.backends import BM25_B, BM25_K1, ann_kind
from citeqa.index.spans import SpanVectors
from citeqa.index.store import IndexData
from citeqa.messages import Said
from citeqa.pg import bm25, schema
from citeqa.pg.shards import Shard, Shards, connect_options, shard_of
from citeqa.pg.source import FolderSource, MemorySource, Source
from citeqa.records import Document, to_dict

#: Approximate mode's graph: pgvector's HNSW (m, ef_construction). m 16 / ef_construction 64 found
#: 0.84-0.95 of exact search's top 10 at 10^5 passages; 32 / 128 found 0.913-0.977 over three builds
#: (1.0 with ef_search 1000), its build 2.5-4x as long (bench/pg_scale.py, docs/scale.md). FAISS's
#: 64 / 200 took too long on two cores.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 128
ANN_MODES = ("exact", "hnsw")
#: Passages read, and their postings sorted, together (bounds the writer's memory).
BATCH = 20_000
#: Postings turned into Python values at once (a block of BATCH passages holds ~3 million).
_ROWS = 65_536


@dataclass(frozen=True)
class Published:
    """What one publish did."""

    generation: int
    added: int  # documents written
    removed: int  # documents retired
    passages: int  # passages of the new generation
    shards: int
    ann: str
    switched: bool = True  # False: the shards already held these documents; the live generation stays
    #: Seconds the slowest shard took for each index it built ("hnsw", "bm25"), the shards building at once.
    index_s: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class _Change:
    """One shard's part of a publish: documents to write and documents to retire."""

    added: tuple[int, ...]  # documents by their number in the manifest, ascending
    removed: tuple[str, ...]


def publish(data: IndexData | Source, spec: str, ann: str | None = None, rebuild: bool = False) -> Published:
    """Make ``data`` the live generation of the shards named by ``spec`` (see :mod:`citeqa.pg.shards`).

    ``data``: a loaded index or a :class:`~citeqa.pg.source.Source` (:func:`publish_folder` streams
    a generation folder). ``ann``: "exact" (no ANN index: exact cosine) or "hnsw"; None chooses as
    the local index does (exact up to 50,000 passages). ``rebuild`` drops the shards' tables first.
    """
    source = data if isinstance(data, Source) else MemorySource(data)
    mode = ann if ann is not None else ("hnsw" if ann_kind(source.passages) == "hnsw" else "exact")
    if mode not in ANN_MODES:
        raise ConfigError(f"the search mode must be one of {', '.join(ANN_MODES)}, not {mode!r}")
    shards = Shards(spec)
    try:
        with _publish_lock(shards.catalogue):
            return _publish(source, shards, mode, rebuild)
    finally:
        shards.close()


def publish_folder(index_dir: Path, spec: str, ann: str | None = None, rebuild: bool = False) -> Published:
    """:func:`publish` of the live generation of the local index ``index_dir``, read a batch at a time
    (:class:`~citeqa.pg.source.FolderSource`): the writer holds neither the passages nor the vectors."""
    from citeqa.index.store import current_generation

    folder = current_generation(index_dir)
    if folder is None:
        raise IndexMissingError(f"no index in {index_dir}; run `citeqa index` first")
    return publish(FolderSource(folder), spec, ann=ann, rebuild=rebuild)


@contextlib.contextmanager
def _publish_lock(catalogue: Shard) -> Iterator[None]:
    """Hold the catalogue's advisory lock on a connection of its own (released if this process dies)."""
    import psycopg

    try:
        lock = psycopg.connect(catalogue.url, autocommit=True, **connect_options(catalogue.url))
        lock.execute("SELECT pg_advisory_lock(%s)", (schema.PUBLISH_LOCK,))
    except psycopg.Error as exc:
        raise catalogue.error(exc, Said("doing_lock")) from None
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            lock.close()


def _publish(data: Source, shards: Shards, ann: str, rebuild: bool) -> Published:
    dimension = data.manifest.dimension

    def prepare(shard: Shard) -> None:
        with shard.connection(Said("doing_tables")) as conn:
            if rebuild:
                schema.drop_all(conn, catalogue=shard.number == 0)
            schema.ensure_shard(conn, shard.number, shards.count, dimension, ann)
            if shard.number == 0:
                for statement in schema.CATALOGUE_DDL:
                    conn.execute(statement)

    shards.each(prepare)
    with shards.catalogue.connection(Said("doing_live")) as conn:
        live = schema.live_generation(conn)
        model = conn.execute("SELECT manifest->>'model' FROM citeqa_generations WHERE gen = %s", (live,)).fetchone()
    if model is not None and model[0] != data.model:
        raise IndexMismatchError(
            f"the postgres index was built with model {model[0]!r}, not {data.model!r}; "
            "run `citeqa index --rebuild --backend ...`"
        )
    held = shards.each(lambda s: _held(s, live))
    changes = _changes(data, held, shards.count)
    unchanged = live > 0 and not any(c.added or c.removed for c in changes)
    gen = live if unchanged else live + 1
    timings = shards.each(lambda s: _write(s, data, changes[s.number], gen, ann))
    if not unchanged:
        _switch(shards.catalogue, data, gen, shards.count)
    added, removed = sum(len(c.added) for c in changes), sum(len(c.removed) for c in changes)
    index_s = tuple((kind, max(t.get(kind, 0.0) for t in timings)) for kind in ("hnsw", "bm25") if timings[0].get(kind))
    return Published(gen, added, removed, data.passages, shards.count, ann, not unchanged, index_s)


def _held(shard: Shard, live: int) -> set[tuple[str, str]]:
    """Undo a publish that never switched, then the ``(doc_id, sha256)`` the shard holds live."""
    with shard.connection(Said("doing_documents")) as conn:
        schema.recover(conn, live)
        found = conn.execute(
            "SELECT doc_id, sha256 FROM citeqa_documents WHERE born <= %s AND died > %s", (live, live)
        ).fetchall()
    return {(d, s) for d, s in found}


def _changes(data: Source, held: Sequence[set[tuple[str, str]]], count: int) -> list[_Change]:
    """Per shard: the documents of ``data`` it lacks (their numbers in the manifest), and the ones it
    holds that ``data`` does not."""
    wanted: list[dict[tuple[str, str], int]] = [{} for _ in range(count)]
    for number, doc in enumerate(data.manifest.documents):
        wanted[shard_of(doc.doc_id, count)][(doc.doc_id, doc.sha256)] = number
    return [
        _Change(
            tuple(n for key, n in wanted[i].items() if key not in held[i]),
            tuple(sorted({d for d, s in held[i] if (d, s) not in wanted[i]})),
        )
        for i in range(count)
    ]


def _write(shard: Shard, data: Source, change: _Change, gen: int, ann: str) -> dict[str, float]:
    """Retire and insert one shard's documents in one transaction, then fit its ANN index to ``ann``;
    the seconds each index took to build."""
    with shard.connection(Said("doing_writing")) as conn:
        if change.added or change.removed:
            with conn.transaction():
                _retire(conn, change.removed, gen)
                _insert(conn, data, change.added, gen)
            for table in (
                "citeqa_passages",
                "citeqa_postings",
            ):  # statistics, and the visibility map of index-only scans
                conn.execute(f"VACUUM (ANALYZE) {table}")
        if ann != "hnsw":
            conn.execute("DROP INDEX IF EXISTS citeqa_passages_hnsw")
            conn.execute("DROP INDEX IF EXISTS citeqa_passages_bm25")
            return {}
        conn.execute("SET maintenance_work_mem = '1GB'")
        started = time.perf_counter()
        conn.execute(schema.HNSW_INDEX.format(m=HNSW_M, ef=HNSW_EF_CONSTRUCTION))
        graph = time.perf_counter()
        _bm25_index(conn, shard)
        return {"hnsw": graph - started, "bm25": time.perf_counter() - graph}


def _bm25_index(conn: Any, shard: Shard) -> None:
    """pg_textsearch's ``bm25`` index over the passages' terms, where the server has the extension
    (else BM25 stays on the postings: the same answers, slower at scale). A shard holding passages
    published before their terms were stored is refused: the index would not find them."""
    if not conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_textsearch')"
    ).fetchone()[0]:
        conn.execute("DROP INDEX IF EXISTS citeqa_passages_bm25")
        return
    if schema.terms_missing(conn):
        raise IndexMismatchError(
            f"postgres {shard.name} holds passages published by an older citeqa, without the terms approximate "
            "mode's BM25 index needs: run `citeqa index --rebuild --backend ...` (or publish with --ann exact)"
        )
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_textsearch")
    conn.execute(schema.BM25_INDEX.format(config=bm25.TEXT_CONFIG, k1=BM25_K1, b=BM25_B))


def _retire(conn: Any, doc_ids: Sequence[str], gen: int) -> None:
    """Mark the live rows of ``doc_ids`` dead from ``gen`` on."""
    if not doc_ids:
        return
    ids = list(doc_ids)
    live = schema.ALIVE
    conn.execute("UPDATE citeqa_documents SET died = %s WHERE doc_id = ANY(%s) AND died = %s", (gen, ids, live))
    pids = [
        r[0]
        for r in conn.execute(
            "UPDATE citeqa_passages SET died = %s WHERE doc_id = ANY(%s) AND died = %s RETURNING pid", (gen, ids, live)
        )
    ]
    conn.execute("UPDATE citeqa_postings SET died = %s WHERE pid = ANY(%s) AND died = %s", (gen, pids, live))


def _insert(conn: Any, data: Source, docs: Sequence[int], gen: int) -> None:
    """COPY the documents, passages, postings and span vectors of the manifest documents ``docs``
    (binary; the passages get pids from max + 1 in row order), :data:`BATCH` passages at a time."""
    if not docs:
        return
    first = conn.execute("SELECT coalesce(max(pid), 0) + 1 FROM citeqa_passages").fetchone()[0]
    chosen = data.rows(docs)  # the i-th gets pid first + i
    _copy_documents(conn, data.documents([data.manifest.documents[n].doc_id for n in docs]), gen)
    _copy_passages(conn, data, chosen, first, gen)
    vocab = data.terms.vocab
    order = np.argsort(np.asarray(vocab, dtype=object), kind="stable")  # term id -> ... by the term's text
    rank = np.empty(len(vocab), dtype=np.int64)
    rank[order] = np.arange(len(vocab))
    with conn.cursor().copy("COPY citeqa_postings (term, pid, tf, dl, born) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(["text", "int8", "int4", "int4", "int4"])
        for block in range(0, len(chosen), BATCH):
            found = _postings(data, chosen[block : block + BATCH], first + block, rank)
            for at in range(0, len(found[0]), _ROWS):  # as Python values a slice at a time
                terms, pids, tfs, dls = (part[at : at + _ROWS].tolist() for part in found)
                for term, pid, tf, dl in zip(terms, pids, tfs, dls):
                    copy.write_row((vocab[term], pid, tf, dl, gen))
    if data.spans is not None:
        _copy_spans(conn, data.spans, chosen, first)


def _copy_documents(conn: Any, docs: Iterable[Document], gen: int) -> None:
    from psycopg.types.json import Jsonb

    with conn.cursor().copy("COPY citeqa_documents (doc_id, sha256, born, record) FROM STDIN") as copy:
        for doc in docs:
            copy.write_row((doc.doc_id, doc.sha256, gen, Jsonb(to_dict(doc))))


def _copy_passages(conn: Any, data: Source, chosen: np.ndarray, first: int, gen: int) -> None:
    """The passages: text and offsets as indexed, length in terms, float32 vector, terms for the
    ``bm25`` index; records and vectors read a batch at a time."""
    columns = 'pid, chunk_id, doc_id, start, "end", lang, text, dl, born, embedding, terms'
    tokens = [bm25.index_token(t) for t in data.terms.vocab]
    chunks = data.chunks(chosen)
    with conn.cursor().copy(f"COPY citeqa_passages ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(["int8", "text", "text", "int4", "int4", "text", "text", "int4", "int4", "vector", "text"])
        for block in range(0, len(chosen), BATCH):
            rows = chosen[block : block + BATCH]
            for i, (row, vector) in enumerate(zip(rows.tolist(), data.vectors(rows))):
                c = next(chunks)
                ids = np.asarray(data.terms.row(row)).tolist()
                terms = " ".join([tokens[t] for t in ids])
                pid = first + block + i
                copy.write_row(
                    (pid, c.chunk_id, c.doc_id, c.start, c.end, c.lang, c.text, len(ids), gen, vector, terms)
                )


def _copy_spans(conn: Any, spans: SpanVectors, chosen: np.ndarray, first: int) -> None:
    """The span offsets and float16 vectors of the passages ``chosen`` (halfvec: the same numbers)."""
    from pgvector import HalfVector

    sql = 'COPY citeqa_spans (pid, number, start, "end", embedding) FROM STDIN (FORMAT BINARY)'
    with conn.cursor().copy(sql) as copy:
        copy.set_types(["int8", "int4", "int4", "int4", "halfvec"])
        for i, row in enumerate(chosen.tolist()):
            for number, span in enumerate(range(int(spans.ptr[row]), int(spans.ptr[row + 1]))):
                a, b = (int(x) for x in spans.bounds[span])
                copy.write_row((first + i, number, a, b, HalfVector(np.asarray(spans.vectors[span]))))


def _postings(data: Source, rows: np.ndarray, first: int, rank: np.ndarray) -> tuple[np.ndarray, ...]:
    """Term ids, pids, tfs and passage lengths of the passages ``rows`` (pids from ``first``), as
    arrays sorted by the term's text (``rank``: each term id's place in that order), then pid: a
    term's postings then lie together on disk, and BM25 reads a few pages per term instead of one
    per posting. Arrays, not tuples: 20,000 passages hold millions of postings."""
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    lengths = np.zeros(len(rows), dtype=np.int64)
    for i, row in enumerate(rows.tolist()):
        ids = np.asarray(data.terms.row(row))
        lengths[i] = len(ids)
        parts.append(np.unique(ids, return_counts=True))
    counts = np.asarray([len(t) for t, _ in parts], dtype=np.int64)
    terms = np.concatenate([t for t, _ in parts]).astype(np.int64) if parts else np.zeros(0, np.int64)
    tfs = np.concatenate([c for _, c in parts]) if parts else np.zeros(0, np.int64)
    owner = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
    order = np.lexsort((owner, rank[terms]))
    return terms[order], first + owner[order], tfs[order], lengths[owner[order]]


def _switch(catalogue: Shard, data: Source, gen: int, count: int) -> None:
    """Record generation ``gen`` (manifest, global statistics, every term's document frequency) and
    make it live, in one transaction."""
    from psycopg.types.json import Jsonb

    tokens = int(data.terms.ptr[-1])
    with catalogue.connection(Said("doing_switching")) as conn, conn.transaction():
        conn.execute(
            "INSERT INTO citeqa_generations (gen, manifest, passages, tokens, shards) VALUES (%s, %s, %s, %s, %s)",
            (gen, Jsonb(to_dict(data.manifest)), data.passages, tokens, count),
        )
        with conn.cursor().copy("COPY citeqa_terms (gen, term, df) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["int4", "text", "int8"])
            for term, df in zip(data.terms.vocab, np.asarray(data.terms.df).tolist()):
                copy.write_row((gen, term, df))
        conn.execute("DELETE FROM citeqa_live")
        conn.execute("INSERT INTO citeqa_live (gen) VALUES (%s)", (gen,))
        conn.execute("DELETE FROM citeqa_terms WHERE gen < %s", (gen - 1,))
        conn.execute("DELETE FROM citeqa_generations WHERE gen < %s", (gen - 1,))
