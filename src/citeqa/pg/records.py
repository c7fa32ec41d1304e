"""Passage and document records that stay in PostgreSQL: read per question, kept in a small cache.

:class:`RemotePassages` is the backend's ``chunks`` (a :class:`~collections.abc.Sequence` of
:class:`~citeqa.records.Chunk` by row) and :class:`RemoteDocuments` its ``documents`` (a
:class:`~collections.abc.Mapping` by document id). The serving process holds nothing per passage:
where a row lives (shard, pid) follows from its document's run of rows (:class:`~citeqa.pg.rows.RowMap`); the text, offsets and document id of passages are read when
asked for, one statement per shard for a batch of rows (:meth:`RemotePassages.fetch`: the
backend's ``passages``, with which the retriever reads a question's hits at once). A document's record is read when a citation or a caller asks for it.
Iterating either reads everything, in blocks: what ``citeqa eval`` does, not answering.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from citeqa.errors import IndexMissingError
from citeqa.messages import Said
from citeqa.records import Chunk, Document, from_dict

if TYPE_CHECKING:
    from citeqa.pg.rows import RowMap
    from citeqa.pg.shards import Shard, Shards

K = TypeVar("K")
V = TypeVar("V")

#: The passage columns a read returns (after pid).
PASSAGE_COLUMNS = 'chunk_id, doc_id, start, "end", text, lang'  # Chunk's fields, in order
#: Passages and documents kept after use: a few questions' candidates, a few answers' documents.
PASSAGE_CACHE = 4096
DOCUMENT_CACHE = 256
#: Rows read per statement when a caller iterates every passage.
_BLOCK = 1000


class _Cache(Generic[K, V]):
    """A bounded, thread-safe least-recently-used map."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class RemotePassages(Sequence[Chunk]):
    """The passages of one generation by row; a row's record is read from its shard when needed."""

    def __init__(self, shards: Shards, where: RowMap, generation: int) -> None:
        self.shards = shards
        self.where = where  # row <-> (shard, pid), held per document
        self.generation = generation
        self.cache: _Cache[int, Chunk] = _Cache(PASSAGE_CACHE)
        #: passage records read from the shards so far
        self.read = 0

    def __len__(self) -> int:
        return len(self.where)

    @overload
    def __getitem__(self, row: int) -> Chunk: ...
    @overload
    def __getitem__(self, row: slice) -> Sequence[Chunk]: ...
    def __getitem__(self, row: int | slice) -> Chunk | Sequence[Chunk]:
        if isinstance(row, slice):
            return self.fetch(range(len(self))[row])
        if not -len(self) <= row < len(self):
            raise IndexError(row)
        row = row % len(self)
        found = self.cache.get(row)
        return found if found is not None else self.fetch([row])[0]

    def __iter__(self) -> Iterator[Chunk]:
        for first in range(0, len(self), _BLOCK):
            yield from self.fetch(range(first, min(first + _BLOCK, len(self))))

    def fetch(self, rows: Iterable[int]) -> list[Chunk]:
        """The records of ``rows`` in that order, those not cached read in one statement per shard."""
        rows = [int(r) for r in rows]
        found = {r: c for r in rows if (c := self.cache.get(r)) is not None}
        missing = [r for r in rows if r not in found]
        wanted: dict[int, list[tuple[int, int]]] = {}
        if missing:
            shard_of, pid_of = self.where.locate(missing)
            for r, s, p in zip(missing, shard_of.tolist(), pid_of.tolist()):
                wanted.setdefault(s, []).append((r, p))
        if wanted:
            chosen = [self.shards.items[i] for i in sorted(wanted)]
            parts = self.shards.each(lambda s: _passages(s, [p for _, p in wanted[s.number]]), chosen)
            for shard, part in zip(chosen, parts):
                by_pid = {p[0]: p[1:] for p in part}
                for r, pid in wanted[shard.number]:
                    record = by_pid.get(pid)
                    if record is None:
                        raise _gone(self.generation, shard)
                    found[r] = Chunk(*record)
                    self.cache.put(r, found[r])
                    self.read += 1
        return [found[r] for r in rows]


class RemoteDocuments(Mapping[str, Document]):
    """The documents of one generation by id (ids known at open); a record is read when asked for."""

    def __init__(self, shards: Shards, doc_ids: Sequence[str], generation: int) -> None:
        from citeqa.pg.shards import shard_of

        self.shards = shards
        self._ids = {d: shard_of(d, shards.count) for d in doc_ids}
        self.generation = generation
        self.cache: _Cache[str, Document] = _Cache(DOCUMENT_CACHE)

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._ids

    def __getitem__(self, doc_id: str) -> Document:
        if doc_id not in self._ids:
            raise KeyError(doc_id)
        found = self.cache.get(doc_id)
        if found is not None:
            return found
        shard = self.shards.items[self._ids[doc_id]]
        row = shard.read(
            Said("doing_document"),
            lambda conn: conn.execute(
                "SELECT record FROM citeqa_documents WHERE doc_id = %(d)s AND born <= %(gen)s AND died > %(gen)s",
                {"d": doc_id, "gen": self.generation},
            ).fetchone(),
        )
        if row is None:
            raise _gone(self.generation, shard)
        document = from_dict(Document, row[0])
        self.cache.put(doc_id, document)
        return document


def _passages(shard: Shard, pids: list[int]) -> list[tuple[Any, ...]]:
    sql = f"SELECT pid, {PASSAGE_COLUMNS} FROM citeqa_passages WHERE pid = ANY(%s)"
    return shard.read(Said("doing_passages"), lambda conn: conn.execute(sql, (pids,)).fetchall())


def _gone(generation: int, shard: Shard) -> IndexMissingError:
    return IndexMissingError(
        f"postgres {shard.name} no longer holds generation {generation} (two newer ones were published); "
        "reload or restart to answer from the live one"
    )


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
