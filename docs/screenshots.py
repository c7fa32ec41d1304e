"""Take the docs' screenshots (chat and Evaluate tab) from a running `citeqa serve` (real Chromium, real engine).

    HF_HUB_OFFLINE=1 .venv/bin/python docs/screenshots.py [--index index] [--out docs] [--url URL] [--only NAME ...]

Starts `citeqa serve` over ``--index`` on a free port, opens it in Debian's Chromium (Playwright,
never ``playwright install``) and writes ``screenshot.png`` (a question at 1280 px),
``chat-phone.png`` (the same at 390 px), ``claim.png`` (a claim checked) and ``evaluate-tab.png``:
the Evaluate tab after a whole run of the shipped ``eval/qa.jsonl`` (minutes), its questions
filtered to wrong answers and one opened. ``--only NAME`` retakes just those images.

The QA file is chosen by its exact name: ``de/qa.jsonl``, ``dev2/qa.jsonl`` and ``fr/qa.jsonl`` are
listed before it and also hold "qa.jsonl", and a file for another corpus leaves Run disabled until
its "run anyway" box is ticked (by design), which is how an earlier version of this script stalled.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run"]
QUESTION = "How much memory is the 960DT estimated to have?"
CLAIM = "The 960PR arrives in the first quarter of 2027."
WAIT_MS = 180_000
EVAL_WAIT_MS = 1_800_000  # a whole evaluation run on a busy machine
CHAT_SHOTS = {
    "screenshot.png": ({"width": 1280, "height": 850}, QUESTION, None),
    "chat-phone.png": ({"width": 390, "height": 844}, QUESTION, None),
    "claim.png": ({"width": 1280, "height": 850}, CLAIM, "Check a claim"),
}
EVALUATE_SHOT = "evaluate-tab.png"
QA_FILE = "qa.jsonl"


def main() -> int:
    from citeqa.pg.nodes import free_port  # the one the tests and bench scripts use

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="index", help="the index to serve (default: index/)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="where the images go")
    parser.add_argument("--url", default=None, help="shoot this running server instead of starting one")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=[*CHAT_SHOTS, EVALUATE_SHOT],
        default=[*CHAT_SHOTS, EVALUATE_SHOT],
        help="retake only these images (default: all)",
    )
    args = parser.parse_args()
    if args.url is not None:
        _shoot(args.url, args.out, args.only)
        return 0
    port = free_port()
    citeqa = Path(sys.executable).with_name("citeqa")
    server = subprocess.Popen([str(citeqa), "serve", "--index", args.index, "--port", str(port)])
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_for(url, server)
        _shoot(url, args.out, args.only)
    finally:
        server.terminate()
        server.wait(30)
    return 0


def _shoot(url: str, out: Path, names: list[str]) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name, (viewport, text, mode) in CHAT_SHOTS.items():
            if name not in names:
                continue
            page = browser.new_page(viewport=viewport, locale="en-US")
            page.set_default_timeout(WAIT_MS)
            page.goto(url)
            _send(page, text, mode)
            page.screenshot(path=str(out / name), full_page=True)
            print(f"wrote {out / name}")
            page.close()
        if EVALUATE_SHOT in names:
            page = browser.new_page(viewport={"width": 1366, "height": 900}, locale="en-US")
            page.set_default_timeout(WAIT_MS)
            page.goto(url)
            _evaluate(page)
            page.screenshot(path=str(out / EVALUATE_SHOT), full_page=True)
            print(f"wrote {out / EVALUATE_SHOT}")
            page.close()
        browser.close()


def _evaluate(page) -> None:
    """Run the shipped :data:`QA_FILE` in the Evaluate tab, filter to wrong answers and open the first."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.get_by_role("tab", name="Evaluate").click()
    shipped = page.locator("#eval-shipped input")
    shipped.click()  # the labels with question counts come with the page load: the option waits for them
    page.get_by_role("option", name=re.compile(rf"(?:^|\s){re.escape(QA_FILE)} \(")).click()  # not de/qa.jsonl
    page.wait_for_function("([el, name]) => el.value.startsWith(name + ' (')", arg=[shipped.element_handle(), QA_FILE])
    start = page.locator("#eval-start")
    try:  # Run is enabled by the server's answer to the choice, a moment after it
        page.wait_for_function("el => !el.disabled", arg=start.element_handle(), timeout=30_000)
    except PlaywrightTimeout:
        fit = page.locator("#eval-fit").inner_text()
        raise SystemExit(
            f"Run evaluation stays disabled for {shipped.input_value()}: {fit or 'another run?'}"
        ) from None
    start.click()
    status = page.locator("#eval-status")
    page.wait_for_function(  # finished, failed or refused
        "el => el.innerText.includes('Evaluated') || el.querySelector('.citeqa-eval-error')",
        arg=status.element_handle(),
        timeout=EVAL_WAIT_MS,
    )
    if "Evaluated" not in status.inner_text():
        raise SystemExit(f"the evaluation did not finish: {status.inner_text()}")
    page.locator("#eval-metrics").get_by_text("hit@1").first.wait_for()
    for image in ("#eval-chart img", "#eval-reliability img"):
        page.wait_for_function(
            "img => img.complete && img.naturalWidth > 300", arg=page.locator(image).element_handle()
        )
    page.locator("#eval-outcome input").click()
    wrong = page.get_by_role("option", name=re.compile(r"^wrong answer \(\d+\)$"))
    shown = int(re.findall(r"\d+", wrong.inner_text())[-1])
    wrong.click()
    questions = page.locator("#eval-questions")
    page.wait_for_function(  # the table holds the filtered rows only (a header row, then the questions)
        "([el, n]) => el.querySelector('[role=grid]').getAttribute('aria-rowcount') === String(n + 1)",
        arg=[questions.element_handle(), shown],
    )
    questions.get_by_text("wrong answer", exact=True).filter(visible=True).first.click()
    opened = page.locator("#eval-detail h3")
    opened.get_by_text("wrong answer").wait_for()  # the question opened beside the table
    opened.click()  # a click outside the table clears the clicked cell's selection frame
    page.mouse.move(0, 0)
    page.wait_for_timeout(500)


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


if __name__ == "__main__":
    sys.exit(main())
