"""Shard URLs, the document-to-shard rule and the shape of a shard's error (no server needed)."""

from __future__ import annotations

import pytest

from citeqa.errors import CiteqaError, ConfigError, ShardError
from citeqa.pg.nodes import free_port
from citeqa.pg.shards import (
    CONNECT_TIMEOUT_S,
    TCP_TIMEOUT_MS,
    Shards,
    connect_options,
    is_postgres,
    label,
    shard_of,
    shard_urls,
    split_replicas,
)


def test_backend_values():
    assert is_postgres("postgresql://h/db") and is_postgres("postgres://h/db") and not is_postgres("index")
    assert shard_urls(" postgresql://a/db , postgres://b:6000/db,") == ("postgresql://a/db", "postgres://b:6000/db")
    with pytest.raises(ConfigError):
        shard_urls("postgresql://a/db,http://b/db")
    assert label("postgresql://user:secret@db1:6543/citeqa") == "db1:6543/citeqa"


def test_documents_spread_over_shards_stably():
    ids = [f"doc{i}.txt" for i in range(200)]
    counts = [sum(shard_of(d, 3) == s for d in ids) for s in range(3)]
    assert min(counts) > 40
    assert [shard_of(d, 2) for d in ("faro.txt", "mill.html", "nested/farol.md")] == [0, 1, 1]  # crc32: fixed


def test_an_unreachable_shard_is_one_line_naming_it():
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    port = free_port()
    shards = Shards(f"postgresql://citeqa:secret@127.0.0.1:{port}/citeqa")
    with pytest.raises(ShardError) as failed, shards.catalogue.connection("reading the catalogue"):
        pass
    message = str(failed.value)
    assert isinstance(failed.value, CiteqaError) and "\n" not in message and "secret" not in message
    assert message.startswith(f"postgres shard 1 of 1 (127.0.0.1:{port}/citeqa) failed while reading the catalogue:")
    shards.close()


def test_server_settings_in_the_url_say_how_to_write_them():
    """libpq refuses ``?statement_timeout=`` and an unencoded ``=`` in a value: one line saying the
    form it takes, never the password."""
    with pytest.raises(ConfigError, match=r"write \?options=-c%20statement_timeout%3D5s") as failed:
        shard_urls("postgresql://u:secret@h/db?statement_timeout=5s")
    assert "secret" not in str(failed.value)
    with pytest.raises(ConfigError, match="unencoded '='"):
        shard_urls("postgresql://h/db,postgresql://h2/db?options=-c%20statement_timeout=5s")
    fine = "postgresql://h/db?options=-c%20statement_timeout%3D5s&sslmode=disable"
    assert shard_urls(fine) == (fine,)


def test_replicas_leave_the_other_parameters_as_written():
    """``replica=`` is taken out; ``options``' %20 and %3D stay (re-encoded, a space would become a
    ``+``, which libpq passes to the server as it is)."""
    options = "options=-c%20statement_timeout%3D5s"
    primary, replicas = split_replicas(f"postgresql://u@h1:5432/db?{options}&replica=h2%3A6000&sslmode=disable")
    assert primary == f"postgresql://u@h1:5432/db?{options}&sslmode=disable"
    assert replicas == (f"postgresql://u@h2:6000/db?{options}&sslmode=disable",)


def test_connect_timeouts_fill_in_only_what_the_connection_left_open():
    defaults = {"connect_timeout": CONNECT_TIMEOUT_S, "tcp_user_timeout": TCP_TIMEOUT_MS}
    assert connect_options("postgresql://h/db", {}) == defaults
    assert connect_options("postgresql://h/db?connect_timeout=2", {}) == {"tcp_user_timeout": TCP_TIMEOUT_MS}
    assert connect_options("postgresql://h/db?sslmode=disable&tcp_user_timeout=0", {}) == {
        "connect_timeout": CONNECT_TIMEOUT_S
    }
    assert connect_options("postgresql://h/db", {"PGCONNECT_TIMEOUT": "9"}) == {"tcp_user_timeout": TCP_TIMEOUT_MS}
    assert connect_options("postgresql://h/db", {"PGCONNECT_TIMEOUT": ""}) == defaults
