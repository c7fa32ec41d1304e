"""The shards of a PostgreSQL index: parsing ``--backend``, one connection per shard, fan-out, errors.

``--backend`` takes one URL per shard, comma-separated
(``postgresql://h1:5432/db,postgresql://h2:5432/db``); the first shard also holds the catalogue
(generations, the live pointer, the global term statistics). A shard's URL may list streaming
replicas of its server (``postgresql://u@h1:5432/db?replica=h1b:5432&replica=h1c:5432``: same
user, password and database, another host and port): a backend then spreads its reads over them in
turn, once each has replayed what the primary had when the backend opened (:meth:`Shard.read`); a
replica that refuses or loses its connection, or returns a transient error (:func:`is_transient`),
is skipped for a back-off and the read goes to the next one or the primary, where such an error
runs it once more. Writes and publishing go to the primary only. A document lives on shard
``crc32(doc_id) mod N``. Every failure of a shard is one :class:`~citeqa.errors.ShardError`
that names it by number and ``host:port/database`` (never the password).

Inside a question's deadline (:func:`~citeqa.qa.backend.question_deadline`) the client bounds its
own waiting too (:mod:`citeqa.pg.deadline`): a server that does not answer a try in its time has its
connection dropped, never reused.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from citeqa.errors import ConfigError, QuestionTimeoutError, ShardError
from citeqa.messages import Said
from citeqa.pg.deadline import GRACE_S, REPLICA_SHARE, NoAnswer, Watchdog, connect_until
from citeqa.qa.backend import Deadline, current_deadline

T = TypeVar("T")
SCHEMES = ("postgres://", "postgresql://")
#: Seconds to wait for a shard to accept a connection before it counts as down.
CONNECT_TIMEOUT_S = 5
#: Milliseconds a shard may leave sent data unacknowledged before its connection counts as broken
#: (a node cut off by the network, not only a dead one, becomes a ShardError instead of a hang).
TCP_TIMEOUT_MS = 30_000
#: TCP keepalives on an idle connection (one waiting for a result): the first probe after
#: KEEPALIVE_IDLE_S, then one every KEEPALIVE_INTERVAL_S, KEEPALIVE_COUNT unanswered ones: broken.
#: They catch a host that is gone; a stopped server's kernel answers them (the watchdog catches that).
KEEPALIVE_IDLE_S = 10
KEEPALIVE_INTERVAL_S = 5
KEEPALIVE_COUNT = 3
#: Questions at once whose fan-out never waits for a thread: a Shards pool has this many per shard.
FANOUT_QUESTIONS = 16
#: Seconds a replica that failed is skipped before it is tried again; doubled for each failure in a
#: row, up to RETRY_MAX_S (a dead replica costs one connection attempt per back-off, not per query).
RETRY_S = 5.0
RETRY_MAX_S = 60.0
#: Whether a replica has replayed the WAL up to a position (a server not in recovery is a primary: yes).
REPLAYED_SQL = "SELECT NOT pg_is_in_recovery() OR coalesce(pg_last_wal_replay_lsn() >= %s::pg_lsn, false)"
#: SQLSTATEs a live server returns for a read that may well succeed elsewhere or a moment later:
#: serialization failure (on a hot standby: a statement cancelled by a conflict with recovery),
#: deadlock detected (also a recovery conflict), a node shutting down, crashing or still starting.
TRANSIENT = frozenset({"40001", "40P01", "57P01", "57P02", "57P03"})
#: Lowers the statement timeout of one transaction to ``ms``, the milliseconds the question has left;
#: never raises it (a shorter timeout the connection chose is kept; pg_settings has it in ms, 0: none).
LOWER_TIMEOUT_SQL = (
    "SELECT set_config('statement_timeout', (CASE WHEN setting::bigint > 0 THEN least(setting::bigint, %(ms)s)"
    " ELSE %(ms)s END)::text, true) FROM pg_settings WHERE name = 'statement_timeout'"
)
#: Server settings people write as URL parameters, which libpq refuses: they go in ``options``.
SERVER_SETTINGS = frozenset({"statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"})
#: query_canceled (a statement timeout, pg_cancel_backend): moves a read to another server, but is
#: not run again on the same one (a read that timed out would only wait out the timeout twice).
CANCELED = "57014"


def is_postgres(spec: str | Path | None) -> bool:
    """Whether a ``--backend`` value names PostgreSQL shards (else: the local index folder)."""
    return isinstance(spec, str) and spec.strip().startswith(SCHEMES)


def shard_urls(spec: str) -> tuple[str, ...]:
    """The shard URLs of a ``--backend`` value, in shard order."""
    urls = tuple(part.strip() for part in spec.split(",") if part.strip())
    bad = [u for u in urls if not u.startswith(SCHEMES)]
    if not urls or bad:
        raise ConfigError(f"--backend expects postgresql://HOST:PORT/DB URLs separated by commas, got {spec!r}")
    for url in urls:
        check_query(url)
    return urls


def check_query(url: str) -> None:
    """A ConfigError for the query parameters libpq would refuse or misread in a way worth a hint:
    a server setting written as a parameter (``?statement_timeout=5s``) and an ``=`` left unencoded
    in a value (``options=-c statement_timeout=5s``)."""
    for part in filter(None, urlsplit(url).query.split("&")):
        key, _, value = part.partition("=")
        key = unquote(key)
        if key in SERVER_SETTINGS:
            raise ConfigError(
                f"{key} is a server setting, not a connection parameter, in {label(url)}: "
                f"write ?options=-c%20{key}%3D{unquote(value) or 'VALUE'}"
            )
        if "=" in value:
            raise ConfigError(
                f"the value of {key}= in {label(url)} has an unencoded '=': write it as %3D "
                "(?options=-c%20statement_timeout%3D5s)"
            )


#: The connection parameters citeqa sets where the connection chose none (connect_options).
CONNECT_DEFAULTS: dict[str, int] = {
    "connect_timeout": CONNECT_TIMEOUT_S,
    "tcp_user_timeout": TCP_TIMEOUT_MS,
    "keepalives": 1,
    "keepalives_idle": KEEPALIVE_IDLE_S,
    "keepalives_interval": KEEPALIVE_INTERVAL_S,
    "keepalives_count": KEEPALIVE_COUNT,
}


def connect_options(url: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The connection timeouts and keepalives citeqa sets for ``url`` (:data:`CONNECT_DEFAULTS`),
    each only where neither the URL (``?connect_timeout=2``, ``?keepalives_idle=60``) nor, for the
    connect timeout, libpq's ``PGCONNECT_TIMEOUT`` chose one (a keyword given to ``connect`` would
    override them)."""
    env = os.environ if environ is None else environ
    chosen = {unquote(p.partition("=")[0]) for p in urlsplit(url).query.split("&") if p}
    if env.get("PGCONNECT_TIMEOUT"):
        chosen.add("connect_timeout")
    return {key: value for key, value in CONNECT_DEFAULTS.items() if key not in chosen}


