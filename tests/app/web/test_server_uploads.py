"""Issue [1/7] "Uploads and sessions", items 4-6: files per add, progress and cancel; conversation downloads
only when asked; file arguments, heartbeats, closed routes and pending uploads. Real servers, real HTTP.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from pathlib import Path

import httpx
import pytest

from citeqa.app.web.server import mounted_blocks
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from tests.app.web.test_server_files import file_data, join

TEXTS = {
    "pier.txt": "The pier of Alvor was rebuilt in 1977.",
    "mill.md": "# The tide mill\n\nThe tide mill of Sines ground flour until 1961.",
    "quay.txt": "The quay of Porto Velho was paved in 1902.",
}


@pytest.fixture(scope="module")
def served(guarded_server, tmp_path_factory, cache_dir: Path):
    s = guarded_server(tmp_path_factory.mktemp("served"), cache_dir, max_files=2)
    yield s
    s.close()


def fn_index(served, name: str) -> int:
    blocks = mounted_blocks(served.running._server.config.app)
    return next(i for i, fn in blocks.fns.items() if getattr(fn.fn, "__name__", "") == name)


def uploaded(client: httpx.Client, names: list[str]) -> list[dict]:
    """Upload ``names`` (from TEXTS) from the page; their FileData as the page sends them to an event."""
    files = []
    for name in names:
        response = client.post("/gradio_api/upload", files={"files": (name, TEXTS[name].encode(), "text/plain")})
        assert response.status_code == 200, response.text
        files.append(file_data(response.json()[0], name))
    return files


def messages(
    client: httpx.Client, session: str, events: set[str], then: dict | None = None, timeout: float = 120
) -> dict[str, list[dict]]:
    """Every message of the session's ``events`` (by event id), read from the queue's stream until all
    completed; ``then[event]()`` runs when that event completes."""
    seen: dict[str, list[dict]] = {event: [] for event in events}
    done: set[str] = set()
    deadline = time.monotonic() + timeout
    with client.stream("GET", f"/gradio_api/queue/data?session_hash={session}", timeout=timeout) as stream:
        for line in stream.iter_lines():
            message = json.loads(line[5:]) if line.startswith("data:") else {}
            if message.get("event_id") in seen:
                seen[message["event_id"]].append(message)
                if message.get("msg") == "process_completed":
                    done.add(message["event_id"])
                    (then or {}).get(message["event_id"], lambda: None)()
            if done == events or time.monotonic() > deadline:
                break
    assert done == events, seen
    return seen


def run(served, client: httpx.Client, name: str, data: list, session: str | None = None) -> list[dict]:
    """Run one event of the page and return its messages (the last is ``process_completed``)."""
    session = session or secrets.token_hex(6)
    response = join(client, fn_index(served, name), data, session)
    assert response.status_code == 200, response.text
    event = response.json()["event_id"]
    return messages(client, session, {event})[event]


# --------------------------------------------------------------------------- 4. files per add, progress, cancel


def test_an_add_of_more_files_than_the_limit_is_refused_in_one_line(served):
    """Item 4: an upload of 60 files was accepted and took ~15 minutes, one parse worker after another,
    while every other add waited. More than ``max_files`` (here 2) is refused before anything is read."""
    before, corpus = sorted(served.holder.engine.documents), served.corpus_files()
    with served.page_client() as client:
        files = uploaded(client, ["pier.txt", "mill.md", "quay.txt"])
        done = run(served, client, "on_add", [files, None])[-1]
        assert done["success"], done
        status = done["output"]["data"][0]
        assert status == (
            "not added: 3 files in one add; the limit is 2. Remove some from the list and add at most 2 at a time"
        )
        assert sorted(served.holder.engine.documents) == before and served.corpus_files() == corpus
        assert all(Path(f["path"]).exists() for f in files)  # kept for a smaller add
        done = run(served, client, "on_add", [files[:2], None])[-1]
    assert done["output"]["data"][0] == "added pier.txt\nadded mill.md"
    assert {"pier.txt", "mill.md"} <= set(served.holder.engine.documents)


def test_an_add_shows_its_progress_on_the_page(served):
    """Item 4: the add's progress reaches the page as files done of all. Gradio sends only the latest
    report every 10 ms, so which steps arrive depends on timing; the whole sequence is checked in
    test_ui.test_an_add_reports_its_progress_file_by_file."""
    with served.page_client() as client:
        files = uploaded(client, ["quay.txt"])
        shown = run(served, client, "on_add", [files, None])
    steps = [(p["progress"], p["desc"]) for m in shown if m["msg"] == "progress" for p in m["progress_data"]]
    known = {"checking quay.txt", "reading quay.txt", "embedding 1 passage", "writing the index", "done"}
    assert all(0 <= done <= 1 and desc in known for done, desc in steps), steps  # one bar: a share and a step
    assert all(len(m["progress_data"]) == 1 for m in shown if m["msg"] == "progress")  # no tqdm bars beside it
    assert shown[-1]["output"]["data"][0] == "added quay.txt"
    assert shown[-1]["output"]["data"][4]["value"] is None  # issue [3/7] item 6: the file box is emptied once added


class GatedEmbedder(KeywordEmbedder):
    """Embeds an index build's passages only once ``gate`` is set (a question's vector passes at once)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate, self.waiting = threading.Event(), threading.Event()

    def encode(self, texts, *, progress=False):
        if progress:  # a build: the add has checked and read its files and waits here
            self.waiting.set()
            assert self.gate.wait(120), "the test never opened the gate"  # only a bound on a hang
        return super().encode(texts, progress=progress)


