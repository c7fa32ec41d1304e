"""Issue [3/6] item 3: no tracebacks or 500s from Gradio's API routes. Malformed calls of ``/call/v2/NAME``,
``/call/``, ``/run/``, ``/api/`` and ``/queue/join``, unknown endpoints and events, extra values and fields, and
event streams that read nothing or a session another stream reads: each is a 4xx with one line, and the server
logs no traceback. Real server, real HTTP (the guarded app as ``citeqa serve`` runs it)."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator

import httpx
import pytest

from citeqa.app.web.server import mounted_blocks
from tests.app.web.test_server_files import join
from tests.app.web.test_validation import call_ask

ASK_TAKES = "/ask takes question, history, k, language"
NO_ENDPOINT = "no API endpoint {name}; this server's API is /ask, /check (see /gradio_api/info)"
QUESTION = "When was the windmill of Greyhill restored?"


@pytest.fixture(scope="module")
def served(guarded_server, tmp_path_factory, cache_dir) -> Iterator:
    server = guarded_server(tmp_path_factory.mktemp("api-errors"), cache_dir)
    yield server
    server.close()


def post(served, path: str, raw: str) -> httpx.Response:
    with served.client() as client:
        return client.post(path, content=raw, headers={"content-type": "application/json"})


def one_line(response: httpx.Response) -> dict:
    """The refusal's record; it is JSON with a one-line error (and the argument at fault, if any)."""
    record = response.json()
    assert set(record) <= {"error", "field"} and "\n" not in record["error"] and len(record["error"]) < 300, record
    return record


def no_traceback(capfd) -> None:
    log = capfd.readouterr().err
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]


def fn_of(served, api_name: str) -> int:
    blocks = mounted_blocks(served.running._server.config.app)
    return next(i for i, fn in blocks.fns.items() if fn.api_name == api_name)


# --------------------------------------------------------------------------- /call/v2/NAME (arguments by name)


@pytest.mark.parametrize(
    "path,raw,status,record",
    [
        (
            "/gradio_api/call/v2/ask",
            '{"question": "q", "foo": 1}',
            422,
            {"error": f"unknown argument: 'foo' ({ASK_TAKES})", "field": "foo"},
        ),
        (
            "/gradio_api/call/v2/check",
            '{"claim": "c", "foo": 1}',
            422,
            {"error": "unknown argument: 'foo' (/check takes claim, k)", "field": "foo"},
        ),
        (
            "/gradio_api/call/v2/ask",
            '{"question": "q", "session_hash": "abc"}',
            422,
            {"error": f"unknown argument: 'session_hash' ({ASK_TAKES})", "field": "session_hash"},
        ),
        (
            "/gradio_api/call/v2/ask",
            "{}",
            422,
            {"error": f"missing argument: question ({ASK_TAKES})", "field": "question"},
        ),
        (
            "/gradio_api/call/v2/check",
            '{"k": 3}',
            422,
            {"error": "missing argument: claim (/check takes claim, k)", "field": "claim"},
        ),
        ("/gradio_api/call/v2/nosuch", '{"a": 1}', 404, {"error": NO_ENDPOINT.format(name="'nosuch'")}),
        ("/gradio_api/call/v2/turn", "{}", 404, {"error": NO_ENDPOINT.format(name="'turn'")}),  # a private event
        (
            "/gradio_api/call/v2/ask",
            '["q"]',
            422,
            {"error": 'the request body must be a JSON object: {"argument": value, ...}'},
        ),
        (
            "/gradio_api/call/v2/ask",
            "",
            422,
            {"error": 'the request body must be a JSON object: {"argument": value, ...}'},
        ),
    ],
)
def test_a_call_by_name_with_unknown_or_missing_arguments_is_one_line(served, path, raw, status, record, capfd):
    """Gradio answered the first seven with 500 and a traceback (a TypeError for an unknown or missing argument, a
    KeyError for an unknown endpoint), the last two with FastAPI's list of pydantic errors."""
    capfd.readouterr()
    response = post(served, path, raw)
    assert response.status_code == status, response.text
    assert one_line(response) == record
    no_traceback(capfd)


def test_a_good_call_by_name_still_runs(served, capfd):
    capfd.readouterr()
    with served.client() as client:
        started = client.post("/gradio_api/call/v2/check", json={"claim": QUESTION})
        assert started.status_code == 200, started.text
        stream = client.get(f"/gradio_api/call/v2/check/{started.json()['event_id']}").text
    assert "event: complete" in stream and '"claim"' in stream
    no_traceback(capfd)


# --------------------------------------------------------------------------- /call/, /run/, /api/ (positional)


@pytest.mark.parametrize("route", ["call", "run", "api"])
@pytest.mark.parametrize("name", ["nosuch", "turn"])  # turn: the chat's own event, private
def test_a_positional_call_of_no_endpoint_is_404_in_one_line(served, route: str, name: str, capfd):
    """An unknown name was a 500 with a traceback (FnIndexInferError); a private event's name ran it (with too few
    values: a traceback)."""
    capfd.readouterr()
    response = post(served, f"/gradio_api/{route}/{name}", '{"data": []}')
    assert response.status_code == 404, response.text
    assert one_line(response) == {"error": NO_ENDPOINT.format(name=repr(name))}
    no_traceback(capfd)


