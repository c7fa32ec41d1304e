"""A node that hangs (SIGSTOP: alive, holding its connections, answering nothing) ends a question at
its time limit, not never: the client stops waiting on its own, since such a server answers
neither the statement timeout nor a cancel request. Each question runs on a thread joined with a
generous bound, so that the code before fails the test instead of hanging it; how long a question
takes is measured by bench/pg_hung.py, not asserted here."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.index.store import IndexData
from tests.answers import answer_records

pytestmark = pytest.mark.postgres

#: The question's limit, and how much longer a question may take before the test calls it hung
#: (a generous bound: the machine may be loaded; the fix ends it half a second after its limit).
LIMIT_S = 2.0
BOUND_S = LIMIT_S + 20.0


def _finishes(call: Callable[[], Any]) -> tuple[bool, Any]:
    """``call()`` on a thread: whether it ended within BOUND_S, and its result or the error it raised."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as exc:  # the question's error is the outcome under test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND_S)
    return not thread.is_alive(), outcome[0] if outcome else None


def _questions(repo: Path, count: int) -> list[str]:
    rows = (repo / "eval" / "qa.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in rows[: count * 3 : 3]]


def test_a_hung_shard_ends_the_question_at_its_limit_with_one_line(
    corpus_index: tuple[Path, IndexData], pg_cluster, pg_spec: str, repo: Path
):
    """Shard 2 stopped while the engine holds a connection to it: the question ends with one line
    naming shard 2 (its open connection dropped), and so does the next one (a new connection to the
    stopped server); continued, the node answers as before."""
    from citeqa.engine import Engine
    from citeqa.errors import QuestionTimeoutError
    from citeqa.pg.nodes import paused
    from citeqa.pg.publish import publish

    folder, local = corpus_index
    questions = _questions(repo, 2)
    publish(local, pg_spec)
    engine = Engine.open(
        folder / "absent", embedder=KeywordEmbedder(), reader="off", backend=pg_spec, question_timeout_s=LIMIT_S
    )
    try:
        before = answer_records(engine, questions)
        hung = pg_cluster[1]
        with paused(hung):
            for question in questions:  # the open connection, then a new one
                finished, outcome = _finishes(lambda q=question: engine.ask(q))
                assert finished, f"no answer or error after {BOUND_S} s with shard 2 stopped"
                assert isinstance(outcome, QuestionTimeoutError), outcome
                message = str(outcome)
                assert "\n" not in message
                assert message.startswith(
                    f"the question ran past its {LIMIT_S:g} s limit while postgres shard 2 of 2 "
                    f"(127.0.0.1:{hung.port}/citeqa) was "
                )
        assert answer_records(engine, questions) == before
    finally:
        engine._data.close()


def test_a_hung_replica_is_given_up_and_the_primary_answers(
    corpus_index: tuple[Path, IndexData], pg_cluster, pg_spec: str, repo: Path
):
    """A replica of shard 1 stopped while it is read from: the question is answered as before, from
    the primary, once the replica's share of the question's time is out; the replica is then skipped
    like one that failed, and continued it takes its turn again after its back-off."""
    from citeqa.engine import Engine
    from citeqa.pg.nodes import local_replica, paused
    from citeqa.pg.publish import publish
    from citeqa.pg.shards import RETRY_MAX_S

    folder, local = corpus_index
    questions = _questions(repo, 3)
    publish(local, pg_spec)
    on_primaries = Engine.open(folder / "absent", embedder=KeywordEmbedder(), reader="off", backend=pg_spec)
    try:
        before = answer_records(on_primaries, questions)
    finally:
        on_primaries._data.close()
    first, second = pg_spec.split(",")
    with local_replica(pg_cluster[0]) as node:
        spec = f"{first}?replica=127.0.0.1:{node.port},{second}"
        engine = Engine.open(
            folder / "absent", embedder=KeywordEmbedder(), reader="off", backend=spec, question_timeout_s=LIMIT_S
        )
        (replica,) = engine._data.shards.items[0].readers
        try:
            assert answer_records(engine, questions[:1]) == before[:1] and replica.misses == 0
            with paused(node):
                finished, outcome = _finishes(lambda: answer_records(engine, questions))
                assert finished, f"no answer after {BOUND_S} s with shard 1's replica stopped"
                assert outcome == before
                assert replica.misses == 1  # given up once, then skipped
            replica.down_until -= RETRY_MAX_S  # its back-off is over
            assert answer_records(engine, questions) == before
            assert replica.misses == 0  # connected again
        finally:
            engine._data.close()
