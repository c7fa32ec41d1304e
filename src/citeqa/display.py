"""HTML for answers and sources. Every piece of document or user text is escaped here.

Escaping covers HTML (``<script>``, ``<img onerror>``) and Markdown/LaTeX syntax (an
image ``![x](url)`` or a link), because the chat renders Markdown: untrusted text is
turned into character references, which no renderer treats as markup.
"""

from __future__ import annotations

import html

from .models import Answer, Citation

LABELS = {
    "es": {"sources": "Fuentes", "closest": "Pasajes más cercanos (no contienen la respuesta)",
           "confidence": "confianza", "chars": "caracteres", "other_lang": "otro idioma",
           "not_found": "No encontré esto en los documentos.", "page": "página", "score": "puntuación"},
    "pt": {"sources": "Fontes", "closest": "Passagens mais próximas (não contêm a resposta)",
           "confidence": "confiança", "chars": "caracteres", "other_lang": "outro idioma",
           "not_found": "Não encontrei isso nos documentos.", "page": "página", "score": "pontuação"},
    "en": {"sources": "Sources", "closest": "Closest passages (they do not contain the answer)",
           "confidence": "confidence", "chars": "characters", "other_lang": "other language",
           "not_found": "I couldn't find this in the documents.", "page": "page", "score": "score"},
}

_MARKUP_CHARS = {c: f"&#{ord(c)};" for c in "\\`*_[]()!#|~$&<>\"'{}:="}


def safe(text: str) -> str:
    """Text as inert HTML: every markup-significant character becomes a reference."""
    return "".join(_MARKUP_CHARS.get(c, c) for c in text).replace("\n", "<br>")


def labels(lang: str) -> dict[str, str]:
    """UI strings in ``lang``, English when the language has none."""
    return LABELS.get(lang, LABELS["en"])


def answer_html(answer: Answer, show_confidence: bool = True) -> str:
    """The chat reply: answer with its key phrase marked and [1] pointing at the source."""
    lab = labels(answer.language)
    if answer.abstained or answer.answer is None:
        body = f"<em>{safe(lab['not_found'])}</em>"
    else:
        text, hl = answer.answer, answer.highlight
        if hl is not None:
            body = (safe(text[:hl.start]) + f"<mark>{safe(text[hl.start:hl.end])}</mark>" + safe(text[hl.end:]))
        else:
            body = safe(text)
        body += " <sup>[1]</sup>"
        if answer.citations and answer.citations[0].lang != answer.language:
            body += f" <small>({safe(lab['other_lang'])}: {safe(answer.citations[0].lang)})</small>"
    if show_confidence:
        body += f"<br><small>{safe(lab['confidence'])} {answer.confidence:.2f}</small>"
    return body


def citation_html(number: int, citation: Citation, answer: Answer, page: int | None = None) -> str:
    """One source: title, language, range, score, and the passage with the answer marked."""
    lab = labels(answer.language)
    passage = citation.text
    marked = safe(passage)
    if number == 1 and answer.answer and not answer.abstained:
        at = passage.find(answer.answer)
        if at >= 0:
            end = at + len(answer.answer)
            marked = safe(passage[:at]) + f"<mark>{safe(passage[at:end])}</mark>" + safe(passage[end:])
    badge = ""
    if citation.lang != answer.language:
        badge = f' <span class="citeqa-badge">{safe(lab["other_lang"])}: {safe(citation.lang)}</span>'
    where = f"{safe(lab['chars'])} {citation.start}–{citation.end}"
    if page is not None:
        where += f", {safe(lab['page'])} {page}"
    return (f'<div class="citeqa-source"><div class="citeqa-head"><b>[{number}] {safe(citation.title)}</b>{badge}'
            f'<br><small>{safe(citation.doc_id)} · {safe(citation.lang)} · {where} · '
            f'{safe(lab["score"])} {citation.score:.3f}</small></div>'
            f'<div class="citeqa-passage">{marked}</div></div>')


def sources_html(answer: Answer, pages: list[int | None] | None = None) -> str:
    """All sources of an answer, headed "Sources" or, after an abstention, "Closest passages"."""
    lab = labels(answer.language)
    heading = lab["closest"] if answer.abstained else lab["sources"]
    pages = pages if pages is not None else [None] * len(answer.citations)
    items = "".join(citation_html(i, c, answer, p) for i, (c, p) in enumerate(zip(answer.citations, pages), start=1))
    return f'<div class="citeqa-sources"><h3>{safe(heading)}</h3>{items}</div>'
