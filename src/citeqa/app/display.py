"""HTML for answers, sources and the corpus table. Every piece of document or user text is escaped here.

Escaping covers HTML (``<script>``, ``<img onerror>``) and Markdown/LaTeX syntax (an
image ``![x](url)`` or a link), because the chat renders Markdown: untrusted text is
turned into character references, which no renderer treats as markup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from citeqa.messages import labels
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
    key = answer.answer[hl.start : hl.end] if hl is not None else answer.answer
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
            body = (
                f'<strong class="citeqa-short">{safe(answer.short_answer)}</strong> {refs}'
                f'<br><small class="citeqa-sentence">{sentence}</small>'
            )
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
    return (
        ("…" if left > 0 else "")
        + safe(before)
        + f'<span class="citeqa-cited">{safe(cited)}</span>'
        + safe(after)
        + ("…" if right < len(doc_text) else "")
    )


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


def citation_html(
    number: int, citation: Citation, answer: Answer, document: Document | None = None, extra: str = ""
) -> str:
    """One source: title, language, range, page or section, score, the passage, its context, and ``extra``
    (HTML already made inert, e.g. :func:`citation_tools_html`)."""
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
    if document is not None and (citation.start > 0 or document.text[citation.end :].strip()):
        context = (
            f'<details class="citeqa-context"><summary>{safe(lab["context"])}</summary>'
            f"<div>{context_html(document.text, citation.start, citation.end)}</div></details>"
        )
    return (
        f'<div class="citeqa-source" id="citeqa-src-{number}"><div class="citeqa-head">'
        f"<b>[{number}] {safe(citation.title)}</b>{badge}"
        f"<br><small>{safe(citation.doc_id)} · {safe(citation.lang)} · {where} · "
        f"{safe(lab['score'])} {citation.score:.3f}</small></div>"
        f'<div class="citeqa-passage">{passage_html(citation, answer, number)}</div>{context}{extra}</div>'
    )


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
    return [
        [_plain(e.title), e.lang, len(e.chunk_ids), e.indexed_at, _plain(e.doc_id)]  # type: ignore[attr-defined]
        for e in entries
    ]


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


# --- claim checks, citation tools, the document viewer ----------------------------------------

_MARKUP_TABLE = str.maketrans(_MARKUP_CHARS)


def safe_block(text: str) -> str:
    """:func:`safe` for long texts and ``<pre>`` blocks: newlines kept as they are (one
    ``str.translate`` pass, fast enough for a whole 1,000,000-character document)."""
    return text.translate(_MARKUP_TABLE)


def citation_tools_html(quote, lang: str) -> str:  # quote: citeqa.app.evidence.CitedQuote
    """Buttons under a source: copy the citation (plain, BibTeX, CSL-JSON, each shown in a fold)
    and open the whole document at the cited range."""
    from citeqa.app.evidence import citation_formats
    from citeqa.messages import evidence_labels

    lab = evidence_labels(lang)
    formats = citation_formats(quote)
    blocks = "".join(
        f'<pre class="citeqa-format" data-format="{name}">{safe_block(text)}</pre>' for name, text in formats.items()
    )
    buttons = "".join(
        f'<button type="button" class="citeqa-copy" data-citeqa-copy="{name}" '
        f'data-label="{safe(label)}">{safe(label)}</button>'
        for name, label in (("plain", lab["copy"]), ("bibtex", lab["bibtex"]), ("csl-json", lab["csl"]))
    )
    return (
        f'<div class="citeqa-tools" data-doc="{safe(quote.doc_id)}" data-start="{quote.start}" '
        f'data-end="{quote.end}" data-copied-label="{safe(lab["copied"])}">{buttons}'
        f'<button type="button" class="citeqa-open">{safe(lab["open"])}</button>'
        f'<details class="citeqa-formats"><summary>{safe(lab["formats"])}</summary>{blocks}</details></div>'
    )


def answer_sources_html(
    answer: Answer, documents: Mapping[str, Document] | None = None, infos: Mapping[str, object] | None = None
) -> str:
    """:func:`sources_html` with the citation tools under every source (``infos``: DocumentInfo by doc_id)."""
    from citeqa.app.evidence import answer_quotes

    lab = labels(answer.language)
    docs = documents if documents is not None else {}
    quotes = answer_quotes(answer, infos, docs)  # type: ignore[arg-type]
    items = "".join(
        citation_html(i, c, answer, docs.get(c.doc_id), citation_tools_html(q, answer.language))
        for i, (c, q) in enumerate(zip(answer.citations, quotes), start=1)
    )
    heading = lab["closest"] if answer.abstained else lab["sources"]
    cls = "citeqa-sources citeqa-closest" if answer.abstained else "citeqa-sources"
    return f'<div class="{cls}"><h3>{safe(heading)}</h3>{items}</div>'


_VERDICT_CLASS = {
    "supported": "citeqa-verdict-supported",
    "conflicting": "citeqa-verdict-conflicting",
    "not_found": "citeqa-verdict-not-found",
}


def check_html(check) -> str:  # check: citeqa.answer.claims.ClaimCheck
    """The chat reply to a claim: the verdict, its message, and [n] for the passages that support or
    contradict it."""
    from citeqa.messages import claim_labels

    lab = claim_labels(check.language)
    refs = [n for n, e in enumerate(check.evidence, start=1) if e.relation in ("supports", "conflicts")]
    markers = " ".join(f'<sup class="citeqa-ref">[{n}]</sup>' for n in refs)
    return (
        f'<strong class="{_VERDICT_CLASS.get(check.verdict, "")}">{safe(lab[check.verdict])}</strong>: '
        f"{safe(check.message)}" + (f" {markers}" if markers else "")
    )


def evidence_passage_html(evidence) -> str:  # evidence: citeqa.answer.claims.ClaimEvidence
    """The passage escaped, the sentence that bears on the claim in <mark>, the document's value in bold."""
    text, hl, value = evidence.citation.text, evidence.highlight, evidence.value
    if hl is None:
        return safe(text)
    inner = text[hl.start : hl.end]
    if value is not None and hl.start <= value.start <= value.end <= hl.end:
        inner_html = _marked(inner, value.start - hl.start, value.end - hl.start, "strong")
    else:
        inner_html = safe(inner)
    return f"{safe(text[: hl.start])}<mark>{inner_html}</mark>{safe(text[hl.end :])}"


