"""HTML for answers, sources and the corpus table. Every piece of document or user text is escaped here.

Escaping covers HTML (``<script>``, ``<img onerror>``) and Markdown/LaTeX syntax (an
image ``![x](url)`` or a link), because the chat renders Markdown: untrusted text is
turned into character references, which no renderer treats as markup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from citeqa.app.cited import band_words, hedged  # display.hedged, as the chat's modules call it
from citeqa.messages import counted, labels
from citeqa.qa.scoring import Band
from citeqa.records import Answer, Citation, Document, DocumentInfo

if TYPE_CHECKING:  # imported where used, as the functions below do
    from citeqa.app.evidence import CitedQuote
    from citeqa.claims.check import ClaimCheck, ClaimEvidence
    from citeqa.index.manifest import DocEntry

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
        sentence = _marked(text, hl.start, hl.end) if hl is not None else safe(text)
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
    at, end = span
    return shown(passage[:at], md) + f"<mark>{_key_marked(answer)}</mark>" + shown(passage[end:], md)


def _key_marked(answer: Answer) -> str:
    """The answer escaped, its key phrase in bold."""
    text, hl = answer.answer or "", answer.highlight
    return _marked(text, hl.start, hl.end, "strong") if hl is not None else safe(text)


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


def place(citation: Citation, answer: Answer, number: int, document: Document | None) -> tuple[int | None, str | None]:
    """The page and the section of a citation, where the document has them.

    For the first citation of an answer they are those of the answer inside the passage
    (a passage can run from one chapter into the next); for the others, those where the
    passage starts, or the first section that begins inside it.
    """
    if document is None:
        return None, None
    span = answer.answer_in(citation) if number == 1 else None
    if span is not None:
        offset = citation.start + span[0]
        return document.page_at(offset), document.section_at(offset)
    section = document.section_at(citation.start)
    if section is None:
        section = next((s.title for s in document.sections if citation.start <= s.start < citation.end), None)
    return document.page_at(citation.start), section


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


def user_html(question: str) -> str:
    """A user's chat message, inert."""
    return safe(question)


def error_html(message: str, lang: str = "en") -> str:
    """An error line for the chat, inert."""
    return f"<em>{safe(labels(lang)['error'])}: {safe(message)}</em>"


CORPUS_HEADERS = ["title", "language", "passages", "indexed", "file"]  # "passages", as the chat says


def corpus_headers(lang: str = "en") -> list[str]:
    """The corpus table's column names (:data:`CORPUS_HEADERS`) in ``lang``."""
    from citeqa.messages import corpus_labels

    lab = corpus_labels(lang)
    return [lab[f"col_{name}"] for name in CORPUS_HEADERS]


def corpus_rows(entries: Iterable[DocEntry]) -> list[list[object]]:
    """Rows of the corpus table from manifest ``DocEntry`` items, as plain text."""
    return [[_plain(e.title), e.lang, len(e.chunk_ids), when(e.indexed_at), _plain(e.doc_id)] for e in entries]


def when(stamp: str) -> str:
    """An ISO 8601 time as a reader writes it: ``2026-11-30 14:19 UTC`` (as given when it is not one)."""
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return stamp
    moment = moment.astimezone(UTC) if moment.tzinfo is not None else moment
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.tzinfo is not None else "")


def document_choice(doc_id: str, title: str) -> tuple[str, str]:
    """A document in a list to choose from: its title and file shown, its file the value."""
    shown = _plain(title).strip()
    return (f"{shown} ({doc_id})" if shown and shown != doc_id else doc_id), doc_id


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _plain(text: str) -> str:
    """Text for a table cell: no control characters."""
    return _CONTROL.sub(" ", text)


def skipped_html(skipped: Sequence[tuple[str, str]], lang: str = "en") -> str:
    """The files left out of the index, each with its reason, inert."""
    from citeqa.messages import corpus_labels

    if not skipped:
        return ""
    items = "".join(f"<li><code>{safe(name)}</code>: {safe(reason)}</li>" for name, reason in skipped)
    return f'<div class="citeqa-skipped"><b>{safe(corpus_labels(lang)["skipped"])}</b><ul>{items}</ul></div>'


# --- claim checks, citation tools, the document viewer ----------------------------------------

_MARKUP_TABLE = str.maketrans(_MARKUP_CHARS)


def safe_block(text: str) -> str:
    """:func:`safe` for long texts and ``<pre>`` blocks: newlines kept as they are (one
    ``str.translate`` pass, fast enough for a whole 1,000,000-character document)."""
    return text.translate(_MARKUP_TABLE)


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