def test_cancel_stops_the_add_of_its_own_page_and_nothing_is_added(guarded_server, tmp_path: Path, cache_dir: Path):
    """Item 4: Cancel stops the page's add (here while it embeds); the files it copied go, the live index and
    every indexed document stay; another page's Cancel does not reach it; the next add works."""
    s = guarded_server(tmp_path / "cancel", cache_dir)
    try:
        embedder = GatedEmbedder()
        s.holder.swap(Engine.open(s.holder.engine.index_dir, embedder=embedder))
        before, corpus = sorted(s.holder.engine.documents), s.corpus_files()
        with s.page_client() as client:
            files = uploaded(client, ["pier.txt", "mill.md"])
            session = secrets.token_hex(6)
            add = join(client, fn_index(s, "on_add"), [files, None], session).json()["event_id"]
            assert embedder.waiting.wait(60)
            other = run(s, client, "on_cancel_add", [None])[-1]  # another page session: nothing of its own to cancel
            assert other["output"]["data"][0] == "no add from this page is running"
            cancel = join(client, fn_index(s, "on_cancel_add"), [None], session).json()["event_id"]
            seen = messages(client, session, {add, cancel}, then={cancel: embedder.gate.set})  # cancelled, then on
        assert seen[cancel][-1]["output"]["data"][0] == "cancelling: the add stops after the file it is reading"
        status = seen[add][-1]["output"]["data"][0]
        assert status == "cancelled: nothing from this add was added; the corpus and the index are as they were"
        assert sorted(s.holder.engine.documents) == before and s.corpus_files() == corpus
        embedder.gate.set()
        with s.page_client() as client:
            done = run(s, client, "on_add", [uploaded(client, ["pier.txt"]), None])[-1]
        assert done["output"]["data"][0] == "added pier.txt"
        assert set(s.holder.engine.documents) == {*before, "pier.txt"}
    finally:
        embedder.gate.set()
        s.close()


# --------------------------------------------------------------------------- 5. downloads only when asked


def legacy_downloads() -> list[Path]:
    """Files under the system temp folder's ``citeqa-downloads-<uid>``, where every turn wrote them before."""
    import os
    import tempfile

    folder = Path(tempfile.gettempdir()) / f"citeqa-downloads-{os.getuid()}"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def cached(served) -> list[Path]:
    return sorted(p for p in served.cache.rglob("*") if p.is_file())


def fetched(client: httpx.Client, output: dict) -> str:
    """The text of a file an event gave the page (what clicking its download button fetches)."""
    response = client.get(output["url"])
    assert response.status_code == 200, response.text
    return response.text


