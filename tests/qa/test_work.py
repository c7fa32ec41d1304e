"""The order of concurrent questions' model calls (qa/work.py): who goes next, never how long it takes.

Every test holds the one lane with a call of its own, lines the others up behind it, waits until
the queue reports them all waiting, then frees the lane and reads the order they were let in.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.qa.work import WorkPolicy, WorkQueue

#: How long a test waits for threads to line up before it fails (never reached when it passes).
PATIENCE_S = 30.0


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("the threads did not line up")
        time.sleep(0.005)


class _Lined:
    """Calls lined up behind a held lane, each recording its name when let in."""

    def __init__(self, queue: WorkQueue, check_holds: bool = False) -> None:
        self.queue = queue
        self.check_holds = check_holds  # the lane is held by a claim check's call
        self.order: list[str] = []
        self.threads: list[threading.Thread] = []
        self._release = threading.Event()
        self._holder = threading.Thread(target=self._hold, daemon=True)
        self._holder.start()
        _wait_until(lambda: queue.running() == 1)

    def _hold(self) -> None:
        with self.queue.ticket(after_questions=self.check_holds).turn(1):
            self._release.wait(PATIENCE_S)

    def add(self, name: str, spent: int, cost: int, check: bool = False) -> None:
        """A question (a claim ``check``) that has already used ``spent`` tokens, waiting for a call of ``cost``."""
        ticket = self.queue.ticket(after_questions=check)
        ticket.spent = spent

        def call() -> None:
            with ticket.turn(cost):
                self.order.append(name)

        waiting = self.queue.waiting()
        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        self.threads.append(thread)
        _wait_until(lambda: self.queue.waiting() == waiting + 1)  # in line before the next one comes

    def run(self) -> list[str]:
        self._release.set()
        for thread in [self._holder, *self.threads]:
            thread.join(PATIENCE_S)
        return self.order


def test_a_normal_question_goes_before_six_expensive_ones_that_came_first() -> None:
    lined = _Lined(WorkQueue(WorkPolicy(lanes=1)))
    for n in range(6):  # six worst-case questions, embedded, waiting to be read
        lined.add(f"worst{n}", spent=96, cost=2048)
    lined.add("normal", spent=0, cost=20)  # a normal question's embedding
    assert lined.run() == ["normal", *(f"worst{n}" for n in range(6))]


def test_a_short_embedding_goes_before_a_long_one_and_equals_go_in_arrival_order() -> None:
    lined = _Lined(WorkQueue())
    lined.add("long embedding", spent=0, cost=96)
    lined.add("first normal", spent=0, cost=20)
    lined.add("second normal", spent=0, cost=20)
    assert lined.run() == ["first normal", "second normal", "long embedding"]


def test_a_question_goes_before_the_checks_that_came_first() -> None:
    """Four worst claim checks, embedded, each about to read (a check reads as much as a question),
    and a normal question about to read more than each: the question goes first, then the checks,
    the least served first; were they questions, every one would go before it."""
    lined = _Lined(WorkQueue())
    for n, spent in enumerate((1000, 64, 64, 64)):
        lined.add(f"check{n}", spent=spent, cost=960, check=True)
    lined.add("question", spent=20, cost=1800)
    lined.add("embedding", spent=0, cost=20)
    assert lined.run() == ["embedding", "question", "check1", "check2", "check3", "check0"]
    lined = _Lined(WorkQueue())
    for n in range(4):
        lined.add(f"check{n}", spent=64, cost=960)
    lined.add("question", spent=20, cost=1800)
    assert lined.run() == ["check0", "check1", "check2", "check3", "question"]


def test_a_question_runs_beside_a_checks_call_never_beside_another_question() -> None:
    """A check's call holds the one lane: a question's call starts at once in the question lane; a
    second question, and a check, wait for a lane; the question first."""
    queue = WorkQueue()
    lined = _Lined(queue, check_holds=True)
    started = threading.Event()

    def question() -> None:
        with queue.ticket().turn(400):
            started.set()
            _wait_until(lambda: queue.waiting() == 2)  # held until the others are in line

    beside = threading.Thread(target=question, daemon=True)
    beside.start()
    assert started.wait(PATIENCE_S) and queue.running() == 2  # beside the check's call, not after it
    lined.add("check", spent=0, cost=20, check=True)
    lined.add("second question", spent=0, cost=400)
    assert queue.running() == 2  # neither got in: a lane each is taken
    beside.join(PATIENCE_S)
    assert lined.run() == ["second question", "check"]


def test_questions_alone_never_take_the_question_lane() -> None:
    assert WorkQueue().policy.question_lanes == 1
    with pytest.raises(ValueError):
        WorkPolicy(question_lanes=-1)
    queue = WorkQueue(WorkPolicy(lanes=1))
    lined = _Lined(queue)  # a question's call holds the lane
    lined.add("question", spent=0, cost=20)
    assert queue.running() == 1 and queue.waiting() == 1
    assert lined.run() == ["question"]


def test_a_check_passed_over_too_often_goes_first() -> None:
    lined = _Lined(WorkQueue(WorkPolicy(lanes=1, max_passed=2)))
    lined.add("check", spent=0, cost=20, check=True)
    for n in range(4):
        lined.add(f"question{n}", spent=0, cost=20)
    assert lined.run() == ["question0", "question1", "check", "question2", "question3"]


def test_a_call_passed_over_too_often_goes_first() -> None:
    lined = _Lined(WorkQueue(WorkPolicy(lanes=1, max_passed=3)))
    lined.add("old", spent=5000, cost=2000)
    for n in range(5):
        lined.add(f"new{n}", spent=0, cost=20)
    assert lined.run() == ["new0", "new1", "new2", "old", "new3", "new4"]


def test_no_more_calls_run_at_once_than_lanes() -> None:
    assert WorkQueue().policy.lanes == 1  # the default (see WorkPolicy.lanes for the measurements)
    queue = WorkQueue(WorkPolicy(lanes=2))
    most, now, lock = [0], [0], threading.Lock()
    start = threading.Barrier(8)

    def call() -> None:
        start.wait(PATIENCE_S)
        with queue.ticket().turn(10):
            with lock:
                now[0] += 1
                most[0] = max(most[0], now[0])
            time.sleep(0.01)
            with lock:
                now[0] -= 1

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(PATIENCE_S)
    assert most[0] <= 2 and queue.running() == 0 and queue.waiting() == 0


def test_a_call_that_fails_frees_its_lane() -> None:
    queue = WorkQueue()
    with pytest.raises(RuntimeError), queue.ticket().turn(5):
        raise RuntimeError("the model failed")
    with queue.ticket().turn(5):
        assert queue.running() == 1
    assert queue.running() == 0


def test_a_policy_needs_a_lane() -> None:
    with pytest.raises(ValueError):
        WorkPolicy(lanes=0)


class _GatedEmbedder(KeywordEmbedder):
    """The keyword embedder, whose encoding of one text waits until the test lets it go on."""

    def __init__(self, gate_text: str) -> None:
        super().__init__()
        self.gate_text, self.gate = gate_text, threading.Event()
        self.started = threading.Event()

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        if self.gate_text in texts[0]:
            self.started.set()
            self.gate.wait(PATIENCE_S)
        return super().encode(texts, progress=progress)


def test_the_engine_embeds_a_new_question_before_the_long_ones_queued_ahead(built_index: Path) -> None:
    """Through Engine.ask: one question holds the model; six 2,000-character ones and then a
    normal one wait; the normal one is embedded first (its embedding is the shortest)."""
    from citeqa.engine import Engine

    embedder = _GatedEmbedder("faro")
    engine = Engine.open(built_index, embedder=embedder)
    answers: dict[str, str] = {}

    def ask(name: str, question: str) -> None:
        answers[name] = engine.ask(question).question

    first = threading.Thread(target=ask, args=("first", "¿Qué es hoy el faro?"))
    first.start()
    assert embedder.started.wait(PATIENCE_S)
    long = ("¿Cuántos visitantes recibe el molino de viento cada año y quién lo construyó? " * 30)[:2000]
    threads = []
    for n in range(6):
        threads.append(threading.Thread(target=ask, args=(f"long{n}", long)))
        threads[-1].start()
        _wait_until(lambda n=n: engine.work.waiting() == n + 1)
    threads.append(threading.Thread(target=ask, args=("normal", "When was the windmill built?")))
    threads[-1].start()
    _wait_until(lambda: engine.work.waiting() == 7)
    before = len(embedder.encoded)
    embedder.gate.set()
    for t in [first, *threads]:
        t.join(PATIENCE_S)
    assert embedder.encoded[before : before + 2] == ["¿Qué es hoy el faro?", "When was the windmill built?"]
    assert set(answers) == {"first", "normal", *(f"long{n}" for n in range(6))}
