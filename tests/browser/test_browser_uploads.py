"""Issue [3/7] item 6: an add's progress, as a person sees it. It showed the same "checking file.md - 0.0%"
overlay four times (on every output of the add, the file box's label among them), stuck at 0%, and the
added files stayed listed in the file box afterwards. Now: one readable progress line, on the status box,
past 0% once the files are read; then the summary, one line per file; the box empty."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.app.web.test_server_uploads import GatedEmbedder

pytestmark = pytest.mark.browser

#: Where the page draws progress now: the element (by id) each progress text sits in, its text, and its
#: contrast against white (the status box's background).
PROGRESS_JS = """() => {
  const lum = (s) => { const [r, g, b] = s.match(/[\\d.]+/g).map(Number).map(c => { c /= 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  return [...document.querySelectorAll('.progress-text, .progress-level-inner')]
    .filter(e => e.getClientRects().length && e.innerText.trim())
    .map(e => ({where: e.closest('[id]').id, text: e.innerText.trim(),
                ratio: 1.05 / (lum(getComputedStyle(e).color) + 0.05)}));
}"""


def test_an_add_shows_one_moving_progress_line_then_its_summary_and_empties_the_box(browser, tmp_path: Path, start_app):
    from citeqa.engine import Engine

    app, url, holder, _ = start_app(tmp_path / "app")
    embedder = GatedEmbedder()
    holder.swap(Engine.open(holder.engine.index_dir, embedder=embedder))
    files = []
    for name, text in [("quay.md", "# The quay\n\nPaved in 1902."), ("mill.txt", "The mill ground wheat until 1921.")]:
        files.append(tmp_path / name)
        files[-1].write_text(text, encoding="utf-8")
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(url)
        page.get_by_role("tab", name="Corpus").click()
        page.locator("#upload input[type=file]").set_input_files([str(f) for f in files])
        page.locator('#upload td.filename[aria-label="mill.txt"]').wait_for()
        page.locator("#add").click()
        assert embedder.waiting.wait(120)  # checked and read: the add waits at its embedding step
        page.wait_for_function(f"() => ({PROGRESS_JS})().some(p => p.text.includes('%'))")
        shown = page.evaluate(PROGRESS_JS)
        assert {p["where"] for p in shown} == {"upload-status"}, shown  # one place, not over the file box
        line = next(p["text"] for p in shown if "%" in p["text"])
        said = re.search(r"embedding \d+ passages - ([\d.]+)%", line)
        assert said and float(said.group(1)) > 50, shown  # past checking and reading, in words a person reads
        assert all(p["ratio"] >= 4.5 for p in shown), shown
    finally:
        embedder.gate.set()
    status = page.locator("#upload-status textarea")
    page.wait_for_function("el => el.value.includes('added')", arg=status.element_handle())
    assert status.input_value() == "added quay.md\nadded mill.txt"
    page.wait_for_function("() => !document.querySelector('#upload td.filename')")  # the box is emptied
    assert page.locator("#upload input[type=file]").count() == 1  # and ready for the next add
    app.close()
