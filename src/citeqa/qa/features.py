"""Features of a candidate answer span: general signals of whether it answers the question.

Each feature has a name (:data:`FEATURES`); a row is built by name, and the scorer's
weights are keyed by the same names (:mod:`citeqa.qa.scoring`), so adding or
reordering a feature can never misalign a weight.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np

from citeqa.qa.answer_types import Wanted, type_match
from citeqa.qa.questions import AnswerType
from citeqa.qa.spans import Candidate
from citeqa.text.analysis import cognate_keys, fold_accents, terms
from citeqa.text.facts_names import is_name_word

#: Names of the feature columns computed from the text and the vectors, in order.
SPAN_FEATURES = (
    "overlap",  # IDF x local-rarity weighted share of question terms in the span (context counts half)
    "overlap_span",  # the same, in the span alone
    "coverage",  # IDF-weighted share of question terms anywhere in the passage
    "dense",  # cosine similarity of the passage to the question
    "passage",  # fused retrieval score of the passage / best fused score
    "type_match",  # 1: a fact of the expected kind next to a question term, 0.6 elsewhere, 0 none
    "expects_type",  # the question asks for a quantity, date, price or name
    "same_lang",  # the span is in the question's language
    "length",  # log(characters) / log(300)
    "heading",  # short line without a final stop: a title, not an answer
    "entity_passage",  # share of the question's names and numbers found in the passage
    "has_entities",  # the question names something (a proper noun, a model, a number)
    "span_dense",  # cosine similarity of the span itself to the question (passage's when it has no vector)
    "span_dense_gap",  # span_dense minus the best span_dense among the candidates (0 for the best)
    "prev_span_dense",  # span_dense of the span just before it in its passage (what it follows on from)
    "novelty",  # share of the span's terms the question does not use: an answer says something new
    "type_missing",  # the question asks for a kind of fact and the span holds none
)
#: Columns the trained reader gives (see :mod:`citeqa.qa.reading`); 0 with the reader off.
READER_FEATURES = (
    "reader_gap",  # best reader score of a span inside the candidate minus the best read anywhere (<= 0)
    "reader_best",  # 1 when the candidate holds the reader's best span
    "reader_null",  # the passage's no-answer score minus the best span score read (higher: no answer)
    "reader_score",  # the reader's own score of that span (start + end logit): low when nothing answers
)
#: Every column of the feature matrix the scorer weighs, in order.
FEATURES = SPAN_FEATURES + READER_FEATURES

#: Weight of the terms a follow-up borrows from the previous turn (see candidate_features):
#: its own words say what it asks, the earlier turn only what it is about. Chosen on split A.
HISTORY_WEIGHT = 0.5
#: A span shorter than this without a final stop reads as a heading, not an answer.
HEADING_MAX_CHARS = 80
#: Spans are compared in length on a log scale where this many characters is 1.0.
LENGTH_SCALE_CHARS = 300


def local_weights(
    question_terms: Sequence[str], candidate_terms: Sequence[set[str]], idf: Mapping[str, float], default_idf: float
) -> dict[str, float]:
    """Weight each question term by global IDF times its rarity among the candidates.

    A term found in most candidate sentences (the passage's topic) says little about
    which sentence answers; a term found in one sentence says a lot.
    """
    n = max(1, len(candidate_terms))
    return {
        t: idf.get(t, default_idf) * math.log(1 + n / (1 + sum(t in c for c in candidate_terms)))
        for t in question_terms
    }


@dataclass(frozen=True)
class Passage:
    """What the scorer needs to know about a retrieved passage."""

    text: str
    lang: str
    dense: float
    fused: float


def candidate_features(
    question: str,
    query: str,
    question_lang: str,
    cands: Sequence[Candidate],
    passages: Sequence[Passage],
    idf: Mapping[str, float],
    default_idf: float,
    span_dense: Sequence[float | None] = (),
    wanted: Wanted | None = None,
) -> np.ndarray:
    """One row of :data:`SPAN_FEATURES` per candidate.

    ``question`` decides the expected answer type; ``query`` (the question, plus the
    previous turn for a follow-up) supplies the words to look for (``wanted``: both, when the
    caller has them already). ``span_dense`` holds each candidate's cosine to the question
    (None where the index has no vector for it).
    """
    wanted = wanted if wanted is not None else Wanted.of(question, query)
    kind, qwords = wanted.kind, wanted.words
    cand_terms = [_term_set(c.text, c.lang, question_lang) for c in cands]
    passage_terms = [_term_set(p.text, p.lang, question_lang) for p in passages]
    entities = question_entities(query)
    entity_in_passage = [_present_share(entities, p.text) for p in passages]
    best_fused = max((p.fused for p in passages), default=0.0)
    by_lang: dict[str, tuple[dict[str, float], dict[str, float]]] = {}
    sims = [
        s if s is not None else passages[c.hit_index].dense
        for c, s in zip(cands, list(span_dense) + [None] * (len(cands) - len(span_dense)))
    ]
    best_sim = max(sims, default=0.0)
    by_place = {(c.hit_index, c.number): s for c, s in zip(cands, sims)}
    rows = []
    for cand, present, sim in zip(cands, cand_terms, sims):
        if cand.lang not in by_lang:
            by_lang[cand.lang] = _question_weights(wanted, cand.lang, question_lang, cand_terms, idf, default_idf)
        local, global_ = by_lang[cand.lang]
        passage = passages[cand.hit_index]
        around = _term_set(cand.context, cand.lang, question_lang) - present
        typed = type_match(cand.text, cand.lang, kind, qwords, set(local), wanted.find_entities)
        row = {
            "overlap": _share(local, present) + 0.5 * _share(local, around),
            "overlap_span": _share(local, present),
            "coverage": _share(global_, passage_terms[cand.hit_index]),
            "dense": passage.dense,
            "passage": passage.fused / best_fused if best_fused > 0 else 0.0,
            "type_match": typed,
            "expects_type": 0.0 if kind is AnswerType.OTHER else 1.0,
            "same_lang": 1.0 if cand.lang == question_lang else 0.0,
            "length": math.log(max(2, len(cand.text))) / math.log(LENGTH_SCALE_CHARS),
            "heading": 1.0
            if len(cand.text) < HEADING_MAX_CHARS and cand.text.rstrip()[-1:] not in _FINAL_STOPS
            else 0.0,
            "entity_passage": entity_in_passage[cand.hit_index],
            "has_entities": 1.0 if entities else 0.0,
            "span_dense": sim,
            "span_dense_gap": sim - best_sim,
            "prev_span_dense": by_place.get((cand.hit_index, cand.number - 1), passage.dense),
            "novelty": len(present - set(local)) / len(present) if present else 0.0,
            "type_missing": 1.0 if kind is not AnswerType.OTHER and typed == 0.0 else 0.0,
        }
        rows.append([row[name] for name in SPAN_FEATURES])
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(SPAN_FEATURES))


_FINAL_STOPS = '.!?…»”")'


def _term_set(text: str, lang: str, question_lang: str) -> set[str]:
    """Stems of a text in its own language; cognate keys when the question's differs."""
    return set(terms(text, lang)) if lang == question_lang else set(cognate_keys(text))


def _question_weights(
    wanted: Wanted,
    lang: str,
    question_lang: str,
    cand_terms: Sequence[set[str]],
    idf: Mapping[str, float],
    default_idf: float,
) -> tuple[dict[str, float], dict[str, float]]:
    """Local and global weights of the query's terms (``wanted``'s) against spans in ``lang``.

    Across languages the query is matched by cognate keys, for which the index keeps
    no document frequencies: every key gets the default IDF and local rarity decides.
    Terms that only the previous turn brings weigh :data:`HISTORY_WEIGHT` as much: a
    follow-up's own words say what it asks, the earlier turn only what it is about.
    """
    own: AbstractSet[str]
    q: Sequence[str]
    if lang == question_lang:
        q, own = wanted.query_terms(lang), set(wanted.question_terms(lang))
    else:
        q, own, idf = sorted(cognate_keys(wanted.query)), cognate_keys(wanted.question), {}
    scale = {t: 1.0 if t in own else HISTORY_WEIGHT for t in q}
    local = local_weights(q, cand_terms, idf, default_idf)
    return ({t: w * scale[t] for t, w in local.items()}, {t: idf.get(t, default_idf) * scale[t] for t in q})


_WORD = re.compile(r"[^\W_]+")


def question_entities(text: str) -> frozenset[str]:
    """Names and numbers a question mentions, folded: "Alibaba", "H20", "PaddlePaddle".

    Names travel across languages unchanged, so they tell whether a passage in any
    language is about what the question asks. A word counts when it is a name word
    (:func:`citeqa.text.facts_names.is_name_word`: a digit counts; the first word is capitalised anyway).
    """
    found = set()
    for match in _WORD.finditer(text):
        token = match.group(0)
        first = text[: match.start()].strip(" ¿¡\"'«“(") == ""
        if len(token) >= 2 and is_name_word(token, first):
            found.add(fold_accents(token.casefold()))
    return frozenset(found)


def _present_share(entities: frozenset[str], text: str) -> float:
    """Share of ``entities`` among the folded words of ``text`` (1.0 when there are none), the
    text cut into words as :func:`question_entities` cuts the question, so "H20" is one word in both."""
    if not entities:
        return 1.0
    have = {fold_accents(word) for word in set(_WORD.findall(text.casefold()))}  # each distinct word folded once
    return sum(1 for e in entities if e in have) / len(entities)


def _share(weights: Mapping[str, float], present: set[str]) -> float:
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in present) / total if total > 0 else 0.0