def split_replicas(url: str) -> tuple[str, tuple[str, ...]]:
    """A shard URL without its ``replica=HOST:PORT`` parameters, and the URL of each replica (the
    primary's with that host and port)."""
    parts = urlsplit(url)
    # the other parameters pass through as written: decoding and re-encoding them would turn an
    # options=-c%20name%3Dvalue into -c+name... (libpq decodes %XX only, not + as a space)
    pairs = [(unquote(p.partition("=")[0]), p) for p in parts.query.split("&") if p]
    hosts = [unquote(p.partition("=")[2]) for k, p in pairs if k == "replica"]
    primary = urlunsplit(parts._replace(query="&".join(p for k, p in pairs if k != "replica")))
    user = parts.netloc.rpartition("@")[0]
    bad = [h for h in hosts if not h or "/" in h or "@" in h]
    if bad:
        raise ConfigError(f"replica= takes HOST:PORT, got {bad[0]!r} in {label(url)}")
    return primary, tuple(urlunsplit(urlsplit(primary)._replace(netloc=f"{user}@{h}" if user else h)) for h in hosts)


def shard_of(doc_id: str, count: int) -> int:
    """The shard (0-based) a document lives on: stable across processes and machines."""
    return zlib.crc32(doc_id.encode("utf-8", "surrogatepass")) % count


