"""Evidence to keep: a citation as plain text, BibTeX and CSL-JSON, and a conversation as Markdown or JSON.

Pure functions over the records (:class:`~citeqa.records.Answer`,
:class:`~citeqa.claims.check.ClaimCheck`) and each document's
:class:`~citeqa.records.DocumentInfo` (title, file, language, when it was indexed). A
citation names the exact quote and its character range in the document (and the page of a
PDF), so a reader can find it again; the conversation JSON holds the records themselves
and reads back with :func:`conversation_from_json`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from citeqa.app.cited import answer_band, band_words, citations_of, hedged
from citeqa.claims.check import ClaimCheck
from citeqa.messages import claim_labels, evidence_labels, labels
from citeqa.qa.scoring import Band
from citeqa.records import Answer, Citation, Document, DocumentInfo

#: The conversation JSON's format name and version (see :func:`conversation_json`).
CONVERSATION_FORMAT = "citeqa-conversation"
CONVERSATION_VERSION = 1

Turn = Answer | ClaimCheck


@dataclass(frozen=True, slots=True)
class CitedQuote:
    """Everything a citation names: the quote is ``document_text[start:end]``."""

    doc_id: str
    title: str
    lang: str
    start: int
    end: int
    quote: str
    kind: str = ""
    indexed_at: str = ""
    page: int | None = None
    section: str | None = None


def cited_quote(
    citation: Citation,
    quote_start: int | None = None,
    quote_end: int | None = None,
    info: DocumentInfo | None = None,
    document: Document | None = None,
) -> CitedQuote:
    """The citation of ``citation.text[quote_start:quote_end]`` (the whole passage by default)."""
    a = 0 if quote_start is None else max(0, quote_start)
    b = len(citation.text) if quote_end is None else min(len(citation.text), quote_end)
    start, end = citation.start + a, citation.start + b
    page = document.page_at(start) if document is not None else None
    section = document.section_at(start) if document is not None else None
    return CitedQuote(
        citation.doc_id,
        info.title if info else citation.title,
        citation.lang,
        start,
        end,
        citation.text[a:b],
        info.kind if info else "",
        info.indexed_at if info else "",
        page,
        section,
    )


def answer_quotes(
    answer: Answer, infos: Mapping[str, DocumentInfo] | None = None, documents: Mapping[str, Document] | None = None
) -> list[CitedQuote]:
    """One quote per citation: the answer itself for [1] (where it is in the passage), else the passage."""
    out = []
    for n, c in enumerate(answer.citations, start=1):
        at = answer.answer_in(c) if n == 1 else None
        start, end = (at.start, at.end) if at is not None else (None, None)
        out.append(
            cited_quote(c, start, end, info=(infos or {}).get(c.doc_id), document=(documents or {}).get(c.doc_id))
        )
    return out


def check_quotes(
    check: ClaimCheck, infos: Mapping[str, DocumentInfo] | None = None, documents: Mapping[str, Document] | None = None
) -> list[CitedQuote]:
    """One quote per evidence passage: the sentence that bears on the claim, else the passage."""
    out = []
    for e in check.evidence:
        start, end = (e.highlight.start, e.highlight.end) if e.highlight is not None else (None, None)
        out.append(
            cited_quote(
                e.citation,
                start,
                end,
                info=(infos or {}).get(e.citation.doc_id),
                document=(documents or {}).get(e.citation.doc_id),
            )
        )
    return out


# --- one citation ----------------------------------------------------------------------------


def _date(stamp: str) -> str:
    """The calendar day of an ISO 8601 time ("" when there is none)."""
    return stamp[:10] if re.match(r"\d{4}-\d{2}-\d{2}", stamp or "") else ""


def _where(q: CitedQuote, lang: str = "en") -> str:
    """``page 2, characters 10–52, section “X”`` in ``lang`` (BibTeX and CSL-JSON keep English)."""
    lab = labels(lang)
    where = f"{lab['chars']} {q.start}–{q.end}"
    where = f"{lab['page']} {q.page}, {where}" if q.page is not None else where
    return where + (f", {lab['section']} “{q.section}”" if q.section else "")


def plain_citation(q: CitedQuote, lang: str = "en") -> str:
    """``“quote” — Title. file, language es, characters 1462–2067. Indexed 2026-11-30.`` in ``lang``."""
    lab = evidence_labels(lang)
    day = _date(q.indexed_at)
    indexed = " " + lab["cite_indexed"].format(day=day) if day else ""
    return f"“{q.quote}” — {q.title}. {q.doc_id}, {lab['cite_language']} {q.lang}, {_where(q, lang)}.{indexed}"


def citation_key(q: CitedQuote) -> str:
    """A stable BibTeX/CSL key: the same place in the same file always gets the same key."""
    stem = re.sub(r"[^A-Za-z0-9]+", "-", q.doc_id.rsplit(".", 1)[0]).strip("-")[:48] or "doc"
    return f"citeqa:{stem}:{q.start}-{q.end}"


_BIBTEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "_": r"\_",
    "$": r"\$",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def bibtex_escape(text: str) -> str:
    """Text for a BibTeX field: braces balanced, LaTeX specials escaped, one line."""
    return "".join(_BIBTEX_SPECIAL.get(c, c) for c in " ".join(text.split()))


def bibtex_citation(q: CitedQuote) -> str:
    """A ``@misc`` entry with the quote, file, range (and page) in ``note`` and the indexing date."""
    where = _where(q).replace("–", "--")
    fields = [
        ("title", q.title),
        ("howpublished", f"Local document {q.doc_id}"),
        ("note", f"{where}; quote: “{q.quote}”"),
        ("language", q.lang),
    ]
    day = _date(q.indexed_at)
    if day:
        fields.append(("urldate", day))  # the day it was indexed; the document's own date is unknown
    body = ",\n".join(f"  {name} = {{{bibtex_escape(value)}}}" for name, value in fields)
    return f"@misc{{{citation_key(q)},\n{body}\n}}"


def csl_json_citation(q: CitedQuote) -> dict[str, Any]:
    """A CSL-JSON item (type ``document``); ``accessed`` is the day the document was indexed."""
    item: dict[str, Any] = {
        "id": citation_key(q),
        "type": "document",
        "title": q.title,
        "language": q.lang,
        "archive": "citeqa index",
        "archive_location": q.doc_id,
        "note": f"{_where(q)}; quote: “{q.quote}”",
    }
    if q.page is not None:
        item["page"] = str(q.page)
    day = _date(q.indexed_at)
    if day:
        item["accessed"] = {"date-parts": [[int(day[:4]), int(day[5:7]), int(day[8:10])]]}
    return item


def citation_formats(q: CitedQuote, lang: str = "en") -> dict[str, str]:
    """The three formats as text: ``plain`` (in ``lang``), ``bibtex``, ``csl-json``."""
    return {
        "plain": plain_citation(q, lang),
        "bibtex": bibtex_citation(q),
        "csl-json": json.dumps([csl_json_citation(q)], ensure_ascii=False, indent=2),
    }


# --- a conversation --------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~#])")


def md_escape(text: str) -> str:
    """Text that Markdown shows as written: markup characters backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _quote_block(text: str) -> str:
    return "\n".join("   > " + md_escape(line) if line.strip() else "   >" for line in text.split("\n"))


