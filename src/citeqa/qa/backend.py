"""What answering needs from an index: the retrieval interface a second backend would implement.

:class:`~citeqa.index.store.IndexData` (one FAISS + bm25s generation in memory) implements it,
and so does :class:`~citeqa.pg.backend.PostgresBackend` (PostgreSQL shards: pgvector and
citeqa's own terms, queried by fan-out). A backend over a search engine (OpenSearch, Qdrant)
would implement the same methods; retrieval fusion, span scoring, citations, offsets and the
answer record stay as they are (docs/scale.md).

Passages are addressed by their *row*: the position of the passage in :attr:`chunks`, the
same number that :meth:`dense_search` and :meth:`lexical_search` return and that the span
vectors are indexed by. Answering reads ``chunks`` and ``documents`` only by row and by id
(the hits' passages, the cited documents), never whole: a backend may keep its records
remote and read them per question (PostgreSQL does); what answering needs of the whole
collection it asks by method (:meth:`passage_langs`, :meth:`document_langs`, :meth:`first_passage`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from citeqa.index.spans import SpanVectors
    from citeqa.records import Chunk, Document


class RetrievalBackend(Protocol):
    """Dense and lexical search over passages, and the records to cite them."""

    # Read-only (properties), so that a frozen dataclass such as IndexData has them.
    @property
    def chunks(self) -> Sequence[Chunk]:
        """Passages by row."""
        ...

    @property
    def documents(self) -> Mapping[str, Document]:
        """Documents by id (titles, pages and sections for citations; text for context)."""
        ...

    @property
    def spans(self) -> SpanVectors | None:
        """A vector for every candidate answer span (None: answers are scored without them)."""
        ...

    @property
    def model(self) -> str:
        """The embedding model that made the vectors: which fitted weights answers use."""
        ...

    def dense_search(self, vector: np.ndarray, n: int) -> dict[int, float]:
        """Cosine similarity of the ``n`` nearest passages to a normalised query vector (row -> score)."""
        ...

    def lexical_search(self, terms: Sequence[str], n: int) -> dict[int, float]:
        """BM25 score of the ``n`` best passages for the stemmed query ``terms`` (row -> score, > 0)."""
        ...

    def lexical_idf(self) -> dict[str, float]:
        """IDF of every indexed term (weights words when answers are scored)."""
        ...

    def majority_lang(self, default: str = "en") -> str:
        """The language most passages are in."""
        ...

    def passages(self, rows: Sequence[int]) -> list[Chunk]:
        """The passages of ``rows``, in that order (a remote backend reads them together)."""
        ...

    def passage_langs(self) -> Counter[str]:
        """How many passages are in each language."""
        ...

    def document_langs(self) -> Counter[str]:
        """How many documents are in each language."""
        ...

    def first_passage(self, lang: str) -> Chunk | None:
        """The first passage (by row) in ``lang``, None when there is none: a server's warm-up question,
        read alone (a remote backend must not scan the collection for it)."""
        ...
