"""A real browser against the app: answer, citation, highlight, and inert document markup."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture
def page(tmp_path: Path, chromium: tuple[str, list[str]]):
    """A Chromium page; dialogs (an alert() from injected script) are recorded on ``page.dialogs``."""
    from playwright.sync_api import sync_playwright

    executable, args = chromium
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=args)
        page = browser.new_page(viewport={"width": 1280, "height": 1100})
        page.dialogs = []  # type: ignore[attr-defined]
        page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
        yield page
        browser.close()


def ask(page, question: str, expect: str) -> None:
    """Type a question, send it, and wait until the reply holds ``expect``."""
    page.locator("#question textarea").fill(question)
    page.locator("#ask").click()
    page.locator("#chat").get_by_text(expect).filter(visible=True).last.wait_for()


def test_chat_answers_with_citation_highlight_and_inert_markup(page, tmp_path: Path, start_app):
    app, url, _, _ = start_app(tmp_path / "app")
    try:
        page.goto(url)
        ask(page, "When was the beacon of Cabo Frio lit?", "harbour master")
        chat = page.locator("#chat").inner_text()
        assert "<img src=x onerror=alert('img')>" in chat and "![pixel](http://127.0.0.1:9/pixel.png)" in chat
        assert page.locator("#chat .citeqa-bot").last.locator(".citeqa-sentence mark").inner_text() == "1899"
        sources = page.locator("#chat .citeqa-bot").last.locator(".citeqa-sources")
        sources.get_by_text("beacon.md").first.wait_for()
        assert "[1] The beacon of Cabo Frio <script>alert('title')</script>" in sources.inner_text()
        assert "1899" in sources.locator("mark").first.inner_text()
        context = sources.locator(".citeqa-context").first
        if not context.evaluate("d => d.open"):  # a possible answer shows its source's context already
            context.locator("summary").click()
        assert sources.locator(".citeqa-cited").first.is_visible()

        ask(page, "¿En qué año se construyó el faro de Punta Brava?", "cantera cercana")
        assert page.locator("#chat .citeqa-bot").last.locator(".citeqa-sentence mark").inner_text() == "1887"
        page.locator("#chat .citeqa-bot").last.get_by_text("faro.txt").filter(visible=True).first.wait_for()
        assert page.locator("#ask").inner_text().strip() == "Preguntar"
        page.screenshot(path=str(tmp_path / "chat.png"), full_page=True)

        page.get_by_role("tab", name="Documentos").click()  # the tabs follow the last question's language
        page.locator("#corpus-table").get_by_text("beacon.md").first.wait_for()
        assert page.locator("#add").inner_text().strip() == "Añadir al índice"  # so do the Corpus tab's labels
        assert "<script>alert('title')</script>" in page.locator("#corpus-table").inner_text()
        page.screenshot(path=str(tmp_path / "corpus.png"), full_page=True)

        injected = page.evaluate("""() => ({
            imgs: [...document.images].filter(i => /pixel|^x$/.test(i.getAttribute('src') || '')).length,
            scripts: [...document.scripts].filter(s => s.textContent.trim().startsWith("alert(")).length,
            links: [...document.links].filter(a => a.href.startsWith('javascript:')).length})""")
        assert injected == {"imgs": 0, "scripts": 0, "links": 0}
        assert page.dialogs == []
        assert (tmp_path / "chat.png").stat().st_size > 10_000
    finally:
        app.close()
