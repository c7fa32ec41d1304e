"""The PostgreSQL backend on two real nodes: exact mode answers as the local index does, record for record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.index.builder import update_index
from citeqa.index.store import IndexData, load_index
from citeqa.qa.pipeline import AnswerPipeline
from citeqa.text.analysis import query_terms

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory, repo: Path, data_dir: Path) -> IndexData:
    """The local index of corpus/ and the test corpus (7 documents, 4 languages), keyword vectors."""
    folder = tmp_path_factory.mktemp("pg-backend")
    shutil.copytree(repo / "corpus", folder / "corpus")
    shutil.copytree(data_dir / "corpus", folder / "corpus" / "fixture")
    update_index(folder / "corpus", folder / "index", KeywordEmbedder())
    return load_index(folder / "index")


def questions(repo: Path) -> list[str]:
    rows = [json.loads(line) for line in (repo / "eval" / "qa.jsonl").read_text(encoding="utf-8").splitlines()]
    return [r["question"] for r in rows[::3]] + ["¿En qué año se construyó el faro de Punta Brava?"]


def published(local: IndexData, spec: str, ann: str = "exact"):
    from citeqa.pg.backend import PostgresBackend
    from citeqa.pg.publish import publish

    publish(local, spec, ann=ann)
    return PostgresBackend(spec)


def test_records_are_the_local_index_own(local: IndexData, pg_spec: str):
    pg = published(local, pg_spec)
    try:
        assert tuple(pg.chunks) == local.chunks and dict(pg.documents) == local.documents
        assert pg.model == local.model and pg.manifest.documents == local.manifest.documents
        assert pg.lexical_idf() == local.lexical_idf() and pg.majority_lang() == local.majority_lang()
        assert np.array_equal(pg.spans.ptr, local.spans.ptr) and np.array_equal(pg.spans.bounds, local.spans.bounds)
        held = [len(part) for part in pg.shards.each(lambda s: _count(s, "citeqa_documents"))]
        assert sum(held) == len(local.documents) and min(held) > 0  # sharded by document over both nodes
    finally:
        pg.close()


def _count(shard, table: str) -> list:
    with shard.connection("counting") as conn:
        return conn.execute(f"SELECT doc_id FROM {table}").fetchall()


def test_exact_search_scores_equal_the_local_index(local: IndexData, pg_spec: str, repo: Path):
    pg, embedder = published(local, pg_spec), KeywordEmbedder()
    langs = tuple(sorted({c.lang for c in local.chunks}))
    try:
        for question in questions(repo):
            vector, terms = embedder.encode([question])[0], query_terms(question, langs)
            assert pg.dense_search(vector, len(local.chunks)) == local.dense_search(vector, len(local.chunks))
            assert pg.lexical_search(terms, len(local.chunks)) == local.lexical_search(terms, len(local.chunks))
            assert pg.lexical_search(terms, 10) == local.lexical_search(terms, 10)
            # the top 10 of two shards merged: the same scores (passages tied exactly at the cut may differ)
            assert sorted(pg.dense_search(vector, 10).values()) == sorted(local.dense_search(vector, 10).values())
            rows = list(range(int(local.spans.ptr[3]), int(local.spans.ptr[6])))
            assert np.array_equal(pg.spans.similarities(rows, vector), local.spans.similarities(rows, vector))
    finally:
        pg.close()


def test_exact_mode_answer_records_equal_the_local_index(local: IndexData, pg_spec: str, repo: Path):
    pg, embedder = published(local, pg_spec), KeywordEmbedder()
    direct, behind = AnswerPipeline(local, embedder.encode), AnswerPipeline(pg, embedder.encode)
    try:
        for question in questions(repo):
            a, b = direct.run(question).answer.to_dict(), behind.run(question).answer.to_dict()
            a.pop("latency_ms"), b.pop("latency_ms")
            assert a == b, question
    finally:
        pg.close()


def test_hnsw_mode_finds_what_exact_search_finds(local: IndexData, pg_spec: str, repo: Path):
    from citeqa.pg.backend import PostgresBackend

    pg = published(local, pg_spec, ann="hnsw")
    exact = PostgresBackend(pg_spec, exact=True)
    embedder = KeywordEmbedder()
    try:
        assert pg.ann == "hnsw"
        for question in questions(repo)[:10]:
            vector = embedder.encode([question])[0]
            approx, truth = pg.dense_search(vector, 5), exact.dense_search(vector, 5)
            assert max(approx.values()) == max(truth.values())
    finally:
        pg.close(), exact.close()


def test_an_engine_reads_only_the_passages_and_documents_it_cites(local: IndexData, pg_spec: str, repo: Path, tmp_path):
    """Over PostgreSQL an engine needs no local folder and holds no passage text or document record
    at open: each question reads its hits' passages (one statement per shard), and the cited
    documents' records once."""
    from citeqa.engine import Engine

    published(local, pg_spec).close()
    remote = Engine.open(tmp_path / "absent", embedder=KeywordEmbedder(), reader="off", backend=pg_spec)
    direct = Engine(local, KeywordEmbedder(), remote.settings)
    pg, hits = remote._data, max(5, remote.settings.pool)
    try:
        assert not (tmp_path / "absent").exists()
        assert (pg.chunks.read, len(pg.chunks.cache), len(pg.documents.cache)) == (0, 0, 0)
        assert remote.corpus_langs == direct.corpus_langs and len(pg.chunks) == len(local.chunks) > 2 * hits
        for asked, question in enumerate(questions(repo)[:5], 1):
            a, b = direct.ask(question).to_dict(), remote.ask(question).to_dict()
            a.pop("latency_ms"), b.pop("latency_ms")
            assert a == b, question
            assert pg.chunks.read <= asked * hits  # the hits' passages, no other
        read = {c.doc_id for c in pg.chunks.cache._items.values()}
        assert set(pg.documents.cache._items) <= read < set(local.documents)
    finally:
        pg.close()


