"""Span vectors that stay in PostgreSQL: offsets in memory, vectors read per question.

The answer scorer asks for a handful of spans per question (those of the retrieved passages):
:meth:`RemoteSpans.row` checks a span's offsets as :class:`~citeqa.index.spans.SpanVectors`
does, and :meth:`RemoteSpans.similarities` reads the chosen rows' float16 vectors from their
shards (``halfvec``, the local index's own values) and computes the cosines the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from citeqa.index.spans import span_row
from citeqa.messages import Said

if TYPE_CHECKING:
    from citeqa.pg.rows import RowMap
    from citeqa.pg.shards import Shard, Shards

_SQL = (
    "SELECT s.pid, s.number, s.embedding FROM citeqa_spans s"
    " JOIN unnest(%s::int8[], %s::int4[]) AS w(pid, number) ON s.pid = w.pid AND s.number = w.number"
)


class RemoteSpans:
    """Span offsets of one generation (``ptr``/``bounds`` as in SpanVectors); where a span's vector
    lives follows from its row: its passage's shard and pid (``where``), its number in the passage."""

    def __init__(self, ptr: np.ndarray, bounds: np.ndarray, where: RowMap, shards: Shards):
        self.ptr = ptr
        self.bounds = bounds
        self.where = where
        self.shards = shards

    def keys(self, rows: Sequence[int]) -> list[tuple[int, int, int]]:
        """(shard, pid, number) of each span row."""
        spans = np.asarray(rows, dtype=np.int64)
        passages = np.searchsorted(self.ptr, spans, side="right") - 1
        shard, pid = self.where.locate(passages)
        return list(zip(shard.tolist(), pid.tolist(), (spans - self.ptr[passages]).tolist()))

    def row(self, chunk_row: int, number: int, start: int, end: int) -> int | None:
        """The row of span ``number`` of passage ``chunk_row`` if it has the given passage offsets."""
        return span_row(self.ptr, self.bounds, chunk_row, number, start, end)

    def similarities(self, rows: Sequence[int], query: np.ndarray) -> np.ndarray:
        """Cosine of each span row to a normalised query vector (vectors read from the shards)."""
        if not rows:
            return np.zeros(0)
        keys = self.keys(rows)
        wanted: dict[int, list[tuple[int, int]]] = {}
        for shard, pid, number in keys:
            wanted.setdefault(shard, []).append((pid, number))
        chosen = [self.shards.items[i] for i in sorted(wanted)]
        found = self.shards.each(lambda s: _vectors(s, wanted[s.number]), chosen)
        vectors = {(s.number, pid, number): v for s, part in zip(chosen, found) for pid, number, v in part}
        matrix = np.stack([vectors[key] for key in keys])  # float16, in the order asked, as locally
        return np.asarray(matrix, dtype=np.float32) @ query.astype(np.float32)


def _vectors(shard: Shard, keys: list[tuple[int, int]]) -> list[tuple[int, int, np.ndarray]]:
    def work(conn: Any) -> list[tuple[Any, ...]]:
        with conn.cursor(binary=True) as cur:
            rows: list[tuple[Any, ...]] = cur.execute(_SQL, ([k[0] for k in keys], [k[1] for k in keys])).fetchall()
            return rows

    found = shard.read(Said("doing_spans"), work)
    return [(pid, number, vector.to_numpy()) for pid, number, vector in found]
