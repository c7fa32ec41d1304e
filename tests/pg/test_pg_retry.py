"""Errors from a live server (``Shard.read``): transient ones move the read on or run it once more,
others are raised at once. Each is provoked for real on the test cluster, inside citeqa's own
connection (a hook on ``Shard.connection`` runs the provoking statement before the read's)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.index.store import IndexData
from citeqa.pg.shards import is_transient
from tests.answers import answer_records

pytestmark = pytest.mark.postgres

#: A real server error with the SQLSTATE of a recovery conflict / a deadlock (hard to cause on demand).
RAISE = "DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '{0}', MESSAGE = 'canceling statement due to conflict with recovery'; END $$"

ACTIVE = "SELECT count(*) FROM pg_stat_activity WHERE pid = %s AND state = 'active' AND query LIKE '%%pg_sleep%%'"


def test_which_driver_errors_are_transient():
    """psycopg's own classes, by SQLSTATE: recovery conflicts, shutdowns and cancels are; a syntax
    error, an undefined table or a refused permission is not, unless the connection broke."""
    errors = pytest.importorskip("psycopg.errors")
    for sqlstate in ("40001", "40P01", "57014", "57P01", "57P02", "57P03"):
        assert is_transient(errors.lookup(sqlstate)(), lost=False), sqlstate
    for cls in (errors.SyntaxError, errors.UndefinedTable, errors.InsufficientPrivilege, errors.DivisionByZero):
        assert not is_transient(cls(), lost=False) and is_transient(cls(), lost=True)
    assert not is_transient(errors.OperationalError("no sqlstate"), lost=False)


def _provoke(conn, url: str, fault: str) -> None:
    """Make the server fail ``fault`` on ``conn``, for real."""
    import psycopg

    if fault == "timeout":
        conn.execute("SET statement_timeout = '50ms'")
        conn.execute("SELECT pg_sleep(3)")
    elif fault in ("cancel", "terminate"):  # from a second connection while a statement runs
        pid = conn.info.backend_pid

        def kill() -> None:
            with psycopg.connect(url, autocommit=True) as other:
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and not other.execute(ACTIVE, (pid,)).fetchone()[0]:
                    time.sleep(0.01)  # until its pg_sleep runs (else the test's pg_sleep just ends: it fails)
                other.execute(f"SELECT pg_{fault}_backend(%s)", (pid,))

        threading.Thread(target=kill, daemon=True).start()
        conn.execute("SELECT pg_sleep(10)")
    elif fault == "undefined":
        conn.execute("SELECT * FROM citeqa_no_such_table")
    else:
        conn.execute(RAISE.format(fault))
    raise AssertionError(f"{fault} did not fail")


def test_live_server_errors_are_retried_or_raised(
    corpus_index: tuple[Path, IndexData], pg_cluster, pg_spec: str, repo: Path, monkeypatch
):
    """One replica of shard 1. A statement timeout, a cancel, a terminated backend, a recovery
    conflict (40001) and a deadlock (40P01) on the replica: the question is answered as before, from
    the primary, and the replica is skipped for a back-off. On a primary without replicas a
    terminated backend or a 40P01 is run once more (same answer), twice in a row is one ShardError,
    and a cancelled statement is not run again. An undefined table fails at once, naming the server,
    on the replica (the primary never asked) and on the primary (once)."""
    from citeqa.engine import Engine
    from citeqa.errors import ShardError
    from citeqa.pg.nodes import local_replica
    from citeqa.pg.publish import publish
    from citeqa.pg.shards import Shard

    folder, local = corpus_index
    rows = (repo / "eval" / "qa.jsonl").read_text(encoding="utf-8").splitlines()
    question = json.loads(rows[0])["question"]
    publish(local, pg_spec)
    used: Counter[int] = Counter()  # connections asked for, by node object
    faults: dict[int, list[str]] = {}  # node object: faults for its next uses, one each
    connection = Shard.connection

    @contextlib.contextmanager
    def hooked(self, doing, *rest):
        used[id(self)] += 1
        with connection(self, doing, *rest) as conn:
            if faults.get(id(self)):
                _provoke(conn, self.url, faults[id(self)].pop(0))
            yield conn

    monkeypatch.setattr(Shard, "connection", hooked)
    first, second = pg_spec.split(",")
    on_primaries = Engine.open(folder / "absent", embedder=KeywordEmbedder(), reader="off", backend=pg_spec)
    before = answer_records(on_primaries, [question])
    with local_replica(pg_cluster[0]) as node:
        spec = f"{first}?replica=127.0.0.1:{node.port},{second}"
        engine = Engine.open(folder / "absent", embedder=KeywordEmbedder(), reader="off", backend=spec)
        shard = engine._data.shards.items[0]
        (replica,) = shard.readers
        try:
            for fault in ("timeout", "cancel", "terminate", "40001", "40P01"):
                replica.down_until, replica.misses = 0.0, 0
                faults[id(replica)] = [fault]
                used.clear()
                assert answer_records(engine, [question]) == before, fault
                assert not faults[id(replica)] and replica.misses == 1 and used[id(shard)] > 0, fault
            replica.down_until, replica.misses = 0.0, 0
            faults[id(replica)] = ["undefined"]
            used.clear()
            with pytest.raises(ShardError) as failed:
                engine.ask(question)
            assert str(failed.value).startswith(f"postgres shard 1 of 2 replica (127.0.0.1:{node.port}/citeqa) failed")
            assert "citeqa_no_such_table" in str(failed.value) and "\n" not in str(failed.value)
            assert used[id(shard)] == 0 and replica.misses == 0  # not retried, not skipped
            assert answer_records(engine, [question]) == before
        finally:
            engine._data.close()
    primary = on_primaries._data.shards.items[0]
    try:
        for fault in ("terminate", "40P01"):
            faults[id(primary)] = [fault]
            used.clear()
            assert answer_records(on_primaries, [question]) == before, fault
            assert not faults[id(primary)]
        for faulty in (["cancel"], ["40001", "40001"], ["undefined"]):
            faults[id(primary)] = list(faulty)
            with pytest.raises(ShardError) as failed:
                on_primaries.ask(question)
            message = str(failed.value)
            assert message.startswith(f"postgres shard 1 of 2 (127.0.0.1:{pg_cluster[0].port}/citeqa) failed"), faulty
            assert not faults[id(primary)], faulty  # each fault used: one try, or one retry for 40001
        assert answer_records(on_primaries, [question]) == before  # the connection is usable again
    finally:
        on_primaries._data.close()
