"""Publishing generations to two real PostgreSQL nodes: incremental, atomic, recovered after a failure."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.errors import IndexMismatchError, ShardError
from citeqa.index.builder import update_index
from citeqa.index.store import load_index
from citeqa.pg import publish as publish_module
from citeqa.pg.backend import PostgresBackend
from citeqa.pg.publish import publish
from citeqa.text.analysis import query_terms

pytestmark = pytest.mark.postgres

TERMS = query_terms("When was the windmill of Greyhill restored?", ("en",))


def build(corpus: Path, index: Path, embedder=None):
    update_index(corpus, index, embedder or KeywordEmbedder())
    return load_index(index)


def rows(spec: str, table: str) -> int:
    """Rows of ``table`` on every shard together (live or kept for the previous generation)."""
    backend = PostgresBackend.__new__(PostgresBackend)  # only its shards: no generation needed
    from citeqa.pg.shards import Shards

    backend.shards = Shards(spec)
    try:
        found = backend.shards.each(lambda s: _rows(s, table))
    finally:
        backend.shards.close()
    return sum(found)


def _rows(shard, table: str) -> int:
    with shard.connection("counting") as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_incremental_publish_sends_only_what_changed(fixture_corpus: Path, tmp_path: Path, pg_spec: str):
    first = publish(build(fixture_corpus, tmp_path / "index"), pg_spec)
    assert (first.generation, first.added, first.removed, first.shards) == (1, 3, 0, 2)
    assert not publish(load_index(tmp_path / "index"), pg_spec).switched  # nothing changed: no new generation
    pinned = PostgresBackend(pg_spec)
    (fixture_corpus / "extra.txt").write_text("The lighthouse of Greyhill was painted red in 1990.", encoding="utf-8")
    second = publish(build(fixture_corpus, tmp_path / "index"), pg_spec)
    assert (second.generation, second.added, second.removed) == (2, 1, 0)
    (fixture_corpus / "faro.txt").unlink()
    third = publish(build(fixture_corpus, tmp_path / "index"), pg_spec)
    assert (third.generation, third.added, third.removed) == (3, 0, 1)
    try:
        assert pinned.generation == 1 and "extra.txt" not in pinned.documents
        assert len(pinned.lexical_search(TERMS, 5)) >= 1  # a server on an older generation still answers
        now = pinned.reopen()
        assert now.generation == 3 and set(now.documents) == {"extra.txt", "mill.html", "nested/farol.md"}
        assert tuple(now.chunks) == load_index(tmp_path / "index").chunks
        now.close()
    finally:
        pinned.close()


def test_a_publish_that_stops_before_the_switch_changes_nothing(
    fixture_corpus: Path, tmp_path: Path, pg_spec: str, monkeypatch
):
    data = build(fixture_corpus, tmp_path / "index")
    publish(data, pg_spec)
    before = PostgresBackend(pg_spec)
    passages = rows(pg_spec, "citeqa_passages")
    (fixture_corpus / "faro.txt").write_text("El faro de Punta Brava se pintó de azul en 2001.", encoding="utf-8")
    changed = build(fixture_corpus, tmp_path / "index")

    def crash(*args, **kwargs):
        raise KeyboardInterrupt  # as if the process died after writing every shard, before the switch

    monkeypatch.setattr(publish_module, "_switch", crash)
    with pytest.raises(KeyboardInterrupt):
        publish(changed, pg_spec)
    monkeypatch.undo()
    after = PostgresBackend(pg_spec)
    try:
        assert after.generation == 1 and tuple(after.chunks) == tuple(before.chunks)
        assert dict(after.documents) == dict(before.documents)
        assert rows(pg_spec, "citeqa_passages") > passages  # the unswitched rows are there, invisible
        done = publish(changed, pg_spec)
        assert (done.generation, done.added, done.removed) == (2, 1, 1)
        assert rows(pg_spec, "citeqa_passages") == passages + 1  # leftovers undone; the old faro kept for gen 1
        fresh = after.reopen()
        assert tuple(fresh.chunks) == changed.chunks
        fresh.close()
    finally:
        before.close()


def test_a_killed_node_is_one_error_naming_it_and_loses_nothing(
    fixture_corpus: Path, tmp_path: Path, pg_spec: str, pg_cluster
):
    from citeqa.pg.nodes import start_node, stop_node

    data = build(fixture_corpus, tmp_path / "index")
    publish(data, pg_spec)
    backend = PostgresBackend(pg_spec)
    answer = backend.lexical_search(TERMS, 5)
    assert answer
    (fixture_corpus / "extra.txt").write_text("A new text about the windmill.", encoding="utf-8")
    changed = build(fixture_corpus, tmp_path / "index")
    stop_node(pg_cluster[1], mode="immediate")  # a crash: no checkpoint
    try:
        with pytest.raises(ShardError) as failed:
            publish(changed, pg_spec)
        message = str(failed.value)
        assert "\n" not in message and message.startswith(f"postgres shard 2 of 2 (127.0.0.1:{pg_cluster[1].port}")
        with pytest.raises(ShardError, match="shard 2 of 2"):
            backend.lexical_search(TERMS, 5)
    finally:
        start_node(pg_cluster[1])
    try:
        assert backend.lexical_search(TERMS, 5) == answer  # reconnected; nothing lost
        assert PostgresBackend(pg_spec).generation == 1
        assert publish(changed, pg_spec).generation == 2
    finally:
        backend.close()


def test_another_model_or_layout_is_refused(fixture_corpus: Path, tmp_path: Path, pg_spec: str):
    publish(build(fixture_corpus, tmp_path / "index"), pg_spec)
    other = build(fixture_corpus, tmp_path / "other", KeywordEmbedder(model_id="another-model"))
    with pytest.raises(IndexMismatchError, match="rebuild"):
        publish(other, pg_spec)
    assert publish(other, pg_spec, rebuild=True).generation == 1
    first = pg_spec.split(",")[0]
    with pytest.raises(IndexMismatchError, match="shard 1 of 1 was made as shard 1 of 2"):
        PostgresBackend(first)
    swapped = ",".join(reversed(pg_spec.split(",")))
    with pytest.raises(IndexMismatchError):
        PostgresBackend(swapped)
    shutil.rmtree(tmp_path / "other")
