"""The one service the CLI and the UI call: a facade over the answerer (:mod:`citeqa.qa.answerer`), the
claim checker (:mod:`citeqa.claims.checker`) and the corpus service (:mod:`citeqa.corpus.service`), each
a component with a haystack-style contract (``warm_up()``, then ``run(...)``). The engine owns what they
share: the index, the models (query encoder, reader) and the work queue their calls take turns in.
The callers never reach the index itself (:class:`~citeqa.index.store.IndexData`, the engine's private
``_data``): what they read of it, and every change to it, is a method here."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citeqa.claims.checker import ClaimChecker
from citeqa.claims.thresholds import ClaimThresholds
from citeqa.corpus.service import CorpusService, IndexQueries, open_data
from citeqa.embedding import Embedder, encode_queries, load_embedder, token_counter
from citeqa.index.manifest import check_model
from citeqa.index.store import IndexData, load_index
from citeqa.qa.answerer import Answerer, ReaderMode, make_reader
from citeqa.qa.pipeline import AnswerPipeline, Trace
from citeqa.qa.settings import AnswerSettings
from citeqa.qa.work import Ticket, WorkQueue
from citeqa.reader.reader import Reader
from citeqa.records import Answer
from citeqa.settings import Settings

if TYPE_CHECKING:  # loaded where used: opening an index needs no build, answering no upload or claim
    from citeqa.claims.check import ClaimCheck, ClaimInputs
    from citeqa.corpus.add import AddWatch, UploadResult
    from citeqa.corpus.remove import RemovalResult
    from citeqa.ingest.budget import ParseBudget

#: Seconds one question (or claim) may take before a remote backend gives up on it
#: (:func:`~citeqa.qa.backend.question_deadline`; ``citeqa ask/check/eval/serve --question-timeout``).
QUESTION_TIMEOUT_S = 30.0


class Engine(IndexQueries):
    """Answers questions (:attr:`answerer`) and checks claims (:attr:`checker`) from one index, and
    changes the corpus behind it (:attr:`corpus_service`). Thread-safe for concurrent ``ask`` calls,
    whose model calls take turns in ``work`` (:class:`~citeqa.qa.work.WorkQueue`: the least-served
    question first; a queue of its own when None). ``settings`` and the claim thresholds (``claims``):
    those fitted for the index's model when None. ``data``, the index, is the engine's own from then
    on: callers read it through :attr:`documents`, :attr:`manifest` and the other queries, and change
    it through :meth:`add` and :meth:`remove`, which hand back the engine over the new generation.
    ``question_timeout_s``: how long one question may wait on a remote backend (None: no limit)."""

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
        self.embedder = embedder
        self.index_dir = index_dir
        self.reader = reader
        self.work = work if work is not None else WorkQueue()
        self._lock = threading.Lock()
        counter = token_counter(embedder)
        self.answerer = Answerer(data, self.encode_queries, settings, reader, counter, self.work, question_timeout_s)
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
        """Open an index; ``model`` (if given) must be the one it was built with. ``reader``: "auto" uses
        the trained reader where a scorer was fitted with it for the model, "on" insists, "off" keeps the
        faster reader-less path. The settings are those fitted for the index's model, with ``overrides``
        changed by name (``{"pool": 20}``, ``{"claims.conflict_cover": 0.5}``; see
        :meth:`citeqa.settings.Settings.with_overrides`; an unknown name is a :class:`ConfigError`).
        Without ``embedder``, ``embedder_factory`` makes the one for the model (the CLI's tests pass a
        model-free one). ``backend``: PostgreSQL shards (``postgresql://...``, see :mod:`citeqa.pg`)
        instead of the ``index_dir`` folder, whose documents change with ``citeqa index --backend``
        (its ``index_dir`` is None); ``question_timeout_s``: how long one question may wait on it."""
        data = open_data(Path(index_dir), backend)
        check_model(data.manifest, model)
        chosen = make_reader(data.manifest.model, reader)
        settings = Settings.for_model(data.manifest.model, reader=chosen is not None)
        if overrides:
            settings = settings.with_overrides(overrides)
        if embedder is None:
            embedder = embedder_factory(data.manifest.model if model is None else model)
        folder = Path(index_dir) if backend is None else None
        return cls(data, embedder, settings.answer, folder, chosen, None, settings.claims, question_timeout_s)

    @property
    def pipeline(self) -> AnswerPipeline:
        """The answerer's pipeline (its steps: the fitting scripts and the tests)."""
        return self.answerer.pipeline

    @property
    def settings(self) -> AnswerSettings:
        return self.answerer.settings

    @property
    def question_timeout_s(self) -> float | None:
        return self.answerer.question_timeout_s

    @property
    def claim_thresholds(self) -> ClaimThresholds:
        """When a claim counts as backed (:meth:`check` without ``thresholds``; see :class:`ClaimChecker`)."""
        return self.checker.claim_thresholds

    # The engine's life: warm, close, and the engines made from it.
    def warm_up(self) -> None:
        """Load what questions use now, not with the first one (:meth:`Answerer.warm_up`)."""
        self.answerer.warm_up()

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
        return self._over(data, self.settings, self.reader)

    def without_reader(self) -> Engine:
        """This engine as ``reader="off"`` makes it, in a work queue of its own: the same index, model and
        settings, with the scorer fitted without the reader (``citeqa serve`` falls back to it)."""
        scoring = AnswerSettings.for_model(self._data.manifest.model, reader=False).scoring
        return self._over(self._data, replace(self.settings, scoring=scoring), None, WorkQueue())

    def adjusted(self, settings: AnswerSettings | None = None, reader: Reader | None = None) -> Engine:
        """This engine over the same index, models and work queue with other ``settings`` and/or another
        ``reader`` (each kept when None; :meth:`without_reader` drops the reader): the fitting scripts
        and the tests try variants of one open index."""
        chosen = reader if reader is not None else self.reader
        return self._over(self._data, settings if settings is not None else self.settings, chosen)

    def _over(
        self, data: IndexData, settings: AnswerSettings, reader: Reader | None, work: WorkQueue | None = None
    ) -> Engine:
        """An engine over ``data`` with these settings and reader, and this one's models, folder, claim
        thresholds, timeout, and work queue unless given another."""
        queue, claims = work if work is not None else self.work, self.checker.given_thresholds
        return Engine(data, self.embedder, settings, self.index_dir, reader, queue, claims, self.question_timeout_s)

    # Answers and checks (the answerer's and the claim checker's).
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
        """Check ``claim`` against the documents: ``supported``, ``conflicting`` or ``not_found``,
        with up to ``k`` passages that bear on it (see :mod:`citeqa.claims.check`); ``page_lang`` as for :meth:`ask`."""
        return self.checker.run(claim, k, thresholds, page_lang)

    def claim_inputs(
        self, claim: str, k: int = 5, page_lang: str | None = None, ticket: Ticket | None = None
    ) -> ClaimInputs:
        """What a claim is checked on (see :meth:`ClaimChecker.claim_inputs`)."""
        return self.checker.claim_inputs(claim, k, page_lang, ticket)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """The questions' vectors as the engine searches with them (one L2-normalised row per text), one
        batch at a time: one model serves many UI threads. The first call loads the model."""
        with self._lock:
            return encode_queries(self.embedder, texts)

    # Before there is an engine to open (``citeqa index``): build or refresh an index, say which model
    # built it, publish it to PostgreSQL. The corpus service's own, under the names callers know.
    build = staticmethod(CorpusService.build)
    index_model = staticmethod(CorpusService.index_model)
    publish = staticmethod(CorpusService.publish)

    # Changes to the corpus (the corpus service's): the only way the CLI and the app change the index.
    @property
    def corpus_changeable(self) -> bool:
        """Whether documents can be added and removed through this engine: an index folder can; a
        PostgreSQL index changes with ``citeqa index --backend`` only."""
        return self.corpus_service.changeable

    def add(
        self,
        files: Sequence[tuple[Path, str]],
        corpus: Path,
        max_bytes: int | None = None,
        watch: AddWatch | None = None,
        budget: ParseBudget | None = None,
    ) -> tuple[UploadResult, Engine]:
        """Check and copy each ``(uploaded file, its name)`` into ``corpus`` and index the corpus (no files:
        re-scan it; see :meth:`CorpusService.run`). Returns what the add did and the engine to answer from
        now on: one over the new live generation when the add was indexed, else this one. A failed or
        cancelled add leaves the corpus and the live index as they were."""
        result = self.corpus_service.run(files, corpus, max_bytes, watch, budget)
        return result, (self.reload() if result.indexed else self)

    def remove(self, doc_id: str, corpus: Path) -> tuple[RemovalResult, Engine]:
        """Delete the file of ``doc_id`` from ``corpus`` and drop its passages from the index (see
        :meth:`CorpusService.remove`); what the removal did and the engine to answer from, as :meth:`add`."""
        result = self.corpus_service.remove(doc_id, corpus)
        return result, (self.reload() if result.removed else self)

    def settle_removals(self, corpus: Path) -> list[str]:
        """Settle the removals from ``corpus`` a crash cut short (see :meth:`CorpusService.settle_removals`)."""
        return self.corpus_service.settle_removals(corpus)
