"""Shard URLs, the document-to-shard rule and the shape of a shard's error (no server needed)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from citeqa.errors import CiteqaError, ConfigError, QuestionTimeoutError, ShardError
from citeqa.pg.deadline import NoAnswer, Watchdog, connect_until
from citeqa.pg.nodes import free_port
from citeqa.pg.shards import (
    CONNECT_DEFAULTS,
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
from citeqa.qa.backend import question_deadline


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
    defaults = dict(CONNECT_DEFAULTS)
    assert defaults["connect_timeout"] == CONNECT_TIMEOUT_S and defaults["tcp_user_timeout"] == TCP_TIMEOUT_MS
    assert defaults["keepalives"] == 1
    assert connect_options("postgresql://h/db", {}) == defaults
    assert "connect_timeout" not in connect_options("postgresql://h/db?connect_timeout=2", {})
    chosen = connect_options("postgresql://h/db?sslmode=disable&tcp_user_timeout=0&keepalives_idle=60", {})
    assert chosen == {k: v for k, v in defaults.items() if k not in ("tcp_user_timeout", "keepalives_idle")}
    assert "connect_timeout" not in connect_options("postgresql://h/db", {"PGCONNECT_TIMEOUT": "9"})
    assert connect_options("postgresql://h/db", {"PGCONNECT_TIMEOUT": ""}) == defaults


# --- the client's own bounds inside a question (no server: a socket that never answers) -------------


class _Silent:
    """A connection-like end of a socket pair whose other end never writes: a stopped server."""

    def __init__(self) -> None:
        self.mine, self.theirs = socket.socketpair()

    def fileno(self) -> int:
        return self.mine.fileno()

    def read(self) -> bytes:
        data = self.mine.recv(1)
        if not data:
            raise OSError("end of file: the connection was dropped")
        return data

    def close(self) -> None:
        self.mine.close()
        self.theirs.close()


def test_the_watchdog_ends_a_wait_on_a_silent_connection():
    """A read blocked on a socket that never answers ends once its time is out: the watchdog shuts
    the socket down, the read gets end of file, and the block raises NoAnswer; a block that ends in
    time is not touched, and its socket stays usable."""
    watchdog = Watchdog()
    silent = _Silent()
    try:
        with pytest.raises(NoAnswer), watchdog.watch(silent, time.monotonic() + 0.1):
            silent.read()  # without the watchdog: blocks for ever
    finally:
        silent.close()
    quick = _Silent()
    try:
        with watchdog.watch(quick, time.monotonic() + 60):
            quick.theirs.send(b"x")
            assert quick.read() == b"x"
        quick.theirs.send(b"y")
        assert quick.read() == b"y"  # not shut down
    finally:
        quick.close()


def test_a_connection_attempt_is_given_up_at_the_end_and_closed_when_it_comes():
    arrived, release = threading.Event(), threading.Event()
    made: list[_Silent] = []

    def slow_connect() -> _Silent:
        release.wait(30)
        made.append(_Silent())
        arrived.set()
        return made[-1]

    with pytest.raises(NoAnswer):
        connect_until(slow_connect, time.monotonic() + 0.05)
    release.set()
    assert arrived.wait(30)
    with pytest.raises(OSError):
        made[0].mine.recv(1)  # closed by connect_until, not leaked
    fine = _Silent()
    try:
        assert connect_until(lambda: fine, time.monotonic() + 30) is fine
        with pytest.raises(ZeroDivisionError):
            connect_until(lambda: 1 / 0, time.monotonic() + 30)
    finally:
        fine.close()


def test_shards_are_queried_at_once_and_waited_for_no_longer_than_the_question():
    """Every shard's work runs on its own thread at the same time (a barrier that all must reach
    together); inside a question, a shard whose work does not end is one QuestionTimeoutError naming
    it, not a wait for ever."""
    shards = Shards("postgresql://h1/db,postgresql://h2/db,postgresql://h3/db")
    together = threading.Barrier(3, timeout=30)
    assert shards.each(lambda s: (together.wait(), s.number)[1]) == [0, 1, 2]
    stuck = threading.Event()
    try:
        with question_deadline(0.1), pytest.raises(QuestionTimeoutError) as failed:
            shards.each(lambda s: stuck.wait(60) if s.number == 1 else s.number)
        assert "postgres shard 2 of 3 (h2:5432/db) was " in str(failed.value)  # answering, or not yet started
    finally:
        stuck.set()
        shards.close()
