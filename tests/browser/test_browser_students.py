"""A real browser: check a claim in the chat, copy a citation, download the conversation, open a cited
document at the passage, remove a document (issue [4/6])."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeqa.app.evidence import conversation_from_json

pytestmark = pytest.mark.browser


@pytest.fixture
def served(tmp_path: Path, start_app):
    app, url, holder, corpus = start_app(tmp_path / "app")
    yield url, holder, corpus
    app.close()


def new_page(browser, url: str, clipboard: bool = False):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, accept_downloads=True)
    if clipboard:
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url.rstrip("/"))
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    page.goto(url)
    return page


def send(page, text: str, expect: str, mode: str | None = None) -> None:
    if mode is not None:
        page.locator("#mode input").click()
        page.get_by_role("option", name=mode, exact=True).click()
    page.locator("#question textarea").fill(text)
    page.locator("#ask").click()
    page.locator("#chat").get_by_text(expect).filter(visible=True).last.wait_for()


def last_reply(page):
    """The latest reply in the chat, with its own sources."""
    return page.locator("#chat .citeqa-bot").last


def test_check_a_claim_and_copy_its_citation(browser, served):
    url, _, _ = served
    page = new_page(browser, url, clipboard=True)
    send(page, "The windmill of Greyhill was built in 1790.", "not “1790”", mode="Check a claim")
    assert "Conflicting: The documents say “1760”, not “1790”. [1]" in page.locator("#chat").inner_text()
    first = last_reply(page).locator(".citeqa-source").first
    assert "conflicts" in first.locator(".citeqa-relation").inner_text()
    assert first.locator(".citeqa-passage mark").inner_text().startswith("The windmill of Greyhill was built in 1760")
    assert first.locator(".citeqa-passage mark strong").inner_text() == "1760"

    first.locator("[data-citeqa-copy=plain]").click()
    page.wait_for_function("document.querySelector('#chat [data-citeqa-copy=plain]').dataset.copied === 'yes'")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith(
        "“The windmill of Greyhill was built in 1760 by the miller Thomas Hale.” — "
        "The Windmill of Greyhill. mill.html, language en, characters "
    )
    assert "Indexed 20" in copied
    first.locator("[data-citeqa-copy=bibtex]").click()
    page.wait_for_function("document.querySelector('#chat [data-citeqa-copy=bibtex]').dataset.copied === 'yes'")
    bibtex = page.evaluate("navigator.clipboard.readText()")
    assert bibtex.startswith("@misc{citeqa:mill:") and "title = {The Windmill of Greyhill}" in bibtex
    first.locator(".citeqa-formats summary").click()  # the formats are shown too, for a browser without a clipboard
    shown = first.locator("pre[data-format=csl-json]").inner_text()
    assert json.loads(shown)[0]["archive_location"] == "mill.html"

    send(page, "El faro de Punta Brava se construyó en 1887.", "Respaldada", mode="Auto")  # a statement: checked
    send(page, "¿Cuánto cuesta la entrada?", "6 euros")  # a question, in Auto mode: answered
    assert page.locator("#ask").inner_text().strip() == "Preguntar"
    assert page.dialogs == []


def test_download_the_conversation_as_markdown_and_json(browser, served, tmp_path: Path):
    url, _, _ = served
    page = new_page(browser, url)
    send(page, "When was the windmill of Greyhill restored?", "2004")
    send(page, "O farol da Ilha Clara foi inaugurado em 1912.", "Confirmada", mode="Check a claim")
    assert page.locator("#download-md").is_hidden()  # nothing is written until the page asks for it
    page.locator("#download-prepare").click()
    page.locator("#download-md").wait_for(state="visible", timeout=20_000)
    with page.expect_download() as download:
        page.locator("#download-md").click()
    assert download.value.suggested_filename.startswith("citeqa-conversation-20")  # named with the date
    markdown = Path(download.value.path()).read_text(encoding="utf-8")
    assert markdown.startswith("# Conversa do citeqa") and "· 2 turnos" in markdown  # the last turn's language
    assert "## 1. When was the windmill of Greyhill restored?" in markdown and "**Sources**" in markdown
    assert "## 2. Afirmação: O farol da Ilha Clara foi inaugurado em 1912." in markdown
    assert "1. *The Windmill of Greyhill* — `mill.html`, en, characters" in markdown
    with page.expect_download() as download:
        page.locator("#download-json").click()
    turns = conversation_from_json(Path(download.value.path()).read_text(encoding="utf-8"))
    assert [type(t).__name__ for t in turns] == ["Answer", "ClaimCheck"]
    assert "2004" in turns[0].answer and turns[1].verdict == "supported"


def test_a_citation_opens_the_whole_document_at_the_passage(browser, served):
    from citeqa.app.web.corpus.tab import upload
    from citeqa.app.web.holder import UploadSettings

    url, holder, corpus = served
    filler = "\n\n".join(
        f"Paragraph {i}: the harbour records list ships, cargoes and tides of that year." for i in range(400)
    )
    (corpus / "harbour.md").write_text(
        "# Harbour log <b>bold</b>\n\n" + filler + "\n\nThe harbour crane of "
        "Porto Velho was installed in 1931 <script>alert('x')</script>.\n",
        encoding="utf-8",
    )
    upload(holder, UploadSettings(corpus), [])  # re-scan: the long document joins the index
    page = new_page(browser, url)
    send(page, "When was the harbour crane of Porto Velho installed?", "1931")
    source = last_reply(page).locator(".citeqa-source").first
    assert "harbour.md" in source.inner_text()
    source.locator(".citeqa-head b").click()  # the citation's title
    mark = page.locator("#doc-viewer mark#cited")
    mark.wait_for()
    assert "The harbour crane of Porto Velho was installed in 1931" in mark.inner_text()
    page.wait_for_function(
        """() => { const m = document.querySelector('#doc-viewer mark#cited');
        const box = document.querySelector('#citeqa-doc-text').getBoundingClientRect();
        const r = m.getBoundingClientRect();
        return r.top >= box.top && r.bottom <= box.bottom && r.top >= 0 && r.bottom <= innerHeight; }"""
    )
    assert page.locator("#citeqa-doc-text").evaluate("e => e.scrollTop") > 1000  # scrolled down to it
    text = page.locator("#citeqa-doc-text").inner_text()
    assert text.startswith("# Harbour log <b>bold</b>") and "<script>alert('x')</script>" in text
    injected = page.evaluate("""() => ({
        bold: [...document.querySelectorAll('#doc-viewer b')].filter(b => b.textContent === 'bold').length,
        scripts: document.querySelectorAll('#doc-viewer script').length})""")
    assert injected == {"bold": 0, "scripts": 0}
    page.locator("#doc-close").click()
    page.locator("#doc-viewer").wait_for(state="hidden")
    assert page.dialogs == []


def test_remove_a_document_only_after_confirming(browser, served):
    url, holder, corpus = served
    page = new_page(browser, url)
    page.get_by_role("tab", name="Corpus").click()
    page.locator("#remove-doc input").click()
    page.get_by_role("option", name="mill.html").click()
    page.locator("#remove").click()  # one click deletes nothing
    status = page.locator("#remove-status textarea")
    page.wait_for_function("document.querySelector('#remove-status textarea').value.length > 0")
    assert status.input_value().startswith("Tick the box to confirm")
    assert (corpus / "mill.html").exists() and "mill.html" in holder.engine.documents
    page.locator("#remove-confirm input").check()
    page.locator("#remove").click()
    page.wait_for_function("document.querySelector('#remove-status textarea').value.startsWith('removed')")
    assert status.input_value() == "removed mill.html (3 documents, 4 passages left)"
    assert not (corpus / "mill.html").exists() and "mill.html" not in holder.engine.documents
    assert "faro.txt" in holder.engine.documents  # the others stay indexed
    assert not page.locator("#remove-confirm input").is_checked()
    page.locator("#corpus-table").get_by_text("faro.txt").wait_for()
    assert "mill.html" not in page.locator("#corpus-table").inner_text()
    page.get_by_role("tab", name="Chat").click()
    send(page, "When was the windmill of Greyhill built?", "closest")
    assert "mill.html" not in last_reply(page).inner_text()
