"""Issue [6/6]: the errors raised below the web layer reach the page in its language. In each of the
interface's languages a reader uploads a damaged DOCX to the Corpus tab (the reader's own reason, from
the ingest code, is said in the page's language) and a QA file with a bad line to the Evaluate tab, named
with fullwidth letters (``bad．ｊｓｏｎｌ``: the box takes it, our check reads it as JSONL); the refusal
names the line and its reason in the page's language, no other language's string is on the page, and
the box keeps the file the reader chose."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources

import pytest

from tests.browser.test_browser_tabs_languages import LANGUAGES, label, strangers
from tests.paths import DATA

pytestmark = pytest.mark.browser

QA = DATA / "qa"
BAD_QA = "bad．ｊｓｏｎｌ"  # fullwidth dot and letters: Gradio's own box (file_types) refused it in English


def errors(lang: str) -> dict[str, str]:
    text = resources.files("citeqa.catalogue").joinpath(f"{lang}.json").read_text(encoding="utf-8")
    return json.loads(text)["errors"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, start_app) -> Iterator[str]:
    app, url, _, _ = start_app(tmp_path_factory.mktemp("errors"), qa_dir=QA)
    yield url
    app.close()


@pytest.fixture(scope="module")
def chromium_browser(chromium):
    from playwright.sync_api import sync_playwright

    executable, args = chromium
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=executable, args=args)
        yield instance
        instance.close()


def value_is(page, selector: str, text: str) -> None:
    page.wait_for_function("([s, t]) => document.querySelector(s)?.value === t", arg=[selector, text])


def holds(page, selector: str, text: str) -> None:
    page.wait_for_function(
        "([s, t]) => (document.querySelector(s)?.innerText || '').replace(/\\s+/g, ' ').includes(t)",
        arg=[selector, text],
        timeout=60_000,
    )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_errors_from_below_the_page_speak_its_language(chromium_browser, served, patient, lang, tmp_path):
    docx = tmp_path / "broken.docx"
    docx.write_bytes(b"PK\x03\x04 not really a zip file" * 4)
    qa = tmp_path / BAD_QA
    qa.write_text('{"question": "q", "answers": ["a"], "lang": "en"}\n{"question": "q2", "lang": "en"}\n', "utf-8")
    context = patient(chromium_browser).new_context(locale=lang, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.goto(served)
    page.wait_for_function(
        "t => document.querySelector('#ask')?.innerText.trim() === t", arg=label(lang, "labels", "ask")
    )
    said = errors(lang)

    # Corpus: the ingest code's reason for refusing the file, inside the tab's own line.
    page.get_by_role("tab", name=label(lang, "labels", "tab_corpus")).click()
    page.locator("#upload input[type=file]").set_input_files([str(docx)])
    page.locator('#upload td.filename[aria-label="broken.docx"]').wait_for()
    page.locator("#add").click()
    detail = said["doc_unreadable_kind"].format(kind="DOCX", error="BadZipFile")
    why = label(lang, "corpus_status", "why_unreadable").format(name="broken.docx", detail=detail)
    value_is(page, "#upload-status textarea", label(lang, "corpus_status", "refused").format(reason=why))
    assert strangers(page, lang) == []

    # Evaluate: a QA file's line and reason, from the evaluation code; the chosen file stays in the box.
    page.get_by_role("tab", name=label(lang, "labels", "tab_evaluate")).click()
    page.get_by_role("button", name=label(lang, "evaluate", "start")).wait_for()
    page.locator("#eval-upload input[type=file]").set_input_files(str(qa))
    holds(page, "#eval-upload", "bad")
    page.get_by_role("button", name=label(lang, "evaluate", "start")).click()
    problem = said["answers_missing"].format(key="answers")
    refusal = said["file_problems"].format(path=BAD_QA, problems=said["line_problem"].format(line=2, problem=problem))
    holds(page, "#eval-status", refusal)
    assert strangers(page, lang) == []
    assert "bad" in page.locator("#eval-upload").inner_text()  # kept: the reader may pick again or fix it
    context.close()
