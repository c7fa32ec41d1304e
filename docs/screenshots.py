"""Take the docs' screenshots of the chat from a running `citeqa serve` (real Chromium, real engine).

    HF_HUB_OFFLINE=1 .venv/bin/python docs/screenshots.py [--index index] [--out docs] [--url URL]

Starts `citeqa serve` over ``--index`` on a free port, opens it in Debian's Chromium (Playwright,
never ``playwright install``) and writes ``screenshot.png`` (a question at 1280 px),
``chat-phone.png`` (the same at 390 px) and ``claim.png`` (a claim checked). The Evaluate tab's
image (``evaluate-tab.png``) needs a whole evaluation run and is not retaken here.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run"]
QUESTION = "When will the Ascend 960PR arrive?"
CLAIM = "The 960PR arrives in the first quarter of 2027."
WAIT_MS = 180_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="index", help="the index to serve (default: index/)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="where the images go")
    parser.add_argument("--url", default=None, help="shoot this running server instead of starting one")
    args = parser.parse_args()
    if args.url is not None:
        _shoot(args.url, args.out)
        return 0
    port = _free_port()
    citeqa = Path(sys.executable).with_name("citeqa")
    server = subprocess.Popen([str(citeqa), "serve", "--index", args.index, "--port", str(port)])
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_for(url, server)
        _shoot(url, args.out)
    finally:
        server.terminate()
        server.wait(30)
    return 0


def _shoot(url: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name, viewport, text, mode in (
            ("screenshot.png", {"width": 1280, "height": 850}, QUESTION, None),
            ("chat-phone.png", {"width": 390, "height": 844}, QUESTION, None),
            ("claim.png", {"width": 1280, "height": 850}, CLAIM, "Check a claim"),
        ):
            page = browser.new_page(viewport=viewport, locale="en-US")
            page.set_default_timeout(WAIT_MS)
            page.goto(url)
            _send(page, text, mode)
            page.screenshot(path=str(out / name), full_page=True)
            print(f"wrote {out / name}")
            page.close()
        browser.close()


def _send(page, text: str, mode: str | None) -> None:
    """Type ``text`` (a claim in ``mode``), send it and wait for the reply with its sources."""
    if mode is not None:
        page.locator("#mode input").click()
        page.get_by_role("option", name=mode, exact=True).click()
    page.locator("#question textarea").fill(text)
    page.locator("#ask").click()
    page.locator("#chat .citeqa-bot .citeqa-sources").last.wait_for()
    page.wait_for_timeout(500)  # let the reply's scroll and flash settle before the picture


def _wait_for(url: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 600  # a cold start on a busy machine
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"citeqa serve exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"citeqa serve did not answer on {url}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    sys.exit(main())
