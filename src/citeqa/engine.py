"""The one service the CLI and the UI call: open an index, answer questions, reload after a build."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from citeqa.answer.pipeline import AnswerPipeline, AnswerSettings, Trace
from citeqa.embedding import Embedder, encode_queries, load_embedder
from citeqa.index.manifest import check_model
from citeqa.index.store import IndexData, load_index
from citeqa.records import Answer
from citeqa.text.language import SUPPORTED, detect

#: Kept under its old name: everything that shapes an answer.
EngineSettings = AnswerSettings


class Engine:
    """Answers questions from one index. Thread-safe for concurrent ``ask`` calls."""

    def __init__(self, data: IndexData, embedder: Embedder, settings: AnswerSettings | None = None,
                 index_dir: Path | None = None) -> None:
        self.data = data
        self.embedder = embedder
        self.index_dir = index_dir
        self._lock = threading.Lock()
        self.pipeline = AnswerPipeline(data, self._encode_queries, settings)

    @classmethod
    def open(cls, index_dir: Path | str = "index", model: str | None = None,
             settings: AnswerSettings | None = None, embedder: Embedder | None = None) -> Engine:
        """Open an index; ``model`` (if given) must be the one it was built with."""
        data = load_index(Path(index_dir))
        check_model(data.manifest, model)
        if embedder is None:
            embedder = load_embedder(data.manifest.model if model is None else model)
        return cls(data, embedder, settings, Path(index_dir))

    @property
    def settings(self) -> AnswerSettings:
        return self.pipeline.settings

    @property
    def corpus_langs(self) -> frozenset[str]:
        """Languages of the indexed passages."""
        return frozenset(c.lang for c in self.data.chunks)

    def warm_up(self) -> None:
        """Load the model and the language detector now, not on the first question."""
        self._encode_queries(["warm up"])
        for lang in sorted(self.corpus_langs):
            sample = next(c.text for c in self.data.chunks if c.lang == lang)
            detect(sample[:200], SUPPORTED)
            self.ask(sample[:120])

    def reload(self) -> Engine:
        """A new engine over the live index, sharing this one's loaded model."""
        if self.index_dir is None:
            return self
        return Engine(load_index(self.index_dir), self.embedder, self.settings, self.index_dir)

    def question_language(self, question: str, history: Sequence[str] = ()) -> str:
        """The language a question is answered in (see :meth:`AnswerPipeline.question_language`)."""
        return self.pipeline.question_language(question, history)

    def doc_text(self, doc_id: str) -> str:
        return self.data.documents[doc_id].text

    def ask(self, question: str, history: Sequence[str] = (), k: int = 5, language: str | None = None) -> Answer:
        """Answer ``question`` from the index; ``history`` holds earlier questions.

        ``language`` overrides the detected language of the question ("any" disables the
        preference for passages in the question's language).
        """
        return self.trace(question, history, k, language).answer

    def trace(self, question: str, history: Sequence[str] = (), k: int = 5, language: str | None = None) -> Trace:
        """Every step of answering ``question``: language, query, hits, scored spans, choice, record."""
        return self.pipeline.run(question, history, k, language)

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        with self._lock:  # one model, many UI threads: encode one batch at a time
            return encode_queries(self.embedder, texts)
