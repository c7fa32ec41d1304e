"""The one service the CLI and the UI call: open an index, answer questions, say what the index holds,
and change the corpus (add, remove, re-scan) with the index kept in step.

The callers never reach the index itself (:class:`~citeqa.index.store.IndexData`, the engine's private
``_data``): what they read of it, and every change to it, is a method here."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from citeqa.claims.thresholds import ClaimThresholds, fitted_thresholds
from citeqa.embedding import Embedder, encode_queries, load_embedder, token_counter
from citeqa.errors import ConfigError
from citeqa.index.manifest import check_model
from citeqa.index.store import IndexData, load_index
from citeqa.qa.backend import question_deadline
from citeqa.qa.pipeline import AnswerPipeline, Trace
from citeqa.qa.scoring import has_reader_weights
from citeqa.qa.settings import AnswerSettings
from citeqa.qa.work import Ticket, WorkQueue
from citeqa.reader.reader import Reader
from citeqa.records import Answer, Document, DocumentInfo
from citeqa.settings import Settings

if TYPE_CHECKING:  # loaded where used: opening an index needs no build, answering no upload
    from citeqa.corpus.add import AddWatch, UploadResult
    from citeqa.corpus.remove import RemovalResult
    from citeqa.index.builder import BuildSteps, IndexReport
    from citeqa.index.manifest import Manifest
    from citeqa.ingest.budget import ParseBudget
    from citeqa.ingest.chunking import ChunkerSettings
    from citeqa.pg.publish import Published

if TYPE_CHECKING:  # claims load with the first check: an answer never needs them
    from citeqa.claims.check import ClaimCheck, ClaimInputs

#: Whether answers use the trained reader: where it was fitted for the model, always, or never.
ReaderMode = Literal["auto", "on", "off"]


def make_reader(model: str, mode: ReaderMode = "auto") -> Reader | None:
    """The reader for an index built with ``model`` (None: answers without it)."""
    if mode == "off":
        return None
    if not has_reader_weights(model):
        if mode == "on":
            raise ConfigError(f"the reader has no fitted scorer for {model}; use --reader off (or index with e5)")
        return None
    return Reader()


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


#: Seconds one question (or claim) may take before a remote backend gives up on it
#: (:func:`~citeqa.qa.backend.question_deadline`; ``citeqa ask/check/eval/serve --question-timeout``).
QUESTION_TIMEOUT_S = 30.0


class Engine:
    """Answers questions from one index. Thread-safe for concurrent ``ask`` calls, whose model calls
    take turns in ``work`` (:class:`~citeqa.qa.work.WorkQueue`: the least-served question
    first; a queue of its own when None). ``settings``: those fitted for the index's model when
    None (:meth:`AnswerSettings.for_model`), as are the claim thresholds without ``claims``
    (:func:`~citeqa.claims.thresholds.fitted_thresholds`). ``data``, the index, is the engine's own
    from then on: callers read it through :attr:`documents`, :attr:`manifest` and the other
    queries, and change it through :meth:`add` and :meth:`remove`, which hand back the engine over
    the new generation. ``question_timeout_s``: how long one question may wait on a remote backend
    (None: no limit; a local index has nothing to wait on)."""

    def __init__(
        self,
        data: IndexData,
        embedder: Embedder,
        settings: AnswerSettings | None = None,
        index_dir: Path | None = None,
        reader: Reader | None = None,
        work: WorkQueue | None = None,
        claims: ClaimThresholds | None = None,
        question_timeout_s: float | None = QUESTION_TIMEOUT_S,
    ) -> None:
        self._data = data
        self.question_timeout_s = question_timeout_s
        self._claims = claims
        self.embedder = embedder
        self.index_dir = index_dir
        self.reader = reader
        self.work = work if work is not None else WorkQueue()
        self._lock = threading.Lock()
        self.pipeline = AnswerPipeline(data, self.encode_queries, settings, reader, token_counter(embedder), self.work)

    @classmethod
    def open(
        cls,
        index_dir: Path | str = "index",
        model: str | None = None,
        embedder: Embedder | None = None,
        reader: ReaderMode = "auto",
        overrides: Mapping[str, Any] | None = None,
        embedder_factory: Callable[[str], Embedder] = load_embedder,
        backend: str | None = None,
        question_timeout_s: float | None = QUESTION_TIMEOUT_S,
    ) -> Engine:
        """Open an index; ``model`` (if given) must be the one it was built with. ``reader``:
        "auto" uses the trained reader where a scorer was fitted with it for the model, "on"
        insists, "off" keeps the faster reader-less path. The settings are those fitted for the
        index's model, with ``overrides`` changed by name (``{"pool": 20}``,
        ``{"claims.conflict_cover": 0.5}``; see :meth:`citeqa.settings.Settings.with_overrides`; an
        unknown name is a :class:`ConfigError`).
        Without ``embedder``, ``embedder_factory`` makes the one for the model (the CLI's tests
        pass a model-free one). ``backend``: PostgreSQL shards (``postgresql://...``, see
        :mod:`citeqa.pg`) instead of the ``index_dir`` folder; documents are then added with
        ``citeqa index --backend``, not through this engine (its ``index_dir`` is None);
        ``question_timeout_s``: how long one question may wait on it."""
        data = open_data(Path(index_dir), backend)
        check_model(data.manifest, model)
        chosen = make_reader(data.manifest.model, reader)
        settings = Settings.for_model(data.manifest.model, reader=chosen is not None)
        if overrides:
            settings = settings.with_overrides(overrides)
        if embedder is None:
            embedder = embedder_factory(data.manifest.model if model is None else model)
        folder = Path(index_dir) if backend is None else None
        return cls(
            data,
            embedder,
            settings.answer,
            folder,
            chosen,
            claims=settings.claims,
            question_timeout_s=question_timeout_s,
        )

    @property
    def settings(self) -> AnswerSettings:
        return self.pipeline.settings

    @property
    def claim_thresholds(self) -> ClaimThresholds:
        """When a claim counts as backed (:meth:`check` without ``thresholds``): those given
        (:meth:`open` gives those fitted for the index's model, with its overrides), else those
        fitted, read with the first check."""
        if self._claims is None:
            self._claims = fitted_thresholds(self._data.model)
        return self._claims

    @property
    def corpus_langs(self) -> frozenset[str]:
        """Languages of the indexed passages."""
        return frozenset(self._data.passage_langs())

    @property
    def manifest(self) -> Manifest:
        """The index's manifest: its model, backend, search, chunker and one entry per document."""
        return self._data.manifest

    @property
    def documents(self) -> Mapping[str, Document]:
        """The indexed documents by id (read only: a change goes through :meth:`add` or :meth:`remove`)."""
        return self._data.documents

    @property
    def passage_count(self) -> int:
        """How many passages the index holds."""
        return len(self._data.chunks)

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

    def warm_up(self) -> None:
        """Load the models and the question's language detector now, not on the first question.

        Only what questions use: the detector of passages (a coarse pass over every language,
        then a fine one) loads with the first upload, for files a server may never be sent.
        lingua loads its models as the text it reads needs them: the questions' detector took
        106 MB here, warming the passages' one 7-29 MB more, and detecting the 55 passages of
        ``corpus/`` whole 146 MB more (bench/memory.py)."""
        self.encode_queries(["warm up"])
        if self.reader is not None:
            self.reader.warm_up()
        for lang in sorted(self.corpus_langs):
            self.ask(self.sample_passage(lang)[:120])

    def close(self) -> None:
        """Close the index's connections (a PostgreSQL backend's; a folder has none)."""
        close = getattr(self._data, "close", None)
        if close is not None:
            close()

    def reload(self) -> Engine:
        """A new engine over the live index, sharing this one's loaded models and work queue."""
        reopen = getattr(self._data, "reopen", None)  # a remote backend moves to its live generation
        if self.index_dir is None and reopen is None:
            return self
        data = load_index(self.index_dir) if self.index_dir is not None else reopen()  # type: ignore[misc]  # reopen is not None here
        return Engine(
            data,
            self.embedder,
            self.settings,
            self.index_dir,
            self.reader,
            self.work,
            self._claims,
            self.question_timeout_s,
        )

    def without_reader(self) -> Engine:
        """This engine as ``reader="off"`` makes it: the same index, model and settings, with the
        scorer fitted without the reader (``citeqa serve`` falls back to it when the reader cannot load)."""
        scoring = AnswerSettings.for_model(self._data.manifest.model, reader=False).scoring
        kept = replace(self.settings, scoring=scoring)
        return Engine(
            self._data,
            self.embedder,
            kept,
            self.index_dir,
            None,
            claims=self._claims,
            question_timeout_s=self.question_timeout_s,
        )

    def adjusted(self, settings: AnswerSettings | None = None, reader: Reader | None = None) -> Engine:
        """This engine over the same index, models and work queue with other ``settings`` and/or another
        ``reader`` (each kept when None; :meth:`without_reader` drops the reader): the fitting scripts
        and the tests try variants of one open index."""
        chosen = reader if reader is not None else self.reader
        kept = settings if settings is not None else self.settings
        return Engine(
            self._data, self.embedder, kept, self.index_dir, chosen, self.work, self._claims, self.question_timeout_s
        )

    def question_language(self, question: str, history: Sequence[str] = (), page_lang: str | None = None) -> str:
        """The language a question is answered in (see :meth:`AnswerPipeline.question_language`)."""
        return self.pipeline.question_language(question, history, page_lang)

    def doc_text(self, doc_id: str) -> str:
        """The whole text of ``doc_id`` (KeyError for an unknown document)."""
        return self._data.documents[doc_id].text

    def ask(
        self,
        question: str,
        history: Sequence[str] = (),
        k: int = 5,
        language: str | None = None,
        page_lang: str | None = None,
    ) -> Answer:
        """Answer ``question`` from the index; ``history`` holds earlier questions.

        ``language`` overrides the detected language of the question ("any" disables the
        preference for passages in the question's language); ``page_lang`` (the browser's language)
        leans a question that could be read either way.
        """
        return self.trace(question, history, k, language, page_lang).answer

    def check(
        self, claim: str, k: int = 5, thresholds: ClaimThresholds | None = None, page_lang: str | None = None
    ) -> ClaimCheck:
        """Check ``claim`` against the documents: ``supported``, ``conflicting`` or ``not_found``,
        with up to ``k`` passages that bear on it (see :mod:`citeqa.claims.check`); ``page_lang`` as for :meth:`ask`."""
        with question_deadline(self.question_timeout_s):
            return self._check(claim, k, thresholds, page_lang)

    def _check(self, claim: str, k: int, thresholds: ClaimThresholds | None, page_lang: str | None) -> ClaimCheck:
        from citeqa.claims.check import check_claim, claim_thresholds
        from citeqa.claims.parts import analyse_claim
        from citeqa.claims.questions import split_values
        from citeqa.claims.reading import ValueReading, read_claim
        from citeqa.claims.rule import ReadingRule, judge_block, reading_rule

        started = time.perf_counter()
        # one place in the work queue for the claim's embedding and its reads, after the questions'
        ticket = self.work.ticket(after_questions=True)
        inputs = self.claim_inputs(claim, k, page_lang, ticket)
        judge = thresholds if thresholds is not None else self.claim_thresholds
        rule: ReadingRule | None = None
        readings: tuple[ValueReading, ...] = ()
        unread: tuple[str, ...] = ()
        if self.reader is not None:  # each value of the claim asked for, about its own subject
            rule = reading_rule()
            fitted = judge_block() if thresholds is None else {}
            if fitted:
                judge = claim_thresholds(fitted)  # the judge fitted to go with the reading
            parts = analyse_claim(inputs.claim, inputs.language)
            bounds = self.settings.bounds
            readings = read_claim(
                self.reader,
                parts,
                inputs.hits,
                rule,
                ticket,
                bounds,
                self._data.documents,
                count=self.pipeline.count_tokens,
            )
            unread = tuple(v.text for v in split_values(parts, bounds)[1])
        result = check_claim(inputs, self._data.documents, k, judge, readings, rule)
        return replace(result, unread=unread, latency_ms=round((time.perf_counter() - started) * 1000, 3))

    def claim_inputs(
        self, claim: str, k: int = 5, page_lang: str | None = None, ticket: Ticket | None = None
    ) -> ClaimInputs:
        """What a claim is checked on: the claim as cleaned, the passages retrieved for it as for a
        question, every sentence of every one of them, and each one's cosine to it (see
        :meth:`AnswerPipeline.sentences`; the embedding waits for ``ticket``'s turn, a new one's without)."""
        from citeqa.claims.check import ClaimInputs, clean_claim

        claim = clean_claim(claim)
        found = self.pipeline.sentences(claim, k, page_lang, ticket)
        return ClaimInputs(claim, found.language, found.hits, found.candidates, found.similarities)

    def document_info(self, doc_id: str) -> DocumentInfo:
        """What a citation of ``doc_id`` names besides the passage: title, file, language, kind and
        when the document was indexed (from the manifest); KeyError for an unknown document."""
        doc = self._data.documents[doc_id]
        entry = next((e for e in self._data.manifest.documents if e.doc_id == doc_id), None)
        return DocumentInfo(doc_id, doc.title, doc.lang, doc.kind, entry.indexed_at if entry else "", doc.sha256)

    def trace(
        self,
        question: str,
        history: Sequence[str] = (),
        k: int = 5,
        language: str | None = None,
        page_lang: str | None = None,
    ) -> Trace:
        """Every step of answering ``question``: language, query, hits, scored spans, choice, record."""
        with question_deadline(self.question_timeout_s):
            return self.pipeline.run(question, history, k, language, page_lang)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """The questions' vectors as the engine searches with them (one L2-normalised row per text),
        one batch at a time: one model serves many UI threads. The first call loads the model
        (bench/cold_start.py and bench/memory.py time and weigh it)."""
        with self._lock:
            return encode_queries(self.embedder, texts)

    # Changes to the corpus: the only way the CLI and the app change what the index holds.

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
        """Build or refresh the index of ``corpus`` in ``index_dir`` (``citeqa index``, before there is
        an engine to open): only changed documents are embedded, the new generation goes live at once
        (see :func:`~citeqa.index.builder.update_index`; ``steps``: where files are read and encoded)."""
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

    @property
    def corpus_changeable(self) -> bool:
        """Whether documents can be added and removed through this engine: an index folder can; a
        PostgreSQL index changes with ``citeqa index --backend`` only."""
        return self.index_dir is not None

    def add(
        self,
        files: Sequence[tuple[Path, str]],
        corpus: Path,
        max_bytes: int | None = None,
        watch: AddWatch | None = None,
        budget: ParseBudget | None = None,
    ) -> tuple[UploadResult, Engine]:
        """Check and copy each ``(uploaded file, its name)`` into ``corpus`` and index the corpus (no
        files: re-scan it); see :func:`citeqa.corpus.add.add_files`. Returns what the add did and the
        engine to answer from now on: one over the new live generation when the add was indexed, else
        this one. A failed or cancelled add leaves the corpus and the live index as they were."""
        from citeqa.corpus.add import DEFAULT_MAX_BYTES, add_files

        folder = self._folder()
        limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
        result = add_files(files, corpus, folder, self.embedder, limit, watch, budget)
        return result, (self.reload() if result.indexed else self)

    def remove(self, doc_id: str, corpus: Path) -> tuple[RemovalResult, Engine]:
        """Delete the file of ``doc_id`` (an indexed document) from ``corpus`` and drop its passages from
        the index (see :func:`citeqa.corpus.remove.remove_document`; an UploadError refuses the name).
        Returns what the removal did and the engine to answer from now on, as :meth:`add` does."""
        from citeqa.corpus.remove import remove_document

        result = remove_document(doc_id, corpus, self._folder(), self.embedder, frozenset(self._data.documents))
        return result, (self.reload() if result.removed else self)

    def settle_removals(self, corpus: Path) -> list[str]:
        """Settle the removals from ``corpus`` a crash cut short, by whether this index still lists each
        document (see :func:`citeqa.corpus.remove.recover_removals`); the documents settled."""
        from citeqa.corpus.remove import recover_removals

        return recover_removals(corpus, frozenset(self._data.documents))

    def _folder(self) -> Path:
        """The index folder a corpus change writes to; ConfigError for an engine without one."""
        if self.index_dir is None:
            raise ConfigError("this index is not a folder: add and remove documents with citeqa index --backend")
        return self.index_dir
