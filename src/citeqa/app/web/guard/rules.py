"""What the guard (:mod:`citeqa.app.web.server`) lets through, and the state its rules keep.

:class:`Policy` is built from the ``serve`` options (:func:`policy_for`); host names are
compared with :func:`normal_host` and origins with :func:`same_origin`;
:class:`LoginLimiter` counts failed logins per client address and :class:`Sessions`
signs the page's session cookie (with ``itsdangerous``, timestamped: a cookie older than
:data:`SESSION_MAX_AGE_S` names no session). The login cookie is Gradio's own: a random token
that its ``/login`` keeps in ``App.tokens`` (server side, nothing to sign), checked by
:func:`citeqa.app.web.server.build_server`'s login check.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from itsdangerous import BadSignature, TimestampSigner

from citeqa.app.web.serving import WILDCARD_HOSTS
from citeqa.qa.questions import MAX_QUESTION_CHARS

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")

#: Largest request body outside uploads. The largest legal ``/ask`` request (a question
#: and 20 earlier ones of 2000 characters, every character JSON-escaped as a surrogate
#: pair, 12 bytes) is 504,000 bytes; the chat page's own requests carry the visible chat.
#: 1 MiB is twice that; a 200 MB "question" is refused before it is read.
MAX_BODY_BYTES = 1 << 20
assert MAX_BODY_BYTES >= 2 * 21 * MAX_QUESTION_CHARS * 12

LOGIN_FAILURES = 5
LOGIN_WINDOW_S = 60.0
#: Event streams (``/gradio_api/heartbeat/``) one client address may hold open at once: a browser tab holds one.
MAX_STREAMS_PER_CLIENT = 32
#: How long a page's session cookie names its session: a working day. The page sets a fresh one
#: when it is loaded again; an upload with an older cookie is refused like one without any.
SESSION_MAX_AGE_S = 12 * 3600


@dataclass(frozen=True)
class Policy:
    """What the guard lets through; built by :func:`policy_for` from the ``serve`` options."""

    bind_host: str = "127.0.0.1"
    port: int = 7860
    allowed_hosts: tuple[str, ...] = ()
    max_body_bytes: int = MAX_BODY_BYTES
    uploads: bool = True
    upload_quota_bytes: int = 200 * 1_048_576
    login_failures: int = LOGIN_FAILURES
    login_window_s: float = LOGIN_WINDOW_S
    max_streams_per_client: int = MAX_STREAMS_PER_CLIENT
    #: Proxies whose ``X-Forwarded-For`` names the client (``--forwarded-allow-ips``); none by default.
    forwarded_allow_ips: tuple[str, ...] = ()
    names: frozenset[str] = field(default=frozenset(), init=False)

    def __post_init__(self) -> None:
        names = {*LOOPBACK_NAMES, *(normal_host(h) for h in self.allowed_hosts)}
        if not self.wildcard:
            names.add(normal_host(self.bind_host))
        else:
            names.add(normal_host(socket.gethostname()))  # no DNS lookup: getfqdn() would ask the resolver
        object.__setattr__(self, "names", frozenset(n for n in names if n))

    @property
    def wildcard(self) -> bool:
        return normal_host(self.bind_host) in WILDCARD_HOSTS

    def host_allowed(self, name: str | None) -> bool:
        """Whether a ``Host`` name (already :func:`normal_host`) may be served."""
        if not name:
            return False
        if name in self.names:
            return True
        return self.wildcard and _is_ip(name)  # rebinding needs a name, never an IP literal


def policy_for(
    host: str,
    port: int,
    allowed_hosts: Iterable[str] = (),
    *,
    uploads: bool = True,
    max_upload_bytes: int = 20 * 1_048_576,
    forwarded_allow_ips: Iterable[str] = (),
) -> Policy:
    """The policy of ``citeqa serve``: the upload cache holds ten uploads of the largest size."""
    return Policy(
        bind_host=host,
        port=port,
        allowed_hosts=tuple(allowed_hosts),
        uploads=uploads,
        upload_quota_bytes=max(10 * max_upload_bytes, 16 * 1_048_576),
        forwarded_allow_ips=tuple(forwarded_allow_ips),
    )


#: Characters a ``Host`` header (host and port) never holds; urlsplit would read past them.
_NOT_IN_HOST = frozenset("/\\?#@ \t")


def normal_host(value: str) -> str:
    """A host name or address without port, brackets, case or trailing dot ('' when unusable)."""
    value = (value or "").strip()
    if not value or any(c in value for c in _NOT_IN_HOST):  # "localhost/evil.example" names no host of ours
        return ""
    try:
        parts = urlsplit("//" + value)
        name = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        if value.count(":") > 1 and _is_ip(value):  # a bare IPv6 address such as ::1
            return str(ipaddress.ip_address(value))
        return ""
    name = name.rstrip(".").lower()
    return str(ipaddress.ip_address(name)) if _is_ip(name) else name


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def same_origin(origin: str, host_header: str) -> bool:
    """Whether an ``Origin`` header names the origin of a request sent with this ``Host``."""
    try:
        o = urlsplit(origin.strip())
        h = urlsplit("//" + host_header.strip())
        if o.scheme not in ("http", "https") or not o.hostname or not h.hostname:
            return False
        default = 443 if o.scheme == "https" else 80
        return normal_host(o.hostname) == normal_host(h.hostname) and (o.port or default) == (h.port or default)
    except ValueError:
        return False


class LoginLimiter:
    """Failed logins per client address in a sliding window, for a bounded number of addresses."""

    def __init__(self, failures: int, window_s: float, max_clients: int = 10_000) -> None:
        self.failures, self.window_s, self.max_clients = failures, window_s, max_clients
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def wait_s(self, client: str, now: float | None = None) -> float:
        """Seconds until ``client`` may try again (0 when it may now)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            times = self._seen.get(client)
            if not times:
                return 0.0
            while times and now - times[0] >= self.window_s:
                times.popleft()
            return 0.0 if len(times) < self.failures else self.window_s - (now - times[0])

    def failed(self, client: str, now: float | None = None) -> None:
        with self._lock:
            times = self._seen.setdefault(client, deque(maxlen=self.failures))
            times.append(time.monotonic() if now is None else now)
            self._seen.move_to_end(client)
            while len(self._seen) > self.max_clients:
                self._seen.popitem(last=False)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._seen.pop(client, None)


