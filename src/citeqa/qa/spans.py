"""Candidate answer spans: the sentences and clauses of retrieved passages (see
:func:`citeqa.ingest.sentences.span_bounds`), with exact document offsets, so an answer is
always ``document_text[start:end]``."""

from __future__ import annotations

from dataclasses import dataclass

from citeqa.ingest.sentences import span_bounds


@dataclass(frozen=True, slots=True)
class Candidate:
    """A span of a passage that could be the answer, in document offsets."""

    hit_index: int
    start: int
    end: int
    text: str
    lang: str
    context: str = ""  #: the same paragraph's text before the span (who or what it is about)
    number: int = 0  #: its place among its passage's spans (:func:`span_bounds` order)


def candidates_from(passages: list[tuple[int, int, str, str]], context_chars: int = 300) -> list[Candidate]:
    """Sentences and clauses of passages given as ``(hit index, start, text, lang)``."""
    out = []
    for hit_index, offset, text, lang in passages:
        for j, (a, b) in enumerate(span_bounds(text)):
            para = text.rfind("\n", 0, a) + 1
            context = text[max(para, a - context_chars) : a]
            out.append(Candidate(hit_index, offset + a, offset + b, text[a:b], lang, context, j))
    return out
