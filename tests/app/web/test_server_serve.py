"""Issue [1/6] "Server security II", items 3-5 and SIGTERM: forwarding headers, the upload quota, the
cache each server owns, the clean-up at SIGTERM. Real servers, real HTTP.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import httpx

import citeqa
from citeqa.app.web import serving, upload_cache
from citeqa.app.web.guard import rules as guard_rules
from citeqa.app.web.holder import UploadSettings
from citeqa.app.web.server import mounted_blocks
from citeqa.app.web.ui import guarded_app
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.index.builder import update_index
from citeqa.pg.nodes import free_port
from tests.app.web.test_server_files import join, wait_done


def _running(make_holder, folder: Path, cache: Path, **policy) -> serving.Running:
    holder, corpus = make_holder(folder)
    sock = serving.bind("127.0.0.1", 0)
    rules = guard_rules.Policy(bind_host="127.0.0.1", port=sock.getsockname()[1], **policy)
    app = guarded_app(holder, UploadSettings(corpus), rules, auth=("ana", "secret"))
    return serving.Running(app, sock, "127.0.0.1")


def _login(url: str, password: str, forwarded: str | None = None) -> int:
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    data = {"username": "ana", "password": password}
    return httpx.post(url + "login", data=data, headers=headers, trust_env=False).status_code


def test_x_forwarded_for_does_not_lift_the_login_lockout(make_holder, tmp_path: Path, cache_dir: Path):
    """Item 3: rotating X-Forwarded-For gave 12 wrong logins in a row, then the right password got 200
    while the real address was locked (uvicorn trusts the header from 127.0.0.1 by default)."""
    running = _running(make_holder, tmp_path / "plain", cache_dir)
    try:
        codes = [_login(running.url, f"guess{n}", f"10.0.0.{n}") for n in range(guard_rules.LOGIN_FAILURES + 3)]
        assert codes == [400] * guard_rules.LOGIN_FAILURES + [429] * 3
        assert _login(running.url, "secret", "10.9.9.9") == 429
    finally:
        running.close()


def test_forwarding_headers_count_only_from_a_named_proxy(make_holder, tmp_path: Path, cache_dir: Path):
    """Item 3: behind a proxy named with --forwarded-allow-ips, the limiter counts the forwarded client."""
    running = _running(make_holder, tmp_path / "proxied", cache_dir, forwarded_allow_ips=("127.0.0.1",))
    try:
        for n in range(guard_rules.LOGIN_FAILURES):
            assert _login(running.url, f"guess{n}", "10.0.0.7") == 400
        assert _login(running.url, "secret", "10.0.0.7") == 429
        assert _login(running.url, "secret", "10.0.0.8") == 200  # another client behind the same proxy
    finally:
        running.close()


def test_the_chat_does_not_fill_the_upload_quota(guarded_server, tmp_path: Path, empty_cache: Path, cache_bytes):
    """Item 4: every chat turn copied the conversation into the cache the quota counts; after ~165 turns
    every upload got 507. Turns now write nothing there (a download is written only when asked for):
    turns whose conversations would have outgrown the 64 KB quota leave the cache as it was."""
    quota = 64 * 1024
    s = guarded_server(tmp_path / "quota", empty_cache, quota=quota)
    try:
        blocks = mounted_blocks(s.running._server.config.app)
        turn = next(i for i, fn in blocks.fns.items() if getattr(fn.fn, "__name__", "") == "turn")
        question = "¿En qué año se construyó el faro de Punta Brava? " * 30
        with s.page_client() as client:
            session, before = secrets.token_hex(6), cache_bytes(empty_cache)
            per_turn = None
            for n in range(1, 5):  # the conversation is session state: the page sends none of it
                data = [question, "ask", None, None, None, None, 10, "auto", True, None]
                assert join(client, turn, data, session)
                done = wait_done(client, session)
                assert done["success"], done
                shown = done["output"]["data"][0].count("Punta Brava")
                per_turn = per_turn if per_turn is not None else shown
                assert per_turn > 0 and shown == n * per_turn  # the turns pile up ...
            assert cache_bytes(empty_cache) == before  # ... and nothing was written where the quota counts
            response = client.post("/gradio_api/upload", files={"files": ("note.txt", b"x" * 1000, "text/plain")})
            assert response.status_code == 200, response.text
            upload_cache.discard_uploads(response.json())
    finally:
        s.close()


SERVE_WITH_KEYWORD_MODEL = """
import sys
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.app.cli import commands as cli
sys.exit(cli.main(sys.argv[1:], embedder_factory=lambda model: KeywordEmbedder()))
"""


def _serve(index: Path, corpus: Path, port: int, env: dict) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE_WITH_KEYWORD_MODEL, "serve", "--index", str(index), "--corpus", str(corpus)]
        + ["--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    line = proc.stderr.readline()
    assert line.startswith(f"citeqa: serving on http://127.0.0.1:{port}/"), line
    return proc


def _setup(fixture_corpus: Path, tmp_path: Path) -> tuple[Path, Path, dict]:
    index = tmp_path / "index"
    update_index(fixture_corpus, index, KeywordEmbedder())
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "GRADIO_TEMP_DIR"}
    env.update(PYTHONPATH=str(Path(citeqa.__file__).parents[1]), TMPDIR=str(temp))  # this citeqa, a temp of its own
    return index, temp, env


def _upload(port: int, name: str) -> Path:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}/", trust_env=False, timeout=30) as client:
        assert client.get("/").status_code == 200
        response = client.post("/gradio_api/upload", files={"files": (name, b"Not added yet.", "text/plain")})
        assert response.status_code == 200, response.text
    (path,) = response.json()
    return Path(path)


def _stop(*procs: subprocess.Popen | None) -> None:
    for proc in procs:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_second_server_keeps_the_first_ones_uploads(fixture_corpus: Path, tmp_path: Path):
    """Item 5: starting a second `citeqa serve` as the same user deleted the first one's pending upload."""
    index, temp, env = _setup(fixture_corpus, tmp_path)
    first_port, second_port = free_port(), free_port()
    first, second = _serve(index, fixture_corpus, first_port, env), None
    try:
        pending = _upload(first_port, "pending.txt")
        assert pending.is_relative_to(temp), pending
        second = _serve(index, fixture_corpus, second_port, env)
        assert pending.exists(), "the second server swept the first one's pending upload"
        assert _upload(second_port, "other.txt").parent.parent != pending.parent.parent  # a folder each
    finally:
        _stop(first, second)


