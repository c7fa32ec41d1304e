"""The guarded server in a real browser: a rebinding name and another site are refused, the page works.

Issue [2/6], defects 1 and 2. Chromium resolves evil.example to 127.0.0.1
(--host-resolver-rules), as a DNS-rebinding attack makes it do, and a page of
attacker.example (served by Playwright) tries to upload into the server.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

RESOLVE = "--host-resolver-rules=MAP evil.example 127.0.0.1, MAP attacker.example 127.0.0.1"

ATTACK = """
<!doctype html><title>cheap flights</title>
<form id="f" method="post" enctype="multipart/form-data" action="TARGETgradio_api/upload">
  <input type="file" name="files" id="file"></form>
<script>
  async function attack() {
    const data = new FormData();
    data.append("files", new Blob(["poisoned passage"], {type: "text/plain"}), "poison.txt");
    let fetched;
    try {
      await fetch("TARGETgradio_api/upload", {method: "POST", body: data, mode: "no-cors", credentials: "include"});
      fetched = "sent";
    } catch (e) { fetched = "failed: " + e; }
    return fetched;
  }
  function formPost() {  // the classic cross-site form POST, a navigation that carries cookies
    const dt = new DataTransfer();
    dt.items.add(new File(["poisoned passage"], "poison.txt", {type: "text/plain"}));
    document.getElementById("file").files = dt.files;
    document.getElementById("f").submit();
  }
</script>
"""


@contextlib.contextmanager
def attacker_site(html: str) -> Iterator[int]:
    """Another web site on this machine (its own port), serving ``html`` for every path."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield site.server_address[1]
    finally:
        site.shutdown()
        site.server_close()


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, guarded_server):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(cache))
    s = guarded_server(tmp_path / "app", cache)
    yield s
    s.close()


@pytest.fixture
def browser(chromium: tuple[str, list[str]], patient):
    from playwright.sync_api import sync_playwright

    executable, args = chromium
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=[*args, RESOLVE])
        yield patient(browser)
        browser.close()


def test_a_rebinding_name_gets_nothing_in_the_browser(browser, served):
    page = browser.new_page()
    response = page.goto(f"http://evil.example:{served.port}/")
    assert response.status == 403 and "is not served here" in page.content()
    found = page.evaluate("""async () => {
        const r = await fetch("/config"); const u = await fetch("/gradio_api/info");
        return [r.status, u.status, (await r.text()).includes("dependencies")]; }""")
    assert found == [403, 403, False]


def test_another_site_cannot_upload_from_the_browser(browser, served):
    page = browser.new_page()
    page.goto(served.url)  # the user has the real page open: its session cookie is in the browser
    before = served.cached_files()
    with attacker_site(ATTACK.replace("TARGET", served.url)) as port:
        page.goto(f"http://attacker.example:{port}/offer.html")
        origin = f"http://attacker.example:{port}"
        assert page.evaluate("attack()") == "sent"  # the request left the browser; the server refused it
        with page.expect_navigation():
            page.evaluate("formPost()")
    assert json.loads(page.locator("body").inner_text()) == {
        "error": f"requests from another site ({origin}) are refused"
    }
    assert served.cached_files() == before and "poison.txt" not in served.corpus_files()


def test_the_page_still_chats_and_uploads(browser, served, tmp_path: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(served.url)
    page.locator("#question textarea").fill("When was the windmill of Greyhill built?")
    page.locator("#ask").click()
    page.locator("#chat").get_by_text("Thomas Hale").filter(visible=True).last.wait_for()

    doc = tmp_path / "bridge.md"
    doc.write_text("# The bridge of Alvor\n\nThe bridge of Alvor opened in 1931.", encoding="utf-8")
    page.get_by_role("tab", name="Corpus").click()
    page.locator("#upload input[type=file]").set_input_files(str(doc))
    # the uploaded file's row: its name is drawn as "bridge" and ".md", so wait for the label, not the text
    # (the text only matched the progress line shown while uploading, which a fast upload hides before a poll)
    page.locator('#upload td.filename[aria-label="bridge.md"]').wait_for()
    page.locator("#add").click()
    status = page.locator("#upload-status textarea")
    page.wait_for_function("el => el.value.includes('added')", arg=status.element_handle())
    assert status.input_value() == "added bridge.md"
    assert "bridge.md" in served.corpus_files()
    assert "bridge.md" not in served.cached_files()  # the cached upload was discarded once added
    assert "1931" in served.holder.engine.ask("When did the bridge of Alvor open?").citations[0].text  # indexed
