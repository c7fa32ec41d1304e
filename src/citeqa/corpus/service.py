"""The corpus service: the component that says what the index holds and changes the corpus with the
index kept in step, as :class:`citeqa.engine.Engine` runs it (``Engine.documents``, ``.add``,
``.remove``, ``.build``, ...).

Its contract is haystack's: :meth:`CorpusService.warm_up` loads the upload path once, and
:meth:`CorpusService.run` adds files (an :class:`~citeqa.corpus.add.UploadResult`);
:meth:`CorpusService.remove` gives a :class:`~citeqa.corpus.remove.RemovalResult`. A change writes a
new live generation; the engine then hands back one over it. Building, adding and removing load
their modules when first used: opening an index needs no build, answering no upload."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from citeqa.errors import ConfigError
from citeqa.index.store import IndexData, load_index
from citeqa.records import Document, DocumentInfo

if TYPE_CHECKING:
    from citeqa.corpus.add import AddWatch, UploadResult
    from citeqa.corpus.remove import RemovalResult
    from citeqa.embedding import Embedder
    from citeqa.index.builder import BuildSteps, IndexReport
    from citeqa.index.manifest import Manifest
    from citeqa.ingest.budget import ParseBudget
    from citeqa.ingest.chunking import ChunkerSettings
    from citeqa.pg.publish import Published


def open_data(index_dir: Path, backend: str | None = None) -> IndexData:
    """The index answers come from: the live generation in ``index_dir``, or with ``backend``
    (``postgresql://...``, one URL per shard) the live generation of a PostgreSQL index (a
    :class:`~citeqa.pg.backend.PostgresBackend`: the same members answering uses, and a manifest)."""
    if backend is None:
        return load_index(index_dir)
    from citeqa.pg.shards import is_postgres

    if not is_postgres(backend):
        raise ConfigError(f"--backend expects postgresql://HOST:PORT/DB URLs separated by commas, got {backend!r}")
    from citeqa.pg.backend import PostgresBackend

    return PostgresBackend(backend)  # type: ignore[return-value]  # not an IndexData, but it answers the calls the engine makes


class CorpusService:
    """What the index ``data`` holds, and changes to the corpus behind it, re-indexed into
    ``index_dir`` with ``embedder`` (no ``index_dir``: a PostgreSQL index, which changes with
    ``citeqa index --backend`` only)."""

    def __init__(self, data: IndexData, embedder: Embedder, index_dir: Path | None = None) -> None:
        self._data = data
        self.embedder = embedder
        self.index_dir = index_dir

    # What the index holds.

    @property
    def manifest(self) -> Manifest:
        """The index's manifest: its model, backend, search, chunker and one entry per document."""
        return self._data.manifest

    @property
    def documents(self) -> Mapping[str, Document]:
        """The indexed documents by id (read only: a change goes through :meth:`run` or :meth:`remove`)."""
        return self._data.documents

    @property
    def passage_count(self) -> int:
        """How many passages the index holds."""
        return len(self._data.chunks)

    @property
    def corpus_langs(self) -> frozenset[str]:
        """Languages of the indexed passages."""
        return frozenset(self._data.passage_langs())

    def document_langs(self) -> Counter[str]:
        """How many documents are in each language (the manifest's entries, as the corpus table lists them)."""
        return Counter(entry.lang for entry in self._data.manifest.documents)

    def sample_passage(self, lang: str) -> str:
        """The text of the first passage in ``lang`` (a warm-up question); StopIteration when there is none.
        One passage is read, whatever the backend (over PostgreSQL: not the passages before it)."""
        found = self._data.first_passage(lang)
        if found is None:
            raise StopIteration(lang)
        return found.text

    def doc_text(self, doc_id: str) -> str:
        """The whole text of ``doc_id`` (KeyError for an unknown document)."""
        return self._data.documents[doc_id].text

    def document_info(self, doc_id: str) -> DocumentInfo:
        """What a citation of ``doc_id`` names besides the passage: title, file, language, kind and
        when the document was indexed (from the manifest); KeyError for an unknown document."""
        doc = self._data.documents[doc_id]
        entry = next((e for e in self._data.manifest.documents if e.doc_id == doc_id), None)
        return DocumentInfo(doc_id, doc.title, doc.lang, doc.kind, entry.indexed_at if entry else "", doc.sha256)

    # Changes to the corpus.

    def live(self) -> IndexData | None:
        """The live generation of this index, read anew (a PostgreSQL index moves to its live one); None
        for an index that cannot be read anew."""
        reopen = getattr(self._data, "reopen", None)
        if self.index_dir is None:
            return reopen() if reopen is not None else None
        return load_index(self.index_dir)

    def close(self) -> None:
        """Close the index's connections (a PostgreSQL backend's; a folder has none)."""
        close = getattr(self._data, "close", None)
        if close is not None:
            close()

    @property
    def changeable(self) -> bool:
        """Whether documents can be added and removed here: an index folder can; a PostgreSQL index
        changes with ``citeqa index --backend`` only."""
        return self.index_dir is not None

    def warm_up(self) -> None:
        """Load the upload path (the readers of every format, the parse budget) now, not with the first
        add; a server that is never sent a file need not (the engine's warm-up leaves it). Once: a
        module stays loaded."""
        import citeqa.corpus.add
        import citeqa.corpus.remove  # noqa: F401 - loaded for its import's sake

    def run(
        self,
        files: Sequence[tuple[Path, str]],
        corpus: Path,
        max_bytes: int | None = None,
        watch: AddWatch | None = None,
        budget: ParseBudget | None = None,
    ) -> UploadResult:
        """Check and copy each ``(uploaded file, its name)`` into ``corpus`` and index the corpus (no
        files: re-scan it); see :func:`citeqa.corpus.add.add_files`. A failed or cancelled add leaves
        the corpus and the live index as they were; ConfigError without an index folder."""
        from citeqa.corpus.add import DEFAULT_MAX_BYTES, add_files

        folder = self._folder()
        limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
        return add_files(files, corpus, folder, self.embedder, limit, watch, budget)

    def remove(self, doc_id: str, corpus: Path) -> RemovalResult:
        """Delete the file of ``doc_id`` (an indexed document) from ``corpus`` and drop its passages from
        the index (see :func:`citeqa.corpus.remove.remove_document`; an UploadError refuses the name)."""
        from citeqa.corpus.remove import remove_document

        return remove_document(doc_id, corpus, self._folder(), self.embedder, frozenset(self._data.documents))

    def settle_removals(self, corpus: Path) -> list[str]:
        """Settle the removals from ``corpus`` a crash cut short, by whether this index still lists each
        document (see :func:`citeqa.corpus.remove.recover_removals`); the documents settled."""
        from citeqa.corpus.remove import recover_removals

        return recover_removals(corpus, frozenset(self._data.documents))

    def _folder(self) -> Path:
        """The index folder a corpus change writes to; ConfigError for an index without one."""
        if self.index_dir is None:
            raise ConfigError("this index is not a folder: add and remove documents with citeqa index --backend")
        return self.index_dir

    # Before there is an index to open.

    @staticmethod
    def build(
        corpus: Path,
        index_dir: Path,
        embedder: Embedder,
        chunker: ChunkerSettings | None = None,
        rebuild: bool = False,
        progress: bool = False,
        steps: BuildSteps | None = None,
    ) -> IndexReport:
        """Build or refresh the index of ``corpus`` in ``index_dir``: only changed documents are
        embedded, the new generation goes live at once (see :func:`~citeqa.index.builder.update_index`;
        ``steps``: where files are read and encoded)."""
        from citeqa.index.builder import update_index

        return update_index(corpus, index_dir, embedder, chunker, rebuild=rebuild, progress=progress, steps=steps)

    @staticmethod
    def index_model(index_dir: Path) -> str | None:
        """The model the live generation in ``index_dir`` was built with (what ``citeqa index`` refreshes
        it with); None when there is none, or it is damaged (the build then says how)."""
        from citeqa.errors import IndexStoreError
        from citeqa.index.manifest import peek_model
        from citeqa.index.store import current_generation

        try:
            live = current_generation(index_dir)
        except IndexStoreError:
            return None
        return peek_model(live) if live is not None else None

    @staticmethod
    def publish(index_dir: Path, backend: str, ann: str | None = None, rebuild: bool = False) -> Published:
        """Make the live generation of ``index_dir`` the live one of the PostgreSQL shards of ``backend``
        (``citeqa index --backend``; see :func:`citeqa.pg.publish.publish`): only what changed is sent."""
        from citeqa.pg.publish import publish_folder

        return publish_folder(index_dir, backend, ann=ann, rebuild=rebuild)
