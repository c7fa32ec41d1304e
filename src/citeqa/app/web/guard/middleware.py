"""The ASGI guard in front of the Gradio app (:func:`citeqa.app.web.server.build_server` puts it there).

It sees every request before any Gradio route, including Gradio's own CORS handling. In order:

1. **Host.** ``Host`` must name the address the server listens on, a loopback name
   (``127.0.0.1``, ``localhost``, ``[::1]``) or a name given with ``--allowed-host``;
   on a wildcard address (``0.0.0.0``, ``::``) any IP address and the machine's host name
   are accepted too. A DNS-rebinding page reaches the server under its own name, so it
   is refused (403) before anything is read or answered.
2. **Origin.** A request whose ``Origin`` is not this server's own origin is refused
   (403), and so is a state-changing request (POST, PUT, PATCH, DELETE) or a call to
   the upload and queue routes that a browser marks ``Sec-Fetch-Site: cross-site``.
   Clients that send neither (``gradio_client``, curl) are let through: only browsers
   act for another site.
3. **Login.** With ``--auth``, after :data:`LOGIN_FAILURES` wrong logins from one
   address within :data:`LOGIN_WINDOW_S` seconds further attempts get 429 until the
   window has passed; and Gradio's routes that do not check the login themselves
   (:data:`LOGIN_GATED`, e.g. ``/gradio_api/cancel`` and ``/reset``) need it.
4. **Uploads.** ``/gradio_api/upload`` needs the page's session: a cookie
   (``HttpOnly``, ``SameSite=Strict``, signed with a per-process secret) that the
   server sets on the page itself, which another site can neither read nor send. The
   upload cache has a quota (:attr:`Policy.upload_quota_bytes`, counting uploads only); files older than
   an hour are deleted by Gradio (``delete_cache``, :class:`~citeqa.app.web.holder.UploadSettings`), and the upload handler removes the files
   it has consumed (:func:`discard_uploads`).
5. **Size.** A body larger than the route's limit (:data:`MAX_BODY_BYTES` for every
   route but uploads) is refused with 413: from ``Content-Length`` before a byte is
   read, and while streaming for bodies without one.
6. **Files.** A POST to a Gradio route under ``/gradio_api/`` is read whole (within
   the size limit) before Gradio sees it; every file it names (a dict with a string
   ``path``, at any depth) must be a file this server's upload route wrote for the
   request's own page session (:class:`~citeqa.app.web.guard.ledger.UploadLedger`), else
   403. ``blocks.has_launched`` is set as well, so Gradio's own path check runs too.
7. **Calls and arguments.** A call whose body does not fit its Gradio route (not an object, a
   field the route does not take, an endpoint or ``fn_index`` that names no event, an unknown or
   missing argument of ``/call/v2/NAME``) is refused with one line (:mod:`~citeqa.app.web.guard.calls`),
   since Gradio would answer 500 with a traceback, a list of pydantic errors, or drop the field.
   A positional call of ``/ask`` or ``/check`` (``/gradio_api/call/ask``, ``run/``, ``api/``,
   or ``queue/join`` with its ``fn_index``) that sends fewer values than the endpoint has
   parameters is refused (422) with the API's error record naming the first missing one, since
   Gradio would refuse it only after logging a traceback (:mod:`citeqa.app.web.api`); one that
   sends more is refused (422) too, where Gradio would drop the extra values.
   A value that does not fit its input (a file argument sent as text or as ``{"url": ...}``) is
   refused (422) with one line, logged as one line, since Gradio would log a pydantic traceback
   and answer ``{"error": null}``.
8. **Event streams.** ``/gradio_api/queue/data`` for a session with no events waiting, and
   ``/gradio_api/call/NAME/EVENT_ID`` for an event that is not waiting, are 404 before Gradio starts
   a stream it would fail inside, with a traceback; a session's events are read by one stream at a
   time (409 for a second one: two would share its messages, and Gradio fails with a ``KeyError``
   when both end); a client address holds at most :attr:`Policy.max_streams_per_client` heartbeat
   streams open (429 past them) (:mod:`~citeqa.app.web.guard.streams`).
9. **Closed routes.** ``/gradio_api/openapi.json`` and Gradio's ``/monitoring`` routes (analytics
   without a login check unless ``--auth``) are 404: citeqa's API is described by ``/gradio_api/info``.
10. **Pending uploads.** ``/gradio_api/file=PATH`` of a file uploaded and not yet added is served only
    to the page session that uploaded it (403 for any other).

Every refusal is a JSON ``{"error": "..."}`` (plus ``"field"`` for an API argument) with the status code; nothing reaches the
Gradio app, and nothing is logged as a traceback.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Awaitable, Callable, Iterable
from http.cookies import SimpleCookie
from typing import Any

from citeqa.app.web.guard.ledger import UploadLedger, file_paths
from citeqa.app.web.guard.rules import (
    LoginLimiter,
    OneEach,
    Policy,
    Sessions,
    StreamLimit,
    normal_host,
    same_origin,
)
from citeqa.app.web.guard.streams import counted_stream, one_stream
from citeqa.app.web.validation import ApiError
from citeqa.messages import SERVER

Scope = dict[str, Any]
ASGIMessage = dict[str, Any]
Receive = Callable[[], Awaitable[ASGIMessage]]
Send = Callable[[ASGIMessage], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


UPLOAD_PATH = "/gradio_api/upload"
QUEUE_DATA_PATH = "/gradio_api/queue/data"
#: Routes a browser must not reach from another site even with a GET (the queue's event stream).
CROSS_SITE_REFUSED = (UPLOAD_PATH, "/gradio_api/queue/")
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOGIN_PATHS = ("/login", "/login/")
#: Gradio routes without a login check of their own; with --auth the guard requires one.
LOGIN_GATED = (
    "/gradio_api/cancel",
    "/gradio_api/heartbeat/",
    "/gradio_api/reset",
    "/gradio_api/stream/",
    "/gradio_api/run-history",
    "/gradio_api/vibe",
    "/gradio_api/undo-vibe",
    "/monitoring",
)
#: Gradio routes citeqa does not serve at all: a route list, and analytics that need no login without --auth.
CLOSED = ("/gradio_api/openapi.json", "/monitoring")
#: A page's heartbeat stream: one per browser tab, open for as long as the tab.
HEARTBEAT_PATH = "/gradio_api/heartbeat/"
#: Gradio's routes that serve a file of the cache by its path.
FILE_ROUTES = ("/gradio_api/file=", "/gradio_api/file/")
#: Routes whose body may name files: Gradio's event routes. Each file must be an upload of the request's session.
FILE_CHECKED = ("/gradio_api/",)
#: Pages whose response carries the session cookie uploads need.
PAGE_PATHS = ("/", "")


class Refusal(Exception):
    """A request the guard answers itself, with a status and a one-line reason."""

    def __init__(
        self, status: int, message: str, headers: Iterable[tuple[str, str]] = (), field: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.headers = tuple(headers)
        self.field = field  # the API argument at fault, for the API's error record


class Guard:
    """ASGI middleware: host, origin, login, upload and size checks (see the module docstring).

    ``logged_in(cookies)`` says whether a request's cookies hold a valid login; None
    when the server has no ``--auth``. ``api_call(path, body)`` names the API endpoint a
    request calls and its parameters (None for any other request; None: not checked);
    ``inputs(path, body)`` says why an event's values do not fit its inputs (None when they do);
    ``calls(path, body)`` raises :class:`Refusal` for a call whose body does not fit its route (body:
    the parsed JSON, None when empty); ``stream_session(path, query)`` names the session whose events
    a GET reads as a stream (None for any other request).
    """

    def __init__(
        self,
        app: ASGIApp,
        policy: Policy,
        logged_in: Callable[[dict[str, str]], bool] | None = None,
        pending: Callable[[str], bool] | None = None,
        api_call: Callable[[str, Any], tuple[str, tuple[str, ...]] | None] | None = None,
        inputs: Callable[[str, Any], str | None] | None = None,
        calls: Callable[[str, Any], None] | None = None,
        stream_session: Callable[[str, str], str | None] | None = None,
    ) -> None:
        self.app = app
        self.calls = calls
        self.stream_session = stream_session
        self.api_call = api_call
        self.inputs = inputs  # why a request's values do not fit its event's inputs (None: they do)
        self.policy = policy
        self.logged_in = logged_in
        self.pending = pending  # whether the queue holds events of a session_hash (None: not checked)
        self.sessions = Sessions(policy.port)
        self.logins = LoginLimiter(policy.login_failures, policy.login_window_s)
        self.uploads = UploadLedger()
        self.streams = StreamLimit(policy.max_streams_per_client)
        self.event_streams = OneEach()  # sessions whose events a stream is reading

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        try:
            limit = self.check(scope, headers)
        except Refusal as refusal:
            await _refuse(scope, send, refusal)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        if scope.get("path", "").startswith(HEARTBEAT_PATH):
            await self._stream(scope, receive, send, headers, limit)
            return
        session = self._stream_session(scope)
        if session is not None:
            await self._event_stream(scope, receive, send, headers, limit, session)
            return
        if _names_files(scope):
            try:
                body = await _read_body(receive, limit)
                self.check_files(headers, body, scope.get("path", ""))
            except Refusal as refusal:
                await _refuse(scope, send, refusal)
                return
            receive = _replay(body, receive)
        await self._forward(scope, receive, send, headers, limit)

    def session(self, headers: dict[str, str]) -> str | None:
        """The page session of a request (None without a valid cookie)."""
        return self.sessions.session_of(_cookies(headers).get(self.sessions.name))

    def check_files(self, headers: dict[str, str], body: bytes, path: str = "") -> None:
        """Refusal unless the body fits the call route at ``path`` (``calls``), every file it names is an
        upload of the request's own session, and an API call sends one value for each parameter.

        The body is parsed as the app would parse it (``json.loads`` of the bytes: UTF-16 and
        ``\\u`` escapes included), so no spelling hides a file; a body that is not JSON is
        refused (Gradio's event routes take JSON only; uploads have their own route).
        """
        if not body.strip():
            if self.calls is not None:
                self.calls(path, None)
            return
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            raise Refusal(400, SERVER["bad_json"]) from None
        if self.calls is not None:
            self.calls(path, data)
        session = self.session(headers)
        for named in file_paths(data):
            if not self.uploads.owns(session, named):
                raise Refusal(403, SERVER["not_uploaded"])
        if self.api_call is not None:
            _check_arguments(self.api_call(path, data), data)
        problem = self.inputs(path, data) if self.inputs is not None else None
        if problem is not None:
            print(f"citeqa: refused {path[:80]}: {problem}", file=sys.stderr, flush=True)  # one line, no traceback
            raise Refusal(422, problem)

    def check(self, scope: Scope, headers: dict[str, str]) -> int:
        """Raise Refusal for a request that must not reach the app; else its body limit."""
        policy = self.policy
        host = headers.get("host")
        name = normal_host(host or "")
        if not policy.host_allowed(name):
            shown = (host or "(none)")[:100]
            raise Refusal(
                403,
                f"host {shown!r} is not served here; start citeqa serve with "
                f"--allowed-host {name or 'NAME'} to allow it",
            )
        path = scope.get("path", "")
        method = scope.get("method", "GET")
        origin = headers.get("origin")
        if origin is not None and not same_origin(origin, host or ""):
            raise Refusal(403, f"requests from another site ({origin[:100]}) are refused")
        sensitive = method in STATE_CHANGING or path.startswith(CROSS_SITE_REFUSED)
        if sensitive and headers.get("sec-fetch-site") == "cross-site":
            raise Refusal(403, "requests from another site are refused")
        if scope["type"] == "websocket":
            return 0
        if path.startswith(CLOSED):
            raise Refusal(404, SERVER["closed"])
        if self.logged_in is not None:
            if method == "POST" and path in LOGIN_PATHS:
                wait = self.logins.wait_s(_client(scope))
                if wait > 0:
                    raise Refusal(
                        429, f"too many failed logins; try again in {wait:.0f} s", [("retry-after", str(int(wait) + 1))]
                    )
            if path.startswith(LOGIN_GATED) and not self.logged_in(_cookies(headers)):
                raise Refusal(401, "not logged in")
        session = self._stream_session(scope)
        if session is not None and self.pending is not None and not self.pending(session):
            # Gradio would fail inside the started stream, with a traceback
            raise Refusal(404, SERVER["no_events" if path == QUEUE_DATA_PATH else "no_event"])
        if path.startswith(FILE_ROUTES) and method in ("GET", "HEAD"):
            self._check_pending(path, headers)
        if path == UPLOAD_PATH:
            return self._upload_limit(headers)
        limit = policy.max_body_bytes
        _check_length(headers, limit)
        return limit

    def _stream_session(self, scope: Scope) -> str | None:
        """The session whose events a request reads as a stream (None when it reads none)."""
        if scope.get("method") != "GET" or self.stream_session is None:
            return None
        return self.stream_session(scope.get("path", ""), scope.get("query_string", b"").decode("latin-1"))

    async def _event_stream(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], limit: int, session: str
    ) -> None:
        """Run a stream of ``session``'s events, the only one open for it (409 while another is)."""

        def forward(out: Send) -> Awaitable[None]:
            return self._forward(scope, receive, out, headers, limit)

        if not await one_stream(self.event_streams, session, forward, send):
            await _refuse(scope, send, Refusal(409, SERVER["stream_open"]))

    def _check_pending(self, path: str, headers: dict[str, str]) -> None:
        """Refusal when the file a file route names is an upload still pending for another page session."""
        named = next(path[len(prefix) :] for prefix in FILE_ROUTES if path.startswith(prefix))
        owners = self.uploads.owners(named)
        if owners and self.session(headers) not in owners:
            raise Refusal(403, SERVER["not_uploaded"])

    async def _stream(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], limit: int) -> None:
        """Run a heartbeat stream, at most :attr:`Policy.max_streams_per_client` open per client address."""

        def forward(out: Send) -> Awaitable[None]:
            return self._forward(scope, receive, out, headers, limit)

        if not await counted_stream(self.streams, _client(scope), forward, send):
            shown = SERVER["too_many_streams"].format(limit=self.streams.limit)
            await _refuse(scope, send, Refusal(429, shown, [("retry-after", "15")]))

    def _upload_limit(self, headers: dict[str, str]) -> int:
        policy = self.policy
        if not policy.uploads:
            raise Refusal(403, "uploads are disabled for this server")
        if not self.sessions.valid(_cookies(headers).get(self.sessions.name)):
            raise Refusal(403, "uploads need the page's session; open the page and upload from there")
        quota = policy.upload_quota_bytes
        _check_length(headers, quota)  # larger than the whole cache: too large, whatever is in it
        used = self.uploads.used_bytes()  # uploads only: Gradio's copies of the page's outputs are not
        room = quota - used
        if room <= 0 or _declared(headers) > room:
            raise Refusal(
                507,
                f"the upload cache is full ({quota / 1_048_576:.0f} MB); add or discard the "
                "files already uploaded, or try again later",
            )
        return room

    async def _forward(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], limit: int) -> None:
        """Run the app with the body counted as it streams and the response watched."""
        state = {"read": 0, "refused": False, "started": False}
        path, method = scope.get("path", ""), scope.get("method", "GET")
        is_login = self.logged_in is not None and method == "POST" and path in LOGIN_PATHS
        is_page = method in ("GET", "HEAD") and path in PAGE_PATHS
        is_upload = method == "POST" and path == UPLOAD_PATH
        answer: list[bytes] = []
        client = _client(scope)

        async def counted_receive() -> ASGIMessage:
            if state["refused"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["read"] += len(message.get("body", b""))
                if state["read"] > limit:
                    state["refused"] = True
                    if not state["started"]:
                        state["started"] = True
                        await _refuse(scope, send, _too_large(limit))
                    return {"type": "http.disconnect"}  # the app stops reading and gives up
            return message

        async def watched_send(message: ASGIMessage) -> None:
            if state["refused"]:
                return  # the 413 has been sent; whatever the app says after it is dropped
            if message["type"] == "http.response.start":
                state["started"] = True
                status = message["status"]
                if is_login:
                    if status == 200:
                        self.logins.succeeded(client)
                    elif status in (400, 401, 403):
                        self.logins.failed(client)
                if is_page and status == 200 and not self.sessions.valid(_cookies(headers).get(self.sessions.name)):
                    message = {
                        **message,
                        "headers": [*message.get("headers", []), (b"set-cookie", self.sessions.set_cookie().encode())],
                    }
                state["status"] = status
            elif message["type"] == "http.response.body" and is_upload and state.get("status") == 200:
                answer.append(message.get("body", b""))
                if not message.get("more_body", False):
                    self._record_upload(headers, b"".join(answer))  # before the client learns the paths
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except Exception:
            if not state["refused"]:
                raise  # a real error: let the server log it
            # the app failed because the body was cut off after the 413; nothing to report

    def _record_upload(self, headers: dict[str, str], body: bytes) -> None:
        session = self.session(headers)
        with contextlib.suppress(ValueError, RecursionError):
            paths = json.loads(body)
            if session and isinstance(paths, list):
                self.uploads.record(session, [p for p in paths if isinstance(p, str)])


def _check_arguments(call: tuple[str, tuple[str, ...]] | None, data: Any) -> None:
    """Refusal naming the first parameter of an API ``call`` that a positional body leaves out, or
    saying how many values it takes when the body sends more."""
    values = data.get("data") if isinstance(data, dict) else None
    if call is None or not isinstance(values, list):
        return
    endpoint, names = call
    takes = ", ".join(names)
    if len(values) < len(names):
        missing = names[len(values)]
        raise Refusal(
            422, SERVER["missing_argument"].format(name=missing, endpoint=f"/{endpoint}", names=takes), field=missing
        )
    if len(values) > len(names):
        shown = SERVER["too_many_values"].format(
            endpoint=f"/{endpoint}", count=len(names), names=takes, sent=len(values)
        )
        raise Refusal(422, shown)


def _names_files(scope: Scope) -> bool:
    """Whether a request is one whose body may name server files (a POST to a Gradio event route)."""
    path = scope.get("path", "")
    return scope.get("method") == "POST" and path.startswith(FILE_CHECKED) and path != UPLOAD_PATH


async def _read_body(receive: Receive, limit: int) -> bytes:
    """The whole request body; Refusal 413 past ``limit`` (it is read in full only below the limit)."""
    parts, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        parts.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app ``body`` once, then waits on the real one (for a disconnect)."""
    sent = False

    async def replayed() -> ASGIMessage:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _headers(scope: Scope) -> dict[str, str]:
    """Request headers, lower-case names; for a repeated header the first value counts."""
    out: dict[str, str] = {}
    for key, value in scope.get("headers", []):
        out.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    return out


def _cookies(headers: dict[str, str]) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    with contextlib.suppress(Exception):
        jar.load(headers.get("cookie", ""))
    return {k: m.value for k, m in jar.items()}


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "?"


def _declared(headers: dict[str, str]) -> int:
    value = headers.get("content-length", "").strip()
    return int(value) if value.isdigit() else 0


def _check_length(headers: dict[str, str], limit: int) -> None:
    value = headers.get("content-length")
    if value is None:
        return
    if not value.strip().isdigit():
        raise Refusal(400, "Content-Length is not a number")
    if int(value) > limit:
        raise _too_large(limit)


def _too_large(limit: int) -> Refusal:
    shown = f"{limit / 1_048_576:.1f} MB" if limit >= 1_048_576 else f"{limit:,} bytes"
    return Refusal(413, f"request body too large (the limit is {shown})", [("connection", "close")])


async def _refuse(scope: Scope, send: Send, refusal: Refusal) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008, "reason": str(refusal)[:120]})
        return
    body = json.dumps(ApiError(error=str(refusal), field=refusal.field).record()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    headers += [(k.encode(), v.encode()) for k, v in refusal.headers]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
