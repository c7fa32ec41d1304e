"""What a person reads about confidence (issue item "a confidence people read right"): each answer named by
its fitted band ("Likely right", not "Low confidence" for a right answer at 0.70), the hedge only in the
lowest band, and after an abstention the closest passages labelled as such, none with the green
"holds the answer" badge."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from citeqa.qa.scoring import Band

pytestmark = pytest.mark.browser

HIGH = "Quando foi inaugurado o farol da Ilha Clara?"  # the fixture corpus's surest answer: 1912
LIKELY = "When was the windmill of Greyhill restored?"  # 2004
UNSURE = "When was the windmill of Greyhill built?"  # 1760, the least sure of the three
NOT_FOUND = "¿Cuál es la capital de Mongolia?"  # the corpus does not say: the engine abstains


def open_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1366, "height": 850})
    page.goto(url)
    page.locator("#question textarea").wait_for()
    return page


def ask(page, question: str, expect: str):
    """Type a question into a new conversation, press Enter, and return the reply once it holds ``expect``."""
    page.locator("#question textarea").fill(question)
    page.locator("#question textarea").press("Enter")
    reply = page.locator("#chat .citeqa-bot").first
    reply.get_by_text(expect).filter(visible=True).first.wait_for()
    return reply


@pytest.fixture
def banded(tmp_path: Path, start_app):
    """The chat over the fixture corpus, its engine given three bands fitted around the confidences it
    gives the three questions (the bands change what the page says, never the answer)."""
    app, url, holder, _ = start_app(tmp_path / "app")
    engine = holder.engine
    high, likely, unsure = (engine.ask(q).confidence for q in (HIGH, LIKELY, UNSURE))
    assert unsure < likely < high, (unsure, likely, high)  # the fixture corpus orders them so
    bands = (
        Band("high", (likely + high) / 2, 0.93, 120),
        Band("likely", (unsure + likely) / 2, 0.78, 60),
        Band("unsure", 0.0, 0.31, 45),
    )
    scoring = replace(engine.settings.scoring, bands=bands)
    settings = replace(engine.settings, scoring=scoring)
    holder.swap(engine.adjusted(settings))
    yield url
    app.close()


def test_a_person_reads_each_answer_by_its_band(browser, banded):
    page = open_page(browser, banded)
    reply = ask(page, LIKELY, "2004")
    badge = reply.locator(".citeqa-confidence")
    assert badge.inner_text() == "Likely right" and badge.get_attribute("data-band") == "likely"
    assert "in testing, 78% of answers like this were right (60 answers)" in badge.get_attribute("title")
    assert reply.locator(".citeqa-short").inner_text() == "2004"  # given as the answer, not hedged
    assert "Possible answer" not in reply.inner_text() and "Low confidence" not in reply.inner_text()
    assert reply.get_attribute("aria-label").endswith("(Likely right)")
    assert reply.locator(".citeqa-holds").count() >= 1  # the source that holds the answer given says so

    page = open_page(browser, banded)
    reply = ask(page, UNSURE, "1760")
    assert reply.locator(".citeqa-confidence").inner_text() == "Unsure — check the source"
    assert reply.locator(".citeqa-possible-label").inner_text() == "Possible answer (check it in the source):"

    page = open_page(browser, banded)
    reply = ask(page, HIGH, "1912")
    assert reply.locator(".citeqa-confidence").inner_text() == "Confiança alta"  # the question's language
    assert reply.locator(".citeqa-possible").count() == 0


def test_an_abstention_shows_the_closest_passages_without_the_holds_the_answer_badge(browser, banded):
    page = open_page(browser, banded)
    reply = ask(page, NOT_FOUND, "No encontré")
    assert "No encontré esto en los documentos." in reply.inner_text()
    assert reply.locator(".citeqa-closest h3").inner_text() == "Pasajes más cercanos (no son una respuesta)"
    cards = reply.locator(".citeqa-source")
    assert cards.count() >= 1 and reply.locator(".citeqa-source.citeqa-secondary").count() == cards.count()
    assert reply.locator(".citeqa-holds").count() == 0 and "contiene la respuesta" not in reply.inner_text()
    assert reply.locator(".citeqa-confidence").get_attribute("data-band") == "none"
