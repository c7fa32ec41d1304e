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

A remote backend also bounds how long one question waits on it: the engine opens a
:func:`question_deadline` around each question, and the backend gives each of its requests what
is left (:meth:`Deadline.left`) and gives up with one error once nothing is (PostgreSQL: a statement
timeout per statement, lowered to what the question has left). A local index has nothing to wait on.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, NamedTuple, Protocol

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


class Deadline(NamedTuple):
    """When the question being answered must end (``time.monotonic()``), and the limit it was given."""

    end: float
    seconds: float

    def left(self) -> float:
        """Seconds the question may still wait on a backend (≤ 0: none)."""
        return self.end - time.monotonic()


#: The deadline of the question this thread (or task) is answering; a backend's worker threads run
#: in a copy of the caller's context (``contextvars.copy_context``), so they see it too.
_DEADLINE: ContextVar[Deadline | None] = ContextVar("citeqa_question_deadline", default=None)


@contextlib.contextmanager
def question_deadline(seconds: float | None) -> Iterator[None]:
    """While one question is answered: a remote backend gives up on it ``seconds`` from now (None:
    no limit). Inside another question's deadline the earlier of the two ends it."""
    if seconds is None:
        yield
        return
    mine = Deadline(time.monotonic() + seconds, seconds)
    outer = _DEADLINE.get()
    token = _DEADLINE.set(mine if outer is None or mine.end < outer.end else outer)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def current_deadline() -> Deadline | None:
    """The deadline of the question being answered here, None outside one."""
    return _DEADLINE.get()
