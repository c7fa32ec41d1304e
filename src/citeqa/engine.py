"""The one service the CLI and the UI call: open an index, answer questions, reload after a build."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from citeqa.answer.pipeline import AnswerPipeline, ClaimInputs, Trace
from citeqa.answer.scoring import has_reader_weights
from citeqa.answer.settings import AnswerSettings
from citeqa.answer.work import WorkQueue
from citeqa.embedding import Embedder, encode_queries, load_embedder, token_counter
from citeqa.errors import ConfigError
from citeqa.index.manifest import check_model
from citeqa.index.store import IndexData, load_index
from citeqa.reader.reader import Reader
from citeqa.records import Answer, DocumentInfo

if TYPE_CHECKING:  # claims load with the first check: an answer never needs them
    from citeqa.answer.claims import ClaimCheck, ClaimThresholds

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


class Engine:
    """Answers questions from one index. Thread-safe for concurrent ``ask`` calls, whose model calls
    take turns in ``work`` (:class:`~citeqa.answer.work.WorkQueue`: the least-served question
    first; a queue of its own when None). ``settings``: those fitted for the index's model when
    None (:meth:`AnswerSettings.for_model`)."""

    def __init__(
        self,
        data: IndexData,
        embedder: Embedder,
        settings: AnswerSettings | None = None,
        index_dir: Path | None = None,
        reader: Reader | None = None,
        work: WorkQueue | None = None,
    ) -> None:
        self.data = data
        self.embedder = embedder
        self.index_dir = index_dir
        self.reader = reader
        self.work = work if work is not None else WorkQueue()
        self._lock = threading.Lock()
        self.pipeline = AnswerPipeline(data, self._encode_queries, settings, reader, token_counter(embedder), self.work)

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
    ) -> Engine:
        """Open an index; ``model`` (if given) must be the one it was built with. ``reader``:
        "auto" uses the trained reader where a scorer was fitted with it for the model, "on"
        insists, "off" keeps the faster reader-less path. The settings are those fitted for the
        index's model, with ``overrides`` changed by name (``{"pool": 20}``; see
        :meth:`AnswerSettings.with_overrides`; an unknown name is a :class:`ConfigError`).
        Without ``embedder``, ``embedder_factory`` makes the one for the model (the CLI's tests
        pass a model-free one). ``backend``: PostgreSQL shards (``postgresql://...``, see
        :mod:`citeqa.pg`) instead of the ``index_dir`` folder; documents are then added with
        ``citeqa index --backend``, not through this engine (its ``index_dir`` is None)."""
        data = open_data(Path(index_dir), backend)
        check_model(data.manifest, model)
        chosen = make_reader(data.manifest.model, reader)
        settings = AnswerSettings.for_model(data.manifest.model, reader=chosen is not None)
        if overrides:
            settings = settings.with_overrides(overrides)
        if embedder is None:
            embedder = embedder_factory(data.manifest.model if model is None else model)
        return cls(data, embedder, settings, Path(index_dir) if backend is None else None, chosen)

    @property
    def settings(self) -> AnswerSettings:
        return self.pipeline.settings

    @property
    def corpus_langs(self) -> frozenset[str]:
        """Languages of the indexed passages."""
        return frozenset(self.data.passage_langs())

    def warm_up(self) -> None:
        """Load the models and the question's language detector now, not on the first question.

        Only what questions use: the detector of passages (a coarse pass over every language,
        then a fine one) loads with the first upload, for files a server may never be sent.
        lingua loads its models as the text it reads needs them: the questions' detector took
        106 MB here, warming the passages' one 7-29 MB more, and detecting the 55 passages of
        ``corpus/`` whole 146 MB more (bench/memory.py)."""
        self._encode_queries(["warm up"])
        if self.reader is not None:
            self.reader.warm_up()
        for lang in sorted(self.corpus_langs):
            sample = next(c.text for c in self.data.chunks if c.lang == lang)
            self.ask(sample[:120])

    def reload(self) -> Engine:
        """A new engine over the live index, sharing this one's loaded models and work queue."""
        reopen = getattr(self.data, "reopen", None)  # a remote backend moves to its live generation
        if self.index_dir is None and reopen is None:
            return self
        data = load_index(self.index_dir) if self.index_dir is not None else reopen()  # type: ignore[misc]  # reopen is not None here
        return Engine(data, self.embedder, self.settings, self.index_dir, self.reader, self.work)

    def without_reader(self) -> Engine:
        """This engine as ``reader="off"`` makes it: the same index, model and settings, with the
        scorer fitted without the reader (``citeqa serve`` falls back to it when the reader cannot load)."""
        scoring = AnswerSettings.for_model(self.data.manifest.model, reader=False).scoring
        return Engine(self.data, self.embedder, replace(self.settings, scoring=scoring), self.index_dir, None)

    def question_language(self, question: str, history: Sequence[str] = (), page_lang: str | None = None) -> str:
        """The language a question is answered in (see :meth:`AnswerPipeline.question_language`)."""
        return self.pipeline.question_language(question, history, page_lang)

    def doc_text(self, doc_id: str) -> str:
        return self.data.documents[doc_id].text

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
        with up to ``k`` passages that bear on it (see :mod:`citeqa.answer.claims`); ``page_lang`` as for :meth:`ask`."""
        from citeqa.answer.claim_parts import analyse_claim
        from citeqa.answer.claim_reading import ReadingRule, ValueReading, judge_block, read_claim, reading_rule
        from citeqa.answer.claims import check_claim, claim_thresholds

        started = time.perf_counter()
        inputs = self.claim_inputs(claim, k, page_lang)
        judge = thresholds if thresholds is not None else self.settings.claims
        rule: ReadingRule | None = None
        readings: tuple[ValueReading, ...] = ()
        if self.reader is not None:  # each value of the claim asked for, about its own subject
            rule = reading_rule()
            fitted = judge_block() if thresholds is None else {}
            if fitted:
                judge = claim_thresholds(fitted)  # the judge fitted to go with the reading
            readings = read_claim(
                self.reader,
                analyse_claim(inputs.claim, inputs.language),
                inputs.hits,
                rule,
                self.work.ticket().turn,
                self.settings.bounds.reader_windows,
                self.data.documents,
            )
        result = check_claim(
            inputs.claim,
            inputs.language,
            inputs.hits,
            inputs.candidates,
            inputs.similarities,
            self.data.documents,
            k,
            judge,
            readings,
            rule,
        )
        return replace(result, latency_ms=round((time.perf_counter() - started) * 1000, 3))

    def claim_inputs(self, claim: str, k: int = 5, page_lang: str | None = None) -> ClaimInputs:
        """What a claim is checked on: the passages retrieved for it as for a question, every sentence
        of every one of them, and each one's cosine to it (see :meth:`AnswerPipeline.claim_inputs`)."""
        return self.pipeline.claim_inputs(claim, k, page_lang)

    def document_info(self, doc_id: str) -> DocumentInfo:
        """What a citation of ``doc_id`` names besides the passage: title, file, language, kind and
        when the document was indexed (from the manifest); KeyError for an unknown document."""
        doc = self.data.documents[doc_id]
        entry = next((e for e in self.data.manifest.documents if e.doc_id == doc_id), None)
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
        return self.pipeline.run(question, history, k, language, page_lang)

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        """Query vectors, one batch at a time: one model serves many UI threads."""
        with self._lock:
            return encode_queries(self.embedder, texts)
