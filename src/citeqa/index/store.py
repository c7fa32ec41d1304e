"""The index folder on disk: atomic generations, checksums, and loading.

Layout::

    index/
      CURRENT              name of the live generation (replaced atomically)
      g-<time>-<pid>/      one complete generation
        manifest.json      see manifest.py
        documents.jsonl    every document's text, title, language, pages and sections
        chunks.jsonl       passages in vector order
        dense.faiss        FAISS inner-product index over normalised vectors
        bm25/              bm25s arrays (numpy, no pickle) and vocabulary (JSON)
        terms/             every passage's BM25 term ids and each term's document frequency (terms.py)
        spans/             span vectors (spans.py)

A new generation is written completely beside the live one, then ``CURRENT`` is
replaced with ``os.replace``: a crash at any moment leaves the previous index usable.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citeqa.errors import IndexCorruptError, IndexMissingError, IndexStoreError
from citeqa.index.backends import (
    HNSW_EF_SEARCH,
    LexicalScorer,
    SavedBM25,
    dense_search,
    lexical_idf,
    lexical_scores,
    lexical_search,
)
from citeqa.index.manifest import REBUILD_HINT, Manifest, read_manifest, write_manifest
from citeqa.index.spans import SPAN_DIR, SpanVectors
from citeqa.index.terms import TERMS_DIR, Terms
from citeqa.messages import Said
from citeqa.records import Chunk, Document, from_dict, sha256_file, to_dict

if TYPE_CHECKING:  # both load only when used
    import bm25s
    import faiss

CURRENT = "CURRENT"
LOCK = ".lock"
DOCUMENTS = "documents.jsonl"
CHUNKS = "chunks.jsonl"
DENSE = "dense.faiss"
BM25_DIR = "bm25"


@dataclass(frozen=True)
class IndexData:
    """Everything one generation holds, in memory; the
    :class:`~citeqa.qa.backend.RetrievalBackend` that answering uses."""

    manifest: Manifest
    documents: dict[str, Document]
    chunks: tuple[Chunk, ...]
    dense: faiss.Index
    lexical: LexicalScorer
    terms: Terms
    spans: SpanVectors | None = None

    @property
    def model(self) -> str:
        """The embedding model that made the vectors (the manifest's)."""
        return self.manifest.model

    def dense_search(self, vector: np.ndarray, n: int) -> dict[int, float]:
        """Cosine similarity of the ``n`` nearest passages (chunk index -> score)."""
        return dense_search(self.dense, vector, n)

    def lexical_scores(self, terms: Sequence[str]) -> np.ndarray | None:
        """BM25 score of every passage for ``terms``; None when no term is indexed."""
        return lexical_scores(self.lexical, self.terms, terms)

    def lexical_search(self, terms: Sequence[str], n: int) -> dict[int, float]:
        """BM25 score of the ``n`` best passages for ``terms`` (chunk index -> score), positive scores only."""
        return lexical_search(self.lexical, self.terms, terms, n)

    def lexical_idf(self) -> dict[str, float]:
        """IDF of every indexed term, for weighting words when answers are scored."""
        return lexical_idf(self.terms, len(self.chunks))

    def majority_lang(self, default: str = "en") -> str:
        """The language most passages are in (``default`` for an empty index)."""
        counts = self.passage_langs()
        return counts.most_common(1)[0][0] if counts else default

    def passages(self, rows: Sequence[int]) -> list[Chunk]:
        """The passages of ``rows``, in that order."""
        return [self.chunks[i] for i in rows]

    def passage_langs(self) -> Counter[str]:
        """How many passages are in each language."""
        return Counter(c.lang for c in self.chunks)

    def document_langs(self) -> Counter[str]:
        """How many documents are in each language."""
        return Counter(d.lang for d in self.documents.values())

    def first_passage(self, lang: str) -> Chunk | None:
        """The first passage (by row) in ``lang``, None when there is none."""
        return next((c for c in self.chunks if c.lang == lang), None)


def current_generation(index_dir: Path) -> Path | None:
    """The folder of the live generation, or None when there is no index."""
    pointer = index_dir / CURRENT
    try:
        name = pointer.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IndexCorruptError(f"cannot read {pointer} ({exc.strerror}); {REBUILD_HINT}") from exc
    except UnicodeDecodeError as exc:
        raise IndexCorruptError(f"{pointer} is damaged (not text); {REBUILD_HINT}") from exc
    if not name or "/" in name or name.startswith(".") or not name.isprintable():
        raise IndexCorruptError(f"{pointer} is damaged; {REBUILD_HINT}")
    return index_dir / name


def load_index(index_dir: Path) -> IndexData:
    """Open the live generation, verifying every file against the manifest.

    A build that finishes meanwhile deletes the generation being read; then the
    new one is read instead of reporting the old one as damaged.
    """
    attempts = 3
    for attempt in range(attempts):
        folder = current_generation(index_dir)
        if folder is None:
            raise IndexMissingError(f"no index in {index_dir}; run `citeqa index` first")
        try:
            return _load_generation(folder)
        except IndexCorruptError:
            if attempt == attempts - 1 or current_generation(index_dir) == folder:
                raise
    raise AssertionError("unreachable")


def _load_generation(folder: Path) -> IndexData:
    import faiss

    if not folder.is_dir():
        raise IndexCorruptError(f"index generation {folder.name} is missing; {REBUILD_HINT}")
    manifest = read_manifest(folder)
    verify_files(folder, manifest)
    try:
        documents = {d.doc_id: d for d in map(_document, _read_jsonl(folder / DOCUMENTS))}
        chunks = tuple(map(_chunk, _read_jsonl(folder / CHUNKS)))
    except (TypeError, KeyError, ValueError, AttributeError) as exc:
        raise IndexCorruptError(f"index records are malformed ({type(exc).__name__}); {REBUILD_HINT}") from exc
    try:
        dense = faiss.read_index(str(folder / DENSE))
        if manifest.ann == "hnsw":
            dense.hnsw.efSearch = HNSW_EF_SEARCH  # type: ignore[attr-defined]  # read_index gives the IndexHNSWFlat; an index built before a change of the setting follows it
        lexical = SavedBM25(folder / BM25_DIR)  # bm25s's files, read without importing bm25s
        spans = SpanVectors.load(folder / SPAN_DIR)
        terms = Terms.load(folder / TERMS_DIR)
    except Exception as exc:  # faiss raises RuntimeError, bm25s many kinds
        raise IndexCorruptError(f"index files cannot be read ({type(exc).__name__}); {REBUILD_HINT}") from exc
    _check_consistency(manifest, documents, chunks, dense, spans, terms)
    return IndexData(manifest, documents, chunks, dense, lexical, terms, spans)


def _check_consistency(
    manifest: Manifest,
    documents: dict[str, Document],
    chunks: tuple[Chunk, ...],
    dense: faiss.Index,
    spans: SpanVectors,
    terms: Terms,
) -> None:
    """The parts of a generation must agree with each other and with the manifest."""
    expected = [cid for d in manifest.documents for cid in d.chunk_ids]
    problems = []
    if [c.chunk_id for c in chunks] != expected:
        problems.append("chunk list differs from the manifest")
    if dense.ntotal != len(chunks) or dense.d != manifest.dimension:
        problems.append("vector count or dimension differs from the manifest")
    if (
        len(spans.ptr) != len(chunks) + 1
        or spans.vectors.shape != (int(spans.ptr[-1]), manifest.dimension)
        or len(spans.bounds) != len(spans.vectors)
    ):
        problems.append("span vectors differ from the passages")
    if terms.passages != len(chunks) or int(terms.ptr[-1]) != len(terms.ids) or len(terms.df) != len(terms.vocab):
        problems.append("passage terms differ from the passages")
    if set(documents) != {d.doc_id for d in manifest.documents}:
        problems.append("document list differs from the manifest")
    if problems:
        raise IndexCorruptError(f"index is inconsistent ({'; '.join(problems)}); {REBUILD_HINT}")


def file_digests(folder: Path) -> dict[str, str]:
    """sha256 of every file in a generation except the manifest, by relative path."""
    digests = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != "manifest.json":
            digests[path.relative_to(folder).as_posix()] = sha256_file(path)
    return digests


def verify_files(folder: Path, manifest: Manifest) -> None:
    """Raise IndexCorruptError when a file is missing, extra or altered."""
    found = file_digests(folder)
    if not manifest.files or not isinstance(manifest.files, dict):
        raise IndexCorruptError(f"manifest lists no files; {REBUILD_HINT}")
    extra = sorted(set(found) - set(manifest.files))
    if extra:
        raise IndexCorruptError(f"index file {extra[0]} is not in the manifest; {REBUILD_HINT}")
    for name, digest in manifest.files.items():
        if name not in found:
            raise IndexCorruptError(f"index file {name} is missing; {REBUILD_HINT}")
        if found[name] != digest:
            raise IndexCorruptError(f"index file {name} is damaged (checksum mismatch); {REBUILD_HINT}")


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        data = path.read_bytes()
        return [_loads(line) for line in data.splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # JSON decode errors are ValueErrors
        raise IndexCorruptError(f"{path.name} is unreadable ({type(exc).__name__}); {REBUILD_HINT}") from exc


try:  # orjson parses the records several times faster than json
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency
    _loads = json.loads


def _chunk(row: dict[str, Any]) -> Chunk:
    """A chunk record (the fields of :class:`Chunk`; unknown keys are ignored, like from_dict)."""
    return Chunk(row["chunk_id"], row["doc_id"], row["start"], row["end"], row["text"], row["lang"])


def _document(row: dict[str, Any]) -> Document:
    """A document record; only documents with pages or sections need the general decoder."""
    if row.get("pages") or row.get("sections"):
        return from_dict(Document, row)
    return Document(row["doc_id"], row["title"], row["text"], row["lang"], row["sha256"], row.get("kind", "txt"))


def stream_records(folder: Path, kind: str) -> Iterator[Chunk | Document]:
    """The chunk (``kind`` "chunks") or document ("documents") records of a generation folder, one line
    at a time in file order (a publish reads 10^6 passages without holding them)."""
    path, make = (folder / CHUNKS, _chunk) if kind == "chunks" else (folder / DOCUMENTS, _document)
    try:
        with path.open("rb") as fh:
            for line in fh:
                if line.strip():
                    yield make(_loads(line))
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
        raise IndexCorruptError(f"{path.name} is unreadable ({type(exc).__name__}); {REBUILD_HINT}") from exc


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_generation(
    index_dir: Path,
    manifest: Manifest,
    documents: list[Document],
    chunks: list[Chunk],
    dense: faiss.Index,
    lexical: bm25s.BM25,
    terms: Terms,
    spans: SpanVectors,
) -> Path:
    """Write a complete new generation, then make it live atomically."""
    import faiss

    index_dir.mkdir(parents=True, exist_ok=True)
    name = f"g-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{time.monotonic_ns() % 10**6}"
    tmp = index_dir / f".tmp-{name}"
    tmp.mkdir()
    try:
        _write_jsonl(tmp / DOCUMENTS, [to_dict(d) for d in documents])
        _write_jsonl(tmp / CHUNKS, [to_dict(c) for c in chunks])
        faiss.write_index(dense, str(tmp / DENSE))
        lexical.save(str(tmp / BM25_DIR), allow_pickle=False, show_progress=False)
        spans.save(tmp / SPAN_DIR)
        terms.save(tmp / TERMS_DIR)
        final = Manifest(**{**_fields(manifest), "files": file_digests(tmp)})
        write_manifest(tmp, final)
        _fsync_tree(tmp)
        os.replace(tmp, index_dir / name)
        _point_current(index_dir, name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    remove_stale(index_dir, keep=name)
    return index_dir / name


def _fields(manifest: Manifest) -> dict[str, Any]:
    return {f: getattr(manifest, f) for f in manifest.__dataclass_fields__}


def _point_current(index_dir: Path, name: str) -> None:
    tmp = index_dir / f".{CURRENT}.tmp-{os.getpid()}"
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, index_dir / CURRENT)
    _fsync_dir(index_dir)


def _fsync_tree(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            with path.open("rb") as fh:
                os.fsync(fh.fileno())
    _fsync_dir(folder)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_stale(index_dir: Path, keep: str) -> None:
    """Delete old generations and leftovers of interrupted builds."""
    for path in index_dir.iterdir():
        if path.name == keep or path.name in (CURRENT, LOCK, ".gitkeep"):
            continue
        if path.name.startswith(("g-", ".tmp-g-", f".{CURRENT}.tmp-")):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


@contextlib.contextmanager
def write_lock(index_dir: Path, wait: bool = True) -> Iterator[None]:
    """Hold the index's write lock, so two builds never interleave."""
    index_dir.mkdir(parents=True, exist_ok=True)
    with (index_dir / LOCK).open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError as exc:
            raise IndexStoreError(Said("index_busy", folder=index_dir)) from exc
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
