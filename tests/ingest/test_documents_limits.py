"""Limits on the text a file may expand to and on passages per document (issue [2/6], defect 4).

A 57 KB PDF of compressed text became 2.1 million characters, 2,896 passages and 131 s
of indexing: the 20 MB upload limit bounds the file, not what it expands to.
"""

from __future__ import annotations

import io
import zlib
from pathlib import Path

import pytest

from citeqa.corpus.add import add_files
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.errors import DocumentError
from citeqa.index.builder import update_index
from citeqa.index.store import load_index
from citeqa.ingest.chunking import MAX_PASSAGES_PER_DOCUMENT, ChunkerSettings
from citeqa.ingest.documents import load_document, scan_corpus
from citeqa.ingest.extracted import MAX_TEXT_CHARS

SENTENCE = "The harbour of Sines was rebuilt in 1931 after the storm. "


def compressed_text_pdf(pages: int, chars_per_page: int) -> bytes:
    """A small PDF whose Flate-compressed pages hold ``pages * chars_per_page`` characters of text."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    text = (SENTENCE * (chars_per_page // len(SENTENCE) + 1))[:chars_per_page]
    lines = " ".join(f"({text[i : i + 100]}) Tj T*" for i in range(0, len(text), 100))
    stream = zlib.compress(f"BT /F1 8 Tf 10 TL 20 780 Td {lines} ET".encode(), 9)
    for _ in range(pages):
        objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream")
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> "
            b">> /Contents %d 0 R >>" % len(objects)
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), pages)
    out, offsets = io.BytesIO(), []
    out.write(b"%PDF-1.4\n")
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % o for o in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


@pytest.fixture
def bomb(tmp_path: Path) -> Path:
    """42 pages of 50,000 characters: 2.1 million characters of text in a file of a few KB."""
    path = tmp_path / "in" / "bomb.pdf"
    path.parent.mkdir()
    path.write_bytes(compressed_text_pdf(42, 50_000))
    return path


def test_a_pdf_that_expands_past_the_limit_is_refused_early(bomb: Path, monkeypatch: pytest.MonkeyPatch):
    """Extraction stops at the page that passes the limit: half of the pages are never read (the
    seconds this saves: bench/limits.py)."""
    from pypdf import PageObject

    extracted: list[int] = []  # characters of each page read, in order
    real = PageObject.extract_text

    def counted(page, *args, **kwargs):
        text = real(page, *args, **kwargs)
        extracted.append(len(text.strip()))
        return text

    monkeypatch.setattr(PageObject, "extract_text", counted)
    assert bomb.stat().st_size < 60_000
    with pytest.raises(
        DocumentError,
        match=r"too much text \(1,0\d\d,\d\d\d characters or more; the limit is "
        r"1,000,000 per file\): split the file",
    ):
        load_document(bomb, "bomb.pdf")
    assert 0 < len(extracted) <= 42 // 2 + 1, len(extracted)
    assert sum(n + 2 for n in extracted[:-1]) <= MAX_TEXT_CHARS < sum(n + 2 for n in extracted)  # no page more


def test_a_pdf_within_the_limit_is_read(tmp_path: Path):
    path = tmp_path / "ok.pdf"
    path.write_bytes(compressed_text_pdf(3, 2_000))
    doc = load_document(path, "ok.pdf")
    assert "Sines" in doc.text and len(doc.pages) == 3


def test_text_files_are_limited_too(tmp_path: Path):
    (tmp_path / "at_limit.txt").write_text(("x" * 99 + "\n") * (MAX_TEXT_CHARS // 100), encoding="utf-8")
    (tmp_path / "over.txt").write_text("y" * (MAX_TEXT_CHARS + 1), encoding="utf-8")
    scan = scan_corpus(tmp_path)
    assert [d.doc_id for d in scan.documents] == ["at_limit.txt"]
    assert [(s.doc_id, s.reason.split(" (")[0]) for s in scan.skipped] == [("over.txt", "too much text")]


def test_cli_index_prints_why_the_file_was_skipped(
    keyword_cli, fixture_corpus: Path, bomb: Path, tmp_path: Path, capsys
):
    (fixture_corpus / "bomb.pdf").write_bytes(bomb.read_bytes())
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", str(tmp_path / "idx")]) == 0
    out = capsys.readouterr().out
    assert "indexed 3 documents" in out and "skipped bomb.pdf: too much text" in out


def test_an_upload_that_expands_past_the_limit_is_refused(fixture_corpus: Path, built_index: Path, bomb: Path):
    before = sorted(p.name for p in fixture_corpus.rglob("*"))
    result = add_files([(bomb, "bomb.pdf")], fixture_corpus, built_index, KeywordEmbedder())
    assert not result.added and "too much text" in result.refused[0][1]
    assert sorted(p.name for p in fixture_corpus.rglob("*")) == before


def test_passages_per_document_are_limited(fixture_corpus: Path, tmp_path: Path):
    words = " ".join(f"word{n}" for n in range(20_000))  # ~2,700 passages of 50 characters
    (fixture_corpus / "long.txt").write_text(words, encoding="utf-8")
    embedder = KeywordEmbedder()
    report = update_index(fixture_corpus, tmp_path / "idx", embedder, ChunkerSettings(size=50, overlap=0))
    reasons = {s.doc_id: s.reason for s in report.skipped}
    assert reasons["long.txt"].startswith("too many passages (")
    assert f"the limit is {MAX_PASSAGES_PER_DOCUMENT:,} per document" in reasons["long.txt"]
    assert "long.txt" not in report.documents and len(report.documents) == 3
    assert not any("word1999" in text for text in embedder.encoded)  # never embedded
    assert {d.doc_id for d in load_index(tmp_path / "idx").manifest.documents} == set(report.documents)


def test_cli_index_prints_the_passage_limit(keyword_cli, fixture_corpus: Path, tmp_path: Path, capsys):
    (fixture_corpus / "long.txt").write_text(" ".join(f"w{n}" for n in range(30_000)), encoding="utf-8")
    assert (
        keyword_cli(
            [
                "index",
                "--corpus",
                str(fixture_corpus),
                "--index",
                str(tmp_path / "i"),
                "--chunk-size",
                "50",
                "--chunk-overlap",
                "0",
            ]
        )
        == 0
    )
    assert "skipped long.txt: too many passages" in capsys.readouterr().out
