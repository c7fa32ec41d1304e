"""The Chat tab: the conversation (each reply with its own sources), the question box with its mode,
character counter and refusals, the examples, the options, the document viewer and the downloads.

The conversation lives in the page session's state (``gr.State``); a download is written only when
the page asks for one (*Prepare download*), into the session's folder in the upload cache.

The turn itself is :func:`citeqa.app.web.chat.turns.conversation_turn`; this module lays the tab out and wires
its events. A visit opens in the browser's language, which then leans every question that could be read
either way; labels follow the language of the last turn: :func:`page_labels` relabels the tab and
whatever ``page`` components the caller adds (the tab names, the subtitle).
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeqa.app.web.assets import CHAT_JS, VIEWER_JS
from citeqa.app.web.chat import answers, view
from citeqa.app.web.chat.turns import conversation_turn, download_files, downloads_dir, open_document
from citeqa.app.web.holder import ANSWER_CONCURRENCY, ANSWER_GROUP, EngineHolder
from citeqa.app.web.validation import language_choices
from citeqa.errors import CiteqaError
from citeqa.messages import UI_LANGUAGES, evidence_labels, labels

EXAMPLES = [
    "¿Cuántos parámetros tiene GLM-5?",
    "¿Qué chip está probando Baidu?",
    "Qual chip a Baidu está testando?",
    "Quanto custa a API do GLM-Image por imagem?",
    "How much does the GLM-Image API charge per image?",
    "When did Huawei open-source openPangu 2.0?",
]

#: A page component to relabel and the update it gets in a language.
Relabel = tuple[Any, Callable[[str], Any]]


@dataclass(frozen=True)
class ChatTab:
    """The tab's components; ``browser`` holds the browser's language (None until a visit names one),
    ``shown`` the language the page speaks now."""

    chat: Any
    messages: Any
    asked: Any
    turns: Any
    session: Any
    question: Any
    notice: Any
    mode: Any
    send: Any
    k: Any
    language: Any
    confidence: Any
    clear: Any
    options: Any
    viewer: Any
    viewer_html: Any
    viewer_close: Any
    download_md: Any
    download_json: Any
    prepare: Any
    browser: Any
    shown: Any
    examples: Any


def mode_choices(lang: str) -> list[tuple[str, str]]:
    """The Mode dropdown's choices in ``lang``."""
    ev = evidence_labels(lang)
    return [(ev["mode_ask"], "ask"), (ev["mode_check"], "check"), (ev["mode_auto"], "auto")]


def chat_layout(gr: Any) -> ChatTab:
    """The tab's components, in English until the first turn: the conversation on top, the box full
    width with Mode and Ask under it (so a phone keeps the box wide), then the examples."""
    en, ev = labels("en"), evidence_labels("en")
    chat = gr.HTML(view.conversation_html([], "en"), elem_id="chat", js_on_load=CHAT_JS)
    messages, asked, turns, session = gr.State([]), gr.State([]), gr.State([]), gr.State("")
    browser, shown = gr.State(None), gr.State("en")
    with gr.Row(elem_id="ask-row"):
        question = gr.Textbox(
            placeholder=en["placeholder"],
            show_label=False,
            elem_id="question",
            lines=1,
            max_lines=4,
            scale=6,
            min_width=300,
        )
        mode = gr.Dropdown(
            mode_choices("en"),
            value="ask",
            label=ev["mode"],
            elem_id="mode",
            scale=2,
            min_width=150,
            filterable=False,
            container=False,
        )
        send = gr.Button(en["ask"], variant="primary", scale=1, elem_id="ask", min_width=90)
    notice = gr.HTML(view.question_info_html("en"), elem_id="question-info", js_on_load=None)
    examples = gr.Examples(EXAMPLES, inputs=question, label=en["examples"]).dataset  # relabelled by the page
    with gr.Accordion(en["options"], open=False, elem_id="options") as options, gr.Row():
        k = gr.Slider(1, 10, value=5, step=1, label=en["passages"], elem_id="k")
        language = gr.Dropdown(list(language_choices()), value="auto", label=en["language"], elem_id="language")
        confidence = gr.Checkbox(value=True, label=en["show_confidence"], elem_id="confidence")
    with gr.Column(visible=False, elem_id="doc-viewer") as viewer:
        viewer_html = gr.HTML(elem_id="doc-view", js_on_load=VIEWER_JS)
        viewer_close = gr.Button(ev["close"], elem_id="doc-close", size="sm")
    with gr.Row():
        prepare = gr.Button(ev["prepare_download"], elem_id="download-prepare", size="sm")
        download_md = gr.DownloadButton(ev["download_md"], elem_id="download-md", size="sm", visible=False)
        download_json = gr.DownloadButton(ev["download_json"], elem_id="download-json", size="sm", visible=False)
        clear = gr.Button(en["clear"], elem_id="clear", size="sm")
    return ChatTab(
        chat,
        messages,
        asked,
        turns,
        session,
        question,
        notice,
        mode,
        send,
        k,
        language,
        confidence,
        clear,
        options,
        viewer,
        viewer_html,
        viewer_close,
        download_md,
        download_json,
        prepare,
        browser,
        shown,
        examples,
    )


