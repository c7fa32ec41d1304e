"""Which retrieved documents are translations of one another, so the same finding is shown once.

Two documents in different languages are taken for translations of one article when the
numbers they write (digits, as written: "744", "2026", "0,9116") mostly agree: translators keep
figures, dates and model numbers, while two articles on one topic share only a few. A pure
function of the two texts, cached by their hashes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from citeqa.records import Document

#: Share of the two documents' distinct numbers (Jaccard) above which they are translations.
TRANSLATION_OVERLAP = 0.6
#: A translation keeps the order of its sentences: two sentences of two translations are the same
#: one only when they sit at about the same place (share of the document's length).
ALIGNMENT = 0.1
_NUMBER = re.compile(r"\d+")


def _numbers(text: str) -> frozenset[str]:
    return frozenset(_NUMBER.findall(text))


_OVERLAPS: dict[tuple[str, str], float] = {}


def overlap(a: Document, b: Document) -> float:
    """Jaccard share of the distinct numbers written in ``a`` and ``b`` (cached by content hash)."""
    key = (min(a.sha256, b.sha256), max(a.sha256, b.sha256))
    if key not in _OVERLAPS:
        x, y = _numbers(a.text), _numbers(b.text)
        if len(_OVERLAPS) > 4096:
            _OVERLAPS.clear()
        _OVERLAPS[key] = len(x & y) / len(x | y) if x | y else 0.0
    return _OVERLAPS[key]


def are_translations(a: Document, b: Document) -> bool:
    """Whether ``a`` and ``b`` are one article in two languages."""
    return a.doc_id != b.doc_id and a.lang != b.lang and overlap(a, b) >= TRANSLATION_OVERLAP


def aligned(place_a: float, place_b: float) -> bool:
    """Whether two sentences at these places (0-1) of two translations can be one sentence."""
    return abs(place_a - place_b) <= ALIGNMENT


def translation_groups(doc_ids: Sequence[str], documents: Mapping[str, Document]) -> dict[str, str]:
    """Each of ``doc_ids`` -> the first of them it is a translation of (itself when none)."""
    out: dict[str, str] = {}
    for i, d in enumerate(doc_ids):
        if d in out:
            continue
        out[d] = d
        doc = documents.get(d)
        for other in doc_ids[i + 1 :]:
            if other not in out and doc is not None and other in documents and are_translations(doc, documents[other]):
                out[other] = d
    return out
