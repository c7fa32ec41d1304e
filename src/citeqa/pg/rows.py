"""Where each passage row of a generation lives, held per document instead of per passage.

A publish gives a document's passages consecutive pids on its shard, in the manifest's order
(:func:`citeqa.pg.publish._insert`), and the backend numbers rows in that same order. So a
document's rows are one run ``first_row .. first_row + count`` and its pids one run
``first_pid .. first_pid + count`` on one shard: four integers per document locate every
passage, both ways, with no map per passage (before: a ``(shard, pid) -> row`` dict, the chunk
ids and a ``(shard, pid, number)`` per span, ~0.8 KB per passage at open).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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
        rows: np.ndarray = self.first_rows[doc] + (pids - self.first_pids[doc])
        return rows
