"""The one service the CLI and the UI call: a facade over the answerer (:mod:`citeqa.qa.answerer`), the
claim checker (:mod:`citeqa.claims.checker`) and the corpus service (:mod:`citeqa.corpus.service`), each
loaded by ``warm_up()`` and run by ``run(...)``, which owns what they share: the index (its private
``_data``, which no caller reaches), the models and the work queue their calls take turns in."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citeqa.claims.checker import ClaimChecker
from citeqa.claims.thresholds import ClaimThresholds
from citeqa.corpus.service import CorpusService, open_data
from citeqa.embedding import Embedder, encode_queries, load_embedder, token_counter
from citeqa.index.manifest import check_model
from citeqa.index.store import IndexData
from citeqa.qa.answerer import Answerer, ReaderMode, make_reader
from citeqa.qa.pipeline import Trace
from citeqa.qa.settings import AnswerSettings
from citeqa.qa.work import Ticket, WorkQueue
from citeqa.reader.reader import Reader
from citeqa.records import Answer, Document, DocumentInfo
from citeqa.settings import Settings

if TYPE_CHECKING:  # loaded where used: opening an index needs no build, answering no upload or claim
    from citeqa.claims.check import ClaimCheck, ClaimInputs
    from citeqa.corpus.add import AddWatch, UploadResult
    from citeqa.corpus.remove import RemovalResult
    from citeqa.index.manifest import Manifest
    from citeqa.ingest.budget import ParseBudget

#: Seconds one question (or claim) may take before a remote backend gives up on it
#: (:func:`~citeqa.qa.backend.question_deadline`; ``citeqa ask/check/eval/serve --question-timeout``).
QUESTION_TIMEOUT_S = 30.0


class Engine:
    """Answers questions (:attr:`answerer`) and checks claims (:attr:`checker`) from one index ``data``,
    read through :attr:`documents` and the other queries and changed through :meth:`add` and :meth:`remove`
    (:attr:`corpus_service`). Thread-safe for concurrent ``ask`` calls, whose model calls take turns in
    ``work`` (a new queue when None). ``settings``, ``claims``: those fitted for the index's model when
    None; ``question_timeout_s``: how long one question may wait on a remote backend (None: no limit)."""

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
        self._data, self.question_timeout_s = data, question_timeout_s
        self.embedder, self.index_dir, self.reader = embedder, index_dir, reader
        self.work = work if work is not None else WorkQueue()
        self._lock = threading.Lock()
        counter = token_counter(embedder)
        self.answerer = Answerer(data, self.encode_queries, settings, reader, counter, self.work, question_timeout_s)
        self.pipeline = self.answerer.pipeline  # its steps: the fitting scripts and the tests
        self.checker = ClaimChecker(self.answerer, claims)
        self.corpus_service = CorpusService(data, embedder, index_dir)

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
        """Open an index; ``model`` (if given) must be the one it was built with. ``reader``: "auto" uses the
        trained reader where a scorer was fitted with it for the model, "on" insists, "off" does without.
        The settings are those fitted for the index's model, with ``overrides`` changed by name
        (``{"pool": 20}``, ``{"claims.conflict_cover": 0.5}``: :meth:`citeqa.settings.Settings.with_overrides`;
        an unknown name is a :class:`ConfigError`). Without ``embedder``, ``embedder_factory`` makes the
        model's. ``backend``: PostgreSQL shards (``postgresql://...``, :mod:`citeqa.pg`) instead of the
        folder, changed with ``citeqa index --backend`` only; ``question_timeout_s``: how long one question may wait on it."""
        data = open_data(Path(index_dir), backend)
        check_model(data.manifest, model)
        chosen = make_reader(data.manifest.model, reader)
        settings = Settings.for_model(data.manifest.model, reader=chosen is not None).with_overrides(overrides)
        if embedder is None:
            embedder = embedder_factory(data.manifest.model if model is None else model)
        folder = Path(index_dir) if backend is None else None
        return cls(data, embedder, settings.answer, folder, chosen, None, settings.claims, question_timeout_s)

    @property
    def settings(self) -> AnswerSettings:
        return self.answerer.settings

    @property
    def claim_thresholds(self) -> ClaimThresholds:
        """When a claim counts as backed (:meth:`check` without ``thresholds``; see :class:`ClaimChecker`)."""
        return self.checker.claim_thresholds

    @property
    def corpus_langs(self) -> frozenset[str]:
        """Languages of the indexed passages."""
        return self.corpus_service.corpus_langs

    @property
    def manifest(self) -> Manifest:
        """The index's manifest: its model, backend, search, chunker and one entry per document."""
        return self.corpus_service.manifest

    @property
    def documents(self) -> Mapping[str, Document]:
        """The indexed documents by id (read only: a change goes through :meth:`add` or :meth:`remove`)."""
        return self.corpus_service.documents

    @property
    def passage_count(self) -> int:
        """How many passages the index holds."""
        return self.corpus_service.passage_count

    def document_langs(self) -> Counter[str]:
        """How many documents are in each language (the manifest's entries, as the corpus table lists them)."""
        return self.corpus_service.document_langs()

    def sample_passage(self, lang: str) -> str:
        """The text of the first passage in ``lang``; StopIteration when there is none."""
        return self.corpus_service.sample_passage(lang)

    def doc_text(self, doc_id: str) -> str:
        """The whole text of ``doc_id`` (KeyError for an unknown document)."""
        return self.corpus_service.doc_text(doc_id)

    def document_info(self, doc_id: str) -> DocumentInfo:
        """What a citation of ``doc_id`` names besides the passage (:meth:`CorpusService.document_info`)."""
        return self.corpus_service.document_info(doc_id)

    def warm_up(self) -> None:
        """Load what questions use now, not with the first one (:meth:`Answerer.warm_up`)."""
        self.answerer.warm_up()

    def close(self) -> None:
        """Close the index's connections (a PostgreSQL backend's; a folder has none)."""
        self.corpus_service.close()

    def reload(self) -> Engine:
        """A new engine over the live index, sharing this one's loaded models and work queue."""
        data = self.corpus_service.live()
        return self if data is None else self._over(data, self.settings, self.reader, self.work)

    def without_reader(self) -> Engine:
        """This engine as ``reader="off"`` makes it, in a queue of its own (``citeqa serve``'s fallback)."""
        scoring = AnswerSettings.for_model(self._data.manifest.model, reader=False).scoring
        return self._over(self._data, replace(self.settings, scoring=scoring), None, WorkQueue())

    def adjusted(self, settings: AnswerSettings | None = None, reader: Reader | None = None) -> Engine:
        """This engine over the same index, models and work queue with other ``settings`` and/or another
        ``reader`` (each kept when None): the fitting scripts and the tests try variants of one index."""
        chosen = reader if reader is not None else self.reader
        return self._over(self._data, settings if settings is not None else self.settings, chosen, self.work)

    def _over(self, data: IndexData, settings: AnswerSettings, reader: Reader | None, work: WorkQueue) -> Engine:
        """An engine over ``data`` in ``work`` with this one's embedder, folder, claim thresholds and timeout."""
        claims = self.checker.given_thresholds
        return Engine(data, self.embedder, settings, self.index_dir, reader, work, claims, self.question_timeout_s)

    def question_language(self, question: str, history: Sequence[str] = (), page_lang: str | None = None) -> str:
        """The language a question is answered in (see :meth:`AnswerPipeline.question_language`)."""
        return self.answerer.question_language(question, history, page_lang)

    def ask(
        self,
        question: str,
        history: Sequence[str] = (),
        k: int = 5,
        language: str | None = None,
        page_lang: str | None = None,
    ) -> Answer:
        """Answer ``question`` from the index; ``history`` holds earlier questions. ``language`` overrides
        the detected language of the question ("any" disables the preference for passages in the
        question's language); ``page_lang`` (the browser's language) leans a question read either way."""
        return self.answerer.run(question, history, k, language, page_lang)

    def trace(
        self,
        question: str,
        history: Sequence[str] = (),
        k: int = 5,
        language: str | None = None,
        page_lang: str | None = None,
    ) -> Trace:
        """Every step of answering ``question``: language, query, hits, scored spans, choice, record."""
        return self.answerer.trace(question, history, k, language, page_lang)

    def check(
        self, claim: str, k: int = 5, thresholds: ClaimThresholds | None = None, page_lang: str | None = None
    ) -> ClaimCheck:
        """Check ``claim`` against the documents: ``supported``, ``conflicting`` or ``not_found``, with up to
        ``k`` passages that bear on it (:mod:`citeqa.claims.check`); ``page_lang`` as for :meth:`ask`."""
        return self.checker.run(claim, k, thresholds, page_lang)

    def claim_inputs(
        self, claim: str, k: int = 5, page_lang: str | None = None, ticket: Ticket | None = None
    ) -> ClaimInputs:
        """What a claim is checked on (see :meth:`ClaimChecker.claim_inputs`)."""
        return self.checker.claim_inputs(claim, k, page_lang, ticket)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """The questions' vectors (L2-normalised rows), one batch at a time: one model serves every thread."""
        with self._lock:
            return encode_queries(self.embedder, texts)

    # Before there is an engine to open (``citeqa index``): the corpus service's, under the names callers know.
    build = staticmethod(CorpusService.build)
    index_model = staticmethod(CorpusService.index_model)
    publish = staticmethod(CorpusService.publish)

    @property
    def corpus_changeable(self) -> bool:
        """Whether documents can be added and removed here (not a PostgreSQL index: ``citeqa index --backend``)."""
        return self.corpus_service.changeable

    def add(
        self,
        files: Sequence[tuple[Path, str]],
        corpus: Path,
        max_bytes: int | None = None,
        watch: AddWatch | None = None,
        budget: ParseBudget | None = None,
    ) -> tuple[UploadResult, Engine]:
        """Add each ``(uploaded file, its name)`` to ``corpus`` and index it (none: re-scan; :meth:`CorpusService.run`).
        What the add did and the engine to answer from: one over the new generation when indexed, else this one."""
        result = self.corpus_service.run(files, corpus, max_bytes, watch, budget)
        return result, (self.reload() if result.indexed else self)

    def remove(self, doc_id: str, corpus: Path) -> tuple[RemovalResult, Engine]:
        """Delete ``doc_id`` from ``corpus`` and the index (:meth:`CorpusService.remove`); returns as :meth:`add` does."""
        result = self.corpus_service.remove(doc_id, corpus)
        return result, (self.reload() if result.removed else self)

    def settle_removals(self, corpus: Path) -> list[str]:
        """Settle the removals from ``corpus`` a crash cut short (see :meth:`CorpusService.settle_removals`)."""
        return self.corpus_service.settle_removals(corpus)
