"""The one service the CLI and the UI call: open an index, ask questions, refresh it."""

from __future__ import annotations

import math
import re
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from citeqa.text.analysis import fold_accents, query_terms, words
from citeqa.embedding import Embedder, SentenceTransformerEmbedder
from citeqa.errors import QuestionError
from citeqa.answer.answer_types import expected_type, highlight_in
from citeqa.answer.spans import Candidate, candidates_from
from citeqa.index.manifest import check_model
from citeqa.index.store import IndexData, load_index
from citeqa.text.language import SUPPORTED, detect
from citeqa.records import Answer, Citation, Highlight, Hit
from citeqa.answer.retrieval import RetrievalSettings, Retriever, prefer_language
from citeqa.answer.features import ABSTAIN_BELOW, Passage, ScoringModel, candidate_features

MAX_QUESTION_CHARS = 2000
NOT_FOUND = {
    "es": "No encontré esto en los documentos.",
    "pt": "Não encontrei isso nos documentos.",
    "en": "I couldn't find this in the documents.",
}


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """Everything that shapes an answer, with defaults chosen on the dev set."""

    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    scoring: ScoringModel = field(default_factory=ScoringModel)
    answer_passages: int = 3  #: passages searched for the answer, overall and in the question's language
    pool: int = 10  #: passages retrieved before choosing the answer and the citations
    language_margin: float = 0.05  #: a same-language answer wins unless this much less likely
    language_floor: float = 0.5  #: ... and always when at least this likely
    abstain_below: float = ABSTAIN_BELOW


class Engine:
    """Answers questions from one index. Thread-safe for concurrent ``ask`` calls."""

    def __init__(self, data: IndexData, embedder: Embedder, settings: EngineSettings | None = None,
                 index_dir: Path | None = None) -> None:
        self.data = data
        self.embedder = embedder
        self.settings = settings if settings is not None else EngineSettings()
        self.index_dir = index_dir
        self.retriever = Retriever(data, self.settings.retrieval)
        self._idf = _idf_table(data)
        self._lock = threading.Lock()
        self.default_lang = _majority_lang(data)

    @classmethod
    def open(cls, index_dir: Path | str = "index", model: str | None = None,
             settings: EngineSettings | None = None, embedder: Embedder | None = None) -> "Engine":
        """Open an index; ``model`` (if given) must be the one it was built with."""
        data = load_index(Path(index_dir))
        check_model(data.manifest, model)
        if embedder is None:
            embedder = SentenceTransformerEmbedder(data.manifest.model if model is None else model)
        return cls(data, embedder, settings, Path(index_dir))

    def warm_up(self) -> None:
        """Load the model and the language detector now, not on the first question."""
        self._encode(["warm up"])
        for lang in sorted(self.corpus_langs):
            sample = next(c.text for c in self.data.chunks if c.lang == lang)
            detect(sample[:200], SUPPORTED)
            self.ask(sample[:120])

    def reload(self) -> "Engine":
        """A new engine over the live index, sharing this one's loaded model."""
        if self.index_dir is None:
            return self
        return Engine(load_index(self.index_dir), self.embedder, self.settings, self.index_dir)

    @property
    def corpus_langs(self) -> frozenset[str]:
        return frozenset(c.lang for c in self.data.chunks)

    def doc_text(self, doc_id: str) -> str:
        return self.data.documents[doc_id].text

    def ask(self, question: str, history: Sequence[str] = (), k: int = 5,
            language: str | None = None) -> Answer:
        """Answer ``question`` from the index; ``history`` holds earlier questions.

        ``language`` overrides the detected language of the question ("any" disables the
        preference for passages in the question's language).
        """
        started = time.perf_counter()
        question = clean_question(question)
        history = clean_history(history)
        if k < 1:
            raise QuestionError("k must be at least 1")
        lang = self.question_language(question, history)
        prefer = None if language == "any" else (language if language else lang)
        query = self.retrieval_query(question, history)
        hits = self.retrieve(query, max(k, self.settings.pool))
        answer = self._answer(question, query, lang, prefer, hits, k)
        return _replace_latency(answer, (time.perf_counter() - started) * 1000)

    def question_language(self, question: str, history: Sequence[str] = ()) -> str:
        """ISO 639-1 code of the question; history or the corpus decide when unclear."""
        found = detect(question, SUPPORTED)
        if found.lang is not None and found.confidence >= 0.5:
            return found.lang
        for earlier in reversed(history):
            prior = detect(earlier, SUPPORTED)
            if prior.lang is not None:
                return prior.lang
        return found.lang if found.lang is not None else self.default_lang

    def retrieval_query(self, question: str, history: Sequence[str]) -> str:
        """The text to search with: the question, plus the last turn when it leans on it."""
        if not history:
            return question
        if is_follow_up(question, len(query_terms(question, self.retriever.langs))):
            return f"{history[-1]} {question}"
        return question

    def retrieve(self, query: str, n: int) -> list[Hit]:
        """The ``n`` best passages for a query, by fused dense and lexical score."""
        return self.retriever.search(query, self._encode([query])[0], n)

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self._lock:  # one model, many UI threads: encode one batch at a time
            return self.embedder.encode(texts)

    def _answer(self, question: str, query: str, lang: str, prefer: str | None,
                hits: list[Hit], k: int) -> Answer:
        """Pick the best span among the top passages, language first when it answers."""
        if not hits:
            return Answer(question, lang, None, True, 0.0, ())
        cands, feats = self.candidates(question, query, lang, prefer, hits)
        if not cands:
            return Answer(question, lang, None, True, 0.0, tuple(self._citation(h) for h in hits[:k]))
        best, probability = self.choose(cands, feats, prefer)
        chosen, confidence = cands[best], round(probability, 4)
        rest = prefer_language([h for i, h in enumerate(hits) if i != chosen.hit_index], chosen.lang)
        citations = tuple(self._citation(h) for h in [hits[chosen.hit_index], *rest][:k])
        if confidence < self.settings.abstain_below:
            return Answer(question, lang, None, True, confidence, citations)
        span = highlight_in(chosen.text, expected_type(question), frozenset(fold_accents(w) for w in words(query)))
        highlight = Highlight(*span) if span is not None else None
        return Answer(question, lang, chosen.text, False, confidence, citations, highlight=highlight)

    def choose(self, cands: list[Candidate], feats: np.ndarray, prefer: str | None) -> tuple[int, float]:
        """The chosen span and its confidence: the ranker's best, in ``prefer`` when it is
        nearly as likely to be right as the best anywhere."""
        model = self.settings.scoring
        scores = model.scores(feats)
        best = int(np.argmax(scores))
        same = [i for i, c in enumerate(cands) if c.lang == prefer]
        if same and best not in same:
            best_same = max(same, key=lambda i: scores[i])
            p_best, p_same = model.probabilities(feats[[best, best_same]])
            if p_same >= min(p_best - self.settings.language_margin, self.settings.language_floor):
                best = best_same
        return best, float(model.probabilities(feats[[best]])[0])

    def candidates(self, question: str, query: str, lang: str, prefer: str | None,
                   hits: list[Hit]) -> tuple[list[Candidate], np.ndarray]:
        """Answer candidates from the top passages and their feature rows."""
        pool = self._answer_pool(hits, prefer)
        cands = candidates_from([(i, hits[i].chunk.start, hits[i].chunk.text, hits[i].chunk.lang) for i in pool])
        passages = [Passage(h.chunk.text, h.chunk.lang, h.dense, h.score) for h in hits]
        return cands, candidate_features(question, query, lang, cands, passages, self._idf, self._idf_default)

    def _answer_pool(self, hits: list[Hit], prefer: str | None) -> list[int]:
        """Indexes of the passages to extract from: the best overall and in ``prefer``."""
        n = self.settings.answer_passages
        same = [i for i, h in enumerate(hits) if h.chunk.lang == prefer][:n]
        lexical = sorted(range(len(hits)), key=lambda i: -hits[i].lexical)[:n]
        return sorted(set(range(min(n, len(hits)))) | set(same) | set(lexical))

    @property
    def _idf_default(self) -> float:
        return math.log(1 + len(self.data.chunks))

    def _citation(self, hit: Hit) -> Citation:
        c = hit.chunk
        doc = self.data.documents[c.doc_id]
        return Citation(c.doc_id, doc.title, c.lang, c.start, c.end, c.text, round(hit.score, 6))


