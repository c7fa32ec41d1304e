"""The answer pipeline as stages with typed outputs; one question in, a :class:`Trace` of every step out.

Answers: prepare (:class:`Asked`: language, retrieval query) → retrieve (:class:`Retrieval`: the
query's vector and the fused hits) → extract (:class:`Extraction`: candidate spans with named
features, the reader's spans) → choose (scores; the question's language first when it answers) →
record (the answer record). A text's sentences (:meth:`AnswerPipeline.sentences`): prepare →
retrieve → every sentence of the hits with its cosine to the text (:class:`Sentences`; the engine
hands a claim's to :mod:`citeqa.claims.check`, which judges them). Each step
runs once per question; :meth:`AnswerPipeline.run` is the only composition of the answer stages,
``Engine.ask`` returns its trace's ``answer``, and evaluation, the scorer fit, the ceilings script
and the benchmark read the same trace.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from citeqa.embedding.protocol import count_pieces
from citeqa.errors import QuestionError
from citeqa.messages import Said, catalogue_languages
from citeqa.qa.answer_types import Wanted
from citeqa.qa.backend import RetrievalBackend
from citeqa.qa.bounds import TokenCounter
from citeqa.qa.features import FEATURES, Passage, candidate_features
from citeqa.qa.questions import clean_history, clean_question, is_follow_up
from citeqa.qa.reading import read_passages, reader_features, reader_short, span_candidates, without_reader
from citeqa.qa.retrieval import Retriever, prefer_language
from citeqa.qa.rules import RuleAnswer, rule_answer
from citeqa.qa.scoring import band_of, check_scores, choose_span
from citeqa.qa.settings import AnswerSettings
from citeqa.qa.spans import Candidate, ScoredSpan, candidates_from, span_short
from citeqa.qa.verifier import Verdict, judge
from citeqa.qa.work import Ticket, WorkQueue
from citeqa.reader.reader import ExtractiveReader, ReadAnswer
from citeqa.records import Answer, AnswerBand, Citation, Hit, Span
from citeqa.text.analysis import query_terms
from citeqa.text.language import corpus_languages, question_candidates, question_language

if TYPE_CHECKING:
    from citeqa.index.spans import SpanVectors

__all__ = [
    "AnswerPipeline",
    "Asked",
    "Extraction",
    "Retrieval",
    "Sentences",
    "Trace",
]


@dataclass(frozen=True, slots=True)
class Asked:
    """The prepare stage's output: a cleaned question, its language, the language whose passages
    come first (None: any), the text searched with (the question, plus the last turn for a
    follow-up) and ``text``, the question as matched and read: the question itself, or within
    the settings' :class:`~citeqa.qa.bounds.RequestBounds` when it is longer (as are the
    history and the query)."""

    question: str
    history: tuple[str, ...]
    language: str
    prefer: str | None
    query: str
    text: str = ""

    def __post_init__(self) -> None:
        if not self.text:
            object.__setattr__(self, "text", self.question)


@dataclass(frozen=True)
class Retrieval:
    """The retrieve stage's output: the query's vector (encoded once) and the passages found, best first."""

    vector: np.ndarray
    hits: tuple[Hit, ...]


@dataclass(frozen=True)
class Extraction:
    """The extract stage's output: the passages searched for the answer (indexes of the hits), what
    the question asks for, the candidate spans with one feature row each (columns in
    :data:`FEATURES` order) and the reader's spans (best first; empty with it off)."""

    pool: tuple[int, ...]
    wanted: Wanted
    candidates: tuple[Candidate, ...]
    features: np.ndarray
    read: tuple[ReadAnswer, ...]
    #: With the reader's spans as the candidates: the span each candidate stands for (else empty).
    spans: tuple[ReadAnswer, ...] = ()
    #: Tokens the reader read for the question (its windows, question tokens included; 0 with it off).
    read_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Sentences:
    """A text's retrieved passages cut into sentences (:meth:`AnswerPipeline.sentences`): the text's
    language, the passages retrieved for it, every sentence of every one of them (not only those
    searched for an answer) and each sentence's cosine to the text (None where the index has no
    span vector)."""

    language: str
    hits: tuple[Hit, ...]
    candidates: tuple[Candidate, ...]
    similarities: tuple[float | None, ...]