def check_sources_html(
    check, documents: Mapping[str, Document] | None = None, infos: Mapping[str, object] | None = None
) -> str:
    """The passages of a claim check: relation badge, title, place, the sentence marked, both values
    when they differ, and the citation tools."""
    from citeqa.app.evidence import check_quotes
    from citeqa.messages import claim_labels

    lab, base = claim_labels(check.language), labels(check.language)
    docs = documents if documents is not None else {}
    quotes = check_quotes(check, infos, docs)  # type: ignore[arg-type]
    items = []
    for n, (e, q) in enumerate(zip(check.evidence, quotes), start=1):
        c = e.citation
        where = f"{safe(base['chars'])} {c.start}–{c.end}"
        if q.page is not None:
            where += f", {safe(base['page'])} {q.page}"
        if q.section:
            where += f", {safe(base['section'])}: {safe(q.section)}"
        values = ""
        if e.relation == "conflicts" and e.document_value and e.claim_value:
            values = (
                f'<div class="citeqa-values">{safe(lab["doc_value"])}: <strong>{safe(e.document_value)}'
                f"</strong> · {safe(lab['claim_value'])}: <s>{safe(e.claim_value)}</s></div>"
            )
        if e.translations:
            also = ", ".join(f"{safe(t.lang)} ({safe(t.doc_id)}, {t.start}–{t.end})" for t in e.translations)
            values += f'<div class="citeqa-translations">{safe(lab["also_in"])}: {also}</div>'
        badge = f'<span class="citeqa-relation citeqa-{e.relation}">{safe(lab[e.relation])}</span>'
        items.append(
            f'<div class="citeqa-source" id="citeqa-src-{n}"><div class="citeqa-head">{badge} '
            f"<b>[{n}] {safe(c.title)}</b><br><small>{safe(c.doc_id)} · {safe(c.lang)} · {where} · "
            f"{safe(base['score'])} {c.score:.3f}</small></div>{values}"
            f'<div class="citeqa-passage">{evidence_passage_html(e)}</div>'
            f"{citation_tools_html(q, check.language)}</div>"
        )
    cls = "citeqa-sources citeqa-closest" if check.verdict == "not_found" else "citeqa-sources"
    heading = base["closest"] if check.verdict == "not_found" else lab["evidence"]
    return f'<div class="{cls}"><h3>{safe(heading)}</h3>{"".join(items)}</div>'


def document_html(document: Document, start: int, end: int) -> str:
    """The whole document as inert text, ``[start, end)`` in ``<mark id="cited">``, in a scrolling box."""
    text = document.text
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    start, end = min(start, end), max(start, end)
    body = f'{safe_block(text[:start])}<mark id="cited">{safe_block(text[start:end])}</mark>{safe_block(text[end:])}'
    return (
        f'<div class="citeqa-doc-head"><b>{safe(document.title)}</b> <small>{safe(document.doc_id)} · '
        f"{safe(document.lang)} · {start}–{end}</small></div>"
        f'<div class="citeqa-doc" id="citeqa-doc-text">{body}</div>'
    )
