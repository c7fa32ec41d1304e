"""The web server: the Gradio app behind one ASGI guard, served by uvicorn.

:func:`build_server` mounts the Blocks app into a FastAPI parent with
``gr.mount_gradio_app`` (Gradio's documented way to serve an app from one's own
FastAPI/uvicorn server) and puts :class:`~citeqa.app.web.guard.middleware.Guard` in front of it as the
parent's only middleware, so the guard sees every request before any Gradio route (what it
checks: :mod:`citeqa.app.web.guard.middleware`). Sockets and uvicorn are :mod:`citeqa.app.web.serving`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from citeqa.app.web.api import ENDPOINTS, arguments_of, required_of
from citeqa.app.web.api_sessions import keep_no_api_sessions
from citeqa.app.web.guard.calls import check_call
from citeqa.app.web.guard.middleware import QUEUE_DATA_PATH, Guard
from citeqa.app.web.guard.rules import Policy

if TYPE_CHECKING:  # Gradio and FastAPI load when the server is built
    import gradio as gr
    from fastapi import FastAPI
    from gradio.block_function import BlockFunction
    from gradio.routes import App


def build_server(
    blocks: gr.Blocks,
    policy: Policy,
    *,
    auth: tuple[str, str] | None = None,
    css: str | None = None,
    max_file_size: int | None = None,
) -> FastAPI:
    """The ASGI app to serve: ``blocks`` mounted at ``/`` in a FastAPI parent guarded by :class:`Guard`."""
    import gradio as gr
    from fastapi import FastAPI

    no_docs: dict[str, Any] = {
        "openapi_url": None,
        "docs_url": None,
        "redoc_url": None,
    }  # no route list without a login
    parent = FastAPI(**no_docs)
    gr.mount_gradio_app(
        parent,
        blocks,
        path="/",
        server_name=policy.bind_host,
        server_port=policy.port,
        footer_links=["api"],
        app_kwargs=dict(no_docs),
        auth=auth,
        show_error=False,
        max_file_size=max_file_size,
        css=css,
    )
    blocks.has_launched = True  # mount_gradio_app leaves it False, which turns Gradio's own path check off
    keep_no_api_sessions(blocks)  # an /ask call leaves no session state behind
    gradio_app = _mounted(parent)  # the one mounted above
    parent.add_middleware(
        Guard,
        policy=policy,
        logged_in=_login_check(gradio_app) if auth else None,
        # a session waits while Gradio holds an event of it whose result no stream has read yet
        pending=lambda session_hash: bool(blocks._queue.pending_event_ids_session.get(session_hash)),
        api_call=_api_call(blocks),
        inputs=_input_check(blocks),
        calls=_call_check(blocks),
        stream_session=_stream_session(blocks),
    )
    parent.state.policy = policy  # serving.run reads the trusted proxies from it
    return parent


def _mounted(parent: FastAPI) -> App:
    """The Gradio app mounted in ``parent`` by :func:`build_server`."""
    from starlette.routing import Mount

    return cast("App", next(r.app for r in parent.routes if isinstance(r, Mount)))


def mounted_blocks(parent: FastAPI) -> gr.Blocks:
    """The Blocks app :func:`build_server` mounted in ``parent`` (tests and benchmarks look into it)."""
    return _mounted(parent).get_blocks()


def _login_check(gradio_app: App) -> Callable[[dict[str, str]], bool]:
    """Whether cookies hold a login token of this Gradio app (the cookies Gradio's login sets)."""

    def logged_in(cookies: dict[str, str]) -> bool:
        names = (f"access-token-{gradio_app.cookie_id}", f"access-token-unsecure-{gradio_app.cookie_id}")
        return any(cookies.get(n) in gradio_app.tokens for n in names if cookies.get(n))

    return logged_in


#: Gradio's routes that call an endpoint by name with positional values (``/call/v2/`` takes names).
CALL_PREFIXES = ("/gradio_api/call/", "/gradio_api/run/", "/gradio_api/api/")
QUEUE_JOIN_PATH = "/gradio_api/queue/join"


def _event_of(blocks: gr.Blocks, path: str, data: Any) -> BlockFunction | None:
    """The event a request runs: named in the path, or the ``fn_index`` of a ``queue/join`` body."""
    if path.rstrip("/") == QUEUE_JOIN_PATH:
        index = data.get("fn_index") if isinstance(data, dict) else None
        return blocks.fns.get(index) if type(index) is int else None
    for prefix in CALL_PREFIXES:
        if path.startswith(prefix) and not path.startswith("/gradio_api/call/v2/"):
            name = path[len(prefix) :].strip("/")
            return next((fn for fn in blocks.fns.values() if fn.api_name == name), None)
    return None


def _api_call(blocks: gr.Blocks) -> Callable[[str, Any], tuple[str, tuple[str, ...]] | None]:
    """Which API endpoint a request calls, with its parameters: by name in the path, or by the
    ``fn_index`` of a ``queue/join`` body (None for every other request)."""

    def api_call(path: str, data: Any) -> tuple[str, tuple[str, ...]] | None:
        name = None
        for prefix in CALL_PREFIXES:
            if path.startswith(prefix):
                name = path[len(prefix) :].strip("/")
        if path.rstrip("/") == QUEUE_JOIN_PATH and isinstance(data, dict) and type(data.get("fn_index")) is int:
            fn = blocks.fns.get(data["fn_index"])
            name = fn.api_name if fn is not None and fn.api_visibility == "public" else None
        arguments = arguments_of(name) if name else None
        return (name, arguments) if name and arguments is not None else None  # (arguments: None without a name)

    return api_call


def _call_check(blocks: gr.Blocks) -> Callable[[str, Any], None]:
    """Refusal for a call whose body does not fit its Gradio route (:func:`~citeqa.app.web.guard.calls.check_call`)."""
    api = {name: (names, required_of(name)) for name, names in ENDPOINTS.items()}

    def check(path: str, data: Any) -> None:
        check_call(blocks.fns, api, path, data)

    return check


#: Gradio's streams of one event's messages: ``call/NAME/EVENT_ID`` and ``call/v2/NAME/EVENT_ID``.
CALL_STREAM_PREFIX = "/gradio_api/call/"


def _stream_session(blocks: gr.Blocks) -> Callable[[str, str], str | None]:
    """The session whose events a GET reads as a stream: ``queue/data``'s ``session_hash``, or the session
    of the event a ``call/NAME/EVENT_ID`` stream names, found as Gradio finds it (None for other requests)."""
    from urllib.parse import parse_qs

    def session_of(path: str, query: str) -> str | None:
        if path == QUEUE_DATA_PATH:
            return parse_qs(query).get("session_hash", [""])[0]
        if not path.startswith(CALL_STREAM_PREFIX):
            return None
        parts = path[len(CALL_STREAM_PREFIX) :].split("/")
        if not all(parts) or not (len(parts) == 2 or (len(parts) == 3 and parts[0] == "v2")):
            return None  # no route of Gradio's streams
        event_id = parts[-1]
        queue = blocks._queue
        event = queue.event_ids_to_events.get(event_id)
        if event is not None:
            return str(event.session_hash)
        held = (session for session, ids in queue.pending_event_ids_session.items() if event_id in ids)
        return next(held, event_id)  # an event of no session of its own streams under its id

    return session_of


def _input_check(blocks: gr.Blocks) -> Callable[[str, Any], str | None]:
    """Why the values a request sends do not fit its event's inputs (None when they do): each input with a
    data model (a file) is checked with it as Gradio would, which logs a traceback for a file argument sent
    as text or as ``{"url": ...}`` and answers ``{"error": null}``."""
    from pydantic import ValidationError

    def check(path: str, data: Any) -> str | None:
        fn = _event_of(blocks, path, data)
        values = data.get("data") if isinstance(data, dict) else None
        if fn is None or not isinstance(values, list):
            return None
        for n, (block, value) in enumerate(zip(fn.inputs, values, strict=False), start=1):
            model = getattr(block, "data_model", None)
            if model is None or value is None or getattr(block, "stateful", False):
                continue
            try:
                model.model_validate(value, context={"validate_meta": True})
            except (ValidationError, ValueError, TypeError):
                return event_value_refusal(n, model.__name__, value)
        return None

    return check


def event_value_refusal(n: int, model: str, value: Any) -> str:
    """The one-line reason an event's ``n``-th value does not fit its input (``model``: Gradio's data model)."""
    from citeqa.messages import SERVER

    if model in ("FileData", "ListFiles"):
        return SERVER["not_a_file"].format(n=n, kind=_sent_as(value))
    return SERVER["bad_input"].format(n=n, model=model)


def _sent_as(value: Any) -> str:
    """What a file argument was sent as, for the refusal."""
    if isinstance(value, list):
        return "a list holding " + (_sent_as(value[0]) if value else "nothing")
    if isinstance(value, dict):
        return "an object with a url and no path" if "url" in value and "path" not in value else "an object"
    return {str: "text", bool: "a boolean", int: "a number", float: "a number"}.get(type(value), type(value).__name__)
