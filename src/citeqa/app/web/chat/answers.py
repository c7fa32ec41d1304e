"""HTML for the chat's answers and their sources: the answer with its key phrase marked and [n]
links, the source cards with their context and citation tools, and the document viewer. Every
piece of text is escaped (:mod:`citeqa.app.web.escape`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from citeqa.app.cited import band_words, hedged, place
from citeqa.app.web.escape import marked, safe, safe_block
from citeqa.messages import counted, labels
from citeqa.qa.scoring import Band
from citeqa.records import Answer, Citation, Document, DocumentInfo

if TYPE_CHECKING:  # imported where used, as the functions below do
    from citeqa.app.evidence import CitedQuote

CONTEXT_CHARS = 300


def supporting(answer: Answer) -> list[int]:
    """Numbers (1-based) of the citations that hold the answer's key phrase; [1] always."""
    if answer.abstained or not answer.answer or not answer.citations:
        return []
    hl = answer.highlight
    key = answer.answer[hl.start : hl.end] if hl is not None else answer.answer
    found = [1] + [i for i, c in enumerate(answer.citations[1:], start=2) if key.casefold() in c.text.casefold()]
    return found


def card_id(turn: int, number: int) -> str:
    """The element id of source ``number`` of chat turn ``turn`` (unique in the conversation)."""
    return f"citeqa-t{turn}-src-{number}"


def ref_html(turn: int, number: int, citation: Citation | None = None) -> str:
    """A ``[n]`` link to its source card; its title previews the source (shown on hover)."""
    preview = ""
    if citation is not None:
        text = " ".join(citation.text.split())
        preview = f' title="{safe_block(citation.title)}: {safe_block(text[:180])}{"…" if len(text) > 180 else ""}"'
    target = card_id(turn, number)
    return f'<a class="citeqa-ref" href="#{target}" data-target="{target}"{preview}>[{number}]</a>'


def confidence_html(answer: Answer, bands: Sequence[Band] = ()) -> str:
    """The confidence as its band's word (:func:`~citeqa.app.cited.band_words`); the number, and how often
    answers in that band were right when tested, on hover."""
    lab = labels(answer.language)
    name, word, measured = band_words(answer, bands)
    number = lab["confidence_value"].format(value=answer.confidence) + (f" · {measured}" if measured else "")
    return (
        f'<span class="citeqa-confidence citeqa-confidence-{name}" data-band="{name}" '
        f'title="{safe_block(number)}">{safe(word)}</span>'
    )


def also_in_text(answer: Answer) -> str:
    """The other documents that give the same answer, in the answer's language: "also in 001 (pt), 004 (en)"."""
    docs = ", ".join(f"{c.doc_id} ({c.lang})" for c in answer.also_in)
    return labels(answer.language)["also_read_in"].format(docs=docs)


def answer_html(answer: Answer, show_confidence: bool = True, turn: int = 0, bands: Sequence[Band] = ()) -> str:
    """The chat reply: the answer with its key phrase marked and [n] linking to the turn's sources.

    In every band but the lowest of ``bands`` the short answer is the headline; in the lowest the
    sentence is shown as a possible answer, to be checked in its source (:func:`~citeqa.app.cited.hedged`).
    """
    lab = labels(answer.language)
    if answer.abstained or answer.answer is None:
        body = f"<em>{safe(lab['not_found'])}</em>"
        if answer.citations:
            body += f" {safe(lab['see_closest'])}"
    else:
        text, hl = answer.answer, answer.highlight
        refs = " ".join(ref_html(turn, n, answer.citations[n - 1]) for n in supporting(answer))
        sentence = marked(text, hl.start, hl.end) if hl is not None else safe(text)
        if hedged(answer, bands):
            body = (
                f'<div class="citeqa-possible"><span class="citeqa-possible-label">{safe(lab["possible"])}</span> '
                f'<span class="citeqa-sentence">{sentence}</span> {refs}</div>'
            )
        elif answer.short_answer is not None:  # the short answer first, the sentence as its context
            body = (
                f'<strong class="citeqa-short">{safe(answer.short_answer)}</strong> {refs}'
                f'<br><span class="citeqa-sentence">{sentence}</span>'
            )
        else:
            body = f'<span class="citeqa-sentence">{sentence}</span> {refs}'
        if answer.citations and answer.citations[0].lang != answer.language:
            body += f' <span class="citeqa-note">({safe(lab["other_lang"])}: {safe(answer.citations[0].lang)})</span>'
        if answer.also_in:
            body += f'<div class="citeqa-also">{safe(also_in_text(answer))}</div>'
    if show_confidence:
        body += f'<div class="citeqa-meta">{confidence_html(answer, bands)}</div>'
    return body


def is_markdown(doc_id: str) -> bool:
    """Whether the document is a Markdown file (its heading lines are shown as headings)."""
    from citeqa.ingest.formats import Format, format_of

    return format_of("." + doc_id.rsplit(".", 1)[-1]) is Format.MARKDOWN if "." in doc_id else False


def shown(text: str, markdown: bool = False) -> str:
    """:func:`safe`, and for Markdown its heading lines ("## Fleet") as a section label without the hashes."""
    if not markdown:
        return safe(text)
    from citeqa.ingest.readers import MARKDOWN_HEADING

    out, last = [], 0
    for m in MARKDOWN_HEADING.finditer(text):
        out += [safe(text[last : m.start()]), f'<span class="citeqa-heading">{safe(m.group(2).strip())}</span>']
        last = m.end()
    return "".join(out) + safe(text[last:])


