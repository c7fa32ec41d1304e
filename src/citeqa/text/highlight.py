"""Offsets into a string: the one type for a span of a text that is not a document's.

Defined here, at the bottom, because :mod:`citeqa.text` imports nothing outside itself and its
facts and names are found in whatever string they are given; :mod:`citeqa.records` re-exports it
as the answer record's highlight. A span of a document (document offsets) is a
:class:`citeqa.records.Span`; one becomes the other only through a method that says so
(``Span.inside``, ``Span.within``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Highlight:
    """Characters ``[start, end)`` of a text shown (an answer's key phrase, a place in a cited
    passage, a fact found in a sentence): offsets into that string, where a
    :class:`citeqa.records.Span` is offsets into a document."""

    start: int
    end: int