def label(url: str) -> str:
    """``host:port/database`` of a URL, without user or password."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    return f"{host}:{parts.port or 5432}{parts.path or '/'}"


def _reason(exc: BaseException) -> str:
    """The first line of a driver error, without the driver's prefixes."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.removeprefix("connection failed: ")


def drivers() -> tuple[Any, Any]:
    """psycopg and pgvector's type registration, or a ConfigError naming the extra to install."""
    try:
        import psycopg
        from pgvector.psycopg import register_vector
    except ImportError as exc:
        raise ConfigError(f"--backend postgresql:// needs {exc.name}: pip install -e '.[postgres]'") from None
    return psycopg, register_vector


class ReplicaDown(ShardError):
    """A replica refused or lost its connection, is behind, did not answer in its share of the
    question's time, or returned a transient error: the read goes elsewhere."""


class Transient(ShardError):
    """A primary's connection broke mid-read or it returned a transient error: the read may run once
    more (not after a cancelled statement, ``canceled``)."""

    def __init__(self, message: str, canceled: bool = False) -> None:
        super().__init__(message)
        self.canceled = canceled


def is_transient(exc: BaseException, lost: bool) -> bool:
    """Whether a driver error is worth running a read again for, on another server: a connection
    that broke (``lost``), a :data:`TRANSIENT` SQLSTATE or a cancelled statement. Everything else (a
    syntax error, an undefined table, a permission refused, a constraint) fails again anywhere."""
    return lost or getattr(exc, "sqlstate", None) in (*TRANSIENT, CANCELED)