def _source_lines(n: int, q: CitedQuote, lang: str, prefix: str = "") -> list[str]:
    day = _date(q.indexed_at)
    indexed = ", " + evidence_labels(lang)["md_indexed"].format(day=day) if day else ""
    head = f"{n}. {prefix}*{md_escape(q.title)}* — `{q.doc_id.replace('`', '')}`, {q.lang}, {_where(q, lang)}{indexed}"
    return [head, _quote_block(q.quote)]


def answer_markdown(
    answer: Answer,
    number: int | None = None,
    infos: Mapping[str, DocumentInfo] | None = None,
    documents: Mapping[str, Document] | None = None,
    bands: Sequence[Band] = (),
) -> str:
    """One answer: the question as a heading, the answer (key phrase in bold), its confidence band in words
    as the chat says it (and how often such answers were right when tested), numbered sources with quotes.
    In the lowest of ``bands`` the answer keeps the chat's hedge ("Possible answer (check it in the
    source):"), so a file read later never states it as fact."""
    lab = labels(answer.language)
    heading = f"## {number}. " if number is not None else "## "
    lines = [heading + md_escape(answer.question), ""]
    _, word, measured = band_words(answer, bands)
    if answer.abstained or answer.answer is None:
        lines.append(f"*{lab['not_found']}*")
    else:
        text, hl = answer.answer, answer.highlight
        body = (
            md_escape(text[: hl.start]) + f"**{md_escape(text[hl.start : hl.end])}**" + md_escape(text[hl.end :])
            if hl is not None and hl.end > hl.start
            else md_escape(text)
        )
        lines.append(f"*{md_escape(lab['possible'])}* {body} [1]" if hedged(answer, bands) else body + " [1]")
    number_said = lab["confidence_value"].format(value=answer.confidence)
    said = f"{md_escape(word)} ({number_said}) · {answer.language}" + (f" · {md_escape(measured)}" if measured else "")
    lines += ["", f"*{said}*", ""]
    quotes = answer_quotes(answer, infos, documents)
    if quotes:
        lines += [f"**{lab['closest'] if answer.abstained else lab['sources']}**", ""]
        for n, q in enumerate(quotes, start=1):
            lines += _source_lines(n, q, answer.language)
    return "\n".join(lines).rstrip() + "\n"


