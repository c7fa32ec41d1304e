"""Where each passage row of a generation lives, held per document instead of per passage.

A publish gives a document's passages consecutive pids on its shard, in the manifest's order
(:func:`citeqa.pg.publish._insert`), and the backend numbers rows in that same order. So a
document's rows are one run ``first_row .. first_row + count`` and its pids one run
``first_pid .. first_pid + count`` on one shard: four integers per document locate every
passage, both ways, with no map per passage (before: a ``(shard, pid) -> row`` dict, the chunk
ids and a ``(shard, pid, number)`` per span, ~0.8 KB per passage at open).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

import numpy as np

if TYPE_CHECKING:
    from citeqa.pg.records import RemotePassages


class RowMap:
    """Rows <-> (shard, pid) of one generation, from one run of rows and pids per document.

    ``counts``, ``shards`` and ``first_pids``: per document, in the manifest's order."""

    def __init__(self, counts: np.ndarray, shards: np.ndarray, first_pids: np.ndarray, shard_count: int) -> None:
        self.counts = np.asarray(counts, dtype=np.int64)
        self.shards = np.asarray(shards, dtype=np.int32)
        self.first_pids = np.asarray(first_pids, dtype=np.int64)
        self.first_rows = np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64)  # len docs + 1
        #: per shard: its documents sorted by first pid (for pid -> row)
        self._by_pid: list[tuple[np.ndarray, np.ndarray]] = []
        for shard in range(shard_count):
            docs = np.flatnonzero((self.shards == shard) & (self.counts > 0))
            docs = docs[np.argsort(self.first_pids[docs], kind="stable")]
            self._by_pid.append((self.first_pids[docs], docs))

    def __len__(self) -> int:
        return int(self.first_rows[-1])

    def documents(self, rows: np.ndarray) -> np.ndarray:
        """The document (its index in the manifest) of each row."""
        return np.searchsorted(self.first_rows, rows, side="right") - 1

    def locate(self, rows: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Shard and pid of each row."""
        rows = np.asarray(rows, dtype=np.int64)
        docs = self.documents(rows)
        return self.shards[docs], self.first_pids[docs] + (rows - self.first_rows[docs])

    def rows(self, shard: int, pids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The row of each pid of ``shard`` (KeyError for a pid no document of the generation holds)."""
        pids = np.asarray(pids, dtype=np.int64)
        starts, docs = self._by_pid[shard]
        at = np.searchsorted(starts, pids, side="right") - 1
        if len(pids) and (
            at.min() < 0 or np.any(pids - starts[np.maximum(at, 0)] >= self.counts[docs[np.maximum(at, 0)]])
        ):
            raise KeyError(f"a pid of shard {shard + 1} outside the generation")
        doc = docs[at]
        return self.first_rows[doc] + (pids - self.first_pids[doc])


class PassageIds(Sequence[str]):
    """A document's chunk ids in a manifest read from PostgreSQL: its count held, the ids read
    from its passages when asked for (the corpus table needs only the count)."""

    def __init__(self, passages: RemotePassages, first_row: int, count: int) -> None:
        self._passages = passages
        self._first = first_row
        self._count = count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return tuple(self._read(range(self._count)[i]))
        if not -self._count <= i < self._count:
            raise IndexError(i)
        return self._read([i % self._count])[0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read(range(self._count)))

    def _read(self, numbers: Sequence[int]) -> list[str]:
        return [c.chunk_id for c in self._passages.fetch(self._first + n for n in numbers)]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(other) != self._count:
            return False
        return tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"PassageIds(rows {self._first}..{self._first + self._count})"