class Shard:
    """One PostgreSQL node: a connection made on first use, re-made after a failure, used by one
    thread at a time."""

    def __init__(
        self,
        number: int,
        count: int,
        url: str,
        replicas: Sequence[str] = (),
        replica: bool = False,
        watchdog: Watchdog | None = None,
    ) -> None:
        self.number = number  # 0-based
        self.count = count
        self.url = url
        self.name = Said("replica_name" if replica else "shard_name", number=number + 1, count=count, where=label(url))
        self.replica = replica
        self._conn: Any = None
        self._lock = threading.Lock()
        self._setup: tuple[str, ...] = ()
        self.watchdog = watchdog if watchdog is not None else Watchdog()
        #: The shard's streaming replicas (read only), and those a backend reads from (caught up).
        self.replicas = tuple(Shard(number, count, r, replica=True, watchdog=self.watchdog) for r in replicas)
        self.readers: tuple[Shard, ...] = ()
        self._turn = itertools.count()
        #: A replica: the WAL position it must have replayed to be read (checked on each new connection).
        self.lsn: str | None = None
        #: A replica: skipped until this time.monotonic() after failures in a row (``misses``).
        self.down_until = 0.0
        self.misses = 0

    @property
    def setup(self) -> tuple[str, ...]:
        """Statements run on every new connection (a backend's search settings), on replicas too."""
        return self._setup

    @setup.setter
    def setup(self, statements: tuple[str, ...]) -> None:
        self._setup = statements
        for replica in self.replicas:
            replica.setup = statements

    def read(self, doing: str, work: Callable[[Any], T]) -> T:
        """``work(connection)`` on the shard's caught-up replicas in turn (:attr:`readers`), else the
        primary. A replica that fails to connect or loses its connection is skipped for a back-off
        (:meth:`skip`) and the work runs again on the next one, then on the primary, whose error is
        raised (one :class:`ShardError` naming the shard). A transient error from a live server
        (:func:`is_transient`) moves the read on the same way; on the primary, a broken connection or a
        :data:`TRANSIENT` SQLSTATE runs it once more on a new connection, if nothing failed before it in
        this read. Any other error is raised at once. Reads only: running one twice is harmless.
        Inside a question's deadline a try on a replica gets :data:`REPLICA_SHARE` of what the question
        has left and one on the primary all of it (:meth:`run`); a replica that does not answer in
        its share is skipped like one that failed."""
        now = time.monotonic()
        live = [r for r in self.readers if r.down_until <= now]
        turn = next(self._turn)
        failed = False
        for i in range(len(live)):
            try:
                return live[(turn + i) % len(live)].run(doing, work, REPLICA_SHARE)
            except ReplicaDown:
                failed = True
        try:
            return self.run(doing, work)
        except Transient as exc:
            if failed or exc.canceled:
                raise ShardError(exc.args[0]) from None
        return self.run(doing, work)

    def run(self, doing: str, work: Callable[[Any], T], share: float = 1.0) -> T:
        """``work(connection)`` on this server. Inside a question's deadline
        (:func:`~citeqa.qa.backend.question_deadline`) the try may take ``share`` of what the question
        has left: it runs in a transaction whose statement timeout is that, waits for the connection
        no longer, and is dropped by the client :data:`GRACE_S` after it if the server has not
        answered. A statement cancelled at the question's end, a try begun too late or a server that
        did not answer by then is one :class:`QuestionTimeoutError` naming this server (a live
        server is not skipped for it, a silent replica is); on a replica with time left, a
        :class:`ReplicaDown`."""
        deadline = current_deadline()
        if deadline is None:
            with self.connection(doing) as conn:
                return work(conn)
        psycopg, _ = drivers()
        left = deadline.left()
        if left <= 0:
            raise self.late(deadline, doing)
        end = time.monotonic() + left * share
        with self.connection(doing, end) as conn:
            ms = math.ceil((end - time.monotonic()) * 1000)
            if ms <= 0:
                raise self.out_of_time(doing)
            try:
                with conn.transaction():
                    conn.execute(LOWER_TIMEOUT_SQL, {"ms": ms})
                    return work(conn)
            except psycopg.errors.QueryCanceled:
                if deadline.left() > 0:
                    raise  # cancelled by something else, or at a replica's share: handled as before
            raise self.late(deadline, doing)

    def late(self, deadline: Deadline, doing: str) -> QuestionTimeoutError:
        return QuestionTimeoutError(Said("shard_late", seconds=f"{deadline.seconds:g}", name=self.name, doing=doing))

    def out_of_time(self, doing: str) -> ShardError:
        """The error of a try whose time ran out before the server answered: :class:`ReplicaDown` on a
        replica while the question has time left (the read goes on to the next server), else the
        question's :class:`QuestionTimeoutError`."""
        deadline = current_deadline()
        if deadline is None:
            return ShardError(Said("shard_silent", name=self.name, doing=doing))
        if self.replica and deadline.left() > 0:
            return ReplicaDown(Said("replica_silent", name=self.name, doing=doing))
        return self.late(deadline, doing)

    def skip(self) -> None:
        """Skip this replica for a back-off: RETRY_S, doubled per failure in a row, at most RETRY_MAX_S."""
        self.misses += 1
        self.down_until = time.monotonic() + min(RETRY_S * 2 ** (self.misses - 1), RETRY_MAX_S)

    def error(self, exc: BaseException, doing: str) -> ShardError:
        return ShardError(Said("shard_failed", name=self.name, doing=doing, reason=_reason(exc)))

    def _watching(self, conn: Any, end: float | None) -> contextlib.AbstractContextManager[None]:
        """The watchdog on ``conn`` until ``end`` + :data:`GRACE_S` (None: not watched)."""
        return contextlib.nullcontext() if end is None else self.watchdog.watch(conn, end + GRACE_S)

    def _connect(self, end: float | None = None) -> Any:
        """A new connection, prepared (the extension, the replay check, the setup statements); with
        ``end``, given up then (:class:`NoAnswer`)."""
        psycopg, register_vector = drivers()

        def connect() -> Any:
            return psycopg.connect(self.url, autocommit=True, **connect_options(self.url))

        conn = connect() if end is None else connect_until(connect, end)
        try:
            with self._watching(conn, end):
                if not self.replica:  # a standby refuses every write, this one too
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                elif self.lsn is not None and not conn.execute(REPLAYED_SQL, (self.lsn,)).fetchone()[0]:
                    # restarted and still replaying: not read from until it has caught up again
                    raise psycopg.OperationalError(f"has not replayed up to {self.lsn} yet")
                register_vector(conn)
                for statement in self.setup:
                    conn.execute(statement)
        except BaseException:
            conn.close()
            raise
        return conn

    @contextlib.contextmanager
    def connection(self, doing: str, end: float | None = None) -> Iterator[Any]:
        """The shard's connection (autocommit; ``with conn.transaction()`` for a transaction);
        any driver error becomes a :class:`ShardError` and drops the connection (the next use
        connects afresh, so a statement cancelled mid-transaction leaves nothing to roll back). A
        replica that cannot connect, whose connection broke or that returned a transient error raises
        :class:`ReplicaDown` and is skipped a while; a primary whose open connection broke or that
        returned one raises :class:`Transient`. With ``end`` (``time.monotonic()``, inside a
        question's deadline) the connection is waited for until then (another read holding it, or a
        server slow to accept) and the block is dropped :data:`GRACE_S` after it: a server that did
        not answer is :meth:`out_of_time`, its connection closed and a replica skipped a while."""
        psycopg, _ = drivers()
        if end is None:
            self._lock.acquire()
        elif not self._lock.acquire(timeout=max(0.0, end - time.monotonic())):
            raise self.out_of_time(doing)  # another read holds the connection: not this server's failure
        try:
            refused = False
            try:
                if self._conn is None or self._conn.closed:
                    self._conn, refused = None, True  # a failure now is a refused connection
                    self._conn = self._connect(end)
                    self.misses = 0
                    refused = False
                with self._watching(self._conn, end):
                    yield self._conn
            except NoAnswer:
                self.close_now()
                if self.replica:
                    self.skip()
                raise self.out_of_time(doing) from None
            except psycopg.Error as exc:
                lost = refused or self._conn is None or self._conn.broken
                self.close_now()
                error = self.error(exc, doing)
                if self.replica and is_transient(exc, lost):
                    self.skip()
                    raise ReplicaDown(error.args[0]) from None
                if not refused and is_transient(exc, lost):
                    raise Transient(error.args[0], getattr(exc, "sqlstate", None) == CANCELED) from None
                raise error from None
        finally:
            self._lock.release()

    def close_now(self) -> None:
        """Close the connection (the next use reconnects)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def close(self) -> None:
        with self._lock:
            self.close_now()


class Shards:
    """The shards of one index, threads to query them all at once (:data:`FANOUT_QUESTIONS` questions'
    worth), and one watchdog for all their servers."""

    def __init__(self, spec: str) -> None:
        urls = [split_replicas(u) for u in shard_urls(spec)]
        watchdog = Watchdog()
        self.items = tuple(Shard(i, len(urls), u, r, watchdog=watchdog) for i, (u, r) in enumerate(urls))
        self._pool = ThreadPoolExecutor(max_workers=len(urls) * FANOUT_QUESTIONS, thread_name_prefix="citeqa-shard")

    @property
    def count(self) -> int:
        return len(self.items)

    @property
    def catalogue(self) -> Shard:
        """The shard that holds the generations and the live pointer."""
        return self.items[0]

    def each(self, work: Callable[[Shard], T], shards: Sequence[Shard] | None = None) -> list[T]:
        """``work(shard)`` on every shard at once, each on a thread of its own; the results in shard
        order. The first shard to fail (in shard order) raises its error after all have finished.
        Inside a question's deadline every shard's work ends by then (:meth:`Shard.run`), and the
        caller waits no longer than that either (a shard whose work did not even start, the threads
        all busy, is a :class:`QuestionTimeoutError`)."""
        chosen = list(shards if shards is not None else self.items)
        if len(chosen) == 1:
            return [work(chosen[0])]
        # each in a copy of the caller's context: a question's deadline reaches every shard
        futures = [self._pool.submit(contextvars.copy_context().run, work, s) for s in chosen]
        deadline = current_deadline()
        if deadline is not None:
            wait(futures, timeout=max(0.0, deadline.left()) + 2 * GRACE_S)
            for shard, future in zip(chosen, futures):
                if not future.done():
                    doing = Said("doing_thread" if future.cancel() else "doing_answering")
                    raise shard.late(deadline, doing)
        errors = [f.exception() for f in futures]
        for error in errors:
            if error is not None:
                raise error
        return [f.result() for f in futures]

    def close(self) -> None:
        for shard in self.items:
            shard.close()
            for replica in shard.replicas:
                replica.close()
        self._pool.shutdown(wait=False)