def send_label(lang: str, mode: str | None) -> str:
    """The send button's word in ``lang``: "Check" in the claim mode, "Ask" otherwise."""
    return labels(lang)["check" if mode == "check" else "ask"]


def box_hint(lang: str, mode: str | None) -> str:
    """The question box's placeholder in ``lang`` for ``mode``."""
    return evidence_labels(lang)["check_placeholder"] if mode == "check" else labels(lang)["placeholder"]


def page_labels(
    gr: Any, tab: ChatTab, lang: str, page: Sequence[Relabel] = (), mode: str | None = "ask"
) -> tuple[list[Any], list[Any]]:
    """The components to relabel and their updates in ``lang`` (the send button's word for ``mode``;
    the download buttons are labelled by each event that shows or hides them)."""
    lab, ev = labels(lang), evidence_labels(lang)
    own = [
        (tab.send, gr.update(value=send_label(lang, mode))),
        (tab.clear, gr.update(value=lab["clear"])),
        (tab.k, gr.update(label=lab["passages"])),
        (tab.language, gr.update(label=lab["language"])),
        (tab.confidence, gr.update(label=lab["show_confidence"])),
        (tab.mode, gr.update(label=ev["mode"], choices=mode_choices(lang))),
        (tab.options, gr.update(label=lab["options"])),
        (tab.viewer_close, gr.update(value=ev["close"])),
        (tab.prepare, gr.update(value=ev["prepare_download"])),
        (tab.examples, gr.update(label=lab["examples"])),
    ]
    own += [(component, update(lang)) for component, update in page]
    return [c for c, _ in own], [u for _, u in own]


def browser_language(accept_language: str | None, default: str | None = "en") -> str | None:
    """The first of the UI's languages that an ``Accept-Language`` header asks for (``default`` when none)."""
    for part in (accept_language or "").split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in UI_LANGUAGES:
            return code
    return default


def visit_language(request: Any) -> str:
    """The language a page opens in: the browser's (``Accept-Language`` of the visit's request), else English.

    The page's load events read it from the request: the page's language state is set by one of them."""
    headers = getattr(request, "headers", None)
    return browser_language(headers.get("accept-language") if headers is not None else None) or "en"


