from pathlib import Path

import pytest

from citeqa.errors import CorpusError, DocumentError
from citeqa.ingest.documents import first_line, load_document, scan_corpus


def test_scan_reads_txt_md_html_recursively(fixture_corpus: Path):
    scan = scan_corpus(fixture_corpus)
    ids = sorted(d.doc_id for d in scan.documents)
    assert ids == ["faro.txt", "mill.html", "nested/farol.md"]
    by_id = {d.doc_id: d for d in scan.documents}
    assert by_id["faro.txt"].lang == "es" and by_id["nested/farol.md"].lang == "pt"
    assert by_id["mill.html"].lang == "en"
    assert by_id["nested/farol.md"].title == "O farol da Ilha Clara"
    assert scan.skipped == ()


def test_html_keeps_visible_text_only(fixture_corpus: Path):
    doc = load_document(fixture_corpus / "mill.html", "mill.html")
    assert "Thomas Hale" in doc.text
    assert "do not index this" not in doc.text and "color:red" not in doc.text
    assert doc.title == "The Windmill of Greyhill"


def test_unreadable_files_are_skipped_with_reasons(tmp_path: Path):
    (tmp_path / "ok.txt").write_text("Un texto corto pero válido.", encoding="utf-8")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "blank.md").write_text("   \n\n  ", encoding="utf-8")
    (tmp_path / "binary.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    scan = scan_corpus(tmp_path)
    assert [d.doc_id for d in scan.documents] == ["ok.txt"]
    reasons = {s.doc_id: s.reason for s in scan.skipped}
    assert reasons["empty.txt"] == "empty file"
    assert reasons["blank.md"] == "no text found"
    assert "binary" in reasons["binary.txt"]
    assert "unsupported" in reasons["image.png"]


def test_legacy_encoding_is_detected(tmp_path: Path):
    text = "Información sobre la construcción del faro y la navegación en el año 1887. " * 3
    (tmp_path / "latin.txt").write_bytes(text.encode("latin-1"))
    doc = load_document(tmp_path / "latin.txt", "latin.txt")
    assert "construcción" in doc.text


def test_pdf_text_and_pages(tmp_path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    path = tmp_path / "two.pdf"
    with PdfPages(path) as pdf:
        for line in ["The first page talks about lighthouses.", "The second page mentions the year 1887."]:
            fig = plt.figure()
            fig.text(0.1, 0.5, line)
            pdf.savefig(fig)
            plt.close(fig)
    doc = load_document(path, "two.pdf")
    at = doc.text.index("1887")
    assert doc.page_at(at) == 2 and doc.page_at(0) == 1
    assert doc.kind == "pdf"


def test_missing_corpus_is_a_clear_error(tmp_path: Path):
    with pytest.raises(CorpusError, match="not found"):
        scan_corpus(tmp_path / "nope")


def test_first_line_and_title_fallback(tmp_path: Path):
    assert first_line("\n\n  ## Heading  \nbody") == "Heading"
    with pytest.raises(DocumentError):
        load_document(tmp_path / "gone.txt", "gone.txt")


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_wide_unicode_with_a_byte_order_mark_is_read(tmp_path: Path, codec: str):
    text = "Informação sobre a construção do farol.\r\nSegunda linha."
    raw = text.encode(codec)
    if codec == "utf-16-be":
        raw = b"\xfe\xff" + raw
    (tmp_path / "wide.txt").write_bytes(raw)
    assert load_document(tmp_path / "wide.txt", "wide.txt").text == text.replace("\r\n", "\n")


def test_damaged_utf16_is_a_clear_error(tmp_path: Path):
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe" + "ok".encode("utf-16-le") + b"\x00\xd8")  # lone surrogate
    with pytest.raises(DocumentError, match="UTF-16"):
        load_document(tmp_path / "bad.txt", "bad.txt")


def test_an_unchanged_file_is_hashed_not_parsed(tmp_path: Path, monkeypatch):
    import hashlib

    from citeqa.ingest import documents

    path = tmp_path / "a.txt"
    path.write_text("The mill turns.\n", encoding="utf-8")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert documents.file_sha256(path) == sha
    monkeypatch.setattr(documents, "load_document", lambda *a: pytest.fail("parsed"))
    assert documents.read_entry(tmp_path, path, indexed_sha=sha) == documents.Unchanged("a.txt", sha)


def test_hashing_checks_the_file_like_reading_it(tmp_path: Path):
    import os

    from citeqa.ingest.documents import Skipped, file_sha256, read_entry

    (tmp_path / "empty.txt").write_bytes(b"")
    os.mkfifo(tmp_path / "pipe.txt")  # opening it would block
    with pytest.raises(DocumentError, match="empty file"):
        file_sha256(tmp_path / "empty.txt")
    assert read_entry(tmp_path, tmp_path / "pipe.txt", indexed_sha="0" * 64) == Skipped(
        "pipe.txt", "not a regular file"
    )