def test_chat_turns_write_nothing_until_a_download_is_asked_for(served):
    """Item 5: every turn rewrote the whole conversation as two files, and Gradio copied both into the cache:
    38 turns left 76 files (21.8 MB in the reviewer's session), quadratic, counted by no quota. Now the
    conversation stays in the session's state; *Prepare download* writes it once, into the session's folder
    in the cache (no copy), and a new turn withdraws the prepared files."""
    questions = [f"When was the windmill of Greyhill restored? ({n})" for n in range(8)]
    cache_before, legacy_before = cached(served), legacy_downloads()
    with served.page_client() as client:
        session = secrets.token_hex(6)
        for question in questions:
            done = run(
                served, client, "turn", [question, "ask", None, None, None, None, 2, "auto", True, None], session
            )
            assert done[-1]["success"], done[-1]
        assert cached(served) == cache_before and legacy_downloads() == legacy_before  # nothing written
        offered = run(served, client, "prepare", [None, None], session)[-1]["output"]["data"]
        markdown, record = fetched(client, offered[0]["value"]), json.loads(fetched(client, offered[1]["value"]))
        assert all(f"## {n + 1}. {q}" in markdown for n, q in enumerate(questions)) and len(record["turns"]) == 8
        written = sorted(set(cached(served)) - set(cache_before))
        assert [p.suffix for p in written] == [".json", ".md"] and legacy_downloads() == legacy_before
        assert all(p.parent.parent.name == "citeqa-downloads" and p.parent.stat().st_mode & 0o077 == 0 for p in written)
        again = run(
            served,
            client,
            "turn",
            ["And the tide mill?", "ask", None, None, None, None, 2, "auto", True, None],
            session,
        )
        assert (
            again[-1]["output"]["data"][7]["__type__"] == "update"
            and again[-1]["output"]["data"][7]["visible"] is False
        )
        offered = run(served, client, "prepare", [None, None], session)[-1]["output"]["data"]
        assert "## 9. And the tide mill?" in fetched(client, offered[0]["value"])
        assert len(set(cached(served)) - set(cache_before)) == 2  # the session's earlier download was replaced


def test_prepared_downloads_are_swept_with_the_uploads(guarded_server, tmp_path: Path, empty_cache: Path):
    """Item 6b: the conversation downloads in the temp folder's citeqa-downloads-<uid> were never removed (32
    folders piled up). They lie in the upload cache now and Gradio's delete_cache sweeps them by age (here
    2 s, looked for every second) as it sweeps abandoned uploads."""
    s = guarded_server(tmp_path / "sweep", empty_cache, max_age_s=2)
    try:
        with s.page_client() as client:
            session = secrets.token_hex(6)
            question = [
                "When was the windmill of Greyhill restored?",
                "ask",
                None,
                None,
                None,
                None,
                2,
                "auto",
                True,
                None,
            ]
            assert run(s, client, "turn", question, session)[-1]["success"]
            offered = run(s, client, "prepare", [None, None], session)[-1]["output"]["data"]
            paths = [Path(o["value"]["path"]) for o in offered]
            assert all(p.exists() and p.is_relative_to(empty_cache) for p in paths)
            deadline = time.monotonic() + 30
            while any(p.exists() for p in paths) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not any(p.exists() for p in paths)
    finally:
        s.close()


def test_citeqa_serve_leaves_no_download_behind(fixture_corpus: Path, tmp_path: Path):
    """Item 6b, at exit: a real `citeqa serve` with a temp folder of its own; after a turn and a prepared
    download, SIGTERM leaves no file in that folder."""
    import signal

    from citeqa.pg.nodes import free_port
    from tests.app.web.test_server_serve import _serve, _setup, _stop

    index, temp, env = _setup(fixture_corpus, tmp_path)
    port = free_port()
    proc = _serve(index, fixture_corpus, port, env)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}/", trust_env=False, timeout=60) as client:
            assert client.get("/").status_code == 200
            ids = {d["api_name"]: d["id"] for d in client.get("/config").json()["dependencies"]}
            session = secrets.token_hex(6)
            question = [
                "When was the windmill of Greyhill restored?",
                "ask",
                None,
                None,
                None,
                None,
                2,
                "auto",
                True,
                None,
            ]
            for name, data in (("turn", question), ("prepare", [None, None])):
                event = join(client, ids[name], data, session).json()["event_id"]
                assert messages(client, session, {event})[event][-1]["success"]
        assert [p for p in temp.rglob("*") if p.is_file() and p.suffix == ".md"], "the download was not written"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM
        assert [p for p in temp.rglob("*") if p.is_file()] == []
    finally:
        _stop(proc)