def chat_events(gr: Any, holder: EngineHolder, tab: ChatTab, page: Sequence[Relabel] = (), app: Any = None) -> None:
    """Wire the tab: a turn (Ask or Enter), clear, the mode's placeholder, the document viewer; with
    ``app``, each visit opens in the browser's language, which leans every question that could be read
    either way (each turn's labels follow the language its question is read in)."""
    relabelled, _ = page_labels(gr, tab, "en", page)

    if app is not None:

        def on_visit(mode: str | None, request: Any) -> list[Any]:
            asked = browser_language(request.headers.get("accept-language") if request is not None else None, None)
            lang = asked or "en"
            _, updates = page_labels(gr, tab, lang, page, mode)
            hint = gr.update(placeholder=box_hint(lang, mode))
            ev = evidence_labels(lang)
            files = [gr.update(label=ev["download_md"]), gr.update(label=ev["download_json"])]
            opened = [view.conversation_html([], lang), hint, view.question_info_html(lang), asked, lang]
            return [*opened, *files, *updates]

        on_visit.__annotations__ = {"request": gr.Request}  # a real class: the module's annotations are strings
        opened = [tab.chat, tab.question, tab.notice, tab.browser, tab.shown, tab.download_md, tab.download_json]
        app.load(on_visit, tab.mode, [*opened, *relabelled], api_visibility="private")

    def turn(
        q: str, md: str | None, m: Any, a: Any, t: Any, sess: Any, kk: Any, lang: str | None, conf: bool, browser: Any
    ) -> list[Any]:
        out = conversation_turn(holder, q, md, m, a, t, kk, lang, conf, browser)
        _, updates = page_labels(gr, tab, out.lang, page, md)
        if out.refusal:  # nothing joins the conversation; the box keeps the text and gets the page's hint
            shown = view.question_info_html(out.lang, out.refusal)
            skipped = [gr.skip()] * 5 + [gr.update(placeholder=box_hint(out.lang, md)), shown, gr.skip(), gr.skip()]
            return [*skipped, out.lang, *updates]
        sess = sess or secrets.token_hex(12)
        ev = evidence_labels(out.lang)
        hint = box_hint(out.lang, md)
        return [
            view.conversation_html(out.messages, out.lang),
            out.messages,
            out.asked,
            out.turns,
            sess,
            gr.update(value="", placeholder=hint),
            view.question_info_html(out.lang),
            gr.update(value=None, visible=False, label=ev["download_md"]),  # the conversation changed:
            gr.update(value=None, visible=False, label=ev["download_json"]),  # prepared again on request
            out.lang,
            *updates,
        ]

    outputs = [
        tab.chat,
        tab.messages,
        tab.asked,
        tab.turns,
        tab.session,
        tab.question,
        tab.notice,
        tab.download_md,
        tab.download_json,
        tab.shown,
        *relabelled,
    ]
    inputs = [tab.question, tab.mode, tab.messages, tab.asked, tab.turns, tab.session, tab.k, tab.language]
    inputs += [tab.confidence, tab.browser]
    group = {"concurrency_limit": ANSWER_CONCURRENCY, "concurrency_id": ANSWER_GROUP}
    tab.send.click(turn, inputs, outputs, api_visibility="private", **group)
    tab.question.submit(turn, inputs, outputs, api_visibility="private", **group)
    clear_events(gr, tab, page)
    _download_events(gr, holder, tab)

    def show_document(evt: Any) -> tuple[Any, str]:
        html, error = open_document(holder, getattr(evt, "_data", None))
        return gr.update(visible=True), html or answers.error_html(error)

    show_document.__annotations__ = {"evt": gr.EventData}  # a real class: the module's annotations are strings

    tab.chat.select(show_document, None, [tab.viewer, tab.viewer_html], api_visibility="private")
    tab.viewer_close.click(lambda: gr.update(visible=False), None, tab.viewer, api_visibility="private")


def _download_events(gr: Any, holder: EngineHolder, tab: ChatTab) -> None:
    """*Prepare download*: write the conversation of the page's session once, and offer the two files."""
    cache = Path(tab.download_md.GRADIO_CACHE)  # written there, Gradio serves and sweeps them without a copy

    def prepare(turns: Any, sess: Any) -> tuple[Any, Any]:
        if not turns or not sess:
            return gr.skip(), gr.skip()
        try:
            md_path, json_path = download_files(holder, turns, downloads_dir(cache, sess))
        except (CiteqaError, OSError) as exc:
            print(f"citeqa: conversation download not written: {exc}", file=sys.stderr)
            return gr.skip(), gr.skip()
        return gr.update(value=md_path, visible=True), gr.update(value=json_path, visible=True)

    outputs = [tab.download_md, tab.download_json]
    tab.prepare.click(prepare, [tab.turns, tab.session], outputs, api_visibility="private")


def clear_events(gr: Any, tab: ChatTab, page: Sequence[Relabel] = ()) -> None:
    """Clear empties the conversation and the page goes back to the browser's language; a change of
    mode sets the box's hint and the send button's word in the language the page speaks."""
    relabelled, _ = page_labels(gr, tab, "en", page)

    def clear(browser: str | None, mode: str | None) -> list[Any]:
        lang = browser or "en"
        _, updates = page_labels(gr, tab, lang, page, mode)
        box = gr.update(value="", placeholder=box_hint(lang, mode))
        ev = evidence_labels(lang)  # a prepared download goes with the conversation
        hidden = [gr.update(value=None, visible=False, label=ev[key]) for key in ("download_md", "download_json")]
        emptied = [[], [], [], box, view.question_info_html(lang), *hidden]
        return [view.conversation_html([], lang), *emptied, gr.update(visible=False), lang, *updates]

    emptied = [tab.messages, tab.asked, tab.turns, tab.question, tab.notice, tab.download_md, tab.download_json]
    outputs = [tab.chat, *emptied, tab.viewer, tab.shown, *relabelled]
    tab.clear.click(clear, [tab.browser, tab.mode], outputs, api_visibility="private")
    tab.mode.change(
        lambda md, lang: (gr.update(placeholder=box_hint(lang, md)), gr.update(value=send_label(lang, md))),
        [tab.mode, tab.shown],
        [tab.question, tab.send],
        api_visibility="private",
    )
