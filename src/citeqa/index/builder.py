"""Incremental indexing: embed only what changed, then swap the new index in.

Documents are compared by the sha256 of their file, hashed before anything else: a file
whose bytes did not change is not parsed again, and its document, passages, passage and
span vectors and BM25 terms are the index's own. New passages whose text was embedded
before keep their vectors, so editing one file re-embeds only that file's new passages
and a corpus with no change only hashes its files. (What is rebuilt: docs/scale.md.)

The work that can run elsewhere goes through one seam, :class:`BuildSteps`: reading and
chunking files (:meth:`BuildSteps.read`) and embedding texts (:meth:`BuildSteps.encode`,
called once per build with every new passage and span text). :class:`LocalSteps` does both
in this process, ``citeqa.index.ray_build`` on Ray. Everything else (what changed, reuse by
hash, the manifest, BM25, FAISS, the atomic write) happens here, the same for both.
"""

from __future__ import annotations

import time
from collections import ChainMap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from citeqa.embedding import Embedder
from citeqa.errors import CorpusError, DocumentError, IndexFormatError, IndexMismatchError, IndexStoreError
from citeqa.index.backends import all_vectors, ann_kind, build_dense, build_lexical
from citeqa.index.manifest import REBUILD_HINT, DocEntry, Manifest, check_backend, library_versions, now_iso
from citeqa.index.spans import SpanVectors, assemble_spans, plan_spans
from citeqa.index.store import IndexData, current_generation, load_index, remove_stale, write_generation, write_lock
from citeqa.index.terms import Terms, build_terms
from citeqa.ingest.chunking import ChunkerSettings, chunk_document
from citeqa.ingest.documents import Loader, Skipped, Unchanged, corpus_entries, read_entry
from citeqa.ingest.formats import suffix_values
from citeqa.messages import Said
from citeqa.records import Chunk, Document, sha256_text

if TYPE_CHECKING:  # both load only when used
    import bm25s
    import faiss


@dataclass(frozen=True, slots=True)
class LanguageCount:
    """One language of an index: its documents and passages (a passage has its own language)."""

    lang: str
    documents: int
    passages: int
    stemmed: bool  #: False: no Snowball stemmer for it, its words are indexed whole


def language_counts(documents: Iterable[Document], chunks: Iterable[Chunk]) -> tuple[LanguageCount, ...]:
    """Documents and passages per language, most passages first."""
    from collections import Counter

    from citeqa.text.language import stemmer_name

    docs, passages = Counter(d.lang for d in documents), Counter(c.lang for c in chunks)
    langs = sorted(set(docs) | set(passages), key=lambda lang: (-passages[lang], -docs[lang], lang))
    return tuple(LanguageCount(lang, docs[lang], passages[lang], stemmer_name(lang) is not None) for lang in langs)


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
    #: The languages of the index, with their documents and passages (see :func:`language_counts`).
    languages: tuple[LanguageCount, ...] = ()


@dataclass(frozen=True)
class CorpusRead:
    """The corpus as a build reads it: documents, skipped files, and new passages.

    A document whose file still has its indexed sha256 is :class:`Unchanged` (not read: the
    index has it). ``chunks`` holds the passages of every document that is new or changed.
    """

    documents: tuple[Document | Unchanged, ...]
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
FileRead = tuple[Document | Skipped | Unchanged, list[Chunk] | None, Skipped | None]


def read_file(
    corpus: Path,
    path: Path,
    unconfirmed: bool,
    settings: ChunkerSettings,
    indexed_sha: str | None,
    default_lang: str = "en",
    load: Loader | None = None,
) -> FileRead:
    """Read one file of ``corpus`` (with ``load``) and chunk it, unless its sha256 is ``indexed_sha``:
    then it is :class:`Unchanged`, neither parsed nor chunked."""
    entry = read_entry(corpus, path, unconfirmed, default_lang, load, indexed_sha)
    if isinstance(entry, (Skipped, Unchanged)):
        return entry, None, None
    try:
        return entry, chunk_document(entry, settings, checked=True), None
    except DocumentError as exc:
        return entry, None, Skipped(entry.doc_id, str(exc))


