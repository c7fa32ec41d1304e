"""Incremental indexing: embed only what changed, then swap the new index in.

Documents are compared by the sha256 of their file. Passages whose text was embedded
before keep their vectors, so editing one file re-embeds only that file's new passages
and a corpus with no change does no work at all.

The work that can run elsewhere goes through one seam, :class:`BuildSteps`: reading and
chunking files (:meth:`BuildSteps.read`) and embedding texts (:meth:`BuildSteps.encode`,
called once per build with every new passage and span text). :class:`LocalSteps` does both
in this process, ``citeqa.index.ray_build`` on Ray. Everything else (what changed, reuse by
hash, the manifest, BM25, FAISS, the atomic write) happens here, the same for both.
"""

from __future__ import annotations

import time
from collections import ChainMap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from citeqa.embedding import Embedder
from citeqa.errors import CorpusError, DocumentError, IndexFormatError, IndexMismatchError, IndexStoreError
from citeqa.index.backends import all_vectors, ann_kind, build_dense, build_lexical
from citeqa.index.manifest import REBUILD_HINT, DocEntry, Manifest, check_backend, library_versions, now_iso
from citeqa.index.spans import assemble_spans, plan_spans
from citeqa.index.store import IndexData, current_generation, load_index, remove_stale, write_generation, write_lock
from citeqa.ingest.chunking import ChunkerSettings, chunk_document
from citeqa.ingest.documents import Loader, Skipped, corpus_entries, read_entry
from citeqa.ingest.formats import suffix_list
from citeqa.records import Chunk, Document, sha256_text


@dataclass(frozen=True)
class IndexReport:
    """What one run of ``citeqa index`` did."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    embedded: int = 0
    reused: int = 0
    chunks: int = 0
    seconds: float = 0.0
    up_to_date: bool = False
    documents: tuple[str, ...] = field(default=())
    #: Why the whole index was rebuilt without ``--rebuild`` (an older index format), or "".
    rebuilt_because: str = ""


@dataclass(frozen=True)
class CorpusRead:
    """The corpus as a build reads it: documents, skipped files, and new passages.

    ``chunks`` holds the passages of every document that is new or changed (by sha256)
    since the index being updated; unchanged documents keep their indexed passages.
    """

    documents: tuple[Document, ...]
    skipped: tuple[Skipped, ...]
    chunks: Mapping[str, list[Chunk]]


class BuildSteps(Protocol):
    """Where a build reads, chunks and embeds: this process, or a Ray cluster."""

    def read(self, corpus: Path, settings: ChunkerSettings, indexed: Mapping[str, str]) -> CorpusRead:
        """Read ``corpus``; chunk each document whose sha256 differs from ``indexed`` (doc_id -> sha256)."""
        ...

    def encode(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 passage vector per text, in order."""
        ...


