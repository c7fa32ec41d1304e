"""The claim checker: the component that checks a claim against the documents, as
:class:`citeqa.engine.Engine` runs it (``Engine.check``, ``.claim_inputs``).

Its contract is haystack's: :meth:`ClaimChecker.warm_up` loads what checking uses, once, and
:meth:`ClaimChecker.run` turns a claim into a :class:`~citeqa.claims.check.ClaimCheck`. It is built
on the answerer (:class:`citeqa.qa.answerer.Answerer`): a claim is retrieved as a question is, in
the same work queue, with the same reader. The claims' modules load with the first check or warm-up:
an answer never needs them."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from citeqa.claims.thresholds import ClaimThresholds, fitted_thresholds
from citeqa.qa.backend import question_deadline

if TYPE_CHECKING:
    from citeqa.claims.check import ClaimCheck, ClaimInputs
    from citeqa.qa.answerer import Answerer
    from citeqa.qa.backend import RetrievalBackend
    from citeqa.qa.pipeline import AnswerPipeline
    from citeqa.qa.settings import AnswerSettings
    from citeqa.qa.work import Ticket, WorkQueue
    from citeqa.reader.reader import ExtractiveReader


class ClaimChecker:
    """Checks claims over the index ``answerer`` answers from. ``thresholds``: when a claim counts as
    backed; those fitted for the index's model, read with the first check, when None."""

    def __init__(self, answerer: Answerer, thresholds: ClaimThresholds | None = None) -> None:
        self.answerer = answerer
        self._claims = thresholds

    @property
    def _data(self) -> RetrievalBackend:
        return self.answerer.data

    @property
    def pipeline(self) -> AnswerPipeline:
        return self.answerer.pipeline

    @property
    def settings(self) -> AnswerSettings:
        return self.answerer.settings

    @property
    def reader(self) -> ExtractiveReader | None:
        return self.answerer.reader

    @property
    def work(self) -> WorkQueue:
        return self.answerer.work

    @property
    def given_thresholds(self) -> ClaimThresholds | None:
        """The thresholds given, or read by a check so far (None: not yet read)."""
        return self._claims

    @property
    def claim_thresholds(self) -> ClaimThresholds:
        """When a claim counts as backed (:meth:`run` without ``thresholds``): those given, else
        those fitted for the index's model, read once."""
        if self._claims is None:
            self._claims = fitted_thresholds(self._data.model)
        return self._claims

    def warm_up(self) -> None:
        """Load the claims' modules and thresholds now, not with the first check (the models are
        the answerer's to load: :meth:`Answerer.warm_up`). Once: what is loaded stays loaded."""
        import citeqa.claims.check
        import citeqa.claims.reading  # noqa: F401 - loaded for its import's sake

        self.claim_thresholds  # noqa: B018 - read for its side effect: the fitted thresholds

    def run(
        self, claim: str, k: int = 5, thresholds: ClaimThresholds | None = None, page_lang: str | None = None
    ) -> ClaimCheck:
        """Check ``claim`` against the documents: ``supported``, ``conflicting`` or ``not_found``,
        with up to ``k`` passages that bear on it (see :mod:`citeqa.claims.check`); ``page_lang`` as
        for a question."""
        with question_deadline(self.answerer.question_timeout_s):
            return self._check(claim, k, thresholds, page_lang)

    def _check(self, claim: str, k: int, thresholds: ClaimThresholds | None, page_lang: str | None) -> ClaimCheck:
        from citeqa.claims.check import check_claim, claim_thresholds, is_question, unchecked
        from citeqa.claims.parts import analyse_claim
        from citeqa.claims.questions import split_values
        from citeqa.claims.reading import ValueReading, read_claim
        from citeqa.claims.rule import ReadingRule, judge_block, reading_rule

        started = time.perf_counter()
        # one place in the work queue for the claim's embedding and its reads, after the questions'
        ticket = self.work.ticket(after_questions=True)
        inputs = self.claim_inputs(claim, k, page_lang, ticket)
        if is_question(inputs.claim):  # a question is asked, not checked: said so in the page's language
            return replace(
                unchecked(inputs.claim, inputs.language, page_lang),
                latency_ms=round((time.perf_counter() - started) * 1000, 3),
            )
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
