"""A vector for every candidate answer span of every passage, stored beside the passage vectors.

Spans are the sentences and clauses of :func:`citeqa.ingest.sentences.span_bounds`; the
answer scorer compares each with the question (a sentence-level meaning signal that costs a
dot product at question time instead of an encoder call per span). Stored as three arrays:
``vectors`` (float16: half the memory, cosines move by < 1e-3), ``ptr`` (the first row of each
passage, CSR style, ``len(chunks) + 1``) and ``bounds`` (span offsets inside the passage).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citeqa.ingest.sentences import span_bounds
from citeqa.records import Chunk, sha256_text

SPAN_DIR = "spans"
_FILES = ("vectors.npy", "ptr.npy", "bounds.npy")


@dataclass(frozen=True)
class SpanVectors:
    """Span vectors of one index, in passage order."""

    vectors: np.ndarray  # (n, dim) float16
    ptr: np.ndarray  # (chunks + 1,) int64
    bounds: np.ndarray  # (n, 2) int32, offsets inside the passage

    def row(self, chunk_row: int, number: int, start: int, end: int) -> int | None:
        """The row of span ``number`` of passage ``chunk_row`` if it has the given passage offsets."""
        if not 0 <= chunk_row < len(self.ptr) - 1:
            return None
        row = int(self.ptr[chunk_row]) + number
        if row >= self.ptr[chunk_row + 1] or tuple(self.bounds[row]) != (start, end):
            return None
        return row

    def similarities(self, rows: Sequence[int], query: np.ndarray) -> np.ndarray:
        """Cosine of each span row to a normalised query vector."""
        if not rows:
            return np.zeros(0)
        return np.asarray(self.vectors[list(rows)], dtype=np.float32) @ query.astype(np.float32)

    def save(self, folder: Path) -> None:
        folder.mkdir()
        for name, array in zip(_FILES, (self.vectors, self.ptr, self.bounds)):
            np.save(folder / name, array, allow_pickle=False)

    @classmethod
    def load(cls, folder: Path) -> SpanVectors:
        """Memory-mapped: a big index's span vectors stay on disk until read."""
        arrays = [np.load(folder / name, mmap_mode="r", allow_pickle=False) for name in _FILES]
        return cls(*arrays)

    def texts_and_vectors(self, chunks: Sequence[Chunk]) -> dict[str, np.ndarray]:
        """Span text hash -> vector, for reuse by the next build."""
        out: dict[str, np.ndarray] = {}
        for i, chunk in enumerate(chunks):
            for row in range(int(self.ptr[i]), int(self.ptr[i + 1])):
                a, b = self.bounds[row]
                out.setdefault(sha256_text(chunk.text[a:b]), self.vectors[row])
        return out


@dataclass(frozen=True)
class SpanPlan:
    """The spans of some passages: where they are, their text hashes, and the texts still to embed."""

    bounds: list[tuple[int, int]]
    keys: list[str]  # sha256 of each span's text
    ptr: list[int]
    todo: dict[str, str]  # text hash -> text, for spans without a known vector


def plan_spans(chunks: Sequence[Chunk], known: Mapping[str, np.ndarray] | None = None) -> SpanPlan:
    """Every span of ``chunks``; those whose text is not in ``known`` are to be embedded."""
    known = known or {}
    bounds, keys, ptr = [], [], [0]
    todo: dict[str, str] = {}
    for chunk in chunks:
        for a, b in span_bounds(chunk.text):
            key = sha256_text(chunk.text[a:b])
            bounds.append((a, b))
            keys.append(key)
            if key not in known:
                todo[key] = chunk.text[a:b]
        ptr.append(len(bounds))
    return SpanPlan(bounds, keys, ptr, todo)


def assemble_spans(plan: SpanPlan, vectors: Mapping[str, np.ndarray], dimension: int) -> SpanVectors:
    """The span vectors of ``plan``, each looked up by its text hash in ``vectors``.

    Filled row by row into float16: stacking float32 first would need twice the memory of
    the result (8.6 GB more at 10^6 passages).
    """
    stacked = np.empty((len(plan.keys), dimension), np.float16)
    for row, key in enumerate(plan.keys):
        stacked[row] = vectors[key]
    return SpanVectors(
        stacked, np.asarray(plan.ptr, dtype=np.int64), np.asarray(plan.bounds, dtype=np.int32).reshape(-1, 2)
    )