class LocalSteps:
    """Read, chunk and embed in this process, with ``embedder``."""

    def __init__(self, embedder: Embedder, progress: bool = False, load: Loader | None = None) -> None:
        self.embedder = embedder
        self.progress = progress
        self.load = load  # how one file is read (None: in this process, without a budget)

    def read(self, corpus: Path, settings: ChunkerSettings, indexed: Mapping[str, str]) -> CorpusRead:
        return collect_read(
            read_file(
                corpus, path, unconfirmed, settings, indexed.get(path.relative_to(corpus).as_posix()), load=self.load
            )
            for path, unconfirmed in corpus_entries(corpus)
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.embedder.encode(texts, progress=self.progress)


#: One file as :func:`read_file` reads it: the document (or why it is skipped), its passages
#: when it needs chunking, and the reason when it has too many passages to be indexed.
FileRead = tuple[Document | Skipped, list[Chunk] | None, Skipped | None]


def read_file(
    corpus: Path,
    path: Path,
    unconfirmed: bool,
    settings: ChunkerSettings,
    indexed_sha: str | None,
    default_lang: str = "en",
    load: Loader | None = None,
) -> FileRead:
    """Read one file of ``corpus`` (with ``load``) and, unless its sha256 is ``indexed_sha``, chunk it."""
    entry = read_entry(corpus, path, unconfirmed, default_lang, load)
    if isinstance(entry, Skipped) or entry.sha256 == indexed_sha:  # an indexed document was checked then
        return entry, None, None
    try:
        return entry, chunk_document(entry, settings, checked=True), None
    except DocumentError as exc:
        return entry, None, Skipped(entry.doc_id, str(exc))


def collect_read(results: Iterable[FileRead]) -> CorpusRead:
    """:func:`read_file` results in corpus order as one CorpusRead; documents with too many
    passages are skipped after the unreadable files."""
    documents: list[Document] = []
    skipped: list[Skipped] = []
    refused: list[Skipped] = []
    chunks: dict[str, list[Chunk]] = {}
    for entry, passages, too_many in results:
        if too_many is not None:
            refused.append(too_many)
        elif isinstance(entry, Skipped):
            skipped.append(entry)
        else:
            documents.append(entry)
            if passages is not None:
                chunks[entry.doc_id] = passages
    return CorpusRead(tuple(documents), tuple(skipped + refused), chunks)


def update_index(
    corpus: Path,
    index_dir: Path,
    embedder: Embedder,
    chunker: ChunkerSettings | None = None,
    *,
    rebuild: bool = False,
    progress: bool = False,
    steps: BuildSteps | None = None,
) -> IndexReport:
    """Bring the index in ``index_dir`` up to date with ``corpus``.

    ``embedder`` names the model (its ``model_id`` and ``backend`` go into the manifest);
    ``steps`` reads, chunks and embeds (default: :class:`LocalSteps` with ``embedder``).
    Whatever fails before the new generation is switched in leaves the live index as it was.
    """
    started = time.perf_counter()
    steps = steps if steps is not None else LocalSteps(embedder, progress)
    with write_lock(index_dir):
        rebuilt_because = ""
        try:
            previous = None if rebuild else _previous(index_dir, embedder, chunker)
        except IndexFormatError as exc:  # written by another citeqa: its vectors cannot be reused, the corpus can
            previous, rebuilt_because = None, str(exc).split(";")[0]
        settings = chunker if chunker is not None else (previous.manifest.chunker if previous else ChunkerSettings())
        indexed = {d.doc_id: d.sha256 for d in previous.manifest.documents} if previous else {}
        read = steps.read(corpus, settings, indexed)
        if not read.documents:
            raise CorpusError(
                f"no readable document in {corpus} ({len(read.skipped)} skipped); add {suffix_list()} files"
            )
        plan = _plan(read.documents, previous)
        if previous is not None and not (plan.added or plan.changed or plan.removed):
            live = current_generation(index_dir)
            if live is not None:  # leftovers of a build that was killed before it finished
                remove_stale(index_dir, keep=live.name)
            return IndexReport(
                unchanged=plan.unchanged,
                skipped=read.skipped,
                up_to_date=True,
                chunks=len(previous.chunks),
                documents=plan.unchanged,
                seconds=time.perf_counter() - started,
            )
        chunks = _passages(read, previous)
        known = _known_vectors(previous)
        keys = [sha256_text(c.text) for c in chunks]
        todo = {k: c.text for k, c in zip(keys, chunks) if k not in known}
        known_spans = previous.spans.texts_and_vectors(previous.chunks) if previous and previous.spans else {}
        span_plan = plan_spans(chunks, known_spans)
        fresh = _encode(steps, {**span_plan.todo, **todo})  # one call: a worker pool starts once
        vectors = np.stack([known[k] if k in known else fresh[k] for k in keys]).astype(np.float32)
        spans = assemble_spans(span_plan, ChainMap(known_spans, fresh), vectors.shape[1])
        manifest = _manifest(read.documents, chunks, settings, embedder, vectors.shape[1], previous)
        lexical = build_lexical(chunks)  # first: its tokenising peak then comes before the graph exists
        write_generation(
            index_dir,
            manifest,
            list(read.documents),
            chunks,
            vectors,
            build_dense(vectors, manifest.ann),
            lexical,
            spans,
        )
    return IndexReport(
        plan.added,
        plan.changed,
        plan.removed,
        plan.unchanged,
        read.skipped,
        embedded=len(todo),
        reused=len(chunks) - len(todo),
        chunks=len(chunks),
        seconds=time.perf_counter() - started,
        documents=tuple(d.doc_id for d in read.documents),
        rebuilt_because=rebuilt_because,
    )


def _encode(steps: BuildSteps, todo: dict[str, str]) -> dict[str, np.ndarray]:
    """Vectors of ``todo`` (text hash -> text) from one call of ``steps.encode``, by text hash."""
    if not todo:
        return {}
    items = sorted(todo.items())
    fresh = np.asarray(steps.encode([text for _, text in items]))
    if fresh.ndim != 2 or len(fresh) != len(items):
        raise IndexStoreError(f"the embedder returned vectors of shape {fresh.shape} for {len(items)} texts")
    return {k: fresh[i] for i, (k, _) in enumerate(items)}


def _previous(index_dir: Path, embedder: Embedder, chunker: ChunkerSettings | None) -> IndexData | None:
    """The live index, if any, after checking it was built the same way."""
    if current_generation(index_dir) is None:
        return None
    model_id = embedder.model_id
    data = load_index(index_dir)
    if data.manifest.model != model_id:
        raise IndexMismatchError(
            f"index was built with model {data.manifest.model!r}, not {model_id!r}; {REBUILD_HINT}"
        )
    if chunker is not None and chunker != data.manifest.chunker:
        raise IndexMismatchError(
            f"index was built with chunk settings {data.manifest.chunker}, not {chunker}; {REBUILD_HINT}"
        )
    check_backend(data.manifest, backend_of(embedder))
    return data


def backend_of(embedder: Embedder) -> str:
    """The embedding backend an embedder uses (``torch`` when it does not say)."""
    return str(getattr(embedder, "backend", "torch"))


@dataclass(frozen=True)
class _Plan:
    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: tuple[str, ...]


def _plan(documents: tuple[Document, ...], previous: IndexData | None) -> _Plan:
    old = {d.doc_id: d.sha256 for d in previous.manifest.documents} if previous else {}
    new = {d.doc_id: d.sha256 for d in documents}
    return _Plan(
        added=tuple(i for i in new if i not in old),
        changed=tuple(i for i in new if i in old and old[i] != new[i]),
        removed=tuple(i for i in old if i not in new),
        unchanged=tuple(i for i in new if old.get(i) == new[i]),
    )


def _passages(read: CorpusRead, previous: IndexData | None) -> list[Chunk]:
    """All passages in document order: the indexed ones of unchanged documents, new ones for the others."""
    old_chunks: dict[str, list[Chunk]] = {}
    if previous is not None:
        for chunk in previous.chunks:
            old_chunks.setdefault(chunk.doc_id, []).append(chunk)
    chunks: list[Chunk] = []
    for doc in read.documents:
        fresh = read.chunks.get(doc.doc_id)
        chunks.extend(fresh if fresh is not None else old_chunks.get(doc.doc_id, []))
    if not chunks:
        raise IndexStoreError("the documents produced no passages")
    return chunks


def _known_vectors(previous: IndexData | None) -> dict[str, np.ndarray]:
    """Passage text hash -> vector, from the index being updated."""
    if previous is None:
        return {}
    vectors = all_vectors(previous.dense)
    known: dict[str, np.ndarray] = {}
    for i, chunk in enumerate(previous.chunks):
        known.setdefault(sha256_text(chunk.text), vectors[i])
    return known


def _manifest(
    documents: tuple[Document, ...],
    chunks: list[Chunk],
    settings: ChunkerSettings,
    embedder: Embedder,
    dimension: int,
    previous: IndexData | None,
) -> Manifest:
    by_doc: dict[str, list[str]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk.chunk_id)
    old = {d.doc_id: d for d in previous.manifest.documents} if previous else {}
    stamp = now_iso()
    entries = tuple(
        DocEntry(
            d.doc_id,
            d.sha256,
            d.title,
            d.lang,
            d.kind,
            tuple(by_doc.get(d.doc_id, [])),
            old[d.doc_id].indexed_at if d.doc_id in old and old[d.doc_id].sha256 == d.sha256 else stamp,
        )
        for d in documents
    )
    return Manifest(
        model=embedder.model_id,
        dimension=dimension,
        chunker=settings,
        documents=entries,
        ann=ann_kind(len(chunks)),
        backend=backend_of(embedder),
        versions=library_versions(),
        created_at=stamp,
    )


def build_index(
    corpus: Path | str = "corpus",
    index_dir: Path | str = "index",
    model: str | None = None,
    *,
    embedder: Embedder | None = None,
    chunker: ChunkerSettings | None = None,
    rebuild: bool = False,
    progress: bool = False,
) -> IndexReport:
    """Build or refresh the index of ``corpus`` in ``index_dir``: the public form of :func:`update_index`.

    The embedder is ``embedder`` if given, else the one for ``model`` (default:
    multilingual-e5-small; a sentence-transformers name or path works too). Unchanged documents reuse their vectors.
    """
    if embedder is None:
        from citeqa.embedding import DEFAULT_MODEL, load_embedder

        embedder = load_embedder(model if model is not None else DEFAULT_MODEL)
    return update_index(Path(corpus), Path(index_dir), embedder, chunker, rebuild=rebuild, progress=progress)
