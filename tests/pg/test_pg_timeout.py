"""The statement timeout of a backend's connections: 30 s unless the connection chose its own, and
a statement that runs past it is one ShardError, not a hung question."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from citeqa.errors import QuestionTimeoutError, ShardError
from citeqa.index.store import IndexData
from citeqa.pg.backend import STATEMENT_TIMEOUT_S, PostgresBackend
from citeqa.pg.publish import publish
from citeqa.pg.shards import CONNECT_TIMEOUT_S, KEEPALIVE_IDLE_S, TCP_TIMEOUT_MS
from citeqa.qa.backend import question_deadline

pytestmark = pytest.mark.postgres

SHOW = "SHOW statement_timeout"


def _with_options(spec: str, options: str) -> str:
    """Every shard URL of ``spec`` with ``?options=`` (percent-encoded, as libpq reads URLs)."""
    return ",".join(f"{url}?options={options}" for url in spec.split(","))


def _timeouts(backend: PostgresBackend) -> list[str]:
    return [
        shard.read("reading the timeout", lambda c: c.execute(SHOW).fetchone()[0]) for shard in backend.shards.items
    ]


def test_the_default_applies_where_the_connection_chose_none(corpus_index: tuple[Path, IndexData], pg_spec: str):
    publish(corpus_index[1], pg_spec)
    backend = PostgresBackend(pg_spec)
    try:
        assert _timeouts(backend) == [f"{STATEMENT_TIMEOUT_S}s"] * 2
    finally:
        backend.close()


def test_a_timeout_in_the_url_options_is_kept(corpus_index: tuple[Path, IndexData], pg_spec: str):
    publish(corpus_index[1], pg_spec)
    backend = PostgresBackend(_with_options(pg_spec, "-c%20statement_timeout%3D7s"))
    try:
        assert _timeouts(backend) == ["7s"] * 2
    finally:
        backend.close()


def test_a_timeout_set_for_the_role_is_kept(corpus_index: tuple[Path, IndexData], pg_spec: str, pg_cluster):
    import psycopg

    publish(corpus_index[1], pg_spec)
    first = pg_cluster[0].url
    with psycopg.connect(first, autocommit=True) as conn:
        conn.execute("ALTER ROLE CURRENT_USER SET statement_timeout = '9s'")
    try:
        backend = PostgresBackend(pg_spec)
        try:
            assert _timeouts(backend) == ["9s", f"{STATEMENT_TIMEOUT_S}s"]  # the role's on node 1 only
        finally:
            backend.close()
    finally:
        with psycopg.connect(first, autocommit=True) as conn:
            conn.execute("ALTER ROLE CURRENT_USER RESET statement_timeout")


def test_a_statement_past_the_timeout_is_one_shard_error(corpus_index: tuple[Path, IndexData], pg_spec: str):
    """On a primary a cancelled statement is not run again: one line naming the shard."""
    publish(corpus_index[1], pg_spec)
    backend = PostgresBackend(_with_options(pg_spec, "-c%20statement_timeout%3D100ms"))
    try:
        shard = backend.shards.items[0]
        with pytest.raises(ShardError) as failed:
            shard.read("sleeping", lambda c: c.execute("SELECT pg_sleep(5)"))
        message = str(failed.value)
        assert "\n" not in message and message.startswith("postgres shard 1 of 2 (") and "statement timeout" in message
        assert (
            shard.read("checking", lambda c: c.execute("SELECT 1").fetchone()[0]) == 1
        )  # the next read connects again
    finally:
        backend.close()


def test_connect_timeouts_in_the_url_are_kept(corpus_index: tuple[Path, IndexData], pg_spec: str):
    """``?connect_timeout=``, ``?tcp_user_timeout=`` and ``?keepalives_idle=`` reach libpq; where
    absent, citeqa's own apply."""
    publish(corpus_index[1], pg_spec)
    chosen = ",".join(f"{url}?connect_timeout=2&tcp_user_timeout=7000&keepalives_idle=60" for url in pg_spec.split(","))
    defaults = (str(CONNECT_TIMEOUT_S), str(TCP_TIMEOUT_MS), str(KEEPALIVE_IDLE_S))
    for spec, expected in ((pg_spec, defaults), (chosen, ("2", "7000", "60"))):
        backend = PostgresBackend(spec)
        try:
            for shard in backend.shards.items:
                params = shard.read("reading the parameters", lambda c: c.info.get_parameters())
                assert (params["connect_timeout"], params["tcp_user_timeout"], params["keepalives_idle"]) == expected
                assert params["keepalives"] == "1"
        finally:
            backend.close()


