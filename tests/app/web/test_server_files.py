"""Issue [1/6] "Server security II", item 1: no event of the page takes a server file it did not upload.

Each test runs the guarded server (as ``citeqa serve`` runs it) and sends the reviewer's
request over real HTTP: a ``/gradio_api/queue/join`` whose ``FileData`` names a file of
the server that no upload wrote.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path

import httpx
import pytest

from citeqa.app.web.server import mounted_blocks

SECRET = "The vault code of Alvor is 48213."


@pytest.fixture(scope="module")
def secret_files(tmp_path_factory) -> dict[str, Path]:
    """Files of the server no one uploaded (mode 0600), one of each type an event takes."""
    folder = tmp_path_factory.mktemp("home")
    files = {
        "md": folder / "notes.md",
        "jsonl": folder / "qa.jsonl",
        "csv": folder / "qa.csv",
        "json": folder / "predictions.jsonl",
    }
    files["md"].write_text(f"# Notes\n\n{SECRET}\n", encoding="utf-8")
    files["jsonl"].write_text(json.dumps({"question": "What is the vault code of Alvor?", "answers": [SECRET]}) + "\n")
    files["csv"].write_text(f"question,answers\nWhat is the vault code?,{SECRET}\n")
    files["json"].write_text(json.dumps({"id": "1", "question": SECRET, "answer": SECRET}) + "\n")
    for path in files.values():
        path.chmod(0o600)
    return files


@pytest.fixture(scope="module")
def served(guarded_server, tmp_path_factory, cache_dir: Path):
    s = guarded_server(tmp_path_factory.mktemp("served"), cache_dir, qa_dir=None)
    yield s
    s.close()


def file_data(path: str | Path, name: str | None = None) -> dict:
    return {"path": str(path), "orig_name": name or Path(path).name, "meta": {"_type": "gradio.FileData"}}


def join(client: httpx.Client, fn_index: int, data: list, session_hash: str | None = None) -> httpx.Response:
    return client.post(
        "/gradio_api/queue/join",
        json={
            "data": data,
            "fn_index": fn_index,
            "session_hash": session_hash or secrets.token_hex(6),
            "trigger_id": None,
            "event_data": None,
        },
    )


def wait_done(client: httpx.Client, session_hash: str, timeout: float = 300) -> dict:
    """The ``process_completed`` message of the session's event (read from the queue's event stream);
    ``timeout`` only bounds an event that never completes (an add on a busy machine takes its time)."""
    deadline = time.monotonic() + timeout
    with client.stream("GET", f"/gradio_api/queue/data?session_hash={session_hash}", timeout=timeout) as events:
        for line in events.iter_lines():
            if time.monotonic() > deadline:  # heartbeats keep the stream alive: stop waiting anyway
                break
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if message.get("msg") == "process_completed":
                    return message
    raise AssertionError("the event never completed")


def events_with_inputs(served) -> dict[int, str]:
    """fn_index -> a name, for every event of the page that takes any input."""
    blocks = mounted_blocks(served.running._server.config.app)
    return {
        index: getattr(fn.fn, "__name__", "?")
        for index, fn in blocks.fns.items()
        if fn.inputs and any(not getattr(block, "stateful", False) for block in fn.inputs)
    }


def everything_written(served) -> str:
    """All text under the corpus, the upload cache, the conversation downloads and the evaluation runs."""
    import tempfile

    roots = [served.corpus, served.cache, *Path(tempfile.gettempdir()).glob(f"citeqa-downloads-{os.getuid()}")]
    root = getattr(served.evaluations, "_root", None)
    if root is not None:
        roots.append(Path(root))
    texts = []
    for folder in roots:
        for path in Path(folder).rglob("*"):
            if path.is_file():
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(texts)


def test_every_event_refuses_a_server_file_no_upload_wrote(served, secret_files):
    """Item 1: Corpus add copied /home/someone/notes.md into corpus/ and /ask answered from it; the
    Evaluate tab did the same for any .jsonl/.csv. Every event that takes input is tried with every
    input naming a server file, a URL and the ``..`` form of a cache path; none is let through."""
    events = events_with_inputs(served)
    names = set(events.values())
    assert {"on_add", "on_start", "turn"} <= names, names  # the corpus, the Evaluate tab and the chat are covered
    tried = [
        *(str(p) for p in secret_files.values()),
        str(served.cache / ".." / secret_files["md"].name),
        f"{served.url}gradio_api/file={secret_files['md']}",
    ]
    with served.page_client() as client:
        for index, name in events.items():
            count = len(mounted_blocks(served.running._server.config.app).fns[index].inputs)
            for path in tried:
                response = join(client, index, [file_data(path)] * count)
                assert response.status_code == 403, (name, path, response.text)
                assert response.json() == {
                    "error": "that file was not uploaded from this page; upload it again from the page"
                }
                for nested in ([[file_data(path)]] * count, [{"value": [file_data(path)]}] * count):
                    assert join(client, index, nested).status_code == 403, (name, path)
    assert SECRET not in everything_written(served)


def test_an_upload_is_taken_only_from_the_session_that_made_it(served):
    """Item 1, "for this session": another page session (or a client with none) cannot name my upload;
    the session that uploaded it adds it to the corpus as before."""
    events = {name: index for index, name in events_with_inputs(served).items()}
    text = "The lighthouse of Cabo Frio was painted red in 1952."
    with served.page_client() as mine, served.page_client() as other, served.client() as bare:
        uploaded = mine.post("/gradio_api/upload", files={"files": ("cabo.txt", text.encode(), "text/plain")})
        assert uploaded.status_code == 200, uploaded.text
        (path,) = uploaded.json()
        for client in (other, bare):
            response = join(client, events["on_add"], [[file_data(path, "cabo.txt")], None])
            assert response.status_code == 403, response.text
        assert "cabo.txt" not in served.corpus_files()
        session = secrets.token_hex(6)
        assert join(mine, events["on_add"], [[file_data(path, "cabo.txt")], None], session).status_code == 200
        done = wait_done(mine, session)
        assert done["success"], done
        assert "added cabo.txt" in done["output"]["data"][0]
    assert "cabo.txt" in served.corpus_files()
    assert not Path(path).exists()  # consumed: the cache keeps no copy


def test_no_spelling_of_a_body_hides_a_file(served, secret_files):
    """The guard reads the body as Gradio does: escaped keys, UTF-16 and multipart do not slip past."""
    add = {name: index for index, name in events_with_inputs(served).items()}["on_add"]
    files = [file_data(secret_files["md"])]
    body = {"data": [files, None], "fn_index": add, "session_hash": secrets.token_hex(6), "trigger_id": None}
    escaped = json.dumps(body).replace('"path"', '"\\u0070ath"').encode()
    assert b'"path"' not in escaped
    with served.page_client() as client:
        for content, kind in (
            (escaped, "application/json"),
            (json.dumps(body).encode("utf-16"), "application/json"),
            (b"--x\r\nContent-Disposition: form-data; name=a\r\n\r\nb\r\n--x--\r\n", "multipart/form-data; boundary=x"),
        ):
            response = client.post("/gradio_api/queue/join", content=content, headers={"content-type": kind})
            assert response.status_code in (400, 403), (kind, response.text)
    assert SECRET not in everything_written(served)