def check_markdown(
    check: ClaimCheck,
    number: int | None = None,
    infos: Mapping[str, DocumentInfo] | None = None,
    documents: Mapping[str, Document] | None = None,
) -> str:
    """One claim check: the claim, the verdict and message, the passages with their relation."""
    lab = claim_labels(check.language)
    heading = f"## {number}. " if number is not None else "## "
    lines = [
        heading + f"{lab['claim']}: " + md_escape(check.claim),
        "",
        f"**{lab[check.verdict]}** — {md_escape(check.message)}",
        "",
    ]
    if check.readings:  # what the reader read for each value, about the claim's subject
        lines += [f"**{lab['reading']}**", ""]
        for r in check.readings:
            if r.relation == "none" or not r.text or r.span is None:
                lines.append(f"- {md_escape(r.claim_value)}: *{md_escape(lab['reading_none'])}*")
                continue
            struck = f"~~{md_escape(r.claim_value)}~~ → " if r.relation == "different" else ""
            where = f"{md_escape(r.span.doc_id)}, {r.span.start}–{r.span.end}"
            holder = f" ({md_escape(lab['reading_holder'])} “{md_escape(r.other_holder)}”)" if r.other_holder else ""
            lines.append(f"- {struck}“{md_escape(r.text)}”{holder} ({where})")
        lines.append("")
    quotes = check_quotes(check, infos, documents)
    if quotes:
        lines += [f"**{lab['evidence']}**", ""]
        for n, (q, e) in enumerate(zip(quotes, check.evidence), start=1):
            values = ""
            if e.document_value and e.claim_value and e.relation == "conflicts":
                values = (
                    f" ({lab['doc_value']} “{md_escape(e.document_value)}”, {lab['claim_value']} "
                    f"“{md_escape(e.claim_value)}”)"
                )
            lines += _source_lines(n, q, check.language, f"[{lab[e.relation]}{values}] ")
            if e.translations:  # indented under its item, after a blank line: the numbered list goes on
                also = ", ".join(f"{t.lang} ({md_escape(t.doc_id)}, {t.start}–{t.end})" for t in e.translations)
                lines += ["", f"   *{md_escape(lab['also_in'])}: {also}*", ""]
    return "\n".join(lines).rstrip() + "\n"


