"""The answerer: the component that answers questions from one index, as :class:`citeqa.engine.Engine`
runs it (``Engine.ask``, ``.trace``, ``.question_language``).

Its contract is haystack's: :meth:`Answerer.warm_up` loads what answering uses, once, and
:meth:`Answerer.run` turns a question into an :class:`~citeqa.records.Answer`. The index, the
query encoder, the reader and the work queue are the engine's, handed in: the claim checker
(:class:`citeqa.claims.checker.ClaimChecker`) retrieves through the same answerer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from citeqa.errors import ConfigError
from citeqa.qa.backend import RetrievalBackend, question_deadline
from citeqa.qa.pipeline import AnswerPipeline, Trace
from citeqa.qa.scoring import has_reader_weights
from citeqa.reader.reader import Reader

if TYPE_CHECKING:
    from citeqa.qa.bounds import TokenCounter
    from citeqa.qa.settings import AnswerSettings
    from citeqa.qa.work import WorkQueue
    from citeqa.reader.reader import ExtractiveReader
    from citeqa.records import Answer

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


class Answerer:
    """Answers questions from ``data`` through an :class:`~citeqa.qa.pipeline.AnswerPipeline`
    (``settings``, ``reader``, ``count_tokens`` and ``work`` as it takes them), each question within
    ``question_timeout_s`` of a remote backend (None: no limit)."""

    def __init__(
        self,
        data: RetrievalBackend,
        encode: Callable[[list[str]], np.ndarray],
        settings: AnswerSettings | None = None,
        reader: ExtractiveReader | None = None,
        count_tokens: TokenCounter | None = None,
        work: WorkQueue | None = None,
        question_timeout_s: float | None = None,
    ) -> None:
        self.pipeline = AnswerPipeline(data, encode, settings, reader, count_tokens, work)
        self.question_timeout_s = question_timeout_s
        self._warm = False

    @property
    def data(self) -> RetrievalBackend:
        """The index answers come from."""
        return self.pipeline.data

    @property
    def settings(self) -> AnswerSettings:
        return self.pipeline.settings

    @property
    def reader(self) -> ExtractiveReader | None:
        return self.pipeline.reader

    @property
    def work(self) -> WorkQueue:
        """The queue the model calls of concurrent questions (and claims) take turns in."""
        return self.pipeline.work

    def warm_up(self) -> None:
        """Load the query encoder, the reader and the question's language detector now, not with the
        first question: one question of each language of the passages. Once; later calls do nothing.

        Only what questions use: the detector of passages (a coarse pass over every language,
        then a fine one) loads with the first upload, for files a server may never be sent; lingua
        loads its models as the text it reads needs them (bench/memory.py weighs each step)."""
        if self._warm:
            return
        self.pipeline.encode(["warm up"])
        if self.reader is not None:
            self.reader.warm_up()
        for lang in sorted(set(self.data.passage_langs())):
            passage = self.data.first_passage(lang)
            if passage is not None:
                self.run(passage.text[:120])
        self._warm = True

    def run(
        self,
        question: str,
        history: Sequence[str] = (),
        k: int = 5,
        language: str | None = None,
        page_lang: str | None = None,
    ) -> Answer:
        """Answer ``question`` (``history`` holds earlier questions) citing up to ``k`` passages;
        ``language`` and ``page_lang`` as :meth:`AnswerPipeline.run` takes them."""
        return self.trace(question, history, k, language, page_lang).answer

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

    def question_language(self, question: str, history: Sequence[str] = (), page_lang: str | None = None) -> str:
        """The language a question is answered in (see :meth:`AnswerPipeline.question_language`)."""
        return self.pipeline.question_language(question, history, page_lang)
