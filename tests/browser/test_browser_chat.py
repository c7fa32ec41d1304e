"""What a person sees in the chat (issue [4/6]): each question answered in its own language whatever
came before, every text of a reply readable (WCAG AA), [n] bringing its own source into view, a
usable phone layout, and blank or over-long input adding nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

#: The WCAG 2.1 contrast of every text of the chat against the background it is drawn on, from the
#: computed styles: the nearest ancestor with an opaque background (alpha composited over white).
CONTRAST_JS = """() => {
  const rgba = (s) => { const m = s.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const lum = ([r, g, b]) => { const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3]));
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor); if (c[3] > 0) layers.push(c); if (c[3] >= 1) break;
    }
    return layers.reverse().reduce((under, top) => over(top, under), [255, 255, 255]);
  };
  const out = [];
  for (const el of document.querySelectorAll('#chat *')) {
    const own = [...el.childNodes].filter(n => n.nodeType === 3 && n.textContent.trim()).map(n => n.textContent.trim());
    if (!own.length || !el.getClientRects().length) continue;
    const style = getComputedStyle(el); if (style.visibility === 'hidden') continue;
    const fg = rgba(style.color), bg = background(el);
    const a = lum(over(fg, bg)) + 0.05, b = lum(bg) + 0.05;
    out.push({text: own.join(' ').slice(0, 40), cls: el.className, ratio: Math.max(a, b) / Math.min(a, b)});
  }
  return out;
}"""


@pytest.fixture
def app_url(tmp_path: Path, start_app):
    app, url, _, _ = start_app(tmp_path / "app")
    yield url
    app.close()


def open_page(browser, url: str, width: int = 1366, height: int = 850, scheme: str = "light"):
    page = browser.new_page(viewport={"width": width, "height": height}, color_scheme=scheme)
    page.goto(url + ("?__theme=dark" if scheme == "dark" else ""))
    page.locator("#question textarea").wait_for()
    return page


def ask(page, question: str, expect: str) -> None:
    """Type a question, press Enter, and wait until the reply to it holds ``expect``: the last user
    message is this question and has its reply (an earlier reply may hold ``expect`` too, and counting
    replies before asking races the chat's re-render under load)."""
    page.locator("#question textarea").fill(question)
    page.locator("#question textarea").press("Enter")
    page.wait_for_function(_ANSWERED, arg=question)
    page.locator("#chat .citeqa-bot").last.get_by_text(expect).filter(visible=True).first.wait_for()


_ANSWERED = """(question) => { const users = document.querySelectorAll('#chat .citeqa-user');
  const bots = document.querySelectorAll('#chat .citeqa-bot');
  return users.length > 0 && bots.length === users.length && users[users.length - 1].textContent.includes(question); }"""


def reply(page, n: int):
    return page.locator("#chat .citeqa-bot").nth(n)


def test_each_reply_speaks_the_language_of_its_own_question(browser, app_url):
    page = open_page(browser, app_url)
    ask(page, "When was the windmill of Greyhill restored?", "2004")
    ask(page, "Quando foi inaugurado o farol da Ilha Clara?", "1912")
    ask(page, "When was the windmill of Greyhill built?", "1760")
    ask(page, "¿En qué año se construyó el faro de Punta Brava?", "1887")
    first, second, third, fourth = (reply(page, i).inner_text() for i in range(4))
    assert "Sources" in first and "Fontes" not in first
    assert "Fontes" in second and "Sources" not in second and "outro idioma" not in second  # a pt passage, pt reply
    assert "Sources" in third and "Fontes" not in third and "other language" not in third
    assert "Fuentes" in fourth and "otro idioma" not in fourth
    assert page.locator("#ask").inner_text().strip() == "Preguntar"  # the page follows the latest question
    assert page.get_by_role("tab", name="Documentos").is_visible()
    names = page.locator("#chat article").evaluate_all("items => items.map(a => a.getAttribute('aria-label'))")
    assert len(names) == 8 and not any("<" in name or "class=" in name for name in names)  # plain, not HTML
    assert names[0] == "You: When was the windmill of Greyhill restored?" and names[1].startswith("citeqa: ")
    assert page.get_by_role("log").count() == 1


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_of_a_reply_meets_aa_contrast(browser, app_url, tmp_path: Path, scheme: str):
    page = open_page(browser, app_url, scheme=scheme)
    ask(page, "When was the beacon of Cabo Frio lit?", "1899")
    ask(page, "¿Cuál es la capital de Mongolia?", "No encontré")  # a "not found" reply and its closest passages
    page.locator("#mode input").click()
    page.get_by_role("option", name="Comprobar una afirmación", exact=True).click()
    ask(page, "The windmill of Greyhill was built in 1790.", "1760")  # a claim: verdict, badges, both values
    page.locator("#chat details").evaluate_all("ds => ds.forEach(d => d.open = true)")
    texts = page.evaluate(CONTRAST_JS)
    classes = {t["cls"] for t in texts}
    assert {"citeqa-sentence", "citeqa-where", "citeqa-ref", "citeqa-passage", "citeqa-relation"} <= {
        c for cls in classes for c in cls.split()
    }
    assert len(texts) > 40
    low = [t for t in texts if t["ratio"] < 4.5]
    assert low == [], low
    page.screenshot(path=str(tmp_path / f"contrast-{scheme}.png"), full_page=True)


def test_a_citation_marker_brings_its_own_source_into_view(browser, app_url):
    page = open_page(browser, app_url)
    ask(page, "When was the beacon of Cabo Frio lit?", "1899")
    ask(page, "When was the windmill of Greyhill restored?", "2004")
    page.locator("#chat .citeqa-log").evaluate("e => e.scrollTop = e.scrollHeight")  # the first turn out of view
    marker = reply(page, 0).locator("a.citeqa-ref").first
    assert "The beacon of Cabo Frio" in marker.get_attribute("title")  # the preview on hover
    card = page.locator("#citeqa-t1-src-1")
    assert not card.evaluate(_IN_LOG)
    marker.dispatch_event("click")
    page.wait_for_function(f"() => ({_IN_LOG})(document.querySelector('#citeqa-t1-src-1'))")
    assert "citeqa-flash" in card.get_attribute("class")
    assert "beacon.md" in card.inner_text() and page.evaluate("document.activeElement.id") == "citeqa-t1-src-1"
    assert "mill.html" in page.locator("#citeqa-t2-src-1").inner_text()  # each turn keeps its own sources
    reply(page, 1).locator("a.citeqa-ref").first.click()  # a real click on a marker in view
    page.wait_for_function("document.querySelector('#citeqa-t2-src-1').classList.contains('citeqa-flash')")


_IN_LOG = """(card) => { const box = card.closest('.citeqa-log').getBoundingClientRect();
  const r = card.getBoundingClientRect(); return r.top >= box.top - 1 && r.top < box.bottom - 20; }"""


def test_phone_layout_keeps_the_box_wide_and_the_page_still(browser, app_url, tmp_path: Path):
    page = open_page(browser, app_url, 390, 844)
    box = page.locator("#question textarea").bounding_box()
    mode, send = page.locator("#mode").bounding_box(), page.locator("#ask").bounding_box()
    assert box["width"] >= 300  # not squeezed beside the Mode control
    assert mode["y"] >= box["y"] + box["height"] - 1 and abs(mode["y"] - send["y"]) < 30  # Mode and Ask below it
    first_example = page.get_by_text("¿Cuántos parámetros tiene GLM-5?").bounding_box()
    assert first_example["y"] + first_example["height"] <= 844  # examples above the fold
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    row = page.locator("#ask-row").bounding_box()["height"]
    ask(page, "Quando foi inaugurado o farol da Ilha Clara?", "1912")
    assert page.locator("#ask").inner_text().strip() == "Perguntar"
    assert page.locator("#ask-row").bounding_box()["height"] == row  # no jump when the labels change language
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    page.screenshot(path=str(tmp_path / "phone.png"), full_page=True)


def test_blank_or_too_long_input_adds_nothing(browser, app_url):
    page = open_page(browser, app_url)
    send, box = page.locator("#ask"), page.locator("#question textarea")
    page.wait_for_function("document.querySelector('#ask')?.disabled")  # empty at first
    box.fill("   ")
    page.wait_for_function("document.querySelector('#ask')?.disabled")
    box.press("Enter")
    page.locator("#question-info .citeqa-refusal").wait_for()
    assert page.locator("#question-info .citeqa-refusal").inner_text() == "Type a question first."
    assert page.locator("#chat article").count() == 0
    box.fill("x" * 2001)
    page.wait_for_function("document.querySelector('#ask')?.disabled")
    assert page.locator("#question-count").inner_text() == "2001 / 2000 characters"
    box.press("Enter")
    page.get_by_text("The question is too long (2001 characters; the limit is 2000).").wait_for()
    assert page.locator("#chat article").count() == 0 and box.input_value() == "x" * 2001  # kept, to shorten
    page.wait_for_function("document.querySelector('#question-count').textContent.length > 0")  # refilled
    shown = page.evaluate(CONTRAST_JS.replace("#chat *", "#question-info *"))
    assert len(shown) == 2 and all(t["ratio"] >= 4.5 for t in shown), shown  # the refusal and the counter
    box.fill("When was the windmill of Greyhill restored?")
    page.wait_for_function("document.querySelector('#ask')?.disabled === false")
    send.click()
    reply(page, 0).get_by_text("2004").first.wait_for()
    assert page.locator("#chat article").count() == 2 and page.locator("#question-info .citeqa-refusal").count() == 0


def test_a_visit_opens_in_the_browser_s_language(browser, app_url):
    context = browser.new_context(locale="pt-BR", viewport={"width": 1366, "height": 850})
    page = context.new_page()
    page.goto(app_url)
    page.locator("#ask").get_by_text("Perguntar").wait_for()
    # the labels are set one component at a time: wait for each (under load the tabs come later)
    page.get_by_role("tab", name="Documentos").wait_for(state="visible")
    page.locator("#chat").get_by_text("Faça uma pergunta").first.wait_for()
    ask(page, "When was the windmill of Greyhill restored?", "2004")  # then the question decides
    assert page.locator("#ask").inner_text().strip() == "Ask"
    context.close()