# --------------------------------------------------------------------------- 6a. file arguments


@pytest.mark.parametrize(
    "value,kind",
    [
        (["/etc/hostname"], "a list holding text"),
        ("/etc/hostname", "text"),
        ([{"url": "http://127.0.0.1:9/notes.txt"}], "a list holding an object with a url and no path"),
        (
            [{"url": "http://127.0.0.1:9/notes.txt", "meta": {"_type": "gradio.FileData"}}],
            "a list holding an object with a url and no path",
        ),
    ],
)
def test_a_file_argument_that_is_not_a_file_is_one_line_not_a_traceback(served, value, kind: str, capfd):
    """Item 6a: a file argument sent as a plain string or a ``{"url": ...}`` dict returned ``{"error": null}`` and
    logged a 22-line pydantic traceback. Now: 422 with the reason, and one line in the log."""
    corpus = served.corpus_files()
    capfd.readouterr()
    with served.page_client() as client:
        response = join(client, fn_index(served, "on_add"), [value])
    assert response.status_code == 422, response.text
    expected = (
        "argument 1 of this event must be a file uploaded from this page (the FileData the upload route "
        f"answered, with its path and meta), not {kind}"
    )
    assert response.json() == {"error": expected}
    log = capfd.readouterr().err
    assert "Traceback" not in log and "ValidationError" not in log
    assert [line for line in log.splitlines() if "citeqa: refused" in line] == [
        f"citeqa: refused /gradio_api/queue/join: {expected}"
    ]
    assert served.corpus_files() == corpus


def test_the_evaluate_tab_refuses_a_qa_file_sent_as_text(served, capfd):
    """Item 6a, the other events with a file input (the Evaluate tab's QA file): the same one line."""
    capfd.readouterr()
    with served.page_client() as client:
        response = join(client, fn_index(served, "on_choose"), ["qa.jsonl"])
    assert response.status_code == 422 and response.json()["error"].endswith("not text")
    assert "Traceback" not in capfd.readouterr().err


# --------------------------------------------------------------------------- 6c, 6d. heartbeats, closed routes


@pytest.fixture
def served_auth(guarded_server, tmp_path: Path, cache_dir: Path):
    s = guarded_server(tmp_path / "auth", cache_dir, auth=("ana", "secret"))
    yield s
    s.close()


def test_heartbeats_need_the_login_and_are_bounded(served, served_auth):
    """Item 6c: 800 heartbeat streams were accepted without a login on an --auth server. Now a heartbeat needs
    the login there, and any server holds at most 32 open per client address (a browser tab holds one)."""
    from contextlib import ExitStack

    from citeqa.app.web.guard.rules import MAX_STREAMS_PER_CLIENT

    with served_auth.client() as client:
        response = client.get(f"/gradio_api/heartbeat/{secrets.token_hex(6)}")
        assert response.status_code == 401 and response.json() == {"error": "not logged in"}
        assert client.post("/login", data={"username": "ana", "password": "secret"}).status_code == 200
        with client.stream("GET", f"/gradio_api/heartbeat/{secrets.token_hex(6)}") as stream:
            assert stream.status_code == 200 and next(stream.iter_lines()) == "data: ALIVE"
    limits = httpx.Limits(max_connections=MAX_STREAMS_PER_CLIENT + 2)
    with httpx.Client(base_url=served.url, trust_env=False, timeout=30, limits=limits) as client, ExitStack() as open_:
        codes = [
            open_.enter_context(client.stream("GET", f"/gradio_api/heartbeat/{secrets.token_hex(6)}")).status_code
            for _ in range(MAX_STREAMS_PER_CLIENT + 1)
        ]
        assert codes == [200] * MAX_STREAMS_PER_CLIENT + [429]
        refused = client.get(f"/gradio_api/heartbeat/{secrets.token_hex(6)}")
        assert refused.json() == {"error": "too many open pages from this address (32); close some and try again"}
    deadline = time.monotonic() + 30  # closed streams count no more, once the server has seen them close
    with httpx.Client(base_url=served.url, trust_env=False, timeout=30) as client:
        while (status := _heartbeat(client)) == 429 and time.monotonic() < deadline:
            time.sleep(0.2)
    assert status == 200


