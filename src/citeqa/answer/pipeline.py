"""The answer pipeline as a value: one question in, a :class:`Trace` of every step out.

language → retrieval query → retrieve (dense + lexical, fused) → candidate spans with
named features → scores → choice (question's language first when it answers) →
confidence → the answer record. :meth:`AnswerPipeline.run` is the only implementation
of these steps; ``Engine.ask`` returns its trace's ``answer``, and evaluation, the scorer
fit, the ceilings script and the benchmark read the same trace.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Literal

import numpy as np

from citeqa.answer.answer_types import expected_type, highlight_in, short_answer_in
from citeqa.answer.backend import RetrievalBackend
from citeqa.answer.features import FEATURES, Passage, candidate_features
from citeqa.answer.judge import ClaimThresholds, claim_thresholds
from citeqa.answer.questions import alternatives
from citeqa.answer.questions import words as words_of
from citeqa.answer.reading import ReadSpan, best_inside, read_spans, reader_features
from citeqa.answer.retrieval import RetrievalSettings, Retriever, prefer_language
from citeqa.answer.scoring import ScoringModel, load_scoring, read_weights
from citeqa.answer.spans import Candidate, candidates_from
from citeqa.errors import QuestionError
from citeqa.messages import UI_LANGUAGES
from citeqa.reader.reader import Reader
from citeqa.records import Answer, Citation, Highlight, Hit
from citeqa.text.analysis import fold_accents, query_terms, words
from citeqa.text.language import SUPPORTED, question_language

#: Longest question accepted, in characters (a long paragraph; longer input is pasted text, not a question).
MAX_QUESTION_CHARS = 2000


#: Sources of the short answer (see :attr:`AnswerSettings.short_answers`).
ShortAnswerSource = Literal["reader", "rules", "rules-then-reader"]
#: Retrieval settings a weights file may set.
_FUSION_WEIGHTS = frozenset({"dense_weight", "lexical_weight"})


@dataclass(frozen=True, slots=True)
class AnswerSettings:
    """Everything that shapes an answer, with defaults chosen on split A of eval/qa.jsonl."""

    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    scoring: ScoringModel = field(default_factory=load_scoring)
    answer_passages: int = 3  #: passages searched for the answer, overall and in the question's language
    pool: int = 10  #: passages retrieved before choosing the answer and the citations
    language_margin: float = 0.05  #: a same-language answer wins unless this much less likely ...
    language_floor: float = 0.5  #: ... and always when at least this likely
    claims: ClaimThresholds = field(default_factory=ClaimThresholds)  #: when a claim counts as backed
    #: Where the short answer comes from: the reader's span in the chosen sentence (then the rules
    #: when it has none there), the hand-written rules alone, or the rules and then the reader's span
    #: when they find none. Chosen by measurement (README).
    short_answers: ShortAnswerSource = "rules-then-reader"
    #: Passages the reader reads: the best-ranked of those searched for the answer (each costs a
    #: window of up to 256 tokens; see docs/benchmarks.md). Reading 2 instead of 4 lost answers
    #: out of fold (accuracy 0.673 / 0.576 against 0.717 / 0.624 on the two dev sets).
    reader_passages: int = 4

    @classmethod
    def for_model(cls, model: str, reader: bool = False) -> AnswerSettings:
        """The settings fitted for ``model``'s vectors: retrieval fusion weights and claim thresholds
        from ``<model>.json``, the scorer from it or, with the ``reader``, from ``<model>+reader.json``."""
        data = read_weights(model)
        fusion = data.get("retrieval", {})
        retrieval = RetrievalSettings(**{k: float(v) for k, v in fusion.items() if k in _FUSION_WEIGHTS})
        scoring = ScoringModel.from_dict(read_weights(model, reader=True) if reader else data)
        return cls(retrieval=retrieval, scoring=scoring, claims=claim_thresholds(data.get("claims", {})))

    @property
    def abstain_below(self) -> float:
        """Below this confidence the answer is "not found" (fitted with the scorer)."""
        return self.scoring.abstain_below


@dataclass(frozen=True, slots=True)
class ScoredSpan:
    """A candidate span with its named features, ranker score and calibrated probability."""

    candidate: Candidate
    features: Mapping[str, float]
    score: float
    probability: float


@dataclass(frozen=True)
class Trace:
    """Every step of answering one question, for evaluation, fitting and benchmarks.

    ``features`` holds one row per candidate, columns in :data:`FEATURES` order (the
    same numbers as each span's ``features`` mapping); ``timings_ms`` has one entry per step.
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
    #: The reader's spans (best first, document offsets) over the passages it read; empty with it off.
    read: tuple[ReadSpan, ...] = ()

    @property
    def chosen_span(self) -> ScoredSpan | None:
        return self.spans[self.chosen] if self.chosen is not None else None


class AnswerPipeline:
    """Answers questions from one index (any :class:`RetrievalBackend`) with a given query encoder."""

    def __init__(
        self,
        data: RetrievalBackend,
        encode: Callable[[list[str]], np.ndarray],
        settings: AnswerSettings | None = None,
        reader: Reader | None = None,
    ) -> None:
        self.data = data
        self.encode = encode
        self.reader = reader
        self.settings = (
            settings if settings is not None else AnswerSettings.for_model(data.model, reader=reader is not None)
        )
        self.retriever = Retriever(data, self.settings.retrieval)
        self.idf = data.lexical_idf()
        self.default_idf = math.log(1 + len(data.chunks))
        self.default_lang = data.majority_lang()

    def run(self, question: str, history: Sequence[str] = (), k: int = 5, language: str | None = None) -> Trace:
        """Answer ``question`` (``history`` holds earlier questions) citing ``k`` passages.

        ``language`` overrides the detected language of the question ("any" disables the
        preference for passages in the question's language).
        """
        clock = _Clock()
        question, history = clean_question(question), clean_history(history)
        if k < 1:
            raise QuestionError("k must be at least 1")
        lang = clock.step("language", lambda: self.question_language(question, history))
        prefer = None if language == "any" else (language if language else lang)
        query = clock.step("query", lambda: self.retrieval_query(question, history))
        vector = clock.step("encode", lambda: self.encode([query])[0])
        hits = self.retriever.search(query, vector, max(k, self.settings.pool), timings=clock.timings)
        pool = self._answer_pool(hits, prefer)
        cands, feats = clock.step("candidates", lambda: self.candidates(question, query, lang, pool, hits, vector))
        read, null = clock.step("read", lambda: self.read(question, hits, pool))
        feats = np.hstack([feats, reader_features(cands, read, null) if self.reader is not None else _zeros(feats)])
        chosen, spans = clock.step("choose", lambda: self.choose(cands, feats, prefer))
        answer = clock.step("answer", lambda: self.record(question, query, lang, hits, spans, chosen, k, read))
        answer = replace(answer, latency_ms=round(clock.total_ms(), 3))
        return Trace(
            question,
            history,
            lang,
            prefer,
            query,
            tuple(hits),
            tuple(spans),
            feats,
            chosen,
            answer.confidence,
            answer,
            clock.timings,
            read,
        )

    def question_language(self, question: str, history: Sequence[str] = ()) -> str:
        """ISO 639-1 code of the question, among the corpus's and the UI's languages: the question
        decides, the history breaks a tie, the corpus's main language when nothing can be told."""
        candidates = tuple(lang for lang in SUPPORTED if lang in self.retriever.langs or lang in UI_LANGUAGES)
        return question_language(question, history, candidates, self.default_lang)

    def retrieval_query(self, question: str, history: Sequence[str]) -> str:
        """The text to search with: the question, plus the last turn when it leans on it."""
        if history and is_follow_up(question, len(query_terms(question, self.retriever.langs))):
            return f"{history[-1]} {question}"
        return question

    def candidates(
        self, question: str, query: str, lang: str, pool: Sequence[int], hits: Sequence[Hit], vector: np.ndarray
    ) -> tuple[list[Candidate], np.ndarray]:
        """Answer candidates from the passages ``pool`` (indexes of ``hits``) and their feature rows."""
        cands = candidates_from([(i, hits[i].chunk.start, hits[i].chunk.text, hits[i].chunk.lang) for i in pool])
        passages = [Passage(h.chunk.text, h.chunk.lang, h.dense, h.score) for h in hits]
        return cands, candidate_features(
            question,
            query,
            lang,
            cands,
            passages,
            self.idf,
            self.default_idf,
            self.span_similarities(cands, hits, vector),
        )

    def read(
        self, question: str, hits: Sequence[Hit], pool: Sequence[int]
    ) -> tuple[tuple[ReadSpan, ...], dict[int, float]]:
        """The reader's spans over the passages ``pool`` and each one's no-answer score (none when off)."""
        if self.reader is None or not pool:
            return (), {}
        pool = sorted(pool)[: self.settings.reader_passages]
        reading = self.reader.read(question, [hits[i].chunk.text for i in pool])
        placed = read_spans(reading, pool, [hits[i].chunk.start for i in pool])
        return placed, dict(zip(pool, reading.null))

    def span_similarities(
        self, cands: Sequence[Candidate], hits: Sequence[Hit], vector: np.ndarray
    ) -> list[float | None]:
        """Each candidate's cosine to the question, from the index's span vectors (None without one)."""
        spans = self.data.spans
        if spans is None:
            return [None] * len(cands)
        rows = [
            spans.row(
                hits[c.hit_index].row,
                c.number,
                c.start - hits[c.hit_index].chunk.start,
                c.end - hits[c.hit_index].chunk.start,
            )
            for c in cands
        ]
        found = [r for r in rows if r is not None]
        sims = dict(zip(found, spans.similarities(found, vector).tolist()))
        return [sims[r] if r is not None else None for r in rows]

    def _answer_pool(self, hits: Sequence[Hit], prefer: str | None) -> list[int]:
        """Indexes of the passages to extract from: the best overall, in ``prefer`` and by words."""
        n = self.settings.answer_passages
        same = [i for i, h in enumerate(hits) if h.chunk.lang == prefer][:n]
        lexical = sorted(range(len(hits)), key=lambda i: -hits[i].lexical)[:n]
        return sorted(set(range(min(n, len(hits)))) | set(same) | set(lexical))

    def choose(
        self, cands: Sequence[Candidate], feats: np.ndarray, prefer: str | None
    ) -> tuple[int | None, list[ScoredSpan]]:
        """Score every span and pick one (see :func:`choose_span`)."""
        model = self.settings.scoring
        scores, probs = model.scores(feats), model.probabilities(feats)
        spans = [
            ScoredSpan(c, dict(zip(FEATURES, map(float, row))), float(s), float(p))
            for c, row, s, p in zip(cands, feats, scores, probs)
        ]
        langs = [c.lang for c in cands]
        return choose_span(
            scores, probs, langs, prefer, self.settings.language_margin, self.settings.language_floor
        ), spans

    def record(
        self,
        question: str,
        query: str,
        lang: str,
        hits: Sequence[Hit],
        spans: Sequence[ScoredSpan],
        chosen: int | None,
        k: int,
        read: Sequence[ReadSpan] = (),
    ) -> Answer:
        """The answer record: the chosen span (or an abstention) and ``k`` citations."""
        if chosen is None:
            return Answer(question, lang, None, True, 0.0, tuple(self._citation(h) for h in hits[:k]))
        span = spans[chosen]
        confidence = round(span.probability, 4)
        first = span.candidate.hit_index
        rest = prefer_language([h for i, h in enumerate(hits) if i != first], span.candidate.lang)
        citations = tuple(self._citation(h) for h in [hits[first], *rest][:k])
        if confidence < self.settings.abstain_below:
            return Answer(question, lang, None, True, confidence, citations)
        cand = span.candidate
        words_asked = frozenset(fold_accents(w) for w in words(query))
        kind = expected_type(question)
        mode = self.settings.short_answers
        short = _reader_short(cand, read) if mode == "reader" else None
        if short is None:
            short = short_answer_in(
                cand.text, cand.lang, kind, words_asked, set(query_terms(query, (cand.lang,))), question=question
            )
        if short is None and mode == "rules-then-reader":
            short = _reader_short(cand, read)
        key = short if short is not None else highlight_in(cand.text, kind, words_asked, cand.lang)
        highlight = Highlight(*key) if key is not None else None
        short_answer = cand.text[short[0] : short[1]] if short is not None else None
        return Answer(
            question, lang, cand.text, False, confidence, citations, highlight=highlight, short_answer=short_answer
        )

    def _citation(self, hit: Hit) -> Citation:
        c = hit.chunk
        return Citation(
            c.doc_id, self.data.documents[c.doc_id].title, c.lang, c.start, c.end, c.text, round(hit.score, 6)
        )


def choose_span(
    scores: np.ndarray, probs: np.ndarray, langs: Sequence[str], prefer: str | None, margin: float, floor: float
) -> int | None:
    """The ranker's best span, or the best in ``prefer`` when that one is likely enough:
    at least ``floor``, or within ``margin`` of the best anywhere. None when there are no spans."""
    if len(scores) == 0:
        return None
    best = int(np.argmax(scores))
    same = [i for i, lang in enumerate(langs) if lang == prefer]
    if same and best not in same:
        best_same = max(same, key=lambda i: scores[i])
        if probs[best_same] >= min(probs[best] - margin, floor):
            return best_same
    return best


def _zeros(feats: np.ndarray) -> np.ndarray:
    return np.zeros((len(feats), len(FEATURES) - feats.shape[1]))


#: Characters trimmed from the ends of a reader span: an answer is "França", not "França.".
_SPAN_TRIM = " \t\n.,;:!?¿¡\"'«»“”()[]"


def _reader_short(cand: Candidate, read: Sequence[ReadSpan]) -> tuple[int, int] | None:
    """The best reader span inside ``cand``, as offsets into its text, trimmed of spaces and stops."""
    inside = best_inside(cand, read)
    if inside is None:
        return None
    a, b = inside.start - cand.start, inside.end - cand.start
    while a < b and cand.text[a] in _SPAN_TRIM:
        a += 1
    while b > a and cand.text[b - 1] in _SPAN_TRIM:
        b -= 1
    return (a, b) if b > a else None


class _Clock:
    """Milliseconds per pipeline step."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.timings: dict[str, float] = {}

    def step(self, name: str, work: Callable[[], object]):
        t0 = time.perf_counter()
        out = work()
        self.timings[name] = (time.perf_counter() - t0) * 1000
        return out

    def total_ms(self) -> float:
        self.timings["total"] = (time.perf_counter() - self.started) * 1000
        return self.timings["total"]


@cache
def _follow_up() -> re.Pattern[str]:
    """A leading "and"/"y"/"e" or a pronoun: the words of each language's ``follow_up_starts`` and
    ``follow_up_pronouns`` lists (:mod:`citeqa.text.lexicon`), folded."""
    starts, pronouns = words_of("follow_up_starts"), words_of("follow_up_pronouns")
    return re.compile(rf"^\W*({alternatives(starts)})\b|\b({alternatives(pronouns)})\b")


def is_follow_up(question: str, n_terms: int) -> bool:
    """Whether a question leans on the previous one (a leading "and", a pronoun, no topic)."""
    folded = fold_accents(question.casefold())
    return n_terms <= 1 or _follow_up().search(folded) is not None


def clean_question(question: object) -> str:
    """Validate and tidy a question; raise QuestionError with what to do."""
    if not isinstance(question, str):
        raise QuestionError("the question must be text")
    cleaned = "".join(ch for ch in question if ch.isprintable() or ch in "\n\t")
    cleaned = cleaned.encode("utf-8", "replace").decode("utf-8").strip()
    if not cleaned:
        raise QuestionError("the question is empty; type a question")
    if len(cleaned) > MAX_QUESTION_CHARS:
        raise QuestionError(f"the question is too long ({len(cleaned)} characters; the limit is {MAX_QUESTION_CHARS})")
    return " ".join(cleaned.split())


def clean_history(history: Sequence[object]) -> tuple[str, ...]:
    """Earlier questions, cleaned like a question; empty or invalid turns are dropped."""
    cleaned = []
    for turn in history:
        try:
            cleaned.append(clean_question(turn))
        except QuestionError:
            continue
    return tuple(cleaned)
