"""HTML for answers, sources and the corpus table. Every piece of document or user text is escaped here.

Escaping covers HTML (``<script>``, ``<img onerror>``) and Markdown/LaTeX syntax (an
image ``![x](url)`` or a link), because the chat renders Markdown: untrusted text is
turned into character references, which no renderer treats as markup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from citeqa.app.messages import labels
from citeqa.records import Answer, Citation, Document

LANGUAGE_CHOICES = ("auto", "any", "es", "pt", "en")
CONTEXT_CHARS = 300
_MARKUP_CHARS = {c: f"&#{ord(c)};" for c in "\\`*_[]()!#|~$&<>\"'{}:="}


def safe(text: str) -> str:
    """Text as inert HTML: every markup-significant character becomes a reference."""
    return "".join(_MARKUP_CHARS.get(c, c) for c in text).replace("\n", "<br>")


def engine_language(choice: str | None) -> str | None:
    """The ``language`` argument of ``Engine.ask`` for a UI choice (auto → None)."""
    return None if choice in (None, "", "auto") else choice


def _marked(text: str, start: int, end: int, tag: str = "mark") -> str:
    """``text`` escaped, with ``[start, end)`` wrapped in ``<tag>``."""
    return f"{safe(text[:start])}<{tag}>{safe(text[start:end])}</{tag}>{safe(text[end:])}"


def supporting(answer: Answer) -> list[int]:
    """Numbers (1-based) of the citations that hold the answer's key phrase; [1] always."""
    if answer.abstained or not answer.answer or not answer.citations:
        return []
    hl = answer.highlight
    key = answer.answer[hl.start:hl.end] if hl is not None else answer.answer
    found = [1] + [i for i, c in enumerate(answer.citations[1:], start=2) if key.casefold() in c.text.casefold()]
    return found


def answer_html(answer: Answer, show_confidence: bool = True) -> str:
    """The chat reply: answer with its key phrase marked and [n] pointing at the sources."""
    lab = labels(answer.language)
    if answer.abstained or answer.answer is None:
        body = f"<em>{safe(lab['not_found'])}</em>"
        if answer.citations:
            body += f" {safe(lab['see_closest'])}"
    else:
        text, hl = answer.answer, answer.highlight
        refs = " ".join(f'<sup class="citeqa-ref">[{n}]</sup>' for n in supporting(answer))
        sentence = _marked(text, hl.start, hl.end) if hl is not None else safe(text)
        if answer.short_answer is not None:  # the short answer first, the sentence as its context
            body = (f'<strong class="citeqa-short">{safe(answer.short_answer)}</strong> {refs}'
                    f'<br><small class="citeqa-sentence">{sentence}</small>')
        else:
            body = f"{sentence} {refs}"
        if answer.citations and answer.citations[0].lang != answer.language:
            body += f" <small>({safe(lab['other_lang'])}: {safe(answer.citations[0].lang)})</small>"
    if show_confidence:
        body += f"<br><small>{safe(lab['confidence'])} {answer.confidence:.2f}</small>"
    return body


def passage_html(citation: Citation, answer: Answer, number: int) -> str:
    """The passage escaped, with the answer span marked in the cited passage [1]."""
    passage = citation.text
    if number != 1 or answer.abstained or not answer.answer:
        return safe(passage)
    at = passage.find(answer.answer)
    if at < 0:
        return safe(passage)
    end = at + len(answer.answer)
    return safe(passage[:at]) + f"<mark>{_key_marked(answer)}</mark>" + safe(passage[end:])


def _key_marked(answer: Answer) -> str:
    """The answer escaped, its key phrase in bold."""
    text, hl = answer.answer or "", answer.highlight
    return _marked(text, hl.start, hl.end, "strong") if hl is not None else safe(text)


def context_html(doc_text: str, start: int, end: int, window: int = CONTEXT_CHARS) -> str:
    """About ``window`` characters each side of ``[start, end)``, cut at spaces, the passage marked."""
    left = max(0, start - window)
    right = min(len(doc_text), end + window)
    if left > 0:
        space = doc_text.find(" ", left, start)
        left = space + 1 if space >= 0 else left
    if right < len(doc_text):
        space = doc_text.rfind(" ", end, right)
        right = space if space >= 0 else right
    before, cited, after = doc_text[left:start], doc_text[start:end], doc_text[end:right]
    return (("…" if left > 0 else "") + safe(before) + f'<span class="citeqa-cited">{safe(cited)}</span>'
            + safe(after) + ("…" if right < len(doc_text) else ""))


