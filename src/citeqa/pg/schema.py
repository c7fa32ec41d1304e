"""The tables of a PostgreSQL index, on every shard and on the catalogue (shard 1).

Rows carry the generations they live in: a row is visible in generation ``g`` when
``born <= g < died``. Publishing generation ``g`` inserts its new documents with ``born = g``
and sets ``died = g`` on the removed ones, shard by shard, then switches ``citeqa_live`` in one
transaction on the catalogue: until then readers see the previous generation whole, and a
publish that stops half way leaves rows (``born > live``, ``died > live``) that the next
publish undoes. Rows dead before the previous generation are deleted by the next publish
(a server still on the previous generation keeps finding its rows).

Passages keep the text with its exact character offsets, the float32 vector (pgvector
``vector``: the FAISS index's own values, stored in the row: pgvector's default moves a 1.5 KB
vector out of line, which made an exact scan of 10^5 passages take 1 s), the passage length in terms (``dl``), its terms as one
string for pg_textsearch's ``bm25`` index (``terms``: :func:`citeqa.pg.bm25.index_text`) and, in
``citeqa_postings``, citeqa's own terms with their frequencies: BM25 scores are computed from these
with the global statistics the catalogue holds (:mod:`citeqa.pg.bm25`). Span vectors
are ``halfvec``: the local index stores them as float16 too, so they are the same numbers.
"""

from __future__ import annotations

from typing import Any

from citeqa.errors import IndexMismatchError

#: ``died`` of a row that is still live.
ALIVE = 2_147_483_647
#: The key of the advisory lock a publish holds on the catalogue (two publishes never interleave).
PUBLISH_LOCK = 0x63697465

_SHARD_TABLES = ("citeqa_spans", "citeqa_postings", "citeqa_passages", "citeqa_documents", "citeqa_shard")
_CATALOGUE_TABLES = ("citeqa_terms", "citeqa_generations", "citeqa_live")


def shard_ddl(dimension: int) -> list[str]:
    """The tables and indexes every shard has (``dimension``: of the vectors)."""
    return [
        "CREATE TABLE IF NOT EXISTS citeqa_shard (one boolean PRIMARY KEY DEFAULT true CHECK (one),"
        " number int NOT NULL, count int NOT NULL, dimension int NOT NULL, ann text NOT NULL)",
        "CREATE TABLE IF NOT EXISTS citeqa_documents (doc_id text NOT NULL, sha256 text NOT NULL,"
        f" born int NOT NULL, died int NOT NULL DEFAULT {ALIVE}, record jsonb NOT NULL)",
        "CREATE INDEX IF NOT EXISTS citeqa_documents_doc ON citeqa_documents (doc_id)",
        "CREATE TABLE IF NOT EXISTS citeqa_passages (pid bigint PRIMARY KEY, chunk_id text NOT NULL,"
        ' doc_id text NOT NULL, start int NOT NULL, "end" int NOT NULL, lang text NOT NULL,'
        f" text text NOT NULL, dl int NOT NULL, born int NOT NULL, died int NOT NULL DEFAULT {ALIVE},"
        f" embedding vector({dimension}) STORAGE PLAIN NOT NULL, terms text)",
        # shards published before the column: added empty (approximate mode refuses them, see terms_missing)
        "ALTER TABLE citeqa_passages ADD COLUMN IF NOT EXISTS terms text",
        "CREATE INDEX IF NOT EXISTS citeqa_passages_doc ON citeqa_passages (doc_id)",
        "CREATE TABLE IF NOT EXISTS citeqa_postings (term text NOT NULL, pid bigint NOT NULL,"
        f" tf int NOT NULL, dl int NOT NULL, born int NOT NULL, died int NOT NULL DEFAULT {ALIVE})",
        # covering: BM25 reads a term's postings from the index alone (an index-only scan after VACUUM)
        "CREATE INDEX IF NOT EXISTS citeqa_postings_term ON citeqa_postings (term) INCLUDE (pid, tf, dl, born, died)",
        "CREATE INDEX IF NOT EXISTS citeqa_postings_pid ON citeqa_postings (pid)",
        "CREATE TABLE IF NOT EXISTS citeqa_spans (pid bigint NOT NULL, number int NOT NULL,"
        f' start int NOT NULL, "end" int NOT NULL, embedding halfvec({dimension}) STORAGE PLAIN NOT NULL,'
        " PRIMARY KEY (pid, number))",
    ]