NOT_AN_OBJECT = 'the request body must be a JSON object: {"data": [value, ...]}'


@pytest.mark.parametrize("path", ["/gradio_api/api/ask", "/gradio_api/call/nosuch", "/gradio_api/run/nosuch"])
@pytest.mark.parametrize(
    "raw,error",
    [
        ('{"data": 5}', "the request body's data is not valid: Input should be a valid list"),
        ("{}", "the request body has no data field"),
        ("[1]", NOT_AN_OBJECT),
        ('"x"', NOT_AN_OBJECT),
        ("", NOT_AN_OBJECT),
        ("{not json", "the request body is not valid JSON"),
    ],
)
def test_a_malformed_body_is_one_line(served, path: str, raw: str, error: str, capfd):
    """Gradio answered these with FastAPI's 422, a list of pydantic errors echoing the input back."""
    capfd.readouterr()
    response = post(served, path, raw)
    assert response.status_code in (400, 422), response.text
    assert one_line(response) == {"error": error}
    no_traceback(capfd)


@pytest.mark.parametrize(
    "path,raw,error",
    [
        (
            "/gradio_api/run/ask",
            '{"data": ["q", [], 3, "auto"], "session_hash": 5}',
            "the request body's session_hash is not valid: Input should be a valid string",
        ),
        (
            "/gradio_api/run/ask",
            '{"data": ["q", [], 3, "auto"], "fn_index": "x"}',
            "the request body's fn_index is not valid: Input should be a valid integer, unable to parse string as an "
            "integer",
        ),
    ],
)
def test_a_field_of_the_wrong_type_is_one_line(served, path: str, raw: str, error: str, capfd):
    capfd.readouterr()
    response = post(served, path, raw)
    assert response.status_code == 422, response.text
    assert one_line(response) == {"error": error}
    no_traceback(capfd)


@pytest.mark.parametrize("route", ["call", "run", "api"])
def test_extra_positional_values_are_refused_not_dropped(served, route: str, capfd):
    """Gradio dropped values beyond the endpoint's parameters and answered the call."""
    capfd.readouterr()
    response = post(served, f"/gradio_api/{route}/ask", '{"data": ["q", [], 3, "auto", "extra"]}')
    assert response.status_code == 422, response.text
    assert one_line(response) == {"error": "too many values: /ask takes 4 (question, history, k, language), not 5"}
    response = post(served, f"/gradio_api/{route}/check", '{"data": ["a claim", 3, 4]}')
    assert response.status_code == 422, response.text
    assert one_line(response) == {"error": "too many values: /check takes 2 (claim, k), not 3"}
    no_traceback(capfd)


def test_extra_values_on_a_queue_join_of_the_api_are_refused_too(served):
    with served.client() as client:
        response = join(client, fn_of(served, "ask"), ["q", [], 3, "auto", "extra"])
    assert response.status_code == 422, response.text
    assert one_line(response) == {"error": "too many values: /ask takes 4 (question, history, k, language), not 5"}


@pytest.mark.parametrize(
    "route,field,takes",
    [
        ("call", "foo", "data, session_hash, oauth_token"),
        ("call", "fn_index", "data, session_hash, oauth_token"),  # call/ names its endpoint by path: Gradio drops it
        (
            "run",
            "foo",
            "session_hash, event_id, data, oauth_token, event_data, fn_index, trigger_id, simple_format, batched",
        ),
    ],
)
@pytest.mark.parametrize("endpoint", ["ask", "check"])
def test_unknown_fields_are_refused_not_dropped(served, route: str, field: str, takes: str, endpoint: str, capfd):
    capfd.readouterr()
    values = '["q", [], 3, "auto"]' if endpoint == "ask" else '["a claim", 3]'
    response = post(served, f"/gradio_api/{route}/{endpoint}", f'{{"data": {values}, "{field}": 1}}')
    assert response.status_code == 422, response.text
    expected = f"unknown field '{field}' in the request body (/gradio_api/{route}/{endpoint} takes {takes})"
    assert one_line(response) == {"error": expected}
    no_traceback(capfd)


@pytest.mark.parametrize("path", ["/gradio_api/run/ask", "/gradio_api/api/ask", "/gradio_api/queue/join"])
def test_an_fn_index_of_no_event_is_404_in_one_line(served, path: str, capfd):
    """Gradio looked the index up in its events: a KeyError, 500 and a traceback."""
    capfd.readouterr()
    body = {"data": ["q", [], 3, "auto"], "fn_index": 9999, "session_hash": secrets.token_hex(6)}
    response = post(served, path, json.dumps(body))
    assert response.status_code == 404, response.text
    assert one_line(response) == {"error": "fn_index 9999 names no event of this app"}
    no_traceback(capfd)