@dataclass(frozen=True, kw_only=True)
class Trace:
    """Every step of answering one question, for evaluation, fitting and benchmarks.

    ``features`` holds one row per candidate, columns in :data:`FEATURES` order (the
    same numbers as each span's ``features`` mapping); ``timings_ms`` has one entry per step;
    ``vector`` is the query's vector the hits were retrieved with.
    """

    question: str
    history: tuple[str, ...]
    language: str
    prefer: str | None
    query: str
    hits: tuple[Hit, ...]
    spans: tuple[ScoredSpan, ...]
    features: np.ndarray
    chosen: int | None
    confidence: float
    answer: Answer
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    #: The reader's spans (best first, document offsets) over the passages it read, each ``passage``
    #: the index of its hit; empty with it off.
    read: tuple[ReadAnswer, ...] = ()
    vector: np.ndarray | None = None
    #: Tokens the reader read (the windows it ran, question tokens included; 0 with it off): what a
    #: question's reading costs, whatever the machine's load.
    read_tokens: int = 0
    #: The verifier's judgement of the chosen span (None without a verifier or a reader span).
    verdict: Verdict | None = None

    @property
    def chosen_span(self) -> ScoredSpan | None:
        return self.spans[self.chosen] if self.chosen is not None else None


class AnswerPipeline:
    """Answers questions from one index (any :class:`RetrievalBackend`) with a given query encoder.

    ``count_tokens`` counts what the encoder reads of a text (the bounds of a question are in
    its tokens; words and signs without it); ``work`` orders the model calls of concurrent
    questions (a queue of its own without it)."""

    def __init__(
        self,
        data: RetrievalBackend,
        encode: Callable[[list[str]], np.ndarray],
        settings: AnswerSettings | None = None,
        reader: ExtractiveReader | None = None,
        count_tokens: TokenCounter | None = None,
        work: WorkQueue | None = None,
    ) -> None:
        self.data = data
        self.encode = encode
        self.reader = reader
        self.count_tokens = count_tokens if count_tokens is not None else count_pieces
        self.work = work if work is not None else WorkQueue()
        self.settings = (
            settings if settings is not None else AnswerSettings.for_model(data.model, reader=reader is not None)
        )
        self.retriever = Retriever(data, self.settings.retrieval)
        self.idf = data.lexical_idf()
        self.default_idf = math.log(1 + len(data.chunks))
        self.default_lang = data.majority_lang()
        #: the corpus's languages (they break a tie) and what a question may be read as (those and the interface's)
        self.corpus_langs = corpus_languages(data.document_langs(), data.passage_langs().elements())
        self.question_langs = question_candidates(self.corpus_langs, catalogue_languages())

    def run(
        self,
        question: str,
        history: Sequence[str] = (),
        k: int = 5,
        language: str | None = None,
        page_lang: str | None = None,
    ) -> Trace:
        """Answer ``question`` (``history`` holds earlier questions) citing ``k`` passages.

        ``language`` overrides the detected language of the question ("any" disables the
        preference for passages in the question's language); ``page_lang``, the language the
        reader's page opened in, leans a question that could be read either way.
        """
        clock = _Clock()
        question, history = clean_question(question), clean_history(history)
        if k < 1:
            raise QuestionError(Said("k_too_small"))
        ticket = self.work.ticket()
        asked = self.prepare(question, history, language, clock, page_lang)
        retrieval = self.retrieve(asked, k, clock, ticket)
        extraction = self.extract(asked, retrieval, clock, ticket)
        chosen, spans = clock.step("choose", lambda: self.choose(extraction, asked.prefer))
        verdict = clock.step("verify", lambda: self.verify(asked, retrieval.hits, extraction, spans, chosen))
        answer = clock.step("answer", lambda: self.record(asked, retrieval.hits, extraction, spans, chosen, k, verdict))
        answer = replace(answer, latency_ms=round(clock.total_ms(), 3))
        return Trace(
            question=asked.question,
            history=asked.history,
            language=asked.language,
            prefer=asked.prefer,
            query=asked.query,
            hits=retrieval.hits,
            spans=tuple(spans),
            features=extraction.features,
            chosen=chosen,
            confidence=answer.confidence,
            answer=answer,
            timings_ms=clock.timings,
            read=extraction.read,
            vector=retrieval.vector,
            read_tokens=extraction.read_tokens,
            verdict=verdict,
        )

    def sentences(self, text: str, k: int = 5, page_lang: str | None = None, ticket: Ticket | None = None) -> Sentences:
        """Prepare and retrieve ``text`` as a question (cleaned as one; ``page_lang`` as for
        :meth:`run`; the embedding in ``ticket``'s turn, a new one's without), then split every hit
        into sentences and give each its cosine to the text's vector: what a claim is judged on
        (:meth:`citeqa.engine.Engine.claim_inputs`)."""
        text = clean_question(text)
        if k < 1:
            raise QuestionError(Said("k_too_small"))
        clock = _Clock()  # a check reports its own latency; the steps' timings are not kept
        asked = self.prepare(text, (), None, clock, page_lang)
        retrieval = self.retrieve(asked, k, clock, ticket)
        hits = retrieval.hits
        cands = candidates_from([(i, h.chunk) for i, h in enumerate(hits)])
        sims = self.span_similarities(cands, hits, retrieval.vector)
        return Sentences(asked.language, hits, tuple(cands), tuple(sims))

    def prepare(
        self, question: str, history: tuple[str, ...], language: str | None, clock: _Clock, page_lang: str | None = None
    ) -> Asked:
        """The cleaned ``question``'s language, the language preferred among passages (``language``
        overrides; "any": none) and the retrieval query, from the question and history within the
        settings' bounds."""
        bounds = self.settings.bounds
        text, history = clock.step(
            "bound",
            lambda: (bounds.question(question, self.count_tokens), bounds.history(history, self.count_tokens)),
        )
        lang = clock.step("language", lambda: self.question_language(text, history, page_lang))
        prefer = None if language == "any" else (language if language else lang)
        query = clock.step("query", lambda: self.retrieval_query(text, history))
        return Asked(question, history, lang, prefer, query, text)

    def retrieve(self, asked: Asked, k: int, clock: _Clock, ticket: Ticket | None = None) -> Retrieval:
        """The query's vector and the best ``max(k, pool)`` passages for it. The encoding waits for
        ``ticket``'s turn in the work queue (a new ticket's without one)."""
        ticket = ticket if ticket is not None else self.work.ticket()

        def encode() -> np.ndarray:
            with ticket.turn(self.count_tokens(asked.query)):
                vector: np.ndarray = self.encode([asked.query])[0]
                return vector

        vector = clock.step("encode", encode)
        hits = self.retriever.search(asked.query, vector, max(k, self.settings.pool), timings=clock.timings)
        return Retrieval(vector, tuple(hits))

    def extract(self, asked: Asked, retrieval: Retrieval, clock: _Clock, ticket: Ticket | None = None) -> Extraction:
        """Candidate spans of the answer passages, their features and the reader's spans (read in
        ``ticket``'s turns)."""
        hits = retrieval.hits
        pool = self._answer_pool(hits, asked.prefer)
        wanted, cands, feats = clock.step("candidates", lambda: self.candidates(asked, pool, hits, retrieval.vector))
        read, null, tokens = clock.step("read", lambda: self.read(asked.text, hits, pool, ticket, cands, feats))
        if read and self.settings.candidates == "reader":  # the spans' own reader columns replace the zeros
            chunks = {i: hits[i].chunk for i in pool}
            cands, feats, spans = span_candidates(cands, np.hstack([feats, without_reader(feats)]), read, null, chunks)
            return Extraction(tuple(pool), wanted, tuple(cands), feats, read, tuple(spans), tokens)
        feats = np.hstack(
            [feats, reader_features(cands, read, null) if self.reader is not None else without_reader(feats)]
        )
        return Extraction(tuple(pool), wanted, tuple(cands), feats, read, read_tokens=tokens)

    def question_language(self, question: str, history: Sequence[str] = (), page_lang: str | None = None) -> str:
        """ISO 639-1 code of the question, among the interface's and the corpus's languages (see
        :func:`question_candidates`, :func:`question_language`): the question decides, leaning to
        ``page_lang``; the history, then the corpus's languages break a tie; the corpus's main
        language when nothing can be told."""
        langs, corpus = self.question_langs, self.corpus_langs
        return question_language(question, history, langs, self.default_lang, corpus, page_lang)

    def retrieval_query(self, question: str, history: Sequence[str]) -> str:
        """The text to search with: the question, plus the last turn when it leans on it."""
        if history and is_follow_up(question, len(query_terms(question, self.retriever.langs))):
            return f"{history[-1]} {question}"
        return question

    def candidates(
        self, asked: Asked, pool: Sequence[int], hits: Sequence[Hit], vector: np.ndarray
    ) -> tuple[Wanted, list[Candidate], np.ndarray]:
        """What the question asks for, the answer candidates from the passages ``pool`` (indexes of
        ``hits``) and their feature rows."""
        wanted = Wanted.of(asked.text, asked.query)
        cands = candidates_from([(i, hits[i].chunk) for i in pool])
        passages = [Passage(h.chunk.text, h.chunk.lang, h.dense, h.score) for h in hits]
        return (
            wanted,
            cands,
            candidate_features(
                asked.text,
                asked.query,
                asked.language,
                cands,
                passages,
                self.idf,
                self.default_idf,
                self.span_similarities(cands, hits, vector),
                wanted=wanted,
            ),
        )

    def read(
        self,
        question: str,
        hits: Sequence[Hit],
        pool: Sequence[int],
        ticket: Ticket | None = None,
        cands: Sequence[Candidate] = (),
        feats: np.ndarray | None = None,
    ) -> tuple[tuple[ReadAnswer, ...], dict[int, float], int]:
        """:func:`citeqa.qa.reading.read_passages` with this pipeline's reader and settings (nothing
        when the reader is off), each batch in ``ticket``'s turn."""
        if self.reader is None or not pool:
            return (), {}, 0
        ticket = ticket if ticket is not None else self.work.ticket()
        return read_passages(self.reader, self.settings, question, hits, pool, ticket, cands, feats)

    def span_similarities(
        self, cands: Sequence[Candidate], hits: Sequence[Hit], vector: np.ndarray
    ) -> list[float | None]:
        """Each candidate's cosine to the question, from the index's span vectors (None without one)."""
        spans = self.data.spans
        if spans is None:
            return [None] * len(cands)
        rows = [self._span_row(spans, hits[c.hit_index], c) for c in cands]
        found = [r for r in rows if r is not None]
        sims = dict(zip(found, spans.similarities(found, vector).tolist()))
        return [sims[r] if r is not None else None for r in rows]

    @staticmethod
    def _span_row(spans: SpanVectors, hit: Hit, cand: Candidate) -> int | None:
        """The span-vector row of ``cand`` (the index keys span vectors by passage offsets)."""
        local = cand.span.within(hit.chunk.span)
        return None if local is None else spans.row(hit.row, cand.number, local.start, local.end)

    def _answer_pool(self, hits: Sequence[Hit], prefer: str | None) -> list[int]:
        """Indexes of the passages to extract from: the best overall, in ``prefer`` and by words."""
        n = self.settings.answer_passages
        same = [i for i, h in enumerate(hits) if h.chunk.lang == prefer][:n]
        lexical = sorted(range(len(hits)), key=lambda i: -hits[i].lexical)[:n]
        return sorted(set(range(min(n, len(hits)))) | set(same) | set(lexical))

    def choose(self, extraction: Extraction, prefer: str | None) -> tuple[int | None, list[ScoredSpan]]:
        """Score every span and pick one (see :func:`choose_span`)."""
        model, cands, feats = self.settings.scoring, extraction.candidates, extraction.features
        scores, probs = model.scores(feats), model.probabilities(feats)
        check_scores(scores, probs)  # no record carries a NaN or out-of-range confidence
        reads = extraction.spans if extraction.spans else (None,) * len(cands)
        spans = [
            ScoredSpan(c, dict(zip(FEATURES, map(float, row))), float(s), float(p), r)
            for c, row, s, p, r in zip(cands, feats, scores, probs, reads)
        ]
        langs = [c.lang for c in cands]
        return choose_span(
            scores, probs, langs, prefer, self.settings.language_margin, self.settings.language_floor
        ), spans

    def record(
        self,
        asked: Asked,
        hits: Sequence[Hit],
        extraction: Extraction,
        spans: Sequence[ScoredSpan],
        chosen: int | None,
        k: int,
        verdict: Verdict | None = None,
    ) -> Answer:
        """The answer record: the chosen span (or an abstention), where it and its short answer lie in
        their document, and ``k`` citations; its confidence is the ``verdict``'s (the verifier's
        judgement) when there is one, else the scorer's."""
        question, lang = asked.question, asked.language
        if chosen is None:
            return Answer(question, lang, None, True, 0.0, tuple(self._citation(h) for h in hits[:k]))
        span = spans[chosen]
        confidence = round(verdict.probability if verdict is not None else span.probability, 4)
        first = span.candidate.hit_index
        rest = prefer_language([h for i, h in enumerate(hits) if i != first], span.candidate.lang)
        citations = tuple(self._citation(h) for h in [hits[first], *rest][:k])
        if confidence < self.settings.abstain_below:
            return Answer(question, lang, None, True, confidence, citations)
        cand = span.candidate
        band = band_of(confidence, self.settings.answer_bands())
        if verdict is not None and verdict.disputed and band is self.settings.answer_bands()[0]:
            band = self.settings.answer_bands()[1]  # documents that disagree are never high
        rules: RuleAnswer | None = None
        short = span_short(cand, span.read.span) if span.read is not None else None
        if short is None:
            short, rules = self._short_answer(cand, extraction.wanted, extraction.read)
        # the record's change of frame: the short answer (document offsets) into the answer's text
        at = cand.offsets(short) if short is not None else None
        key = at if at is not None else (rules.key if rules is not None else None)
        return Answer(
            question,
            lang,
            cand.text,
            False,
            confidence,
            citations,
            highlight=key,
            short_answer=cand.text[at.start : at.end] if at is not None else None,
            answer_span=cand.span,
            short_answer_span=short,
            band=AnswerBand(band.name, band.precision, band.support),
            also_in=verdict.also_in if verdict is not None else (),
        )

    def verify(
        self,
        asked: Asked,
        hits: Sequence[Hit],
        extraction: Extraction,
        spans: Sequence[ScoredSpan],
        chosen: int | None,
    ) -> Verdict | None:
        """The verifier's judgement of the chosen span (None without a verifier or a chosen span, or
        for a sentence the reader gave no span in)."""
        verifier = self.settings.verifier
        if verifier is None or chosen is None or spans[chosen].read is None:
            return None
        return judge(verifier, extraction.wanted, asked.language, spans, chosen, hits)

    def _short_answer(
        self, cand: Candidate, wanted: Wanted, read: Sequence[ReadAnswer]
    ) -> tuple[Span | None, RuleAnswer | None]:
        """The short answer in ``cand`` (document offsets), from the source the settings name, and
        what the rules found when they were asked (their key phrase stands in for a missing short answer)."""
        mode = self.settings.short_answers
        short = reader_short(cand, read) if mode == "reader" else None
        if short is not None:
            return short, None
        rules = rule_answer(wanted, cand.text, cand.lang)
        short = cand.place(rules.short) if rules.short is not None else None
        if short is None and mode == "rules-then-reader":
            short = reader_short(cand, read)
        return short, rules

    def _citation(self, hit: Hit) -> Citation:
        c = hit.chunk
        return Citation(
            c.doc_id, self.data.documents[c.doc_id].title, c.lang, c.start, c.end, c.text, round(hit.score, 6)
        )


_T = TypeVar("_T")


class _Clock:
    """Milliseconds per pipeline step."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.timings: dict[str, float] = {}

    def step(self, name: str, work: Callable[[], _T]) -> _T:
        t0 = time.perf_counter()
        out = work()
        self.timings[name] = (time.perf_counter() - t0) * 1000
        return out

    def total_ms(self) -> float:
        self.timings["total"] = (time.perf_counter() - self.started) * 1000
        return self.timings["total"]