def _idf_table(data: IndexData) -> dict[str, float]:
    """IDF of every BM25 term, from the document frequencies bm25s stores."""
    bm25 = data.lexical
    indptr = np.asarray(bm25.scores["indptr"])  # type: ignore[attr-defined]
    df = np.diff(indptr)
    n = max(1, len(data.chunks))
    vocab = bm25.vocab_dict.items()  # type: ignore[attr-defined]
    return {term: math.log(1 + (n - df[i] + 0.5) / (df[i] + 0.5)) for term, i in vocab if i < len(df)}


def _majority_lang(data: IndexData) -> str:
    counts = Counter(c.lang for c in data.chunks)
    return counts.most_common(1)[0][0] if counts else "en"


_FOLLOW_UP = re.compile(
    r"^\W*(and|also|what about|y|e|tambien|tambem|ademas|alem disso|y que|e que|e o|e a|y el|y la)\b"
    r"|\b(it|its|it's|they|them|their|this|that|those|these|he|she|"
    r"eso|esto|ese|esa|ello|ella|ellos|ellas|dicho|dicha|su|sus|"
    r"isso|isto|esse|essa|ele|ela|eles|elas|dele|dela|seu|sua|seus|suas|o mesmo|a mesma)\b")


def is_follow_up(question: str, n_terms: int) -> bool:
    """Whether a question leans on the previous one (a leading "and", a pronoun, no topic)."""
    folded = fold_accents(question.casefold())
    return n_terms <= 1 or _FOLLOW_UP.search(folded) is not None


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


def _replace_latency(answer: Answer, latency_ms: float) -> Answer:
    from dataclasses import replace

    return replace(answer, latency_ms=round(latency_ms, 3))
