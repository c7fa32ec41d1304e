"""An upload killed before it is confirmed leaves nothing that counts (issue [2/6], defect 8).

The review killed the server mid-upload: the file stayed in corpus/ and was indexed
later, although the upload never reported success.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from citeqa.app.web import serving
from citeqa.app.web.lifecycle import serve
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.index.builder import update_index
from citeqa.index.store import load_index
from citeqa.ingest import pending
from citeqa.ingest.documents import scan_corpus
from tests.paths import REPO

KILLED_UPLOAD = """
import sys, threading
from pathlib import Path
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.corpus.add import add_files

class Stuck(KeywordEmbedder):
    def encode(self, texts, *, progress=False):
        print("embedding", flush=True)  # the file is in the corpus now; the index is not switched yet
        threading.Event().wait()  # until killed, however long the test takes to get there

add_files([(Path({source!r}), "bridge.md")], Path({corpus!r}), Path({index!r}), Stuck())
"""


def kill_mid_upload(corpus: Path, index: Path, source: Path) -> None:
    """Run an upload in another process and SIGKILL it while the new index is being embedded."""
    script = KILLED_UPLOAD.format(source=str(source), corpus=str(corpus), index=str(index))
    src = str(REPO / "src")  # this checkout's package, for the child process
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "embedding"
        assert (corpus / "bridge.md").exists()  # what today's code leaves behind
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture
def killed(fixture_corpus: Path, built_index: Path, tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "upload" / "bridge.md"
    source.parent.mkdir()
    source.write_text("# The bridge of Alvor\n\nThe bridge of Alvor opened in 1931.", encoding="utf-8")
    kill_mid_upload(fixture_corpus, built_index, source)
    return fixture_corpus, built_index


def test_a_killed_upload_is_not_indexed_later(killed: tuple[Path, Path]):
    corpus, index = killed
    scan = scan_corpus(corpus)
    assert "bridge.md" not in {d.doc_id for d in scan.documents}
    assert [s.doc_id for s in scan.skipped] == ["bridge.md"] and "interrupted" in scan.skipped[0].reason
    update_index(corpus, index, KeywordEmbedder())  # what `citeqa index` would do before the next serve
    assert "bridge.md" not in {d.doc_id for d in load_index(index).manifest.documents}


def test_recover_removes_the_file_its_partial_copy_and_the_journal(killed: tuple[Path, Path]):
    corpus, _ = killed
    (corpus / ".bridge.md.part").write_text("half a cop")
    assert pending.recover(corpus) == ["bridge.md"]
    assert not (corpus / "bridge.md").exists() and not (corpus / ".bridge.md.part").exists()
    assert not list(corpus.glob(".citeqa-upload-*")) and pending.interrupted(corpus) == set()
    assert pending.recover(corpus) == []


def test_an_upload_in_progress_is_left_alone(fixture_corpus: Path):
    with pending.Journal(fixture_corpus) as journal:
        journal.add("faro.txt")
        assert pending.interrupted(fixture_corpus) == set()  # its process holds the lock
        assert pending.recover(fixture_corpus) == []
        assert (fixture_corpus / "faro.txt").exists()
    assert not list(fixture_corpus.glob(".citeqa-upload-*"))


def test_recover_never_leaves_the_corpus(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    (corpus / ".citeqa-upload-1-abcd.pending").write_text("../outside.txt\n/etc/hostname\n")
    assert pending.recover(corpus) == [] and outside.exists()


def test_serve_removes_interrupted_uploads_when_it_starts(
    fixture_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    """Killed after the index switch but before the upload was confirmed: removed, and the index follows."""
    index = tmp_path / "index"
    (fixture_corpus / "bridge.md").write_text("The bridge of Alvor opened in 1931.", encoding="utf-8")
    update_index(fixture_corpus, index, KeywordEmbedder())
    (fixture_corpus / ".citeqa-upload-99999-dead.pending").write_text("bridge.md\n")  # nobody holds its lock
    seen: dict = {}
    monkeypatch.setattr(serving, "run", lambda app, sock: seen.update(app=app, sock=sock))
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "cache"))
    serve(lambda: Engine.open(index, embedder=KeywordEmbedder()), fixture_corpus, "127.0.0.1", 0)
    seen["sock"].close()
    assert "removed bridge.md: its upload was interrupted" in capsys.readouterr().err
    assert not (fixture_corpus / "bridge.md").exists()
    live = Engine.open(index, embedder=KeywordEmbedder())
    assert "bridge.md" not in live.documents and "faro.txt" in live.documents
