"""Issue [1/6] "Server security II", item 2: reading a file has a memory and time budget.

A 13 KB EPUB of tiny paragraphs (8 MB unpacked) took the server from 568 MB to 1.84 GB for
33 s before the character limit refused it. Figures: ``bench/parse_budget.py``; these
tests check the refusals and which limit made them, not the timings.
"""

from __future__ import annotations

import json
import os
import secrets
import zipfile
from pathlib import Path

import pytest

from citeqa.app.web.server import mounted_blocks
from citeqa.errors import DocumentError, ParseBudgetError
from citeqa.ingest.blocks import TextBuilder
from citeqa.ingest.budget import ParseBudget, load_bounded
from citeqa.ingest.extracted import MAX_MARKUP_TAGS, MAX_TEXT_CHARS
from tests.app.web.test_server_files import file_data, join, wait_done

TESTS = Path(__file__).parent

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
    blocks = mounted_blocks(served.running._server.config.app)
    add = next(i for i, fn in blocks.fns.items() if getattr(fn.fn, "__name__", "") == "on_add")
    before = sorted(served.holder.engine.documents)
    with served.page_client() as client:
        uploaded = client.post("/gradio_api/upload", files={"files": ("tiny.epub", book.read_bytes())})
        assert uploaded.status_code == 200, uploaded.text
        session = secrets.token_hex(6)
        assert join(client, add, [[file_data(uploaded.json()[0], "tiny.epub")], None], session).status_code == 200
        done = wait_done(client, session)
    status = done["output"]["data"][0]
    assert status == (
        f"refused tiny.epub: too many EPUB elements (262,157 tags or more; the limit is {MAX_MARKUP_TAGS:,})"
    ), status
    assert sorted(served.holder.engine.documents) == before
    assert "tiny.epub" not in served.corpus_files()


# Each budget test leaves one limit as the only one that can end the worker: the others (and the
# worker's start-up, seconds on a busy machine) get minutes. A reader from budget_readers.py that
# never ends or never stops allocating makes the outcome the same on a quiet or a loaded machine;
# ``exceeded`` says which limit refused the file.
MINUTES = 300.0


@pytest.fixture
def worker_imports_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker process can import budget_readers (tests/ on its PYTHONPATH)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p))


def many_paragraphs(path: Path) -> Path:
    """An HTML page of 90,000 tiny paragraphs: about +100 MB and seconds of parsing in the worker."""
    path.write_text("<html><body>" + "<p>a</p>" * 90_000 + "</body></html>")
    return path


def test_a_parse_past_its_memory_budget_is_refused(tmp_path: Path):
    """A file under every cap that still needs more memory than the budget: one line, in the worker."""
    page = many_paragraphs(tmp_path / "page.html")
    with pytest.raises(ParseBudgetError, match=r"^needs more than 20 MB of memory to read") as refused:
        load_bounded(page, "page.html", budget=ParseBudget(20 * 1_048_576, seconds=MINUTES, startup_s=MINUTES))
    assert refused.value.exceeded == "memory"


def test_a_reader_that_keeps_allocating_is_stopped_by_the_memory_limit(tmp_path: Path, worker_imports_tests):
    page = many_paragraphs(tmp_path / "page.html")
    with pytest.raises(ParseBudgetError, match=r"^needs more than 50 MB of memory to read") as refused:
        load_bounded(
            page,
            "page.html",
            budget=ParseBudget(50 * 1_048_576, seconds=MINUTES, startup_s=MINUTES),
            reader="budget_readers:allocates",
        )
    assert refused.value.exceeded == "memory"


def test_a_parse_past_its_time_budget_is_refused(tmp_path: Path):
    """The real page (seconds of parsing; +100 MB of the default 300) with a tenth of a second."""
    page = many_paragraphs(tmp_path / "page.html")
    with pytest.raises(ParseBudgetError, match=r"^took longer than 0.1 s to read") as refused:
        load_bounded(page, "page.html", budget=ParseBudget(seconds=0.1, startup_s=MINUTES))
    assert refused.value.exceeded == "time"


@pytest.mark.parametrize("reader", ["never_ends", "spins"])
def test_a_reader_that_never_ends_is_stopped_by_the_time_budget(reader: str, tmp_path: Path, worker_imports_tests):
    """Waiting (only the wall-clock timer can end it) or computing (the timer or the CPU limit)."""
    page = many_paragraphs(tmp_path / "page.html")
    with pytest.raises(ParseBudgetError, match=r"^took longer than 0.5 s to read") as refused:
        load_bounded(
            page, "page.html", budget=ParseBudget(seconds=0.5, startup_s=MINUTES), reader=f"budget_readers:{reader}"
        )
    assert refused.value.exceeded == "time"  # the worker's own limit, not the caller's deadline


def test_the_budget_starts_after_the_worker_s_start_up(tmp_path: Path, worker_imports_tests):
    """A start-up that used 2.5 s of CPU (a busy machine's imports) leaves the parse its whole budget: the
    CPU limit counts from the process's start, so the start-up's CPU is added to it."""
    budget = ParseBudget(memory_bytes=64 * 1_048_576, seconds=1.0, startup_s=MINUTES)
    doc = load_bounded(tmp_path / "any.txt", "any.txt", budget=budget, reader="budget_slow_start:reports_limits")
    limits = json.loads(doc.text)
    assert limits["cpu_used_s"] >= 2.5
    assert limits["cpu_limit_s"] - limits["cpu_used_s"] >= budget.seconds
    assert 0 < limits["timer_s"] <= budget.seconds
    assert 0 < limits["address_space_limit"] - limits["address_space"] <= budget.memory_bytes


def test_a_worker_that_hangs_starting_is_given_up_on(tmp_path: Path, worker_imports_tests):
    with pytest.raises(ParseBudgetError, match=r"^took longer than 0.5 s to read") as refused:
        load_bounded(
            tmp_path / "any.txt",
            "any.txt",
            budget=ParseBudget(seconds=0.5, startup_s=1.0),
            reader="budget_hung_start:reports_limits",
        )
    assert refused.value.exceeded == "deadline"


def test_a_file_within_the_budget_reads_as_in_process(tmp_path: Path, data_dir: Path):
    from citeqa.ingest.documents import load_document

    roomy = ParseBudget(seconds=MINUTES, startup_s=MINUTES)  # the same document, not how fast on a busy machine
    for path in sorted((data_dir / "corpus").rglob("*.*")):
        assert load_bounded(path, path.name, budget=roomy) == load_document(path, path.name)


def test_structured_text_stops_at_the_character_limit():
    """Blocks are refused as soon as the text passes the limit, not after the whole file is read."""
    builder = TextBuilder()
    block = "word " * 20_000
    with pytest.raises(DocumentError, match="too much text"):
        for _ in range(MAX_TEXT_CHARS // len(block) + 2):
            builder.add(block)
    assert builder._length <= MAX_TEXT_CHARS + len(block) + 2
