"""What a publish reads of a local index generation: in memory, or streamed from its folder.

``citeqa index --backend postgresql://...`` publishes from the generation folder
(:class:`FolderSource`): the manifest is read whole (every chunk id), the terms and span vectors
are memory-mapped (:mod:`citeqa.index.terms`, :mod:`citeqa.index.spans`), and passages, documents
and passage vectors are read a batch at a time, so the writer's memory does not grow with the
collection's texts and vectors (docs/scale.md measures it). :class:`MemorySource` serves an
:class:`~citeqa.index.store.IndexData` already loaded (tests, benchmarks).

Rows are the local index's: a document's passages are consecutive rows, in the manifest's order
(the store checks it at load), so a document's rows follow from its passage count.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from citeqa.errors import IndexCorruptError, IndexMissingError
from citeqa.index.manifest import REBUILD_HINT, Manifest, read_manifest
from citeqa.records import Chunk, Document

if TYPE_CHECKING:
    from citeqa.index.spans import SpanVectors
    from citeqa.index.store import IndexData
    from citeqa.index.terms import Terms


class Source:
    """A generation as a publish reads it: the manifest, the terms and span vectors (indexable by row),
    and passages, documents and vectors on demand."""

    manifest: Manifest
    terms: Terms
    spans: SpanVectors | None

    def __init__(self, manifest: Manifest, terms: Terms, spans: SpanVectors | None) -> None:
        self.manifest, self.terms, self.spans = manifest, terms, spans
        counts = [len(e.chunk_ids) for e in manifest.documents]
        #: each manifest document's first row; the last item: the number of passages
        self.first_rows = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)

    @property
    def model(self) -> str:
        return self.manifest.model

    @property
    def passages(self) -> int:
        return int(self.first_rows[-1])

    def rows(self, documents: Collection[int]) -> np.ndarray:
        """The rows of the manifest documents numbered ``documents``, ascending."""
        chosen = sorted(documents)
        runs = [np.arange(self.first_rows[i], self.first_rows[i + 1], dtype=np.int64) for i in chosen]
        return np.concatenate(runs) if runs else np.zeros(0, np.int64)

    def documents(self, doc_ids: Collection[str]) -> Iterator[Document]:
        """The records of ``doc_ids`` (in the source's order)."""
        raise NotImplementedError

    def chunks(self, rows: np.ndarray) -> Iterator[Chunk]:
        """The passages of ``rows`` (ascending), in that order."""
        raise NotImplementedError

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of ``rows`` (ascending; a batch), one per row."""
        raise NotImplementedError


class MemorySource(Source):
    """A loaded :class:`~citeqa.index.store.IndexData`."""

    def __init__(self, data: IndexData) -> None:
        super().__init__(data.manifest, data.terms, data.spans)
        self.data = data

    def documents(self, doc_ids: Collection[str]) -> Iterator[Document]:
        return (self.data.documents[d] for d in doc_ids)

    def chunks(self, rows: np.ndarray) -> Iterator[Chunk]:
        return (self.data.chunks[int(r)] for r in rows)

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        if not len(rows):
            return np.zeros((0, self.manifest.dimension), np.float32)
        return np.asarray(self.data.dense.reconstruct_batch(np.asarray(rows, dtype=np.int64)), dtype=np.float32)


class FolderSource(Source):
    """A generation folder, its files checked against the manifest first; records read line by line and
    vectors read from the FAISS file's float32 block (the last ``passages x dimension x 4`` bytes
    of a flat or HNSW-flat index: FAISS writes the stored vectors last)."""

    def __init__(self, folder: Path) -> None:
        from citeqa.index.spans import SPAN_DIR, SpanVectors
        from citeqa.index.store import DENSE, verify_files
        from citeqa.index.terms import TERMS_DIR, Terms

        if not folder.is_dir():
            raise IndexMissingError(f"no index generation at {folder}; run `citeqa index` first")
        manifest = read_manifest(folder)
        verify_files(folder, manifest)
        super().__init__(manifest, Terms.load(folder / TERMS_DIR), SpanVectors.load(folder / SPAN_DIR))
        self.folder = folder
        self._dense = folder / DENSE
        if self._dense.stat().st_size < self.passages * 4 * manifest.dimension or self.terms.passages != self.passages:
            raise IndexCorruptError(
                f"index is inconsistent (vectors or terms differ from the manifest); {REBUILD_HINT}"
            )

    def documents(self, doc_ids: Collection[str]) -> Iterator[Document]:
        from citeqa.index.store import stream_records

        wanted = set(doc_ids)
        for record in stream_records(self.folder, "documents"):
            if record.doc_id in wanted:
                yield record  # type: ignore[misc]  # "documents" yields Document records

    def chunks(self, rows: np.ndarray) -> Iterator[Chunk]:
        from citeqa.index.store import stream_records

        wanted = iter(np.asarray(rows).tolist())
        target = next(wanted, None)
        for row, record in enumerate(stream_records(self.folder, "chunks")):
            if target is None:
                return
            if row == target:
                yield record  # type: ignore[misc]  # "chunks" yields Chunk records
                target = next(wanted, None)

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        return stored_vectors(self._dense, self.passages, self.manifest.dimension, rows)


def stored_vectors(path: Path, count: int, dimension: int, rows: np.ndarray) -> np.ndarray:
    """The float32 vectors of ``rows`` (ascending) from the FAISS file ``path`` of a flat or HNSW-flat
    index of ``count`` vectors: FAISS writes the stored vectors last, so they are the file's last
    ``count x dimension x 4`` bytes; only the span of rows asked for is read."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows):
        return np.zeros((0, dimension), np.float32)
    row_bytes = 4 * dimension
    offset = path.stat().st_size - count * row_bytes
    low, high = int(rows[0]), int(rows[-1]) + 1
    with path.open("rb") as fh:
        fh.seek(offset + low * row_bytes)
        block = np.frombuffer(fh.read((high - low) * row_bytes), dtype=np.float32)
    picked: np.ndarray = block.reshape(high - low, dimension)[rows - low].copy()
    return picked