CATALOGUE_DDL = [
    "CREATE TABLE IF NOT EXISTS citeqa_live (one boolean PRIMARY KEY DEFAULT true CHECK (one), gen int NOT NULL)",
    "CREATE TABLE IF NOT EXISTS citeqa_generations (gen int PRIMARY KEY, manifest jsonb NOT NULL,"
    " passages bigint NOT NULL, tokens bigint NOT NULL, shards int NOT NULL, created_at timestamptz DEFAULT now())",
    "CREATE TABLE IF NOT EXISTS citeqa_terms (gen int NOT NULL, term text NOT NULL, df bigint NOT NULL,"
    " PRIMARY KEY (gen, term))",
]

#: The HNSW graph of approximate mode (cosine = inner product on normalised vectors).
HNSW_INDEX = (
    "CREATE INDEX IF NOT EXISTS citeqa_passages_hnsw ON citeqa_passages"
    " USING hnsw (embedding vector_ip_ops) WITH (m = {m}, ef_construction = {ef})"
)


#: Approximate mode's BM25 candidates: pg_textsearch's index over the passages' terms (its k1 and b
#: are citeqa's; its statistics are the shard's, which is why candidates are rescored).
BM25_INDEX = (
    "CREATE INDEX IF NOT EXISTS citeqa_passages_bm25 ON citeqa_passages"
    " USING bm25 (terms) WITH (text_config = '{config}', k1 = {k1}, b = {b})"
)


def terms_missing(conn: Any) -> bool:
    """Whether the shard holds passages without their ``terms`` (published by a citeqa before the
    column: the ``bm25`` index would not find them)."""
    return bool(
        conn.execute(
            f"SELECT EXISTS (SELECT 1 FROM citeqa_passages WHERE terms IS NULL AND died = {ALIVE})"
        ).fetchone()[0]
    )


def drop_all(conn: Any, catalogue: bool) -> None:
    """Remove every citeqa table of a shard (``--rebuild``)."""
    for table in (*_SHARD_TABLES, *(_CATALOGUE_TABLES if catalogue else ())):
        conn.execute(f"DROP TABLE IF EXISTS {table}")


def ensure_shard(conn: Any, number: int, count: int, dimension: int, ann: str) -> None:
    """Create the shard's tables if new; refuse a shard made for another layout or vector size."""
    for statement in shard_ddl(dimension):
        conn.execute(statement)
    conn.execute(
        "INSERT INTO citeqa_shard (number, count, dimension, ann) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (number, count, dimension, ann),
    )
    found = conn.execute("SELECT number, count, dimension, ann FROM citeqa_shard").fetchone()
    check_layout(found, number, count, dimension)
    if found[3] != ann:
        conn.execute("UPDATE citeqa_shard SET ann = %s", (ann,))


def check_layout(found: tuple[Any, ...] | None, number: int, count: int, dimension: int | None = None) -> None:
    """A shard must sit at the position, in the count and with the vector size it was made for."""
    if found is None:
        raise IndexMismatchError(f"shard {number + 1} holds no citeqa index; run `citeqa index --backend ...`")
    if (found[0], found[1]) != (number, count):
        raise IndexMismatchError(
            f"shard {number + 1} of {count} was made as shard {found[0] + 1} of {found[1]}: give the URLs in the "
            "order and number the index was built with, or run `citeqa index --rebuild --backend ...`"
        )
    if dimension is not None and found[2] != dimension:
        raise IndexMismatchError(
            f"shard {number + 1} holds vectors of dimension {found[2]}, not {dimension}; "
            "run `citeqa index --rebuild --backend ...`"
        )


def recover(conn: Any, live: int) -> None:
    """Undo what a publish that never switched left behind, and delete the rows no generation
    from ``live - 1`` on can see (one transaction)."""
    with conn.transaction():
        conn.execute(
            "DELETE FROM citeqa_spans s USING citeqa_passages p WHERE s.pid = p.pid AND (p.born > %s OR p.died < %s)",
            (live, live),
        )
        for table in ("citeqa_passages", "citeqa_postings", "citeqa_documents"):
            conn.execute(f"DELETE FROM {table} WHERE born > %s OR died < %s", (live, live))
            conn.execute(f"UPDATE {table} SET died = %s WHERE died > %s AND died < %s", (ALIVE, live, ALIVE))


def read_layout(conn: Any) -> tuple[Any, ...] | None:
    """The shard's (number, count, dimension, ann), or None where no citeqa index was ever written."""
    if not conn.execute("SELECT to_regclass('citeqa_shard') IS NOT NULL").fetchone()[0]:
        return None
    layout: tuple[Any, ...] | None = conn.execute("SELECT number, count, dimension, ann FROM citeqa_shard").fetchone()
    return layout


def live_generation(conn: Any) -> int:
    """The live generation on the catalogue (0: none yet)."""
    exists = conn.execute("SELECT to_regclass('citeqa_live') IS NOT NULL").fetchone()[0]
    if not exists:
        return 0
    row = conn.execute("SELECT gen FROM citeqa_live").fetchone()
    return int(row[0]) if row else 0