def place(citation: Citation, answer: Answer, number: int, document: Document | None) -> tuple[int | None, str | None]:
    """The page and the section of a citation, where the document has them.

    For the first citation of an answer they are those of the answer inside the passage
    (a passage can run from one chapter into the next); for the others, those where the
    passage starts, or the first section that begins inside it.
    """
    if document is None:
        return None, None
    at = citation.text.find(answer.answer) if number == 1 and answer.answer and not answer.abstained else -1
    if at >= 0:
        offset = citation.start + at
        return document.page_at(offset), document.section_at(offset)
    section = document.section_at(citation.start)
    if section is None:
        section = next((s.title for s in document.sections if citation.start <= s.start < citation.end), None)
    return document.page_at(citation.start), section


def citation_html(number: int, citation: Citation, answer: Answer, document: Document | None = None) -> str:
    """One source: title, language, range, page or section, score, the passage, and its context."""
    lab = labels(answer.language)
    badge = ""
    if citation.lang != answer.language:
        badge = f' <span class="citeqa-badge">{safe(lab["other_lang"])}: {safe(citation.lang)}</span>'
    where = f"{safe(lab['chars'])} {citation.start}–{citation.end}"
    page, section = place(citation, answer, number, document)
    if page is not None:
        where += f", {safe(lab['page'])} {page}"
    if section is not None:
        where += f", {safe(lab['section'])}: {safe(section)}"
    context = ""
    if document is not None and (citation.start > 0 or document.text[citation.end:].strip()):
        context = (f'<details class="citeqa-context"><summary>{safe(lab["context"])}</summary>'
                   f'<div>{context_html(document.text, citation.start, citation.end)}</div></details>')
    return (f'<div class="citeqa-source" id="citeqa-src-{number}"><div class="citeqa-head">'
            f'<b>[{number}] {safe(citation.title)}</b>{badge}'
            f'<br><small>{safe(citation.doc_id)} · {safe(citation.lang)} · {where} · '
            f'{safe(lab["score"])} {citation.score:.3f}</small></div>'
            f'<div class="citeqa-passage">{passage_html(citation, answer, number)}</div>{context}</div>')


def sources_html(answer: Answer, documents: Mapping[str, Document] | None = None) -> str:
    """All sources of an answer, headed "Sources" or, after an abstention, "Closest passages"."""
    lab = labels(answer.language)
    heading = lab["closest"] if answer.abstained else lab["sources"]
    docs = documents if documents is not None else {}
    items = "".join(citation_html(i, c, answer, docs.get(c.doc_id)) for i, c in enumerate(answer.citations, start=1))
    cls = "citeqa-sources citeqa-closest" if answer.abstained else "citeqa-sources"
    return f'<div class="{cls}"><h3>{safe(heading)}</h3>{items}</div>'


def user_html(question: str) -> str:
    """A user's chat message, inert."""
    return safe(question)


def error_html(message: str, lang: str = "en") -> str:
    """An error line for the chat, inert."""
    return f"<em>{safe(labels(lang)['error'])}: {safe(message)}</em>"


CORPUS_HEADERS = ["title", "language", "chunks", "indexed at", "file"]


def corpus_rows(entries: Iterable[object]) -> list[list[object]]:
    """Rows of the corpus table from manifest ``DocEntry`` items, as plain text."""
    return [[_plain(e.title), e.lang, len(e.chunk_ids), e.indexed_at, _plain(e.doc_id)]  # type: ignore[attr-defined]
            for e in entries]


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _plain(text: str) -> str:
    """Text for a table cell: no control characters."""
    return _CONTROL.sub(" ", text)


def skipped_html(skipped: Sequence[tuple[str, str]]) -> str:
    """The files left out of the index, each with its reason, inert."""
    if not skipped:
        return ""
    items = "".join(f"<li><code>{safe(name)}</code>: {safe(reason)}</li>" for name, reason in skipped)
    return f'<div class="citeqa-skipped"><b>Skipped files</b><ul>{items}</ul></div>'
