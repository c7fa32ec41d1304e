"""A chat turn and what hangs off it: the answer or claim check joining the conversation, the
document viewer's HTML for a clicked citation, and the conversation downloads (written only when
the page asks for them: the conversation itself lives in the page session's state).

The Chat tab (:mod:`citeqa.app.web.chat.tab`) wires these to its components; they take the
:class:`~citeqa.app.web.holder.EngineHolder` and plain values, so tests call them without a page.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from citeqa.app.cited import document_infos
from citeqa.app.web.chat import answers, claims, view
from citeqa.app.web.holder import EngineHolder
from citeqa.app.web.validation import engine_language
from citeqa.claims.check import ClaimCheck
from citeqa.engine import Engine
from citeqa.errors import CiteqaError
from citeqa.messages import error_said, labels
from citeqa.records import Answer

MODES = ("ask", "check", "auto")


@dataclass(frozen=True)
class TurnResult:
    """One chat turn: the messages (see :data:`citeqa.app.web.chat.view.Message`), the questions asked,
    every turn's record, this turn's sources, its language, whether it was a claim check, and the
    refusal shown under the box ('' when the turn was taken; a refused turn adds nothing)."""

    messages: list[view.Message]
    asked: list[str]
    turns: list[dict[str, Any]] = field(default_factory=list)
    sources: str = ""
    lang: str = "en"
    checked: bool = False
    refusal: str = ""


def conversation_turn(
    holder: EngineHolder,
    text: str,
    mode: str | None,
    messages: list[view.Message] | None,
    asked: list[str] | None,
    turns: list[dict[str, Any]] | None,
    k: Any,
    language: str | None = "auto",
    show_confidence: bool = True,
    page_lang: str | None = None,
) -> TurnResult:
    """Answer ``text`` or check it as a claim (``mode`` "check", or "auto" and it reads as a statement:
    :func:`citeqa.claims.check.looks_like_claim`); the record joins ``turns`` for the downloads.
    ``page_lang``, the language the page opened in (the browser's), leans a question that could be
    read either way and speaks for input that cannot be read at all.

    Blank or over-long input, and any error, is refused: the conversation stays as it was and
    ``refusal`` says why, in the language of the input (or of the last question, or of the page).
    """
    from citeqa.claims.check import looks_like_claim

    messages, asked, turns = list(messages or []), list(asked or []), list(turns or [])
    engine = holder.engine
    text = text if isinstance(text, str) else ""
    checking = mode == "check" or (mode == "auto" and looks_like_claim(text))
    lang = _input_language(engine, text, asked, page_lang)
    refusal = view.input_refusal(text, lang, checking)
    if refusal is not None:
        return TurnResult(messages, asked, turns, "", lang, checking, refusal)
    record: Answer | ClaimCheck
    try:
        if checking:
            record = engine.check(text, k=int(k), page_lang=page_lang)
        else:
            language = engine_language(language)
            record = engine.ask(text, history=tuple(asked), k=int(k), language=language, page_lang=page_lang)
    except CiteqaError as exc:
        return TurnResult(
            messages, asked, turns, "", lang, checking, f"{labels(lang)['error']}: {error_said(exc, lang)}"
        )
    docs, turn = engine.documents, view.next_turn(messages)
    if isinstance(record, ClaimCheck):  # (checking)
        infos = document_infos(engine, [record])
        messages += [
            view.user_message(record.claim, record.language),
            view.check_message(record, turn, docs, infos),
        ]
        turns.append({"type": "check", "record": record.to_dict()})
        sources = claims.check_sources_html(record, docs, infos, turn)
        return TurnResult(messages, asked, turns, sources, record.language, True)
    infos = document_infos(engine, [record])
    bands = engine.settings.answer_bands()
    messages += [
        view.user_message(record.question, record.language),
        view.answer_message(record, turn, docs, infos, show_confidence, bands),
    ]
    turns.append({"type": "answer", "record": record.to_dict()})
    sources = answers.answer_sources_html(record, docs, infos, turn)
    return TurnResult(messages, asked + [record.question], turns, sources, record.language)


def _input_language(engine: Engine, text: str, asked: Sequence[str], page_lang: str | None = None) -> str:
    """The language to speak about ``text`` in: its own, else the last question's, else the page's
    (English without one)."""
    if text.strip():
        return engine.question_language(text[:500], tuple(asked), page_lang)
    if asked:
        return engine.question_language(asked[-1], page_lang=page_lang)
    return page_lang or "en"


def chat_turn(
    holder: EngineHolder,
    question: str,
    messages: list[view.Message],
    asked: list[str],
    k: Any,
    language: str | None = "auto",
    show_confidence: bool = True,
    page_lang: str | None = None,
) -> tuple[list[view.Message], list[str], str, str, str]:
    """One question turn: the reply goes into the chat, the sources into the panel below.

    Returns the messages, the questions asked so far, the sources HTML, the cleared
    question box, and the language of the turn (for the labels).
    """
    out = conversation_turn(holder, question, "ask", messages, asked, [], k, language, show_confidence, page_lang)
    return out.messages, out.asked, out.sources, "", out.lang


def open_document(holder: EngineHolder, request: Any) -> tuple[str, str]:
    """The viewer's HTML for a click on a citation (``{"doc", "start", "end"}`` from the page) and an
    error line ('' when fine). Only indexed documents open; the range is clipped to the text."""
    data = request if isinstance(request, dict) else {}
    start: Any
    end: Any
    doc_id, start, end = data.get("doc"), data.get("start"), data.get("end")
    document = holder.engine.documents.get(doc_id) if isinstance(doc_id, str) else None
    if document is None:
        return "", "that document is not in the index"
    if not all(type(v) in (int, float) and math.isfinite(v) for v in (start, end)):  # NaN, Infinity: no range
        start, end = 0, 0
    return answers.document_html(document, int(start), int(end)), ""


#: The folder, under the upload cache, that holds each page session's conversation download.
DOWNLOADS_FOLDER = "citeqa-downloads"


def download_files(holder: EngineHolder, turns: list[dict[str, Any]], folder: Path) -> tuple[str | None, str | None]:
    """Write the conversation as Markdown and JSON into ``folder`` (the session's own, replacing what an
    earlier request left there); (None, None) before any turn."""
    from citeqa.app.evidence import conversation_json, conversation_markdown
    from citeqa.claims.check import ClaimCheck
    from citeqa.records import Answer

    if not turns:
        return None, None
    records = [
        ClaimCheck.from_dict(t["record"]) if t["type"] == "check" else Answer.from_dict(t["record"]) for t in turns
    ]
    engine = holder.engine
    infos = document_infos(engine, records)
    stem = f"citeqa-conversation-{datetime.now(UTC).date().isoformat()}"  # named with the day it was saved
    for old in folder.glob("citeqa-conversation*"):  # one conversation per session
        old.unlink(missing_ok=True)
    md, js = folder / f"{stem}.md", folder / f"{stem}.json"
    bands = engine.settings.answer_bands()  # the chat's band words, a possible answer stays one
    md.write_text(conversation_markdown(records, infos, engine.documents, bands=bands), encoding="utf-8")
    js.write_text(conversation_json(records, infos, bands=bands), encoding="utf-8")
    return str(md), str(js)


def downloads_dir(cache: Path, token: str) -> Path:
    """A page session's folder for its conversation download (mode 0700) in the upload cache ``cache``.

    Gradio serves the files from there without copying them, deletes them by age with the uploads
    (``delete_cache``) and when the server stops; ``citeqa serve`` removes the whole cache at exit.
    """
    from citeqa.errors import ServerError

    root = cache / DOWNLOADS_FOLDER
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    if root.is_symlink() or root.stat().st_uid != os.getuid():  # another local user's trap
        raise ServerError(f"{root} belongs to another user; conversation downloads are off")
    folder = root / ("".join(c for c in token if c.isalnum())[:32] or "session")
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder
