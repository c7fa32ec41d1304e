"""Issue [1/6] "Server security II", item 7 (low): shown runs keep their files, error records instead of
``{"error": null}``, a quiet log for unknown sessions, CSV formulas, ``localhost/evil.example``, linked QA
files. Real server, real HTTP (SIGTERM: tests/app/web/test_server_serve.py)."""

from __future__ import annotations

import csv
import html
import json
import logging
import resource
import secrets
import signal
import socket
from pathlib import Path

import pytest

from citeqa.app.web.evaluate.files import shipped_qa_files
from citeqa.app.web.server import mounted_blocks
from tests.app.web.test_server_files import file_data, join, wait_done

QA = [
    {"id": "q1", "lang": "en", "question": '=HYPERLINK("http://evil.example","click")', "answers": ["1887"]},
    {"id": "q2", "lang": "es", "question": "@SUM(1,2) ¿En qué año se construyó el faro?", "answers": ["1887"]},
    {"id": "q3", "lang": "en", "question": "When was the windmill built?", "answers": ["1760"]},
]


@pytest.fixture(scope="module")
def qa_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("eval")
    (folder / "formulas.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QA))
    outside = tmp_path_factory.mktemp("elsewhere") / "private.jsonl"
    outside.write_text(json.dumps({"question": "What is the vault code?", "answers": ["48213"]}) + "\n")
    (folder / "linked.jsonl").symlink_to(outside)
    inside = folder / "sub"
    inside.mkdir()
    (inside / "same.jsonl").symlink_to(folder / "formulas.jsonl")  # a link within the folder stays offered
    return folder


@pytest.fixture(scope="module")
def served(guarded_server, tmp_path_factory, cache_dir, qa_dir: Path):
    s = guarded_server(tmp_path_factory.mktemp("served"), cache_dir, qa_dir=qa_dir)
    yield s
    s.close()


def _fn(served, name: str) -> int:
    blocks = mounted_blocks(served.running._server.config.app)
    return next(i for i, fn in blocks.fns.items() if getattr(fn.fn, "__name__", "") == name)


def _event(served, client, name: str, data: list, timeout: float = 300, session: str | None = None) -> dict:
    session = session or secrets.token_hex(6)
    response = join(client, _fn(served, name), data, session)
    assert response.status_code == 200, response.text
    return wait_done(client, session, timeout)


def test_a_symlinked_qa_file_out_of_the_eval_folder_is_not_offered(served, qa_dir: Path):
    """A link in eval/ to a file elsewhere was offered (and evaluated, its content in the downloads)."""
    assert shipped_qa_files(qa_dir) == ["formulas.jsonl", "sub/same.jsonl"]
    with served.page_client() as client:
        done = _event(served, client, "on_start", [None, "linked.jsonl", None, None, None, None])
    if done["success"]:  # refused by citeqa with its line, or by Gradio as not one of the dropdown's choices
        assert "linked.jsonl: not a QA file of the eval folder" in html.unescape(done["output"]["data"][0])
    assert served.evaluations.status() is None


def _file_urls(data) -> dict[str, str]:
    """name -> URL of every file in an event's output (charts, downloads)."""
    found, stack = {}, [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("url"), str) and isinstance(item.get("path"), str):
                found[Path(item["path"]).name] = item["url"]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _finished_run(served, client, session: str | None = None):
    runner = served.evaluations
    done = _event(served, client, "on_start", [None, "formulas.jsonl", None, None, None, None], session=session)
    assert runner.wait(300) and runner.status() is not None, done["output"]["data"][0]
    assert runner.status().state == "done"
    return runner.finished()


def test_questions_csv_prefixes_cells_a_spreadsheet_would_run(served):
    """questions.csv kept cells starting with = + - @ (CSV formula injection)."""
    with served.page_client() as client:
        shown = _finished_run(served, client)
    rows = list(csv.DictReader(shown.files["questions.csv"].open(encoding="utf-8")))
    assert [r["question"][:2] for r in rows] == ["'=", "'@", "Wh"]
    assert rows[0]["question"] == "'" + QA[0]["question"]


def test_a_failed_run_keeps_the_shown_runs_charts_and_downloads(served, gated_engine):
    """After a failed (or cancelled) run the previous run's charts and downloads returned 403 while the
    page still showed them."""
    runner = served.evaluations
    with served.page_client() as client:
        page = secrets.token_hex(6)  # one page session: it sees the runs it started
        shown = _finished_run(served, client, page)
        urls = _file_urls(_event(served, client, "refresh", [None, None, None], session=page)["output"]["data"])
        assert {"metrics.png", "questions.csv"} <= set(urls), urls
        assert all(client.get(url).status_code == 200 for url in urls.values())

        class Failing(gated_engine):
            def ask(self, *args, **kwargs):
                raise OSError(28, "No space left on device")

        live = served.holder.engine
        served.holder.swap(Failing(live))
        try:
            _event(served, client, "on_start", [None, "formulas.jsonl", None, None, None, None], session=page)
            assert runner.wait(300) and runner.status().state == "failed"
        finally:
            served.holder.swap(live)
        assert runner.finished() is shown
        again = _event(served, client, "refresh", [None, None, None], session=page)  # still the last finished run
        assert again["success"], again
        for name, url in {**urls, **_file_urls(again["output"]["data"])}.items():  # what the page shows still loads
            assert client.get(url).status_code == 200, name
        other = _event(served, client, "refresh", [None, None, None])  # issue [3/7] item 5: another page's run
        assert not _file_urls(other["output"]["data"])  # is not shown to a page that did not start it


def test_a_deeply_nested_qa_line_is_one_line_not_a_traceback(served, tmp_path: Path):
    nested = tmp_path / "nested.jsonl"
    nested.write_text('{"question": "q", "answers": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with served.page_client() as client:
        uploaded = client.post("/gradio_api/upload", files={"files": ("nested.jsonl", nested.read_bytes())})
        done = _event(
            served, client, "on_start", [file_data(uploaded.json()[0], "nested.jsonl"), None, None, None, None, None]
        )
    assert done["success"], done
    assert "nested.jsonl: line 1: invalid JSON (nested too deeply: more than 64 levels)" in html.unescape(
        done["output"]["data"][0]
    )


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_a_viewer_range_of_infinity_or_nan_opens_the_document(served, bad: float):
    with served.page_client() as client:
        session = secrets.token_hex(6)
        body = {
            "data": [],
            "fn_index": _fn(served, "show_document"),
            "session_hash": session,
            "trigger_id": None,
            "event_data": {"doc": "faro.txt", "start": bad, "end": bad},
        }
        text = json.dumps(body, allow_nan=True)  # Infinity / NaN, as the reviewer sent them
        response = client.post("/gradio_api/queue/join", content=text, headers={"content-type": "application/json"})
        assert response.status_code == 200, response.text
        done = wait_done(client, session)
    assert done["success"], done
    assert "Punta Brava" in json.dumps(done["output"]["data"][1])


def test_a_full_disk_while_adding_is_one_line_and_nothing_is_lost(served):
    """A full disk during an upload gave {"error": null} and a traceback (simulated with RLIMIT_FSIZE:
    the copy into the corpus fails with EFBIG, as it would with ENOSPC)."""
    before = sorted(served.holder.engine.documents)
    text = ("The harbour of Alvor was dredged in 1961. " * 100).encode()
    with served.page_client() as client:
        uploaded = client.post("/gradio_api/upload", files={"files": ("harbour.txt", text, "text/plain")})
        assert uploaded.status_code == 200
        previous_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        previous_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, previous_limit[1]))
        try:
            done = _event(served, client, "on_add", [[file_data(uploaded.json()[0], "harbour.txt")], None])
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, previous_limit)
            signal.signal(signal.SIGXFSZ, previous_handler)
    assert done["success"], done
    assert done["output"]["data"][0] == "refused harbour.txt: not saved (File too large)"
    assert sorted(served.holder.engine.documents) == before
    assert not [p for p in served.corpus.rglob("*") if "harbour" in p.name]


def test_an_unknown_session_on_the_event_stream_is_one_line(served, caplog):
    """Each request for an unknown session_hash logged a 100-line traceback."""
    with caplog.at_level(logging.ERROR), served.client() as client:
        for _ in range(3):
            response = client.get("/gradio_api/queue/data?session_hash=nobody")
            assert response.status_code == 404
            assert response.json() == {"error": "no events are waiting for that session; join the queue first"}
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("host", ["localhost/evil.example", "localhost@evil.example", "127.0.0.1?evil.example"])
def test_a_host_with_a_path_or_user_part_is_refused(served, host: str):
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(f"GET /config HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        assert b" 403 " in sock.recv(200).split(b"\r\n")[0]
