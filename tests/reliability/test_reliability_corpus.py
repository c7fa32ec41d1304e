"""Bad corpus files: each is skipped with a reason, the rest is indexed."""

from __future__ import annotations

import io
import os
import random
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.errors import DocumentError
from citeqa.index.builder import update_index
from citeqa.ingest import documents
from citeqa.ingest.documents import load_document, scan_corpus

LATIN1 = "El faro de Cádiz tiene una luz rotatoria que alcanza veinte millas náuticas. Año de construcción: 1903."
CP1252 = "O farol “Ilha Norte” é famoso — a visita custa 5 €, às terças-feiras e quintas-feiras, às 10h."


def blank_pdf(path: Path) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=300, height=300)
    writer.write(str(path))


def shape_only_pdf(path: Path) -> None:
    """A PDF like a scan: drawing operators, no text layer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(3, 3))
    fig.add_artist(matplotlib.patches.Circle((0.5, 0.5), 0.3, color="black"))
    fig.savefig(path, format="pdf")
    plt.close(fig)


def deny_reading(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Make ``path`` unreadable; as root chmod is not enough, so reading it raises too."""
    path.chmod(0)
    if os.access(path, os.R_OK):  # root ignores permission bits
        real = Path.read_bytes

        def read_bytes(self: Path) -> bytes:
            if self == path:
                raise PermissionError(13, "Permission denied", str(self))
            return real(self)

        monkeypatch.setattr(Path, "read_bytes", read_bytes)


def vanish_before_reading(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Delete the file called ``name`` after the scan listed it and before it is read."""
    real = documents.iter_files

    def iter_files(corpus: Path):
        for path in real(corpus):
            if path.name == name:
                path.unlink()
            yield path

    monkeypatch.setattr(documents, "iter_files", iter_files)


def add_bad_files(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Write every kind of bad file into ``corpus``; returns doc_id -> expected reason part."""
    (corpus / "latin1.txt").write_bytes(LATIN1.encode("latin-1"))
    (corpus / "cp1252.md").write_bytes(CP1252.encode("cp1252"))
    (corpus / "binary.txt").write_bytes(random.Random(1).randbytes(4096))
    (corpus / "noise.txt").write_bytes(bytes(range(1, 32)) * 200)  # control characters, no NUL
    (corpus / "empty.txt").write_bytes(b"")
    blank_pdf(corpus / "blank.pdf")
    shape_only_pdf(corpus / "shape.pdf")
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >>\nendobj\ntrailer <<>>\n")
    (corpus / "scripts.html").write_text(
        "<html><head><title></title><script>var a = 'hidden';</script><style>p{color:red}</style></head>"
        "<body><script>document.write('no');</script><noscript></noscript></body></html>",
        encoding="utf-8",
    )
    (corpus / "loop").mkdir()
    os.symlink("..", corpus / "loop" / "up")  # a folder link back to its parent
    os.symlink("nowhere.txt", corpus / "dangling.txt")
    (corpus / "gone.txt").write_text("Este archivo desaparece durante la indexación.", encoding="utf-8")
    vanish_before_reading(monkeypatch, "gone.txt")
    (corpus / "secret.txt").write_text("Un texto que nadie puede leer.", encoding="utf-8")
    deny_reading(monkeypatch, corpus / "secret.txt")
    os.mkfifo(corpus / "pipe.txt")  # reading would block forever
    with open(os.path.join(os.fsencode(corpus), b"caf\xe9.txt"), "wb") as fh:  # a latin-1 file name
        fh.write("Un documento sobre el café de la costa.".encode())
    return {
        "binary.txt": "binary",
        "noise.txt": "binary",
        "empty.txt": "empty file",
        "blank.pdf": "no text found",
        "shape.pdf": "no text found",
        "broken.pdf": "unreadable PDF",
        "scripts.html": "no text found",
        "loop/up": "symbolic link to a folder",
        "dangling.txt": "broken symbolic link",
        "gone.txt": "disappeared",
        "secret.txt": "permission denied",
        "pipe.txt": "not a regular file",
        "caf\\xe9.txt": "not valid UTF-8",
    }


GOOD = {"faro.txt", "mill.html", "nested/farol.md", "latin1.txt", "cp1252.md"}


def test_scan_skips_each_bad_file_with_its_reason(fixture_corpus: Path, monkeypatch: pytest.MonkeyPatch):
    expected = add_bad_files(fixture_corpus, monkeypatch)
    scan = scan_corpus(fixture_corpus)
    assert {d.doc_id for d in scan.documents} == GOOD
    reasons = {s.doc_id: s.reason for s in scan.skipped}
    assert set(reasons) == set(expected)
    for doc_id, part in expected.items():
        assert part in reasons[doc_id], (doc_id, reasons[doc_id])


def test_legacy_encodings_keep_their_accents(tmp_path: Path):
    (tmp_path / "latin1.txt").write_bytes(LATIN1.encode("latin-1"))
    (tmp_path / "cp1252.md").write_bytes(CP1252.encode("cp1252"))
    assert load_document(tmp_path / "latin1.txt", "latin1.txt").text == LATIN1
    doc = load_document(tmp_path / "cp1252.md", "cp1252.md")
    assert doc.text == CP1252 and doc.lang == "pt"


def test_cli_index_lists_skipped_files_last_and_indexes_the_rest(
    keyword_cli, fixture_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    expected = add_bad_files(fixture_corpus, monkeypatch)
    index = tmp_path / "index"
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", str(index)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"indexed {len(GOOD)} documents") and lines[1].startswith("languages: ")
    skipped = lines[2:]
    assert len(skipped) == len(expected) and all(line.startswith("skipped ") for line in skipped)
    for doc_id, part in expected.items():
        assert any(line.startswith(f"skipped {doc_id}: ") and part in line for line in skipped), doc_id
    engine = Engine.open(index, embedder=KeywordEmbedder())
    assert set(engine.documents) == GOOD
    answer = engine.ask("¿Cuántas millas alcanza la luz del faro de Cádiz?")
    assert answer.citations[0].doc_id == "latin1.txt"


def test_update_index_survives_bad_files_and_reports_them(
    fixture_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    expected = add_bad_files(fixture_corpus, monkeypatch)
    report = update_index(fixture_corpus, tmp_path / "index", KeywordEmbedder())
    assert set(report.documents) == GOOD and {s.doc_id for s in report.skipped} == set(expected)


def test_fuzzed_pdfs_are_skipped_never_raised(tmp_path: Path):
    """Random byte flips in a small PDF: every outcome is text or a DocumentError."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.add_metadata({"/Title": "Fuzz"})
    buf = io.BytesIO()
    writer.write(buf)
    raw = buf.getvalue()
    rng = random.Random(0)
    reasons = set()
    for _ in range(800):
        data = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        path = tmp_path / "fuzz.pdf"
        path.write_bytes(bytes(data))
        try:
            load_document(path, "fuzz.pdf")
        except DocumentError as exc:
            reasons.add(str(exc).split(" (")[0])
    assert reasons <= {"unreadable PDF", "no text found"}
