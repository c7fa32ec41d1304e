"""Incremental indexing: embed only what changed, then swap the new index in.

Documents are compared by the sha256 of their file. Passages whose text was embedded
before keep their vectors, so editing one file re-embeds only that file's new passages
and a corpus with no change does no work at all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from citeqa.embedding import Embedder
from citeqa.errors import CorpusError, IndexFormatError, IndexMismatchError, IndexStoreError
from citeqa.index.backends import all_vectors, ann_kind, build_dense, build_lexical
from citeqa.index.manifest import REBUILD_HINT, DocEntry, Manifest, check_backend, library_versions, now_iso
from citeqa.index.spans import embed_spans
from citeqa.index.store import IndexData, current_generation, load_index, remove_stale, write_generation, write_lock
from citeqa.ingest.chunking import ChunkerSettings, chunk_document
from citeqa.ingest.documents import Skipped, scan_corpus
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


def update_index(corpus: Path, index_dir: Path, embedder: Embedder,
                 chunker: ChunkerSettings | None = None, *, rebuild: bool = False,
                 progress: bool = False) -> IndexReport:
    """Bring the index in ``index_dir`` up to date with ``corpus``."""
    started = time.perf_counter()
    with write_lock(index_dir):
        rebuilt_because = ""
        try:
            previous = None if rebuild else _previous(index_dir, embedder, chunker)
        except IndexFormatError as exc:  # written by another citeqa: its vectors cannot be reused, the corpus can
            previous, rebuilt_because = None, str(exc).split(";")[0]
        settings = chunker if chunker is not None else (
            previous.manifest.chunker if previous else ChunkerSettings())
        scan = _within_limits(scan_corpus(corpus), previous, settings)
        if not scan.documents:
            raise CorpusError(f"no readable document in {corpus} ({len(scan.skipped)} skipped); "
                              f"add {suffix_list()} files")
        plan = _plan(scan.documents, previous)
        if previous is not None and not (plan.added or plan.changed or plan.removed):
            live = current_generation(index_dir)
            if live is not None:  # leftovers of a build that was killed before it finished
                remove_stale(index_dir, keep=live.name)
            return IndexReport(unchanged=plan.unchanged, skipped=scan.skipped, up_to_date=True,
                               chunks=len(previous.chunks), documents=plan.unchanged,
                               seconds=time.perf_counter() - started)
        chunks, vectors, embedded = _assemble(scan.documents, previous, settings, embedder, progress)
        known = previous.spans.texts_and_vectors(previous.chunks) if previous and previous.spans else None
        spans, _ = embed_spans(chunks, lambda texts: embedder.encode(texts, progress=progress), vectors.shape[1],
                               known)
        manifest = _manifest(scan.documents, chunks, settings, embedder, vectors.shape[1], previous)
        lexical = build_lexical(chunks)  # first: its tokenising peak then comes before the graph exists
        write_generation(index_dir, manifest, list(scan.documents), chunks, vectors,
                         build_dense(vectors, manifest.ann), lexical, spans)
    return IndexReport(plan.added, plan.changed, plan.removed, plan.unchanged, scan.skipped,
                       embedded=embedded, reused=len(chunks) - embedded, chunks=len(chunks),
                       seconds=time.perf_counter() - started,
                       documents=tuple(d.doc_id for d in scan.documents), rebuilt_because=rebuilt_because)


def _within_limits(scan, previous: IndexData | None, settings: ChunkerSettings):  # CorpusScan
    """``scan`` with new or changed documents over the passage limit moved to its skipped files."""
    from citeqa.errors import DocumentError
    from citeqa.ingest.chunking import check_passages
    from citeqa.ingest.documents import CorpusScan

    indexed = {d.doc_id: d.sha256 for d in previous.manifest.documents} if previous else {}
    kept, skipped = [], list(scan.skipped)
    for doc in scan.documents:
        if indexed.get(doc.doc_id) != doc.sha256:  # a document already indexed was checked then
            try:
                check_passages(doc, settings)
            except DocumentError as exc:
                skipped.append(Skipped(doc.doc_id, str(exc)))
                continue
        kept.append(doc)
    return CorpusScan(tuple(kept), tuple(skipped))


def _previous(index_dir: Path, embedder: Embedder, chunker: ChunkerSettings | None) -> IndexData | None:
    """The live index, if any, after checking it was built the same way."""
    if current_generation(index_dir) is None:
        return None
    model_id = embedder.model_id
    data = load_index(index_dir)
    if data.manifest.model != model_id:
        raise IndexMismatchError(f"index was built with model {data.manifest.model!r}, not {model_id!r}; "
                                 f"{REBUILD_HINT}")
    if chunker is not None and chunker != data.manifest.chunker:
        raise IndexMismatchError(f"index was built with chunk settings {data.manifest.chunker}, "
                                 f"not {chunker}; {REBUILD_HINT}")
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


def _assemble(documents: tuple[Document, ...], previous: IndexData | None, settings: ChunkerSettings,
              embedder: Embedder, progress: bool) -> tuple[list[Chunk], np.ndarray, int]:
    """All passages in document order, with vectors reused where the text is known."""
    known: dict[str, np.ndarray] = {}
    old_chunks: dict[str, list[Chunk]] = {}
    if previous is not None:
        vectors = all_vectors(previous.dense)
        for i, chunk in enumerate(previous.chunks):
            known.setdefault(sha256_text(chunk.text), vectors[i])
            old_chunks.setdefault(chunk.doc_id, []).append(chunk)
        old_sha = {d.doc_id: d.sha256 for d in previous.manifest.documents}
    chunks: list[Chunk] = []
    for doc in documents:
        if previous is not None and old_sha.get(doc.doc_id) == doc.sha256:
            chunks.extend(old_chunks.get(doc.doc_id, []))
        else:
            chunks.extend(chunk_document(doc, settings))
    if not chunks:
        raise IndexStoreError("the documents produced no passages")
    keys = [sha256_text(c.text) for c in chunks]
    todo = sorted({k: c.text for k, c in zip(keys, chunks) if k not in known}.items())
    if todo:
        fresh = embedder.encode([text for _, text in todo], progress=progress)
        known.update({k: fresh[i] for i, (k, _) in enumerate(todo)})
    return chunks, np.stack([known[k] for k in keys]).astype(np.float32), len(todo)


def _manifest(documents: tuple[Document, ...], chunks: list[Chunk], settings: ChunkerSettings,
              embedder: Embedder, dimension: int, previous: IndexData | None) -> Manifest:
    by_doc: dict[str, list[str]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk.chunk_id)
    old = {d.doc_id: d for d in previous.manifest.documents} if previous else {}
    stamp = now_iso()
    entries = tuple(
        DocEntry(d.doc_id, d.sha256, d.title, d.lang, d.kind, tuple(by_doc.get(d.doc_id, [])),
                 old[d.doc_id].indexed_at if d.doc_id in old and old[d.doc_id].sha256 == d.sha256 else stamp)
        for d in documents)
    return Manifest(model=embedder.model_id, dimension=dimension, chunker=settings, documents=entries,
                    ann=ann_kind(len(chunks)), backend=backend_of(embedder), versions=library_versions(),
                    created_at=stamp)


def build_index(corpus: Path | str = "corpus", index_dir: Path | str = "index", model: str | None = None, *,
                embedder: Embedder | None = None, chunker: ChunkerSettings | None = None,
                rebuild: bool = False, progress: bool = False) -> IndexReport:
    """Build or refresh the index of ``corpus`` in ``index_dir``: the public form of :func:`update_index`.

    The embedder is ``embedder`` if given, else the sentence-transformers ``model`` (default:
    all-MiniLM-L6-v2, shipped as a package). Unchanged documents reuse their vectors.
    """
    if embedder is None:
        from citeqa.embedding import DEFAULT_MODEL, load_embedder

        embedder = load_embedder(model if model is not None else DEFAULT_MODEL)
    return update_index(Path(corpus), Path(index_dir), embedder, chunker, rebuild=rebuild, progress=progress)
