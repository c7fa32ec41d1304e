"""Sentences of a passage, and clauses of long ones: the spans an answer can be.

Sentences are cut aware of abbreviations and decimals. The same bounds serve the index
(which stores a vector per span) and the answer pipeline (which scores them), so both
always see the same spans.
"""

from __future__ import annotations

import re

from citeqa.records import Highlight
from citeqa.text.analysis import fold_accents

#: Words that end with a period without ending a sentence (accent-folded, lower case).
ABBREVIATIONS = frozenset(
    """
ee uu sr sra srta dr dra drs prof lic ing etc vs p pp pag pág no nº num núm fig ej eg ie
mr mrs ms st co inc ltd jr sto sta av art cap aprox approx dept est min max nr vol cf al
jan feb mar apr jun jul aug sep sept oct nov dec ene abr ago dic fev mai out dez
""".split()
)

#: A sentence longer than this is also offered clause by clause: about two lines of text,
#: past which a reader looks for the clause that answers rather than the whole sentence.
LONG_SENTENCE_CHARS = 220

_END = re.compile(r"[.!?…]+[\"'»”’)\]]*(?=\s)|\n+")
_STARTS_SENTENCE = re.compile(r"[\s\"'«“‘(\[¿¡•\-–—]*[A-ZÁÉÍÓÚÂÊÔÃÕÇÑÜ0-9]")


def sentence_spans(text: str) -> list[Highlight]:
    """Each sentence of ``text`` (offsets into it), stripped of surrounding blanks."""
    spans, start = [], 0
    for match in _END.finditer(text):
        end = match.end()
        if match.group(0).startswith("\n") or _is_boundary(text, match.start(), end):
            spans.append((start, end))
            start = end
    spans.append((start, len(text)))
    return [s for s in (_strip(text, a, b) for a, b in spans) if s is not None]


def _is_boundary(text: str, dot: int, end: int) -> bool:
    """A period ends a sentence unless it closes an abbreviation, an initial or the day of an
    ordinal date ("am 21. März 1685")."""
    word = re.search(r"(\w+)$", text[max(0, dot - 12) : dot])
    if text[dot] == "." and word is not None:
        token = fold_accents(word.group(1)).lower()
        if token in ABBREVIATIONS or (len(token) == 1 and token.isalpha()) or _is_ordinal_day(text, dot, token, end):
            return False
    return _STARTS_SENTENCE.match(text, end) is not None or end >= len(text.rstrip())


def _is_ordinal_day(text: str, dot: int, token: str, end: int) -> bool:
    """Whether ``token`` (a word of its own before the period at ``dot``, not the end of "GLM-5")
    is a day 1..31 and the next word a month name."""
    from citeqa.text.facts_words import full_months

    start = dot - len(token)
    if not (token.isdigit() and len(token) <= 2 and 1 <= int(token) <= 31) or (
        start > 0 and not text[start - 1].isspace()
    ):
        return False
    following = re.match(r"\s+(\w+)", text[end:])
    return following is not None and fold_accents(following.group(1)).lower() in full_months()


def _strip(text: str, start: int, end: int) -> Highlight | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Highlight(start, end) if end > start else None


_CLAUSE = re.compile(r";\s+|:\s+|\s+[—–]\s+")


def clause_spans(text: str, start: int, end: int, min_chars: int = 40) -> list[Highlight]:
    """Clauses of the sentence ``text[start:end]`` (offsets into ``text``): cut at ';', ':' and dashes.

    Pieces shorter than ``min_chars`` are joined to their neighbour, so a clause keeps
    enough context to be read on its own.
    """
    cuts = [m.end() for m in _CLAUSE.finditer(text, start, end)]
    bounds, prev = [], start
    for cut in cuts:
        if cut - prev >= min_chars and end - cut >= min_chars:
            bounds.append((prev, cut))
            prev = cut
    bounds.append((prev, end))
    return [s for s in (_strip(text, a, b) for a, b in bounds) if s is not None]


def span_bounds(text: str) -> list[Highlight]:
    """Every candidate answer span of a passage (offsets into ``text``), in reading order: each
    sentence, then the clauses of a sentence longer than :data:`LONG_SENTENCE_CHARS`."""
    out: list[Highlight] = []
    for s in sentence_spans(text):
        spans = [s] if s.end - s.start <= LONG_SENTENCE_CHARS else [s, *clause_spans(text, s.start, s.end)]
        out.extend(dict.fromkeys(spans))
    return out
