"""What a record cites: its citations, where each lies in its document (page and section), and the
documents behind them with their indexing dates; and the confidence band an answer falls in
(:class:`~citeqa.qa.scoring.Band`), said in words, which decides whether it is given as the answer
or as a possible one.

One definition for the chat, the downloads and ``citeqa ask/check --format markdown``, which each
kept a copy of these lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from citeqa.messages import labels
from citeqa.qa.scoring import Band, band_of, headline_bands

if TYPE_CHECKING:
    from citeqa.claims.check import ClaimCheck
    from citeqa.engine import Engine
    from citeqa.records import Answer, Citation, Document, DocumentInfo


def citations_of(record: Answer | ClaimCheck) -> list[Citation]:
    """An answer's citations, or the passage of each piece of evidence of a claim check."""
    from citeqa.claims.check import ClaimCheck

    if isinstance(record, ClaimCheck):
        return [e.citation for e in record.evidence]
    return list(record.citations)


def document_infos(engine: Engine, records: Iterable[Answer | ClaimCheck]) -> dict[str, DocumentInfo]:
    """The :class:`~citeqa.records.DocumentInfo` of each indexed document the records cite."""
    cited = {c.doc_id for record in records for c in citations_of(record)}
    return {d: engine.document_info(d) for d in cited if d in engine.documents}


#: The bands of a caller that knows none: every answer given is high (:func:`headline_bands` from 0).
NO_BANDS = headline_bands(0.0)


def answer_band(answer: Answer, bands: Sequence[Band] = ()) -> Band | None:
    """The band of the answer's confidence among ``bands`` (the engine's
    ``settings.answer_bands()``; empty: :data:`NO_BANDS`); None when no answer was given."""
    if answer.abstained or answer.answer is None:
        return None
    known = tuple(bands) or NO_BANDS
    if answer.band is not None:  # the engine's own word (a disputed answer is never high)
        named = next((b for b in known if b.name == answer.band.name), None)
        if named is not None:
            return named
    return band_of(answer.confidence, known)


def hedged(answer: Answer, bands: Sequence[Band] = ()) -> bool:
    """Whether the answer is shown as a possible answer beside its source (it lies in the lowest band),
    not as the answer, in the chat and in its downloads alike."""
    band = answer_band(answer, bands)
    return band is not None and band.name == (tuple(bands) or NO_BANDS)[-1].name


def band_words(answer: Answer, bands: Sequence[Band] = ()) -> tuple[str, str, str]:
    """``(name, word, measured)``: the band's name (``none`` when no answer was given), its word in the
    answer's language ("Likely right"), and how often answers in it were right out of fold, in words
    ('' when the band was not measured). One mapping for the chat, its label and the downloads."""
    lab = labels(answer.language)
    band = answer_band(answer, bands)
    if band is None:
        return "none", lab["conf_none"], ""
    measured = ""
    if band.precision is not None and band.support:
        measured = lab["band_right"].format(share=band.precision, n=band.support)
    return band.name, lab[f"band_{band.name}"], measured


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
        offset = citation.start + span.start
        return document.page_at(offset), document.section_at(offset)
    section = document.section_at(citation.start)
    if section is None:
        section = next((s.title for s in document.sections if citation.start <= s.start < citation.end), None)
    return document.page_at(citation.start), section