def test_sigterm_cleans_up_as_sigint_does(fixture_corpus: Path, tmp_path: Path):
    """Item 7: SIGTERM skipped the clean-up SIGINT does: uploads and evaluation folders piled up in the
    temp folder across restarts. The process still dies of the signal, with no traceback."""
    index, temp, env = _setup(fixture_corpus, tmp_path)
    port = free_port()
    proc = _serve(index, fixture_corpus, port, env)
    try:
        assert _upload(port, "pending.txt").exists()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == -signal.SIGTERM  # the timeout only bounds a hang
        assert "Traceback" not in proc.stderr.read()
        left = [p for p in temp.rglob("*") if p.is_file()]
        assert left == [], left
    finally:
        _stop(proc)


def _ask(client: httpx.Client, question: str) -> dict:
    import json

    event = client.post("/gradio_api/call/ask", json={"data": [question, [], 2, "auto"]})
    assert event.status_code == 200, event.text
    answer = client.get(f"/gradio_api/call/ask/{event.json()['event_id']}")
    data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1])[0]


def test_api_calls_keep_no_session_state(guarded_server, tmp_path: Path, cache_dir: Path):
    """Item 6: Gradio kept ~180 KB of session state per API call, up to 10,000 (443 -> 1,314 MB over
    ~3,300 calls). Now an /ask call leaves none; a page's session keeps its chat."""
    s = guarded_server(tmp_path / "sessions", cache_dir)
    try:
        holder = mounted_blocks(s.running._server.config.app).state_holder
        before = len(holder.session_data)
        with s.client() as client:
            for n in range(20):
                assert "1887" in _ask(client, f"¿En qué año se construyó el faro de Punta Brava? {n}")["answer"]
        from gradio_client import Client

        api = Client(s.url, verbose=False)
        for _ in range(3):
            assert "1760" in api.predict("When was the windmill built?", [], 1, "auto", api_name="/ask")["answer"]
        assert len(holder.session_data) == before
        blocks = mounted_blocks(s.running._server.config.app)
        turn = next(i for i, fn in blocks.fns.items() if getattr(fn.fn, "__name__", "") == "turn")
        with s.page_client() as page:
            session = secrets.token_hex(6)
            question = "When was the windmill built?"
            assert join(page, turn, [question, "ask", [], None, None, None, 2, "auto", True, None], session)
            assert wait_done(page, session)["success"]
        assert session in holder.session_data
    finally:
        s.close()