class StreamLimit:
    """Open event streams per client address, at most ``limit`` each."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def enter(self, client: str) -> bool:
        """Count a new stream of ``client``; False (and not counted) when it holds the limit already."""
        with self._lock:
            if self._open.get(client, 0) >= self.limit:
                return False
            self._open[client] = self._open.get(client, 0) + 1
            return True

    def leave(self, client: str) -> None:
        """A stream of ``client`` ended."""
        with self._lock:
            left = self._open.get(client, 0) - 1
            if left > 0:
                self._open[client] = left
            else:
                self._open.pop(client, None)


class OneEach:
    """Keys (sessions) each held by at most one holder at a time."""

    def __init__(self) -> None:
        self._held: set[str] = set()
        self._lock = threading.Lock()

    def enter(self, key: str) -> bool:
        """Hold ``key``; False (and nothing held) when it is held already."""
        with self._lock:
            if key in self._held:
                return False
            self._held.add(key)
            return True

    def leave(self, key: str) -> None:
        """Let ``key`` go."""
        with self._lock:
            self._held.discard(key)


class _ClockedSigner(TimestampSigner):
    """``itsdangerous``'s signer with its clock given (it reads ``time.time`` itself otherwise)."""

    def __init__(self, secret: bytes, salt: str, clock: Callable[[], float]) -> None:
        super().__init__(secret, salt=salt)
        self._clock = clock

    def get_timestamp(self) -> int:
        return int(self._clock())


class Sessions:
    """The page's session cookie: a random nonce, timestamped and signed with a secret of this process.

    ``clock`` (seconds since the epoch, ``time.time`` by default) stamps and ages the cookies.
    """

    def __init__(self, port: int, max_age_s: int = SESSION_MAX_AGE_S, clock: Callable[[], float] = time.time) -> None:
        self.name = f"citeqa-session-{port}"  # cookies ignore ports; two servers must not overwrite each other
        self.max_age_s = max_age_s
        self._signer = _ClockedSigner(secrets.token_bytes(32), "citeqa-session", clock)

    def issue(self) -> str:
        return self._signer.sign(secrets.token_urlsafe(16)).decode("ascii")

    def valid(self, value: str | None) -> bool:
        return self.session_of(value) is not None

    def session_of(self, value: str | None) -> str | None:
        """The session a cookie value names, None when this process did not sign it or it has expired."""
        if not value:
            return None
        try:
            return self._signer.unsign(value, max_age=self.max_age_s).decode("ascii")
        except (BadSignature, UnicodeError):  # SignatureExpired is a BadSignature
            return None

    def set_cookie(self) -> str:
        return f"{self.name}={self.issue()}; Path=/; Max-Age={self.max_age_s}; HttpOnly; SameSite=Strict"
