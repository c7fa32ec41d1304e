"""The statement timeout of a backend's connections: 30 s unless the connection chose its own, and
a statement that runs past it is one ShardError, not a hung question."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.errors import ShardError
from citeqa.index.store import IndexData
from citeqa.pg.backend import STATEMENT_TIMEOUT_S, PostgresBackend
from citeqa.pg.publish import publish
from citeqa.pg.shards import CONNECT_TIMEOUT_S, TCP_TIMEOUT_MS

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
    """``?connect_timeout=`` and ``?tcp_user_timeout=`` reach libpq; where absent, citeqa's own apply."""
    publish(corpus_index[1], pg_spec)
    chosen = ",".join(f"{url}?connect_timeout=2&tcp_user_timeout=7000" for url in pg_spec.split(","))
    for spec, expected in ((pg_spec, (str(CONNECT_TIMEOUT_S), str(TCP_TIMEOUT_MS))), (chosen, ("2", "7000"))):
        backend = PostgresBackend(spec)
        try:
            for shard in backend.shards.items:
                params = shard.read("reading the parameters", lambda c: c.info.get_parameters())
                assert (params["connect_timeout"], params["tcp_user_timeout"]) == expected
        finally:
            backend.close()
