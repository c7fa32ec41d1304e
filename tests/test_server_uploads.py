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

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from test_server_files import file_data, join

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
    blocks = served.running._server.config.app.state.blocks
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
    before, corpus = sorted(served.holder.engine.data.documents), served.corpus_files()
    with served.page_client() as client:
        files = uploaded(client, ["pier.txt", "mill.md", "quay.txt"])
        done = run(served, client, "on_add", [files])[-1]
        assert done["success"], done
        status = done["output"]["data"][0]
        assert status == (
            "not added: 3 files in one add; the limit is 2. Remove some from the list and add at most 2 at a time"
        )
        assert sorted(served.holder.engine.data.documents) == before and served.corpus_files() == corpus
        assert all(Path(f["path"]).exists() for f in files)  # kept for a smaller add
        done = run(served, client, "on_add", [files[:2]])[-1]
    assert done["output"]["data"][0] == "added pier.txt\nadded mill.md"
    assert {"pier.txt", "mill.md"} <= set(served.holder.engine.data.documents)


def test_an_add_shows_its_progress_file_by_file(served):
    """Item 4: progress per file, through checking and reading for the index (files done of all)."""
    with served.page_client() as client:
        files = uploaded(client, ["quay.txt"])
        shown = run(served, client, "on_add", [files])
    steps = [
        (p["index"], p["length"], p["unit"], p["desc"])
        for m in shown
        if m["msg"] == "progress"
        for p in m["progress_data"]
        if p.get("unit") == "files"
    ]
    assert (0, 1, "files", "checking quay.txt") in steps and (0, 1, "files", "reading quay.txt") in steps
    assert steps[-1][:3] == (1, 1, "files")
    assert shown[-1]["output"]["data"][0] == "added quay.txt"


class GatedEmbedder(KeywordEmbedder):
    """Embeds an index build's passages only once ``gate`` is set (a question's vector passes at once)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate, self.waiting = threading.Event(), threading.Event()

    def encode(self, texts, *, progress=False):
        if progress:  # a build: the add has checked and read its files and waits here
            self.waiting.set()
            assert self.gate.wait(60), "the test never opened the gate"
        return super().encode(texts, progress=progress)


def test_cancel_stops_the_add_of_its_own_page_and_nothing_is_added(guarded_server, tmp_path: Path, cache_dir: Path):
    """Item 4: Cancel stops the page's add (here while it embeds); the files it copied go, the live index and
    every indexed document stay; another page's Cancel does not reach it; the next add works."""
    s = guarded_server(tmp_path / "cancel", cache_dir)
    try:
        embedder = GatedEmbedder()
        s.holder.swap(Engine.open(s.holder.engine.index_dir, embedder=embedder))
        before, corpus = sorted(s.holder.engine.data.documents), s.corpus_files()
        with s.page_client() as client:
            files = uploaded(client, ["pier.txt", "mill.md"])
            session = secrets.token_hex(6)
            add = join(client, fn_index(s, "on_add"), [files], session).json()["event_id"]
            assert embedder.waiting.wait(60)
            other = run(s, client, "on_cancel", [])[-1]  # another page session: nothing of its own to cancel
            assert other["output"]["data"][0] == "no add from this page is running"
            cancel = join(client, fn_index(s, "on_cancel"), [], session).json()["event_id"]
            seen = messages(client, session, {add, cancel}, then={cancel: embedder.gate.set})  # cancelled, then on
        assert seen[cancel][-1]["output"]["data"][0] == "cancelling: the add stops after the file it is reading"
        status = seen[add][-1]["output"]["data"][0]
        assert status == "cancelled: nothing from this add was added; the corpus and the index are as they were"
        assert sorted(s.holder.engine.data.documents) == before and s.corpus_files() == corpus
        embedder.gate.set()
        with s.page_client() as client:
            done = run(s, client, "on_add", [uploaded(client, ["pier.txt"])])[-1]
        assert done["output"]["data"][0] == "added pier.txt"
        assert set(s.holder.engine.data.documents) == {*before, "pier.txt"}
    finally:
        embedder.gate.set()
        s.close()