def passage_html(citation: Citation, answer: Answer, number: int) -> str:
    """The passage escaped, with the answer span marked in the cited passage [1]."""
    passage, md = citation.text, is_markdown(citation.doc_id)
    span = answer.answer_in(citation) if number == 1 else None
    if span is None:
        return shown(passage, md)
    return shown(passage[: span.start], md) + f"<mark>{_key_marked(answer)}</mark>" + shown(passage[span.end :], md)


def _key_marked(answer: Answer) -> str:
    """The answer escaped, its key phrase in bold."""
    text, hl = answer.answer or "", answer.highlight
    return marked(text, hl.start, hl.end, "strong") if hl is not None else safe(text)


def context_html(doc_text: str, start: int, end: int, window: int = CONTEXT_CHARS, markdown: bool = False) -> str:
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
        + shown(before, markdown)
        + f'<span class="citeqa-cited">{shown(cited, markdown)}</span>'
        + shown(after, markdown)
        + ("…" if right < len(doc_text) else "")
    )


def citation_html(
    number: int,
    citation: Citation,
    answer: Answer,
    document: Document | None = None,
    extra: str = "",
    turn: int = 0,
    holds: bool = False,
    open_context: bool = False,
) -> str:
    """One source: title, language, range, page or section, the passage, its context, and ``extra``
    (HTML already made inert, e.g. :func:`citation_tools_html`). ``holds``: it holds the answer
    (a badge says so; the others are styled as secondary)."""
    lab = labels(answer.language)
    badge = f' <span class="citeqa-holds">{safe(lab["holds"])}</span>' if holds else ""
    if citation.lang != answer.language:
        badge += f' <span class="citeqa-badge">{safe(lab["other_lang"])}: {safe(citation.lang)}</span>'
    where = f"{safe(lab['chars'])} {citation.start}–{citation.end}"
    page, section = place(citation, answer, number, document)
    if page is not None:
        where += f", {safe(lab['page'])} {page}"
    if section is not None:
        where += f", {safe(lab['section'])}: {safe(section)}"
    context = ""
    if document is not None and (citation.start > 0 or document.text[citation.end :].strip()):
        context = (
            f'<details class="citeqa-context"{" open" if open_context else ""}><summary>{safe(lab["context"])}</summary>'
            f"<div>{context_html(document.text, citation.start, citation.end, markdown=is_markdown(document.doc_id))}"
            "</div></details>"
        )
    rank = "citeqa-primary" if holds else "citeqa-secondary"
    return (
        f'<div class="citeqa-source {rank}" id="{card_id(turn, number)}" tabindex="-1"><div class="citeqa-head">'
        f"<b>[{number}] {safe(citation.title)}</b>{badge}"
        f'<br><span class="citeqa-where">{safe(citation.doc_id)} · {safe(citation.lang)} · {where}</span></div>'
        f'<div class="citeqa-passage">{passage_html(citation, answer, number)}</div>{context}{extra}</div>'
    )


def sources_html(
    answer: Answer,
    documents: Mapping[str, Document] | None = None,
    infos: Mapping[str, DocumentInfo] | None = None,
    turn: int = 0,
    open_first: bool = False,
    tools: bool = False,
) -> str:
    """The sources of an answer: those holding the answer first, the others folded as secondary;
    after an abstention every passage is a secondary "closest passage". ``tools`` adds the citation
    tools under each (``infos``: DocumentInfo by doc_id); ``open_first`` opens [1]'s context."""
    from citeqa.app.evidence import answer_quotes

    lab = labels(answer.language)
    docs = documents if documents is not None else {}
    quotes: Sequence[CitedQuote | None] = (
        answer_quotes(answer, infos, docs) if tools else [None] * len(answer.citations)
    )
    holding = set(supporting(answer))
    cards = [
        (
            n in holding,
            citation_html(
                n,
                c,
                answer,
                docs.get(c.doc_id),
                citation_tools_html(q, answer.language) if q is not None else "",
                turn,
                n in holding,
                open_first and n == 1,
            ),
        )
        for n, (c, q) in enumerate(zip(answer.citations, quotes), start=1)
    ]
    if answer.abstained or not holding:
        body = "".join(html for _, html in cards)
        return f'<div class="citeqa-sources citeqa-closest"><h3>{safe(lab["closest"])}</h3>{body}</div>'
    main = "".join(html for holds, html in cards if holds)
    rest = [html for holds, html in cards if not holds]
    more = (
        f'<details class="citeqa-more"><summary>{safe(counted(lab, "more_passages", len(rest)))}</summary>'
        f"{''.join(rest)}</details>"
        if rest
        else ""
    )
    return f'<div class="citeqa-sources"><h3>{safe(lab["sources"])}</h3>{main}{more}</div>'


def answer_sources_html(
    answer: Answer,
    documents: Mapping[str, Document] | None = None,
    infos: Mapping[str, DocumentInfo] | None = None,
    turn: int = 0,
    open_first: bool = False,
) -> str:
    """:func:`sources_html` with the citation tools under every source (``infos``: DocumentInfo by doc_id)."""
    return sources_html(answer, documents, infos, turn, open_first, tools=True)


def citation_tools_html(quote: CitedQuote, lang: str) -> str:
    """Buttons under a source: copy the citation (plain, BibTeX, CSL-JSON, each shown in a fold)
    and open the whole document at the cited range."""
    from citeqa.app.evidence import citation_formats
    from citeqa.messages import evidence_labels

    lab = evidence_labels(lang)
    formats = citation_formats(quote, lang)
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


def user_html(question: str) -> str:
    """A user's chat message, inert."""
    return safe(question)


def error_html(message: str, lang: str = "en") -> str:
    """An error line for the chat, inert."""
    return f"<em>{safe(labels(lang)['error'])}: {safe(message)}</em>"


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