def answer_sources_html(
    answer: Answer,
    documents: Mapping[str, Document] | None = None,
    infos: Mapping[str, DocumentInfo] | None = None,
    turn: int = 0,
    open_first: bool = False,
) -> str:
    """:func:`sources_html` with the citation tools under every source (``infos``: DocumentInfo by doc_id)."""
    return sources_html(answer, documents, infos, turn, open_first, tools=True)


_VERDICT_CLASS = {
    "supported": "citeqa-verdict-supported",
    "conflicting": "citeqa-verdict-conflicting",
    "not_found": "citeqa-verdict-not-found",
}


def check_html(check: ClaimCheck, turn: int = 0) -> str:
    """The chat reply to a claim: the verdict, its message, and [n] links to the passages that
    support or contradict it."""
    from citeqa.messages import claim_labels

    lab = claim_labels(check.language)
    refs = [n for n, e in enumerate(check.evidence, start=1) if e.relation in ("supports", "conflicts")]
    markers = " ".join(ref_html(turn, n, check.evidence[n - 1].citation) for n in refs)
    return (
        f'<strong class="{_VERDICT_CLASS.get(check.verdict, "")}">{safe(lab[check.verdict])}</strong>: '
        f"{safe(check.message)}" + (f" {markers}" if markers else "")
    )


def evidence_passage_html(evidence: ClaimEvidence) -> str:
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
    check: ClaimCheck,
    documents: Mapping[str, Document] | None = None,
    infos: Mapping[str, DocumentInfo] | None = None,
    turn: int = 0,
) -> str:
    """The passages of a claim check: relation badge, title, place, the sentence marked, both values
    when they differ, and the citation tools."""
    from citeqa.app.evidence import check_quotes
    from citeqa.messages import claim_labels

    lab, base = claim_labels(check.language), labels(check.language)
    docs = documents if documents is not None else {}
    quotes = check_quotes(check, infos, docs)
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
        rank = "citeqa-primary" if e.relation in ("supports", "conflicts") else "citeqa-secondary"
        items.append(
            f'<div class="citeqa-source {rank}" id="{card_id(turn, n)}" tabindex="-1"><div class="citeqa-head">'
            f'{badge} <b>[{n}] {safe(c.title)}</b><br><span class="citeqa-where">{safe(c.doc_id)} · '
            f"{safe(c.lang)} · {where}</span></div>{values}"
            f'<div class="citeqa-passage">{evidence_passage_html(e)}</div>'
            f"{citation_tools_html(q, check.language)}</div>"
        )
    cls = "citeqa-sources citeqa-closest" if check.verdict == "not_found" else "citeqa-sources"
    heading = base["closest"] if check.verdict == "not_found" else lab["evidence"]
    return f'{readings_html(check)}<div class="{cls}"><h3>{safe(heading)}</h3>{"".join(items)}</div>'


def readings_html(check: ClaimCheck) -> str:
    """What the reader read for each value of the claim, about the claim's subject: the span it read
    (document offsets, the document's value in bold), the claim's value struck through where the
    span gives another, the question it was asked; empty without readings."""
    from citeqa.messages import claim_labels

    if not getattr(check, "readings", ()):
        return ""
    lab, base = claim_labels(check.language), labels(check.language)
    items = []
    for r in check.readings:
        asked = f'<small class="citeqa-asked">{safe(lab["reading_asked"])}: {safe(r.question)}</small>'
        if r.relation == "none" or not r.text:
            items.append(f"<li>{safe(r.claim_value)}: <em>{safe(lab['reading_none'])}</em> {asked}</li>")
            continue
        a, b = r.value_start - r.start, r.value_end - r.start
        span = _marked(r.text, a, b, "strong") if 0 <= a <= b <= len(r.text) else safe(r.text)
        claim = f"<s>{safe(r.claim_value)}</s> → " if r.relation == "different" else ""
        where = f"{safe(r.doc_id)} · {safe(r.lang)} · {safe(base['chars'])} {r.start}–{r.end}"
        items.append(
            f'<li class="citeqa-read-{safe(r.relation)}">{claim}“{span}” '
            f'<span class="citeqa-where">{where}</span> {asked}</li>'
        )
    return f'<div class="citeqa-readings"><h3>{safe(lab["reading"])}</h3><ul>{"".join(items)}</ul></div>'


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
