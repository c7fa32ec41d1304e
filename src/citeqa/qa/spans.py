"""Candidate answer spans: the sentences and clauses of retrieved passages (see
:func:`citeqa.ingest.sentences.span_bounds`), each placed by a :class:`~citeqa.records.Span` of
its document, so an answer is always ``document_text[span.start:span.end]``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from citeqa.ingest.sentences import span_bounds
from citeqa.records import Chunk, Highlight, Span


@dataclass(frozen=True, slots=True)
class Candidate:
    """A span of a passage that could be the answer: where it lies in its document, the hit it is
    a sentence of, and its text (``text == document_text[span.start:span.end]``)."""

    hit_index: int
    span: Span
    text: str
    lang: str
    context: str = ""  #: the same paragraph's text before the span (who or what it is about)
    number: int = 0  #: its place among its passage's spans (:func:`span_bounds` order)

    @property
    def start(self) -> int:
        """The document offset where it starts."""
        return self.span.start

    @property
    def end(self) -> int:
        """The document offset where it ends (exclusive)."""
        return self.span.end

    def place(self, at: Highlight) -> Span:
        """Offsets ``at`` of :attr:`text` as a span of its document."""
        return replace(self.span, start=self.start + at.start, end=self.start + at.end)

    def offsets(self, span: Span) -> Highlight:
        """A span of its document inside this candidate as offsets into :attr:`text`."""
        return Highlight(span.start - self.start, span.end - self.start)


def candidates_from(passages: Sequence[tuple[int, Chunk]], context_chars: int = 300) -> list[Candidate]:
    """Sentences and clauses of passages given as ``(hit index, chunk)``."""
    out = []
    for hit_index, chunk in passages:
        text = chunk.text
        for j, at in enumerate(span_bounds(text)):
            a, b = at.start, at.end
            para = text.rfind("\n", 0, a) + 1
            context = text[max(para, a - context_chars) : a]
            span = Span(chunk.doc_id, chunk.start + a, chunk.start + b)
            out.append(Candidate(hit_index, span, text[a:b], chunk.lang, context, j))
    return out
