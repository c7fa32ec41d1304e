"""Candidate answer spans: the sentences and clauses of retrieved passages (see
:func:`citeqa.ingest.sentences.span_bounds`), each placed by a :class:`~citeqa.records.Span` of
its document, so an answer is always ``document_text[span.start:span.end]``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from citeqa.ingest.sentences import span_bounds
from citeqa.records import Chunk, Highlight, Span

if TYPE_CHECKING:
    from citeqa.reader.reader import ReadAnswer


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


def span_short(cand: Candidate, span: Span) -> Span | None:
    """``span`` (document offsets, inside ``cand``) as a short answer: widened to whole words of
    ``cand.text`` and trimmed of spaces and stops; None when nothing else is left."""
    short = trimmed_span(span, cand.span, cand.text)
    return short if short.end > short.start else None


def trimmed_span(span: Span, outer: Span, text: str) -> Span:
    """A reader's ``span`` as a reader shows it (:func:`trimmed_words`), both in document offsets:
    widened to whole words of ``text`` (the text of ``outer``, a passage or a sentence that holds
    the span; what lies past it is cut), trimmed of spaces and stops; empty when nothing else is left."""
    at = trimmed_words(text, max(0, span.start - outer.start), min(len(text), span.end - outer.start))
    return outer.part(at)


#: Characters trimmed from the ends of a reader span: an answer is "França", not "França.".
_SPAN_TRIM = " \t\n.,;:!?¿¡\"'«»“”()[]"


def whole_words(text: str, start: int, end: int) -> Highlight:
    """``[start, end)`` widened so that it cuts no word of ``text`` in two: offsets into ``text``."""
    while 0 < start < len(text) and text[start - 1].isalnum() and text[start].isalnum():
        start -= 1
    while 0 < end < len(text) and text[end - 1].isalnum() and text[end].isalnum():
        end += 1
    return Highlight(start, end)


def trimmed_words(text: str, start: int, end: int) -> Highlight:
    """A reader's span ``[start, end)`` of ``text`` as a reader shows it: widened to whole words
    (spans end on subword tokens: "60 tonn" for "60 tonnes"), then trimmed of spaces and stops
    (empty, ``start == end``, when nothing else is left): offsets into ``text``."""
    at = whole_words(text, start, end)
    a, b = at.start, at.end
    while a < b and text[a] in _SPAN_TRIM:
        a += 1
    while b > a and text[b - 1] in _SPAN_TRIM:
        b -= 1
    return Highlight(a, b)


@dataclass(frozen=True, slots=True)
class ScoredSpan:
    """A candidate span with its named features, ranker score and calibrated probability; ``read``
    is the reader's span it stands for when the reader's spans are the candidates."""

    candidate: Candidate
    features: Mapping[str, float]
    score: float
    probability: float
    read: ReadAnswer | None = None
