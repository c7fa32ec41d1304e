"""A vector for every candidate answer span of every passage, stored beside the passage vectors.

Spans are the sentences and clauses of :func:`citeqa.ingest.sentences.span_bounds`; the
answer scorer compares each with the question (a sentence-level meaning signal that costs a
dot product at question time instead of an encoder call per span). Stored as three arrays:
``vectors`` (float16: half the memory, cosines move by < 1e-3), ``ptr`` (the first row of each
passage, CSR style, ``len(chunks) + 1``) and ``bounds`` (span offsets inside the passage).
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
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
        return span_row(self.ptr, self.bounds, chunk_row, number, start, end)

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

    def text_rows(self, chunks: Sequence[Chunk]) -> dict[str, int]:
        """Span text hash -> its first row, for reuse by the next build (rows, not vectors: only the
        vectors of spans that reappear in new passages are read)."""
        out: dict[str, int] = {}
        ptr = np.asarray(self.ptr).tolist()
        bounds = np.asarray(self.bounds).tolist()
        for i, chunk in enumerate(chunks):
            for row in range(ptr[i], ptr[i + 1]):
                a, b = bounds[row]
                out.setdefault(sha256_text(chunk.text[a:b]), row)
        return out


@dataclass(frozen=True)
class SpanPlan:
    """The spans of some passages: where they are, where their vectors come from, and the texts still to embed.

    The spans of a passage kept from the previous index are that index's rows (``copied``:
    runs of (first row here, first row there, row count)), not split or hashed again; every
    other span is looked up by its text hash (``keys``; None on copied rows).
    """

    bounds: np.ndarray  # (n, 2) int32, offsets inside the passage
    keys: list[str | None]  # sha256 of each span's text
    ptr: list[int]
    todo: dict[str, str]  # text hash -> text, for spans without a known vector
    copied: list[tuple[int, int, int]] = field(default_factory=list)


def plan_spans(
    chunks: Sequence[Chunk],
    known: Container[str] = (),
    sources: Sequence[int | None] | None = None,
    previous: SpanVectors | None = None,
) -> SpanPlan:
    """Every span of ``chunks``; those whose text is not in ``known`` are to be embedded.

    Chunk ``i`` with ``sources[i]`` not None is that row of ``previous``: its spans are copied.
    """
    pieces: list[np.ndarray] = []
    keys: list[str | None] = []
    ptr = [0]
    copied: list[tuple[int, int, int]] = []
    todo: dict[str, str] = {}
    for i, chunk in enumerate(chunks):
        source = sources[i] if sources is not None else None
        if source is not None and previous is not None:
            first, last = int(previous.ptr[source]), int(previous.ptr[source + 1])
            pieces.append(np.asarray(previous.bounds[first:last], dtype=np.int32))
            keys.extend([None] * (last - first))
            _add_run(copied, ptr[-1], first, last - first)
        else:
            found = [(at.start, at.end) for at in span_bounds(chunk.text)]
            pieces.append(np.asarray(found, dtype=np.int32).reshape(-1, 2))
            for a, b in found:
                key = sha256_text(chunk.text[a:b])
                keys.append(key)
                if key not in known:
                    todo[key] = chunk.text[a:b]
        ptr.append(len(keys))
    bounds = np.concatenate(pieces) if pieces else np.zeros((0, 2), dtype=np.int32)
    return SpanPlan(bounds, keys, ptr, todo, copied)


def _add_run(runs: list[tuple[int, int, int]], here: int, there: int, count: int) -> None:
    """Append a run of copied rows, merged with the last one when both continue it."""
    if runs and runs[-1][0] + runs[-1][2] == here and runs[-1][1] + runs[-1][2] == there:
        runs[-1] = (runs[-1][0], runs[-1][1], runs[-1][2] + count)
    elif count:
        runs.append((here, there, count))


def assemble_spans(
    plan: SpanPlan, vectors: Mapping[str, np.ndarray], dimension: int, previous: SpanVectors | None = None
) -> SpanVectors:
    """The span vectors of ``plan``: copied rows from ``previous``, the others looked up by text hash in ``vectors``.

    Filled row by row into float16: stacking float32 first would need twice the memory of
    the result (8.6 GB more at 10^6 passages).
    """
    stacked = np.empty((len(plan.keys), dimension), np.float16)
    for row, key in enumerate(plan.keys):
        if key is not None:
            stacked[row] = vectors[key]
    for here, there, count in plan.copied:
        stacked[here : here + count] = previous.vectors[there : there + count]  # type: ignore[union-attr]  # rows are copied only from a previous index
    return SpanVectors(stacked, np.asarray(plan.ptr, dtype=np.int64), plan.bounds.reshape(-1, 2))


def span_row(ptr: np.ndarray, bounds: np.ndarray, chunk_row: int, number: int, start: int, end: int) -> int | None:
    """The row of span ``number`` of passage ``chunk_row`` in span arrays laid out by ``ptr`` (each
    passage's first row) and ``bounds`` (offsets inside the passage), if it has the given offsets."""
    if not 0 <= chunk_row < len(ptr) - 1:
        return None
    row = int(ptr[chunk_row]) + number
    if row >= ptr[chunk_row + 1] or tuple(bounds[row]) != (start, end):
        return None
    return row
