"""The client's own bound on a PostgreSQL try inside a question's deadline.

A server that is stopped (SIGSTOP) or cut off answers nothing, not even a cancel request, while the
kernel keeps its TCP connection alive; so inside a question's deadline
(:func:`~citeqa.qa.backend.question_deadline`) a connection attempt is waited for only until the
try's end (:func:`connect_until`), and a try still running :data:`GRACE_S` after it has its socket
shut down by a :class:`Watchdog`, which ends the wait at once; the connection is dropped, never
reused. A try on a replica gets only :data:`REPLICA_SHARE` of the question's time.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

#: Inside a question's deadline: seconds past a try's end the client still waits for the server's
#: own answer (the statement timeout's cancel) before it drops the connection as not answering.
GRACE_S = 0.5
#: Of what the question has left, the part a try on a replica may take: the shard's other servers
#: have the rest, so a replica that does not answer costs the question half its time, not all of it.
REPLICA_SHARE = 0.5
#: Seconds the watchdog's thread waits for work before it ends (a new try starts it again).
WATCHDOG_IDLE_S = 10.0


class NoAnswer(Exception):
    """The server did not answer a try in its time: the client stopped waiting (internal; a shard
    turns it into :class:`~citeqa.pg.shards.ReplicaDown` or :class:`~citeqa.errors.QuestionTimeoutError`)."""


def drop_socket(conn: Any) -> None:
    """Shut down a connection's socket from another thread: the thread waiting on it gets end of
    file at once (libpq: the connection is lost), whatever the server does. The descriptor stays the
    driver's (a duplicate is shut down and closed); nothing is sent to the server but a FIN."""
    with contextlib.suppress(Exception), socket.socket(fileno=os.dup(conn.fileno())) as sock:
        sock.shutdown(socket.SHUT_RDWR)


class Watch:
    """One try being watched: its connection, when it must be over, and whether it was dropped."""

    def __init__(self, conn: Any, end: float) -> None:
        self.conn = conn
        self.end = end
        self.fired = False

    def __lt__(self, other: Watch) -> bool:
        return self.end < other.end


class Watchdog:
    """One thread that drops the connection of any try still running at its end (:func:`drop_socket`),
    for the shards of a backend. Tries being watched are few (one per connection in use), so one that
    ends is taken off at once; the thread ends after :data:`WATCHDOG_IDLE_S` with none and starts again
    with the next."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: list[Watch] = []  # a heap by end
        self._running = False

    @contextlib.contextmanager
    def watch(self, conn: Any, end: float) -> Iterator[None]:
        """The block's work on ``conn``, dropped if it runs past ``end`` (``time.monotonic()``); a
        block that was dropped raises :class:`NoAnswer` (chained to the driver's error, if any),
        whether or not its work ended in time to see it."""
        watch = Watch(conn, end)
        with self._cond:
            heapq.heappush(self._due, watch)
            if not self._running:
                self._running = True
                threading.Thread(target=self._loop, name="citeqa-watchdog", daemon=True).start()
            self._cond.notify()
        try:
            yield
        except BaseException as exc:
            if self._done(watch) and isinstance(exc, Exception):
                raise NoAnswer(str(exc)) from exc
            raise
        if self._done(watch):
            raise NoAnswer("the connection was dropped")

    def _done(self, watch: Watch) -> bool:
        """Stop watching; whether the watch had fired (after this, it never will)."""
        with self._cond:
            if watch in self._due:
                self._due.remove(watch)
                heapq.heapify(self._due)
            return watch.fired

    def _loop(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                while self._due and self._due[0].end <= now:
                    watch = heapq.heappop(self._due)
                    watch.fired = True
                    drop_socket(watch.conn)
                if self._due:
                    self._cond.wait(self._due[0].end - now)
                elif not self._cond.wait(WATCHDOG_IDLE_S) and not self._due:
                    self._running = False
                    return


def connect_until(connect: Callable[[], Any], end: float) -> Any:
    """``connect()`` run on a thread of its own and waited for until ``end`` (``time.monotonic()``):
    a server that takes the TCP connection but never answers (stopped) raises :class:`NoAnswer`
    then, not after libpq's connect timeout (whole seconds, at least 2). A connection made after the
    caller gave up is closed."""
    done = threading.Event()
    lock = threading.Lock()
    outcome: list[tuple[Any, BaseException | None]] = []
    abandoned = False

    def run() -> None:
        try:
            result: tuple[Any, BaseException | None] = (connect(), None)
        except BaseException as exc:  # handed to the caller
            result = (None, exc)
        with lock:
            if not abandoned:
                outcome.append(result)
                done.set()
                return
        if result[0] is not None:
            with contextlib.suppress(Exception):
                result[0].close()

    threading.Thread(target=run, name="citeqa-connect", daemon=True).start()
    done.wait(max(0.0, end - time.monotonic()))
    with lock:
        if not outcome:
            abandoned = True
            raise NoAnswer("no connection in time")
    conn, error = outcome[0]
    if error is not None:
        raise error
    return conn