def test_an_fn_index_of_another_event_than_the_path_names_is_refused(served):
    """``/run/ask`` with ``/check``'s fn_index ran /check: the guard checked the values against /ask's parameters."""
    body = {"data": ["a claim", 3], "fn_index": fn_of(served, "check")}
    response = post(served, "/gradio_api/run/ask", json.dumps(body))
    assert response.status_code == 422, response.text
    assert one_line(response) == {
        "error": f"fn_index {body['fn_index']} is not the event that /gradio_api/run/ask names"
    }


def test_good_positional_calls_still_run(served):
    with served.client() as client:
        ran = client.post("/gradio_api/run/ask", json={"data": [QUESTION, [], 3, "auto"]})
        assert ran.status_code == 200 and ran.json()["data"][0]["question"] == QUESTION
        ran = client.post("/gradio_api/api/check", json={"data": [QUESTION, 3], "session_hash": "mine"})
        assert ran.status_code == 200 and "claim" in ran.json()["data"][0]


def test_history_that_is_not_a_list_is_refused(served):
    """A string as history was taken as one earlier question."""
    record = call_ask(served.url, '{"data": ["q", "an earlier question", 3, "auto"]}')
    assert record == {"error": "history must be a list of earlier questions, not text", "field": "history"}


# --------------------------------------------------------------------------- event streams


class HeldEngine:
    """The live engine with every ``ask`` held until ``gate`` is set (so that an event stays waiting)."""

    def __init__(self, engine) -> None:
        self.engine = engine
        self.gate = threading.Event()

    def ask(self, *args, **kwargs):
        if not self.gate.wait(300):  # only a bound on a test that never opens it
            raise TimeoutError("the test never opened the gate")
        return self.engine.ask(*args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self.engine, name)


@pytest.fixture
def held(served) -> Iterator[HeldEngine]:
    live = served.holder.engine
    engine = HeldEngine(live)
    served.holder.swap(engine)
    try:
        yield engine
    finally:
        engine.gate.set()
        served.holder.swap(live)


def first_line(lines: Iterator[str]) -> str:
    return next(line for line in lines if line)


def opened(client: httpx.Client, path: str) -> tuple[int, dict | None]:
    """The status of a stream request and its refusal record (None for a stream that started, which is closed
    at once: read, it would not end while Gradio sends heartbeats)."""
    with client.stream("GET", path) as response:
        if response.status_code == 200:
            return 200, None
        response.read()
        return response.status_code, one_line(response)


STREAM_OPEN = {"error": "this session's events are already read by another open stream; read them there"}


def test_a_second_stream_of_one_session_is_409_and_the_first_still_completes(served, held: HeldEngine, capfd):
    """Two ``/queue/data`` streams for one session shared its messages, and the second to end failed with a
    KeyError (a traceback in the log)."""
    capfd.readouterr()
    session = secrets.token_hex(6)
    with served.client() as client, served.client() as other:
        assert join(client, fn_of(served, "ask"), [QUESTION, [], 3, "auto"], session).status_code == 200
        with client.stream("GET", f"/gradio_api/queue/data?session_hash={session}") as first:
            lines = first.iter_lines()
            assert first.status_code == 200 and '"estimation"' in first_line(lines)
            assert opened(other, f"/gradio_api/queue/data?session_hash={session}") == (409, STREAM_OPEN)
            held.gate.set()
            rest = "\n".join(lines)
        assert '"process_completed"' in rest and '"close_stream"' in rest
        after = opened(other, f"/gradio_api/queue/data?session_hash={session}")  # its events have all been read
        assert after == (404, {"error": "no events are waiting for that session; join the queue first"})
    no_traceback(capfd)


@pytest.mark.parametrize("route", ["call", "call/v2"])
def test_a_second_stream_of_one_call_is_409(served, held: HeldEngine, route: str, capfd):
    capfd.readouterr()
    with served.client() as client, served.client() as other:
        body = {"data": [QUESTION, [], 3, "auto"]} if route == "call" else {"question": QUESTION}
        started = client.post(f"/gradio_api/{route}/ask", json=body)
        assert started.status_code == 200, started.text
        path = f"/gradio_api/{route}/ask/{started.json()['event_id']}"
        with client.stream("GET", path) as first:
            lines = first.iter_lines()
            assert first.status_code == 200  # the headers come when the stream starts: it is open
            assert opened(other, path) == (409, STREAM_OPEN)
            held.gate.set()
            rest = "\n".join(lines)
        assert "event: complete" in rest and QUESTION in rest
        assert opened(other, path)[0] == 404  # its result has been read
    no_traceback(capfd)


@pytest.mark.parametrize("path", ["/gradio_api/call/ask/nosuchevent", "/gradio_api/call/v2/ask/nosuchevent"])
def test_a_stream_of_an_event_that_is_not_waiting_is_404_in_one_line(served, path: str, capfd):
    """Gradio started the stream and failed inside it: a traceback in the log and the response cut off."""
    capfd.readouterr()
    with served.client() as client:
        refused = opened(client, path)
    assert refused == (404, {"error": "no event with that id is waiting; start one with a POST to the endpoint first"})
    no_traceback(capfd)
