"""Issue [1/6] "Server security II", item 2: reading a file has a memory and time budget.

A 13 KB EPUB of tiny paragraphs (8 MB unpacked) took the server from 568 MB to 1.84 GB for
33 s before the character limit refused it. Figures: ``bench/parse_budget.py``; these
tests check the refusals, not the timings.
"""

from __future__ import annotations

import secrets
import zipfile
from pathlib import Path

import pytest

from citeqa.errors import DocumentError
from citeqa.ingest.blocks import TextBuilder
from citeqa.ingest.budget import ParseBudget, load_bounded
from citeqa.ingest.extracted import MAX_MARKUP_TAGS, MAX_TEXT_CHARS
from test_server_files import file_data, join, wait_done

CONTAINER = (
    "<?xml version='1.0'?><container version='1.0' xmlns='urn:oasis:names:tc:opendocument:xmlns:container'>"
    "<rootfiles><rootfile full-path='OEBPS/content.opf' media-type='application/oebps-package+xml'/>"
    "</rootfiles></container>"
)
OPF = (
    "<?xml version='1.0' encoding='utf-8'?><package xmlns='http://www.idpf.org/2007/opf' version='3.0' "
    "unique-identifier='id'><metadata xmlns:dc='http://purl.org/dc/elements/1.1/'><dc:identifier id='id'>x"
    "</dc:identifier><dc:title>T</dc:title><dc:language>en</dc:language></metadata><manifest>"
    "<item id='c1' href='c1.xhtml' media-type='application/xhtml+xml'/></manifest><spine><itemref idref='c1'/>"
    "</spine></package>"
)


def tiny_paragraph_epub(path: Path, paragraphs: int) -> Path:
    """The reviewer's file: one chapter of ``<p>a</p>`` repeated (1,000,000 of them: 13 KB, 8 MB unpacked)."""
    body = "<html xmlns='http://www.w3.org/1999/xhtml'><body>" + "<p>a</p>" * paragraphs + "</body></html>"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr("META-INF/container.xml", CONTAINER)
        archive.writestr("OEBPS/content.opf", OPF)
        archive.writestr("OEBPS/c1.xhtml", body)
    return path


@pytest.fixture(scope="module")
def served(guarded_server, tmp_path_factory, cache_dir):
    s = guarded_server(tmp_path_factory.mktemp("served"), cache_dir)
    yield s
    s.close()


def test_a_13_kb_epub_of_tiny_paragraphs_is_refused_before_it_is_parsed(served, tmp_path: Path):
    """Through the page (upload, then the Corpus tab's add): one line, nothing indexed is lost."""
    book = tiny_paragraph_epub(tmp_path / "tiny.epub", 1_000_000)
    assert book.stat().st_size < 20_000
    blocks = served.running._server.config.app.state.blocks
    add = next(i for i, fn in blocks.fns.items() if getattr(fn.fn, "__name__", "") == "on_add")
    before = sorted(served.holder.engine.data.documents)
    with served.page_client() as client:
        uploaded = client.post("/gradio_api/upload", files={"files": ("tiny.epub", book.read_bytes())})
        assert uploaded.status_code == 200, uploaded.text
        session = secrets.token_hex(6)
        assert join(client, add, [[file_data(uploaded.json()[0], "tiny.epub")]], session).status_code == 200
        done = wait_done(client, session, timeout=120)
    status = done["output"]["data"][0]
    assert status == (
        f"refused tiny.epub: too many EPUB elements (262,157 tags or more; the limit is {MAX_MARKUP_TAGS:,})"
    ), status
    assert sorted(served.holder.engine.data.documents) == before
    assert "tiny.epub" not in served.corpus_files()


def test_a_parse_past_its_memory_budget_is_refused(tmp_path: Path):
    """A file under every cap that still needs more memory than the budget: one line, in the worker."""
    page = tmp_path / "page.html"
    page.write_text("<html><body>" + "<p>a</p>" * 90_000 + "</body></html>")
    with pytest.raises(DocumentError, match=r"^needs more than 20 MB of memory to read"):
        load_bounded(page, "page.html", budget=ParseBudget(memory_bytes=20 * 1_048_576))


def test_a_parse_past_its_time_budget_is_refused(tmp_path: Path):
    page = tmp_path / "page.html"
    page.write_text("<html><body>" + "<p>a</p>" * 90_000 + "</body></html>")  # seconds of parsing
    with pytest.raises(DocumentError, match=r"^took longer than 0.1 s to read"):
        load_bounded(page, "page.html", budget=ParseBudget(seconds=0.1))


def test_a_file_within_the_budget_reads_as_in_process(tmp_path: Path, data_dir: Path):
    from citeqa.ingest.documents import load_document

    for path in sorted((data_dir / "corpus").rglob("*.*")):
        assert load_bounded(path, path.name) == load_document(path, path.name)


def test_structured_text_stops_at_the_character_limit():
    """Blocks are refused as soon as the text passes the limit, not after the whole file is read."""
    builder = TextBuilder()
    block = "word " * 20_000
    with pytest.raises(DocumentError, match="too much text"):
        for _ in range(MAX_TEXT_CHARS // len(block) + 2):
            builder.add(block)
    assert builder._length <= MAX_TEXT_CHARS + len(block) + 2
