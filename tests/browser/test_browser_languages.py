"""German and French readers of the shipped es/pt/en corpus (issue [3/7] item 1): a page that opened in
the browser's German or French keeps it after a question in that language, the reply speaks it and flags
the passages it quotes as in another language; a question of names only keeps the conversation's."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder

pytestmark = pytest.mark.browser


@pytest.fixture
def shipped_url(tmp_path: Path, repo: Path) -> Iterator[str]:
    """The chat app over a copy of corpus/ (es, pt, en), with the keyword embedder (the language is the test)."""
    from citeqa.app.web.assets import CSS
    from citeqa.app.web.holder import EngineHolder, EvalSettings, UploadSettings
    from citeqa.app.web.ui import build_app
    from citeqa.engine import Engine
    from citeqa.index.builder import update_index

    corpus = tmp_path / "corpus"
    shutil.copytree(repo / "corpus", corpus)
    update_index(corpus, tmp_path / "index", KeywordEmbedder())
    holder = EngineHolder(Engine.open(tmp_path / "index", embedder=KeywordEmbedder()))
    app = build_app(holder, UploadSettings(corpus), EvalSettings(None))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app.queue().launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, css=CSS)
    yield app.local_url
    app.close()


def ask(page, question: str) -> str:
    """Type a question, press Enter, and return the new reply's text once it is there."""
    replies = page.locator("#chat .citeqa-bot").count()
    page.locator("#question textarea").fill(question)
    page.locator("#question textarea").press("Enter")
    page.locator("#chat .citeqa-bot").nth(replies).wait_for(timeout=30_000)
    return page.locator("#chat .citeqa-bot").nth(replies).inner_text()


#: English labels of a reply (catalogue/en.json) that a German or French reply must not show.
ENGLISH = (
    "other language",
    "Likely right",
    "Unsure — check the source",
    "Possible answer",
    "Show in context",
    "holds the answer",
    "not an answer",
)
GERMAN = ["Wie viele Parameter hat GLM-5?", "GLM-Image?"]  # the second: names only, the conversation's language
FRENCH = ["Quel est le prix de l'API de GLM-Image par image ?", "Combien de paramètres a GLM-5 ?"]


@pytest.mark.parametrize(
    ("locale", "questions", "ask_label", "sources", "other"),
    [
        ("de-DE", GERMAN, "Fragen", "Quellen", "andere Sprache"),
        ("fr-FR", FRENCH, "Demander", "Sources", "autre langue"),
    ],
)
def test_a_german_or_french_page_keeps_its_language_on_the_es_pt_en_corpus(
    browser, shipped_url, locale, questions, ask_label, sources, other
):
    context = browser.new_context(locale=locale, viewport={"width": 1366, "height": 850})
    page = context.new_page()
    page.goto(shipped_url)
    page.locator("#ask").get_by_text(ask_label).wait_for(timeout=15_000)
    for question in questions:
        text = ask(page, question)
        assert sources in text and other in text, text  # the reply's labels, the passages flagged
        assert not [label for label in ENGLISH if label in text], text  # no English label left
        assert page.locator("#ask").inner_text().strip() == ask_label  # the page stays in the reader's language
    page.locator("#clear").click()
    page.wait_for_function("document.querySelectorAll('#chat .citeqa-bot').length === 0")
    assert page.locator("#ask").inner_text().strip() == ask_label
    context.close()
