"""The shards of a PostgreSQL index: parsing ``--backend``, one connection per shard, fan-out, errors.

``--backend`` takes one URL per shard, comma-separated
(``postgresql://h1:5432/db,postgresql://h2:5432/db``); the first shard also holds the catalogue
(generations, the live pointer, the global term statistics). A shard's URL may list streaming
replicas of its server (``postgresql://u@h1:5432/db?replica=h1b:5432&replica=h1c:5432``: same
user, password and database, another host and port): a backend then spreads its reads over them in
turn, once each has replayed what the primary had when the backend opened
(:meth:`Shard.reading`); writes and publishing go to the primary only. A document lives on shard
``crc32(doc_id) mod N``. Every failure of a shard is one :class:`~citeqa.errors.ShardError`
that names it by number and ``host:port/database`` (never the password).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from citeqa.errors import ConfigError, ShardError

T = TypeVar("T")
SCHEMES = ("postgres://", "postgresql://")
#: Seconds to wait for a shard to accept a connection before it counts as down.
CONNECT_TIMEOUT_S = 5
#: Milliseconds a shard may leave sent data unacknowledged before its connection counts as broken
#: (a node cut off by the network, not only a dead one, becomes a ShardError instead of a hang).
TCP_TIMEOUT_MS = 30_000


def is_postgres(spec: str | Path | None) -> bool:
    """Whether a ``--backend`` value names PostgreSQL shards (else: the local index folder)."""
    return isinstance(spec, str) and spec.strip().startswith(SCHEMES)


def shard_urls(spec: str) -> tuple[str, ...]:
    """The shard URLs of a ``--backend`` value, in shard order."""
    urls = tuple(part.strip() for part in spec.split(",") if part.strip())
    bad = [u for u in urls if not u.startswith(SCHEMES)]
    if not urls or bad:
        raise ConfigError(f"--backend expects postgresql://HOST:PORT/DB URLs separated by commas, got {spec!r}")
    return urls


def split_replicas(url: str) -> tuple[str, tuple[str, ...]]:
    """A shard URL without its ``replica=HOST:PORT`` parameters, and the URL of each replica (the
    primary's with that host and port)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    hosts = [v for k, v in query if k == "replica"]
    primary = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query if k != "replica"])))
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


class Shard:
    """One PostgreSQL node: a connection made on first use, re-made after a failure, used by one
    thread at a time."""

    def __init__(self, number: int, count: int, url: str, replicas: Sequence[str] = (), replica: bool = False) -> None:
        self.number = number  # 0-based
        self.count = count
        self.url = url
        role = " replica" if replica else ""
        self.name = f"shard {number + 1} of {count}{role} ({label(url)})"
        self.replica = replica
        self._conn: Any = None
        self._lock = threading.Lock()
        self._setup: tuple[str, ...] = ()
        #: The shard's streaming replicas (read only), and those a backend reads from (caught up).
        self.replicas = tuple(Shard(number, count, r, replica=True) for r in replicas)
        self.readers: tuple[Shard, ...] = ()
        self._turn = itertools.count()

    @property
    def setup(self) -> tuple[str, ...]:
        """Statements run on every new connection (a backend's search settings), on replicas too."""
        return self._setup

    @setup.setter
    def setup(self, statements: tuple[str, ...]) -> None:
        self._setup = statements
        for replica in self.replicas:
            replica.setup = statements

    def reading(self, doing: str) -> contextlib.AbstractContextManager[Any]:
        """A connection to read from: the shard's caught-up replicas in turn (:attr:`readers`), else the primary."""
        nodes = self.readers or (self,)
        return nodes[next(self._turn) % len(nodes)].connection(doing)

    def error(self, exc: BaseException, doing: str) -> ShardError:
        return ShardError(f"postgres {self.name} failed while {doing}: {_reason(exc)}")

    def _connect(self) -> Any:
        psycopg, register_vector = drivers()

        conn = psycopg.connect(
            self.url, connect_timeout=CONNECT_TIMEOUT_S, tcp_user_timeout=TCP_TIMEOUT_MS, autocommit=True
        )
        try:
            if not self.replica:  # a standby refuses every write, this one too
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            register_vector(conn)
            for statement in self.setup:
                conn.execute(statement)
        except BaseException:
            conn.close()
            raise
        return conn

    @contextlib.contextmanager
    def connection(self, doing: str) -> Iterator[Any]:
        """The shard's connection (autocommit; ``with conn.transaction()`` for a transaction);
        any driver error becomes a :class:`ShardError` and drops the connection."""
        psycopg, _ = drivers()
        with self._lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = self._connect()
                yield self._conn
            except psycopg.Error as exc:
                self.close_now()
                raise self.error(exc, doing) from None

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
    """The shards of one index, and a thread per shard to query them all at once."""

    def __init__(self, spec: str) -> None:
        urls = [split_replicas(u) for u in shard_urls(spec)]
        self.items = tuple(Shard(i, len(urls), u, r) for i, (u, r) in enumerate(urls))
        self._pool = ThreadPoolExecutor(max_workers=len(urls), thread_name_prefix="citeqa-shard")

    @property
    def count(self) -> int:
        return len(self.items)

    @property
    def catalogue(self) -> Shard:
        """The shard that holds the generations and the live pointer."""
        return self.items[0]

    def each(self, work: Callable[[Shard], T], shards: Sequence[Shard] | None = None) -> list[T]:
        """``work(shard)`` on every shard at once; the results in shard order. The first shard to
        fail (in shard order) raises its error after all have finished."""
        chosen = list(shards if shards is not None else self.items)
        if len(chosen) == 1:
            return [work(chosen[0])]
        futures = [self._pool.submit(work, s) for s in chosen]
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
