"""Serving an ASGI app with uvicorn: the listening socket, the server, SIGTERM, a server in a thread.

Forwarding headers (``X-Forwarded-For``, ``X-Forwarded-Proto``) are trusted only from
the proxies named in the app's policy (``--forwarded-allow-ips``; none by default):
uvicorn's own default trusts them from 127.0.0.1, so any local client could name any
address and escape the login limiter. SIGTERM stops the server as SIGINT does and
raises :class:`Terminated` after it, so the caller's clean-up runs before the process
ends (``citeqa serve`` then dies of the signal, as a supervisor expects).
"""

from __future__ import annotations

import asyncio
import copy
import errno
import logging
import signal
import socket
import threading
import time
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING

from citeqa.errors import ServerError

if TYPE_CHECKING:  # uvicorn loads when a server starts
    import uvicorn
    from starlette.types import ASGIApp

WILDCARD_HOSTS = ("0.0.0.0", "::", "")


class Terminated(BaseException):
    """SIGTERM stopped the server (a BaseException, as KeyboardInterrupt is for SIGINT)."""


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, made now so that a busy port fails before the model loads."""
    if not 0 <= port < 65536:
        raise ServerError(f"port {port} is out of range (1-65535)")
    bare = host.strip("[]") or "0.0.0.0"
    try:
        infos = socket.getaddrinfo(bare, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ServerError(f"cannot listen on {host!r}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is no conflict
        sock.bind(address)
        sock.listen(2048)  # connections wait in the backlog while the model loads
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ServerError(
                f"port {port} on {host} is already in use (another citeqa serve?); "
                "stop it or choose another port with --port"
            ) from None
        if exc.errno == errno.EACCES:
            raise ServerError(f"no permission to listen on port {port}; choose a port above 1023 with --port") from None
        raise ServerError(f"cannot listen on {host}:{port} ({exc.strerror})") from None
    sock.set_inheritable(False)
    return sock


def forwarded_allow_ips(app: object) -> tuple[str, ...]:
    """The proxies whose forwarding headers ``app`` trusts (its ``state.policy``; none without one)."""
    policy = getattr(getattr(app, "state", None), "policy", None)
    return tuple(getattr(policy, "forwarded_allow_ips", ()))


def _uvicorn(app: ASGIApp, sock: socket.socket, grace_s: int = 3) -> uvicorn.Server:
    import uvicorn

    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)  # uvicorn's own, plus the filter below
    log_config["filters"] = {"streams_cut_at_exit": {"()": _StreamsCutAtExit}}
    log_config["loggers"]["uvicorn.error"]["filters"] = ["streams_cut_at_exit"]
    host, port = sock.getsockname()[:2]
    proxies: Sequence[str] = forwarded_allow_ips(app)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=grace_s,
        proxy_headers=bool(proxies),  # uvicorn's default trusts 127.0.0.1, i.e. every local client
        forwarded_allow_ips=list(proxies) or None,
        log_config=log_config,
    )
    return uvicorn.Server(config)


class _StreamsCutAtExit(logging.Filter):
    """Drops the traceback uvicorn logs for each event stream it cancels when the server stops.

    Gradio's clients keep an event stream open; at exit uvicorn waits ``grace_s`` for
    them and then cancels each with "Exception in ASGI application" and a traceback. A
    stream cut at exit is not an error; uvicorn's one-line count of them is kept.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, asyncio.CancelledError)


def run(app: ASGIApp, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until SIGINT or SIGTERM (uvicorn's handlers stop it gracefully).

    After a graceful stop uvicorn raises the signal it caught again: SIGINT becomes
    KeyboardInterrupt, and SIGTERM here becomes :class:`Terminated`, so that the
    caller's ``finally`` runs for both instead of the process ending at once.
    """

    def terminated(signum: int, frame: FrameType | None) -> None:
        raise Terminated

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, terminated) if main else None
    try:
        _uvicorn(app, sock).run(sockets=[sock])
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


def die_of_sigterm() -> None:
    """End the process by SIGTERM with the default action (after :class:`Terminated` was handled)."""
    import os

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def url_of(sock: socket.socket, host: str) -> str:
    """The address to open in a browser for a server listening on ``sock``."""
    port = sock.getsockname()[1]
    name = host.strip("[]")
    if name in WILDCARD_HOSTS:
        name = "127.0.0.1"
    return f"http://[{name}]:{port}/" if ":" in name else f"http://{name}:{port}/"


class Running:
    """A server running in a thread (tests and benchmarks); ``close()`` stops it."""

    def __init__(self, app: ASGIApp, sock: socket.socket, host: str) -> None:
        self.url = url_of(sock, host)
        self.port = sock.getsockname()[1]
        self._server = _uvicorn(app, sock, grace_s=1)  # open event streams would hold a graceful stop
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._sock = sock
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ServerError("the server did not start")
            time.sleep(0.01)

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=15)
        self._sock.close()