def collect_read(results: Iterable[FileRead]) -> CorpusRead:
    """:func:`read_file` results in corpus order as one CorpusRead; documents with too many
    passages are skipped after the unreadable files."""
    documents: list[Document | Unchanged] = []
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
            raise CorpusError(Said("corpus_no_document", corpus=corpus, skipped=len(read.skipped), **suffix_values()))
        documents = _documents(read.documents, previous)
        plan = _plan(documents, previous)
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
                languages=language_counts(documents, previous.chunks),
            )
        chunks, sources = _passages(documents, read.chunks, previous)
        built = _build(steps, chunks, sources, previous)
        manifest = _manifest(documents, chunks, settings, embedder, built.vectors.shape[1], previous)
        write_generation(
            index_dir,
            manifest,
            list(documents),
            chunks,
            _dense(built.vectors, manifest.ann, sources, previous),
            built.lexical,
            built.terms,
            built.spans,
        )
    return IndexReport(
        plan.added,
        plan.changed,
        plan.removed,
        plan.unchanged,
        read.skipped,
        embedded=built.embedded,
        reused=len(chunks) - built.embedded,
        chunks=len(chunks),
        seconds=time.perf_counter() - started,
        documents=tuple(d.doc_id for d in documents),
        rebuilt_because=rebuilt_because,
        languages=language_counts(documents, chunks),
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


def _documents(entries: Sequence[Document | Unchanged], previous: IndexData | None) -> tuple[Document, ...]:
    """The corpus's documents in order, each unchanged one as the index being updated holds it."""
    documents: list[Document] = []
    for entry in entries:
        if isinstance(entry, Unchanged):
            entry_doc = previous.documents.get(entry.doc_id) if previous is not None else None
            if entry_doc is None or entry_doc.sha256 != entry.sha256:
                raise IndexStoreError(f"{entry.doc_id} was read as unchanged but the index does not hold it")
            documents.append(entry_doc)
        else:
            documents.append(entry)
    return tuple(documents)


def _passages(
    documents: tuple[Document, ...], fresh: Mapping[str, list[Chunk]], previous: IndexData | None
) -> tuple[list[Chunk], list[int | None]]:
    """All passages in document order: the indexed ones of unchanged documents, new ones for the others;
    with each passage's row in ``previous`` (None for a new passage)."""
    old_rows: dict[str, list[int]] = {}
    if previous is not None:
        for row, chunk in enumerate(previous.chunks):
            old_rows.setdefault(chunk.doc_id, []).append(row)
    chunks: list[Chunk] = []
    sources: list[int | None] = []
    for doc in documents:
        new = fresh.get(doc.doc_id)
        if new is not None:
            chunks.extend(new)
            sources.extend([None] * len(new))
        elif previous is not None:
            rows = old_rows.get(doc.doc_id, [])
            chunks.extend(previous.chunks[r] for r in rows)
            sources.extend(rows)
    if not chunks:
        raise IndexStoreError("the documents produced no passages")
    return chunks, sources


@dataclass(frozen=True)
class _Built:
    """What a build computes for its passages, besides the manifest."""

    vectors: np.ndarray
    spans: SpanVectors
    terms: Terms
    lexical: bm25s.BM25
    embedded: int  # passage texts embedded


def _build(steps: BuildSteps, chunks: list[Chunk], sources: list[int | None], previous: IndexData | None) -> _Built:
    """Vectors, span vectors and BM25 terms of ``chunks``: a kept passage's (``sources[i]`` not None) are
    copied from ``previous``; a new passage's are computed, its texts embedded in one call unless some
    passage or span of ``previous`` has the same text."""
    new = [i for i, source in enumerate(sources) if source is None]
    old_vectors = all_vectors(previous.dense) if previous is not None else None
    reusable = bool(new) and previous is not None
    known = (
        _known_vectors(previous, old_vectors)
        if reusable and previous is not None and old_vectors is not None  # (reusable: previous is not None)
        else {}
    )
    keys = {i: sha256_text(chunks[i].text) for i in new}
    todo = {keys[i]: chunks[i].text for i in new if keys[i] not in known}
    old_spans = previous.spans if previous is not None else None
    span_rows = (
        old_spans.text_rows(previous.chunks) if reusable and previous is not None and old_spans is not None else {}
    )
    span_plan = plan_spans(chunks, span_rows, sources, old_spans)
    known_spans = {k: old_spans.vectors[span_rows[k]] for k in set(span_plan.keys) if k in span_rows}  # type: ignore[union-attr]  # rows only from old_spans
    fresh = _encode(steps, {**span_plan.todo, **todo})  # one call: a worker pool starts once
    dimension = len(next(iter(fresh.values()))) if fresh else old_vectors.shape[1]  # type: ignore[union-attr]  # nothing new: all kept from previous
    vectors = np.empty((len(chunks), dimension), dtype=np.float32)
    kept = [i for i, source in enumerate(sources) if source is not None]
    if kept:
        vectors[kept] = old_vectors[[sources[i] for i in kept]]  # type: ignore[index]  # kept rows come from previous
    for i in new:
        vectors[i] = known[keys[i]] if keys[i] in known else fresh[keys[i]]
    spans = assemble_spans(span_plan, ChainMap(known_spans, fresh), dimension, old_spans)
    terms = build_terms(chunks, sources, previous.terms if previous is not None else None)
    return _Built(vectors, spans, terms, build_lexical(terms), embedded=len(todo))


def _dense(vectors: np.ndarray, kind: str, sources: list[int | None], previous: IndexData | None) -> faiss.Index:
    """The FAISS index of ``vectors``. An HNSW graph whose passages all stay, in order, with new ones
    only after them gets the new vectors added; any other index is built from ``vectors`` (no encoding)."""
    if previous is not None and kind == "hnsw" == previous.manifest.ann:
        count = len(previous.chunks)
        if sources[:count] == list(range(count)) and all(s is None for s in sources[count:]):
            previous.dense.add(np.ascontiguousarray(vectors[count:]))
            return previous.dense
    return build_dense(vectors, kind)


def _known_vectors(previous: IndexData, vectors: np.ndarray) -> dict[str, np.ndarray]:
    """Passage text hash -> vector, from the index being updated (``vectors``: its passage vectors)."""
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