# --- a time limit per question (citeqa.qa.backend.question_deadline) --------------------------------

SETTING = "SELECT setting FROM pg_settings WHERE name = 'statement_timeout'"  # in ms, 0: none


def _settings(backend: PostgresBackend) -> list[int]:
    return [
        int(shard.read("reading the timeout", lambda c: c.execute(SETTING).fetchone()[0]))
        for shard in backend.shards.items
    ]


def test_a_read_inside_a_question_gets_what_the_question_has_left(corpus_index: tuple[Path, IndexData], pg_spec: str):
    publish(corpus_index[1], pg_spec)
    backend = PostgresBackend(pg_spec)
    try:
        with question_deadline(10):
            inside = _settings(backend)
        assert all(0 < ms <= 10_000 for ms in inside)
        assert _settings(backend) == [STATEMENT_TIMEOUT_S * 1000] * 2  # for that transaction only
    finally:
        backend.close()


def test_a_shorter_timeout_of_the_connection_is_kept_inside_a_question(
    corpus_index: tuple[Path, IndexData], pg_spec: str
):
    publish(corpus_index[1], pg_spec)
    backend = PostgresBackend(_with_options(pg_spec, "-c%20statement_timeout%3D7s"))
    try:
        with question_deadline(60):
            assert _settings(backend) == [7000] * 2
    finally:
        backend.close()


def test_a_question_past_its_limit_is_one_error_naming_the_shard(corpus_index: tuple[Path, IndexData], pg_spec: str):
    """The server cancels the statement when the question's time is out; the connection stays usable."""
    publish(corpus_index[1], pg_spec)
    backend = PostgresBackend(pg_spec)
    try:
        shard = backend.shards.items[0]
        with question_deadline(0.2), pytest.raises(QuestionTimeoutError) as failed:
            shard.read("sleeping", lambda c: c.execute("SELECT pg_sleep(5)"))
        message = str(failed.value)
        assert "\n" not in message
        assert message.startswith("the question ran past its 0.2 s limit while postgres shard 1 of 2 (127.0.0.1:")
        assert "was sleeping" in message and "--question-timeout" in message
        assert shard.read("checking", lambda c: c.execute("SELECT 1").fetchone()[0]) == 1
    finally:
        backend.close()


def test_a_search_begun_after_the_deadline_fails_on_the_shards_it_fans_out_to(
    corpus_index: tuple[Path, IndexData], pg_spec: str
):
    """The fan-out threads see the caller's deadline (each runs in a copy of its context)."""
    publish(corpus_index[1], pg_spec)
    backend = PostgresBackend(pg_spec)
    try:
        vector = np.zeros(backend.manifest.dimension, dtype=np.float32)
        vector[0] = 1.0
        assert backend.dense_search(vector, 3)
        with question_deadline(0), pytest.raises(QuestionTimeoutError, match="was searching vectors"):
            backend.dense_search(vector, 3)
        assert backend.dense_search(vector, 3)
    finally:
        backend.close()


def test_an_engine_bounds_each_question_and_keeps_its_limit_across_copies(
    corpus_index: tuple[Path, IndexData], pg_spec: str, tmp_path: Path
):
    from citeqa.embedding.keyword import KeywordEmbedder
    from citeqa.engine import QUESTION_TIMEOUT_S, Engine

    publish(corpus_index[1], pg_spec)
    question = "¿En qué año se construyó el faro de Punta Brava?"
    absent = tmp_path / "absent"
    engine = Engine.open(absent, embedder=KeywordEmbedder(), reader="off", backend=pg_spec)
    hurried = Engine.open(absent, embedder=KeywordEmbedder(), reader="off", backend=pg_spec, question_timeout_s=1e-9)
    assert engine.question_timeout_s == QUESTION_TIMEOUT_S
    before = engine.ask(question)
    with pytest.raises(QuestionTimeoutError):
        hurried.check("El faro de Punta Brava se construyó en 1887.")
    for make in (lambda: hurried, hurried.adjusted, hurried.without_reader, hurried.reload):  # reload closes: last
        copy = make()
        assert copy.question_timeout_s == 1e-9
        with pytest.raises(QuestionTimeoutError):
            copy.ask(question)
    assert replace(engine.ask(question), latency_ms=0) == replace(before, latency_ms=0)
