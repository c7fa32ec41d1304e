"""HTML for the chat's claim checks: the verdict with [n] links, the passages that bear on the
claim (relation, the sentence marked, both values where they differ) and what the reader read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from citeqa.app.web.chat.answers import card_id, citation_tools_html, ref_html
from citeqa.app.web.escape import marked, safe
from citeqa.messages import labels
from citeqa.records import Document, DocumentInfo

if TYPE_CHECKING:  # imported where used, as the functions below do
    from citeqa.claims.check import ClaimCheck, ClaimEvidence

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
        inner_html = marked(inner, value.start - hl.start, value.end - hl.start, "strong")
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
    span gives another, the name the document gives the value to when it is not the claim's subject,
    the question it was asked; empty without readings."""
    from citeqa.messages import claim_labels

    if not getattr(check, "readings", ()):
        return ""
    lab, base = claim_labels(check.language), labels(check.language)
    items = []
    for r in check.readings:
        asked = f'<small class="citeqa-asked">{safe(lab["reading_asked"])}: {safe(r.question)}</small>'
        if r.relation == "none" or not r.text or r.span is None:
            items.append(f"<li>{safe(r.claim_value)}: <em>{safe(lab['reading_none'])}</em> {asked}</li>")
            continue
        at = r.value.within(r.span) if r.value is not None else None  # offsets into the text read
        span = marked(r.text, at.start, at.end, "strong") if at is not None and at.end <= len(r.text) else safe(r.text)
        claim = f"<s>{safe(r.claim_value)}</s> → " if r.relation == "different" else ""
        where = f"{safe(r.span.doc_id)} · {safe(r.lang)} · {safe(base['chars'])} {r.span.start}–{r.span.end}"
        holder = (
            f' <span class="citeqa-holder">({safe(lab["reading_holder"])} “{safe(r.other_holder)}”)</span>'
            if r.other_holder
            else ""
        )
        items.append(
            f'<li class="citeqa-read-{safe(r.relation)}">{claim}“{span}”{holder} '
            f'<span class="citeqa-where">{where}</span> {asked}</li>'
        )
    return f'<div class="citeqa-readings"><h3>{safe(lab["reading"])}</h3><ul>{"".join(items)}</ul></div>'