def _heartbeat(client: httpx.Client) -> int:
    """The status of a new heartbeat stream (closed again at once)."""
    with client.stream("GET", f"/gradio_api/heartbeat/{secrets.token_hex(6)}") as stream:
        return stream.status_code


@pytest.mark.parametrize("path", ["/gradio_api/openapi.json", "/monitoring", "/monitoring/summary", "/monitoring/x"])
def test_the_route_list_and_monitoring_are_closed_with_and_without_a_login(served, served_auth, path: str):
    """Item 6d: /gradio_api/openapi.json answered without a login (docs/reliability.md said the OpenAPI route
    was gone) and /monitoring/summary was public without --auth. Both are 404 now; /gradio_api/info, which
    gradio_client and the page's API docs read, still answers."""
    with served.page_client() as client:
        response = client.get(path)
        assert response.status_code == 404 and response.json() == {"error": "this route is not served"}
        assert client.get("/gradio_api/info").status_code == 200
    with served_auth.client() as client:
        assert client.post("/login", data={"username": "ana", "password": "secret"}).status_code == 200
        assert client.get(path).status_code == 404


# --------------------------------------------------------------------------- 6e. pending uploads


def test_a_pending_upload_is_readable_only_by_its_own_page(served):
    """Item 6e: a pending upload was readable by any client that knew its path. Now only the page session that
    uploaded it reads it back; another page, a client without a session and a path spelled with ``..`` get 403."""
    with served.page_client() as mine, served.page_client() as other, served.client() as bare:
        response = mine.post(
            "/gradio_api/upload", files={"files": ("vault.txt", b"The vault code is 48213.", "text/plain")}
        )
        (path,) = response.json()
        detour = f"{Path(path).parent}/../{Path(path).parent.name}/vault.txt"
        for route in (f"/gradio_api/file={path}", f"/gradio_api/file/{path}"):
            assert mine.get(route).text == "The vault code is 48213."
            for client in (other, bare):
                refused = client.get(route)
                assert refused.status_code == 403, route
                assert "48213" not in refused.text
        assert other.get(f"/gradio_api/file={detour}").status_code == 403
        assert other.head(f"/gradio_api/file={path}").status_code == 403


# --------------------------------------------------------------------------- issue [3/6] item 7. one odd file


def test_a_file_of_an_odd_name_or_type_does_not_fail_the_whole_add(served, capfd):
    """Issue [3/6] item 7: an add holding ``ｒｅｐｏｒｔ．ｔｘｔ`` (fullwidth letters and full stop) failed whole
    with Gradio's English ``Invalid file type…`` and its traceback in the log, nothing added: the upload
    box refused the event on the first file whose name did not end in an accepted type, before citeqa
    saw any. Each file is now taken or refused on its own, with its reason."""
    from citeqa.corpus.add import ALLOWED_SUFFIXES

    sent = {"ｒｅｐｏｒｔ．ｔｘｔ": "The report on the harbour of Sines was written in 1988.", "tool.exe": "MZ"}
    with served.page_client() as client:
        files = []
        for name, text in sent.items():
            response = client.post("/gradio_api/upload", files={"files": (name, text.encode(), "text/plain")})
            assert response.status_code == 200, response.text
            files.append(file_data(response.json()[0], name))
        done = run(served, client, "on_add", [files, None])[-1]
    assert done["success"], done
    accepted = ", ".join(ALLOWED_SUFFIXES)
    assert (
        done["output"]["data"][0] == f"added report.txt\nrefused tool.exe: unsupported type .exe; accepted: {accepted}"
    )
    assert "report.txt" in served.holder.engine.documents and "report.txt" in served.corpus_files()
    assert "Traceback" not in capfd.readouterr().err