def _grown(repo: Path, data_dir: Path, folder: Path, extra: int) -> IndexData:
    """The ``local`` index with ``extra`` more English documents (their passages listed first)."""
    shutil.copytree(repo / "corpus", folder / "corpus")
    shutil.copytree(data_dir / "corpus", folder / "corpus" / "fixture")
    words = "river bridge harbour tower market winter garden engine station library".split()
    for i in range(extra):
        text = " ".join(
            f"The {words[(i + j) % 10]} of town {i} was rebuilt in {1800 + j} after the {words[j % 10]} closed."
            for j in range(24)
        )
        (folder / "corpus" / f"a{i:03d}.txt").write_text(text, encoding="utf-8")
    update_index(folder / "corpus", folder / "index", KeywordEmbedder())
    return load_index(folder / "index")


def test_warm_up_reads_what_its_answers_need_however_large_the_collection(
    local: IndexData, pg_spec: str, repo: Path, data_dir: Path, tmp_path: Path
):
    """A server's warm-up asks one question per language, the start of that language's first passage:
    over PostgreSQL it reads that passage and its answer's hits, not the passages listed before it
    (before: the whole first block of 1,000 rows, and every row for a language listed last)."""
    from citeqa.engine import Engine

    grown = _grown(repo, data_dir, tmp_path / "grown", 40)
    read = []
    for data in (local, grown):
        published(data, pg_spec).close()
        engine = Engine.open(tmp_path / "absent", embedder=KeywordEmbedder(), reader="off", backend=pg_spec)
        pg = engine._data
        try:
            langs, hits = len(engine.corpus_langs), max(5, engine.settings.pool)
            assert pg.chunks.read == 0
            engine.warm_up()
            assert 0 < pg.chunks.read <= langs * (1 + hits) < len(grown.chunks)
            assert {engine.sample_passage(lang) for lang in engine.corpus_langs} == {
                next(c.text for c in data.chunks if c.lang == lang) for lang in engine.corpus_langs
            }
            read.append(pg.chunks.read)
        finally:
            pg.close()
    assert len(grown.chunks) > len(local.chunks) + 40 and read[1] <= langs * (1 + hits)
