"""What a record cites: its citations, and the documents behind them with their indexing dates; and
whether an answer is given as the answer or as a possible one.

One definition for the chat, the downloads and ``citeqa ask/check --format markdown``, which each
kept a copy of these lines.
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


def confident(answer: Answer, headline_above: float) -> bool:
    """Whether the answer is shown as the answer (else as a possible answer beside its source), in the chat
    and in its downloads alike."""
    return not answer.abstained and answer.answer is not None and answer.confidence >= headline_above
