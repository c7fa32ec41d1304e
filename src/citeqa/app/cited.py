"""What a record cites: its citations, and the documents behind them with their indexing dates.

One definition for the chat, the downloads and ``citeqa ask/check --format markdown``, which each
kept a copy of these two lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citeqa.answer.claims import ClaimCheck
    from citeqa.engine import Engine
    from citeqa.records import Answer, Citation, DocumentInfo


def citations_of(record: Answer | ClaimCheck) -> list[Citation]:
    """An answer's citations, or the passage of each piece of evidence of a claim check."""
    from citeqa.answer.claims import ClaimCheck

    if isinstance(record, ClaimCheck):
        return [e.citation for e in record.evidence]
    return list(record.citations)


def document_infos(engine: Engine, records: Iterable[Answer | ClaimCheck]) -> dict[str, DocumentInfo]:
    """The :class:`~citeqa.records.DocumentInfo` of each indexed document the records cite."""
    cited = {c.doc_id for record in records for c in citations_of(record)}
    return {d: engine.document_info(d) for d in cited if d in engine.data.documents}
