"""Streaming replicas of a shard (``?replica=HOST:PORT``): reads spread over them, writes to the primary."""

from __future__ import annotations

import json
import shutil
import socket
from collections import Counter
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.index.builder import update_index
from citeqa.index.store import IndexData, load_index
from citeqa.pg.shards import split_replicas
from tests.answers import answer_records

pytestmark = pytest.mark.postgres


def test_replica_urls_share_the_primary_user_and_database():
    primary, replicas = split_replicas("postgresql://u:pw@h1:5432/db?sslmode=disable&replica=h2:6000&replica=h3:6001")
    assert primary == "postgresql://u:pw@h1:5432/db?sslmode=disable"
    assert replicas == ("postgresql://u:pw@h2:6000/db?sslmode=disable", "postgresql://u:pw@h3:6001/db?sslmode=disable")
    assert split_replicas("postgresql://h1/db") == ("postgresql://h1/db", ())


def test_a_replica_answers_as_its_primary_and_follows_a_new_generation(
    corpus_index: tuple[Path, IndexData], pg_cluster, pg_spec: str, repo: Path, data_dir: Path, monkeypatch
):
    """One replica of shard 1 (``pg_basebackup -R``): an engine whose URL lists it reads shard 1's
    records and searches from it, not the primary, and answers record for record as an engine on the
    primaries; a generation published later is read from it once replayed; nothing is left behind."""
    from citeqa.engine import Engine
    from citeqa.pg.nodes import local_replica
    from citeqa.pg.publish import publish
    from citeqa.pg.shards import Shard

    folder, local = corpus_index
    rows = (repo / "eval" / "qa.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in rows[:24:3]]
    publish(local, pg_spec)
    used: Counter[int] = Counter()  # connections asked for, by node object
    connection = Shard.connection

    def counted(self, doing, *rest):
        used[id(self)] += 1
        return connection(self, doing, *rest)

    monkeypatch.setattr(Shard, "connection", counted)
    with local_replica(pg_cluster[0]) as replica:
        first, second = pg_spec.split(",")
        spec = f"{first}?replica=127.0.0.1:{replica.port},{second}"
        on_primaries = Engine.open(folder / "absent", embedder=KeywordEmbedder(), reader="off", backend=pg_spec)
        on_replica = Engine.open(folder / "absent", embedder=KeywordEmbedder(), reader="off", backend=spec)
        shard = on_replica._data.shards.items[0]
        try:
            assert [r.name for r in shard.readers] == [f"shard 1 of 2 replica (127.0.0.1:{replica.port}/citeqa)"]
            used.clear()
            assert answer_records(on_replica, questions) == answer_records(on_primaries, questions)
            assert used[id(shard.readers[0])] > 0 and used[id(shard)] == 0  # shard 1's primary: not read
            # a new generation (two more documents) on the primaries: read from the replica once replayed
            shutil.copytree(data_dir / "corpus", folder / "corpus" / "fixture")
            update_index(folder / "corpus", folder / "index", KeywordEmbedder())
            publish(load_index(folder / "index"), pg_spec)
            on_primaries, on_replica = on_primaries.reload(), on_replica.reload()
            shard = on_replica._data.shards.items[0]
            assert on_replica._data.generation == on_primaries._data.generation and len(shard.readers) == 1
            used.clear()
            assert answer_records(on_replica, questions) == answer_records(on_primaries, questions)
            assert used[id(shard.readers[0])] > 0 and used[id(shard)] == 0  # shard 1's primary: not read
        finally:
            on_primaries._data.close(), on_replica._data.close()
    assert not replica.folder.exists()
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", replica.port)) != 0  # stopped


def test_a_killed_replica_is_skipped_and_the_answers_do_not_change(
    corpus_index: tuple[Path, IndexData], pg_cluster, pg_spec: str, repo: Path, monkeypatch
):
    """Two replicas of shard 1; one is stopped (``pg_ctl stop -m immediate``) in the middle of a series
    of questions: every answer is the record it was before, read from the other replica (not the
    primary) without one connection attempt per query to the dead one; with the other shut down
    cleanly too, from the primary; a replica back after its back-off is read again; with every server of shard 1 down,
    one ShardError naming it; nothing is lost."""
    from citeqa.engine import Engine
    from citeqa.errors import ShardError
    from citeqa.pg.nodes import local_replica, start_node, stop_node
    from citeqa.pg.publish import publish
    from citeqa.pg.shards import RETRY_MAX_S, Shard

    folder, local = corpus_index
    rows = (repo / "eval" / "qa.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in rows[:30:3]]
    publish(local, pg_spec)
    attempts: Counter[int] = Counter()  # connections tried, by node object
    used: Counter[int] = Counter()  # connections asked for, by node object
    connect, connection = Shard._connect, Shard.connection

    def counted_connect(self, *rest):
        attempts[id(self)] += 1
        return connect(self, *rest)

    def counted(self, doing, *rest):
        used[id(self)] += 1
        return connection(self, doing, *rest)

    monkeypatch.setattr(Shard, "_connect", counted_connect)
    monkeypatch.setattr(Shard, "connection", counted)
    first, second = pg_spec.split(",")
    on_primaries = Engine.open(folder / "absent", embedder=KeywordEmbedder(), reader="off", backend=pg_spec)
    before = answer_records(on_primaries, questions)
    on_primaries._data.close()
    with local_replica(pg_cluster[0]) as one, local_replica(pg_cluster[0]) as two:
        spec = f"{first}?replica=127.0.0.1:{one.port}&replica=127.0.0.1:{two.port},{second}"
        engine = Engine.open(folder / "absent", embedder=KeywordEmbedder(), reader="off", backend=spec)
        shard = engine._data.shards.items[0]
        dead, alive = shard.readers
        try:
            assert [r.port for r in (one, two)] == [int(r.name.split(":")[1].split("/")[0]) for r in (dead, alive)]
            assert answer_records(engine, questions[:3]) == before[:3]
            assert used[id(dead)] > 0 and used[id(alive)] > 0  # both open, in turn
            stop_node(one, mode="immediate")
            attempts.clear(), used.clear()
            assert answer_records(engine, questions[3:]) == before[3:]  # the dead one's open connection broke
            assert answer_records(engine, questions) == before
            assert dead.misses == 1 and attempts[id(dead)] == 0  # skipped, not tried per query
            assert used[id(alive)] > 0 and used[id(shard)] == 0  # read from the other replica
            stop_node(two)  # a clean shutdown this time: the server closes its connections
            attempts.clear(), used.clear()
            assert answer_records(engine, questions) == before
            assert attempts[id(dead)] == attempts[id(alive)] == 0 and used[id(shard)] > 0  # the primary
            start_node(one)
            dead.down_until -= RETRY_MAX_S  # its back-off is over
            attempts.clear(), used.clear()
            assert answer_records(engine, questions) == before
            assert attempts[id(dead)] == 1 and dead.misses == 0 and used[id(shard)] == 0  # read again
            stop_node(one, mode="immediate")
            stop_node(pg_cluster[0], mode="immediate")
            try:
                with pytest.raises(ShardError) as failed:
                    engine.ask(questions[0])
                message = str(failed.value)
                assert "\n" not in message
                assert message.startswith(f"postgres shard 1 of 2 (127.0.0.1:{pg_cluster[0].port}/citeqa) failed")
            finally:
                start_node(pg_cluster[0])
            assert answer_records(engine, questions) == before  # nothing lost
        finally:
            engine._data.close()
