"""Terminal rendering of an answer record. Document text is shown as plain text, never markup."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from citeqa.app.cited import place
from citeqa.messages import claim_labels, evidence_labels, labels
from citeqa.records import Answer, Document

if TYPE_CHECKING:
    from rich.console import Console

    from citeqa.claims.check import ClaimCheck


def print_answer(
    answer: Answer, console: Console | None = None, documents: Mapping[str, Document] | None = None
) -> None:
    """Print the answer, then numbered citations with title, language, range, and the page or
    section when ``documents`` (doc_id -> Document) tells them."""
    from rich.console import Console
    from rich.text import Text

    console = console if console is not None else Console(highlight=False)
    lab = labels(answer.language)
    if answer.abstained:
        console.print(Text(lab["not_found"], style="bold yellow"))
        if answer.citations:
            console.print(Text(f"{lab['closest']}:", style="dim"))
    else:
        text = Text(answer.answer or "")
        if answer.highlight is not None:
            text.stylize("bold underline", answer.highlight.start, answer.highlight.end)
        if answer.short_answer is not None:  # the short answer first, its sentence as context
            console.print(Text(answer.short_answer, style="bold"))
            text.stylize("dim")
        console.print(text)
    said = lab["confidence_value"].format(value=answer.confidence)
    if answer.band is not None and not answer.abstained:  # the band's word and how often it was right
        said += f" ({lab[f'band_{answer.band.name}']}"
        if answer.band.precision is not None and answer.band.support:
            said += f": {lab['band_right'].format(share=answer.band.precision, n=answer.band.support)}"
        said += ")"
    said += f" · {_language_word(answer.language)}"
    console.print(Text(f"{said} {answer.language} · {answer.latency_ms:.0f} ms", style="dim"))
    for number, c in enumerate(answer.citations, start=1):
        console.print()
        head = Text(f"[{number}] ", style="bold")
        head.append(c.title, style="bold")
        page, section = place(c, answer, number, (documents or {}).get(c.doc_id))
        where = f", {lab['page']} {page}" if page is not None else ""
        where += f", {lab['section']}: {section}" if section is not None else ""
        head.append(
            f"  ({c.doc_id}, {c.lang}, chars {c.start}-{c.end}{where}, {lab['score']} {c.score:.3f})", style="dim"
        )
        console.print(head)
        console.print(Text(c.text))


def _language_word(lang: str) -> str:
    """The word "language" in ``lang`` (the catalogue's, as a citation says it)."""
    return evidence_labels(lang)["cite_language"]


_VERDICT_STYLE = {"supported": "bold green", "conflicting": "bold red", "not_found": "bold yellow"}


_VALUE_VERDICT = {"same": "supported", "different": "conflicting", "none": "not_found"}


def _print_values(check: ClaimCheck, console: Console) -> None:
    """Each value of the claim with its own verdict: the claim's value (struck through where the
    documents give another), the document's value and where it lies."""
    from rich.text import Text

    lab = claim_labels(check.language)
    for v in check.values:
        line = Text(f"{lab['values']}: ", style="dim")
        line.append(f"{lab[_VALUE_VERDICT.get(v.relation, 'not_found')]} · ")
        line.append(v.claim_value, style="strike" if v.relation == "different" else "")
        if v.document_value and v.span is not None:
            line.append(f" → “{v.document_value}”", style="bold")
            line.append(f"  ({v.span.doc_id}, chars {v.span.start}-{v.span.end})", style="dim")
        console.print(line)


def print_check(
    check: ClaimCheck, console: Console | None = None, documents: Mapping[str, Document] | None = None
) -> None:
    """Print the verdict and its message, then each passage: relation, place, and the sentence
    that bears on the claim (the document's value underlined)."""
    from rich.console import Console
    from rich.text import Text

    console = console if console is not None else Console(highlight=False)
    lab = claim_labels(check.language)
    head = Text(f"{lab[check.verdict]}: ", style=_VERDICT_STYLE.get(check.verdict, "bold"))
    head.append(check.message, style="bold")
    console.print(head)
    console.print(Text(f"{_language_word(check.language)} {check.language} · {check.latency_ms:.0f} ms", style="dim"))
    _print_values(check, console)
    for r in check.readings:  # what the reader read for each value, about the claim's subject
        line = Text(f"{lab['reading']}: ", style="dim")
        if r.relation == "none" or not r.text or r.span is None:
            line.append(f"{r.claim_value}: {lab['reading_none']}")
        else:
            if r.relation == "different":
                line.append(r.claim_value, style="strike")
                line.append(" → ")
            line.append(f"“{r.text}”", style="bold")
            if r.other_holder:
                line.append(f" ({lab['reading_holder']} “{r.other_holder}”)")
            line.append(f"  ({r.span.doc_id}, chars {r.span.start}-{r.span.end})", style="dim")
        console.print(line)
    for number, e in enumerate(check.evidence, start=1):
        c = e.citation
        console.print()
        line = Text(f"[{number}] {lab[e.relation]}: ", style="bold")
        line.append(c.title, style="bold")
        doc = (documents or {}).get(c.doc_id)
        start = c.start + (e.highlight.start if e.highlight else 0)
        page = doc.page_at(start) if doc is not None else None
        where = f", {labels(check.language)['page']} {page}" if page is not None else ""
        score = labels(check.language)["score"]
        line.append(f"  ({c.doc_id}, {c.lang}, chars {c.start}-{c.end}{where}, {score} {c.score:.3f})", style="dim")
        console.print(line)
        if e.highlight is None:
            console.print(Text(c.text))
            continue
        sentence = Text(c.text[e.highlight.start : e.highlight.end])
        if e.value is not None:
            sentence.stylize("bold underline", e.value.start - e.highlight.start, e.value.end - e.highlight.start)
        console.print(sentence)
        if e.translations:
            also = ", ".join(f"{t.lang} ({t.doc_id}, chars {t.start}-{t.end})" for t in e.translations)
            console.print(Text(f"{lab['also_in']}: {also}", style="dim"))