def turn_markdown(
    turn: Turn,
    number: int | None = None,
    infos: Mapping[str, DocumentInfo] | None = None,
    documents: Mapping[str, Document] | None = None,
    bands: Sequence[Band] = (),
) -> str:
    """One turn of a conversation as Markdown (an answer or a claim check)."""
    if isinstance(turn, ClaimCheck):
        return check_markdown(turn, number, infos, documents)
    return answer_markdown(turn, number, infos, documents, bands)


def conversation_markdown(
    turns: Sequence[Turn],
    infos: Mapping[str, DocumentInfo] | None = None,
    documents: Mapping[str, Document] | None = None,
    exported_at: str | None = None,
    bands: Sequence[Band] = (),
) -> str:
    """The whole conversation: every question or claim, its answer or verdict, numbered sources with quotes.

    Each turn is written in its own language, the heading in the last turn's (the page's language then);
    each answer with its band's word among ``bands``, one in the lowest band as the chat shows it, a
    possible answer.
    """
    stamp = exported_at or _now()
    lab = evidence_labels(turns[-1].language if turns else "en")
    count = lab["md_turn"] if len(turns) == 1 else lab["md_turns"].format(n=len(turns))
    parts = [f"# {lab['md_title']}\n\n{lab['md_exported'].format(stamp=stamp, turns=count)}\n"]
    parts += [turn_markdown(t, n, infos, documents, bands) for n, t in enumerate(turns, start=1)]
    return "\n".join(parts)


def conversation_json(
    turns: Sequence[Turn],
    infos: Mapping[str, DocumentInfo] | None = None,
    exported_at: str | None = None,
    bands: Sequence[Band] = (),
) -> str:
    """``{"format": "citeqa-conversation", "version": 1, "exported_at", "turns": [{"type": "answer"|"check",
    "record": {...}, "band": {...}}], "documents": {doc_id: DocumentInfo}}``: the records exactly as the API
    gives them; an answer's ``band`` is the one the chat named it by among ``bands`` (:func:`band_json`)."""
    cited = {c.doc_id for t in turns for c in citations_of(t)}
    data = {
        "format": CONVERSATION_FORMAT,
        "version": CONVERSATION_VERSION,
        "exported_at": exported_at or _now(),
        "turns": [
            {"type": "check", "record": t.to_dict()}
            if isinstance(t, ClaimCheck)
            else {"type": "answer", "record": t.to_dict(), "band": band_json(t, bands)}
            for t in turns
        ],
        "documents": {d: _info_dict(infos[d]) for d in sorted(cited) if infos and d in infos},
    }
    return json.dumps(data, ensure_ascii=False, indent=1)


def band_json(answer: Answer, bands: Sequence[Band] = ()) -> dict[str, Any]:
    """``{"name", "word", "above", "precision", "support"}``: the answer's confidence band as the chat says
    it (``name`` ``none``, bounds null, when no answer was given; precision and support null where the
    band was not measured)."""
    name, word, _ = band_words(answer, bands)
    band = answer_band(answer, bands)
    measured = band.to_dict() if band is not None else {"above": None, "precision": None, "support": None}
    return {**measured, "name": name, "word": word}


def conversation_from_json(text: str) -> list[Turn]:
    """The turns of :func:`conversation_json` output, as records; ValueError when it is not one."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != CONVERSATION_FORMAT:
        raise ValueError(f"not a {CONVERSATION_FORMAT} file")
    out: list[Turn] = []
    for turn in data.get("turns", []):
        kind = turn.get("type")
        if kind == "answer":
            out.append(Answer.from_dict(turn["record"]))
        elif kind == "check":
            out.append(ClaimCheck.from_dict(turn["record"]))
        else:
            raise ValueError(f"unknown turn type {kind!r}")
    return out


def _info_dict(info: DocumentInfo) -> dict[str, Any]:
    from citeqa.records import to_dict

    return to_dict(info)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
