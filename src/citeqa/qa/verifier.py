"""The verifier: a second judgement of the chosen answer, from evidence the reader's score does not carry.

The reader scores spans against the question as a whole; it does not check that the span is
about the question's entity (and not a neighbour's in the same sentence), that the clause
states the attribute asked for (a price, not a memory size), or that other documents agree.
:func:`verifier_features` measures those, named (:data:`VERIFIER_FEATURES`), for the chosen
span; :class:`Verifier` weighs them with weights fitted out of fold
(``qa/weights/verifier.json``, written by :mod:`citeqa.fitting.verifier`) into the probability
that the answer is right. Bands and the abstention level are fitted on that probability.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from citeqa.errors import ConfigError
from citeqa.qa.answer_types import Wanted
from citeqa.qa.features import question_entities
from citeqa.qa.questions import AnswerType
from citeqa.qa.scoring import Band, check_bands
from citeqa.qa.spans import ScoredSpan, span_short
from citeqa.records import Corroboration, Hit, Span
from citeqa.text.analysis import cognate_keys, fold_accents, terms
from citeqa.text.facts import find_dates, find_names, find_quantities

__all__ = ["VERIFIER_FEATURES", "Verdict", "Verifier", "judge", "load_verifier", "verifier_features"]

#: The evidence the verifier weighs, in order (every row is built by name).
VERIFIER_FEATURES = (
    "scorer",  # logit of the scorer's calibrated probability of the chosen span
    "ranker_margin",  # its score minus the best candidate's with another answer (clipped)
    "reader_score",  # the reader's score of the span (start + end logit, clipped)
    "reader_odds",  # logit of the span's probability against "no answer" in its window
    "reader_null",  # its passage's no-answer score minus the best span's (higher: no answer)
    "reader_rival",  # the span's score minus the best score of a span with another answer (clipped)
    "entities_sentence",  # share of the question's names and numbers in the answer's sentence
    "entities_passage",  # the same in the answer's passage
    "entity_distance",  # log words from the span to the nearest question name in its passage (capped)
    "neighbour_between",  # another name stands between the span and the question's nearest name
    "neighbour_in_answer",  # the short answer holds a name shaped like the question's ("960PR" for "960DT")
    "attribute_sentence",  # share of the question's other content terms in the answer's sentence
    "attribute_near",  # the same within a few words of the span
    "expects_type",  # the question asks for a quantity, date, price, name or place
    "type_ok",  # the short answer holds a fact of the kind asked for
    "type_missing",  # a kind is asked for and the short answer holds none
    "wants_money",  # the question asks what something costs (verifier_words.json, any interface language)
    "money_ok",  # ... and the short answer is an amount of money
    "wants_count",  # the question asks how many or how much
    "count_ok",  # ... and the short answer holds a number
    "unit_other",  # ... but of a unit the question does not name ("187.000 toneladas" for "¿cuántos viajeros?")
    "echo",  # share of the short answer's words the question already says
    "corroborated",  # log(1 + other passages' spans that give the same answer)
    "disagreement",  # best probability of a span with another answer in another passage
    "span_dense",  # cosine of the answer's sentence to the question
    "same_lang",  # the answer is in the question's language
    "short_words",  # log words of the short answer
)

#: Bounds that keep one odd value from dominating a linear score.
SCORE_CLIP = 30.0
MARGIN_CLIP = 10.0
#: Words either side of the span in which the attribute is looked for.
NEAR_WORDS = 8
#: Distance (words) given when the passage never names the question's entity.
FAR_WORDS = 200

#: A span of another document this sure against "no answer", with another value of the kind
#: asked for about the same names, disputes the answer: it is never called high.
DISPUTE_PROBABILITY = 0.5

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Verifier:
    """Weights of :data:`VERIFIER_FEATURES` (raw scale) and a bias: P(right) = logistic(w·x + b);
    below ``abstain_below`` the engine says the documents do not say; ``bands`` name the rest, each
    with its precision measured out of fold; ``fitted`` says how and on what."""

    weights: Mapping[str, float]
    bias: float
    abstain_below: float
    bands: tuple[Band, ...]
    fitted: Mapping[str, Any]

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(VERIFIER_FEATURES)
        if unknown:
            raise ConfigError(f"verifier weights name unknown features: {', '.join(sorted(unknown))}")
        check_bands(self.bands)

    def probability(self, features: Mapping[str, float]) -> float:
        z = self.bias + sum(w * features[name] for name, w in self.weights.items())
        return float(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))))

    def to_dict(self) -> dict[str, Any]:
        return {
            "weights": dict(self.weights),
            "bias": self.bias,
            "abstain_below": self.abstain_below,
            "bands": [b.to_dict() for b in self.bands],
            "fitted": dict(self.fitted),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verifier:
        try:
            return cls(
                {str(k): float(v) for k, v in data["weights"].items()},
                float(data["bias"]),
                float(data["abstain_below"]),
                tuple(Band.from_dict(b, f"verifier bands[{i}]") for i, b in enumerate(data["bands"])),
                dict(data["fitted"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ConfigError(f"the verifier's weights file is not valid ({e!r})") from e


def verifier_path() -> Path:
    return Path(__file__).with_name("weights") / "verifier.json"


@cache
def load_verifier(path: Path | None = None) -> Verifier | None:
    """The shipped verifier (None when no weights file ships)."""
    path = path if path is not None else verifier_path()
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read the verifier's weights {path}: {e}") from e
    return Verifier.from_dict(data)


@dataclass(frozen=True)
class Verdict:
    """The verifier's judgement of a chosen span: the probability it is right, the evidence it
    weighed, the other documents that give the same answer and whether another one disputes it."""

    probability: float
    features: Mapping[str, float]
    also_in: tuple[Corroboration, ...]
    disputed: bool


def judge(
    verifier: Verifier, wanted: Wanted, language: str, spans: Sequence[ScoredSpan], chosen: int, hits: Sequence[Hit]
) -> Verdict:
    """:class:`Verdict` of ``spans[chosen]`` (a span the reader read)."""
    features = verifier_features(wanted, language, spans, chosen, hits)
    return Verdict(
        verifier.probability(features),
        features,
        corroborations(spans, chosen, hits),
        disputed(wanted, spans, chosen, hits),
    )


def corroborations(spans: Sequence[ScoredSpan], chosen: int, hits: Sequence[Hit]) -> tuple[Corroboration, ...]:
    """One span per other document that reads the same answer as ``spans[chosen]``, best first."""
    doc = hits[spans[chosen].candidate.hit_index].chunk.doc_id
    text = short_of(spans[chosen])
    seen, out = {doc}, []
    for s in spans:
        chunk = hits[s.candidate.hit_index].chunk
        if s.read is None or chunk.doc_id in seen or not _same_answer(s, text, spans[chosen].candidate.lang):
            continue
        short = span_short(s.candidate, s.read.span)
        if short is None:
            continue
        seen.add(chunk.doc_id)
        out.append(Corroboration(chunk.doc_id, chunk.lang, short.start, short.end, short_of(s)))
    return tuple(out)


def disputed(wanted: Wanted, spans: Sequence[ScoredSpan], chosen: int, hits: Sequence[Hit]) -> bool:
    """Whether another document gives another value of the kind asked for, in a sentence naming the
    same things as the chosen one, with the reader at least :data:`DISPUTE_PROBABILITY` sure of it."""
    if wanted.kind is AnswerType.OTHER:
        return False
    mine = spans[chosen]
    doc = hits[mine.candidate.hit_index].chunk.doc_id
    text = short_of(mine)
    entities = question_entities(wanted.question) & _folded_words(mine.candidate.text)
    for s in spans:
        if (
            s.read is None
            or s.read.probability < DISPUTE_PROBABILITY
            or hits[s.candidate.hit_index].chunk.doc_id == doc
        ):
            continue
        other = short_of(s)
        if _folded_words(other) <= wanted.words:  # the question's own words dispute nothing
            continue
        if not wanted.find_entities(other, wanted.kind, frozenset(), s.candidate.lang):
            continue
        if value_agreement(other, s.candidate.lang, text, mine.candidate.lang) is not False:
            continue  # the same value, or values of things the other does not give
        if entities <= _folded_words(s.candidate.text):
            return True
    return False


def verifier_features(
    wanted: Wanted,
    language: str,
    spans: Sequence[ScoredSpan],
    chosen: int,
    hits: Sequence[Hit],
) -> dict[str, float]:
    """The evidence about ``spans[chosen]`` (a span the reader read) for the question ``wanted``."""
    span = spans[chosen]
    cand, read = span.candidate, span.read
    passage = hits[cand.hit_index].chunk
    short = span_short(cand, read.span) if read is not None else None
    short_text = _text_of(cand.text, cand.span, short) if short is not None else cand.text
    others = [s for i, s in enumerate(spans) if i != chosen and s.read is not None]
    rivals = [s for s in others if not _same_answer(s, short_text, cand.lang)]
    agree = [s for s in others if s.candidate.hit_index != cand.hit_index and _same_answer(s, short_text, cand.lang)]
    entities = question_entities(wanted.question)
    at = (short if short is not None else cand.span).start - passage.start
    at_end = (short if short is not None else cand.span).end - passage.start
    distance, between = _entity_distance(passage.text, at, at_end, entities)
    attribute = _attribute_terms(wanted, language, cand.lang, entities)
    near = passage.text[max(0, at - 80) : at] + " " + passage.text[at_end : at_end + 80]
    kind = wanted.kind
    typed = (
        bool(wanted.find_entities(short_text, kind, frozenset(), cand.lang)) if kind is not AnswerType.OTHER else False
    )
    short_words = [fold_accents(w.casefold()) for w in _WORD.findall(short_text)]
    return {
        "scorer": _logit(span.probability),
        "ranker_margin": _clip(
            span.score - max((s.score for s in rivals), default=span.score - MARGIN_CLIP), MARGIN_CLIP
        ),
        "reader_score": _clip(read.score, SCORE_CLIP) if read is not None else -SCORE_CLIP,
        "reader_odds": _logit(read.probability) if read is not None else -10.0,
        "reader_null": span.features.get("reader_null", 0.0),
        "reader_rival": _clip(
            read.score - max((s.read.score for s in rivals if s.read is not None), default=read.score - MARGIN_CLIP),
            MARGIN_CLIP,
        )
        if read is not None
        else 0.0,
        "entities_sentence": _present_share(entities, cand.text),
        "entities_passage": _present_share(entities, passage.text),
        "entity_distance": math.log1p(distance),
        "neighbour_between": 1.0 if between else 0.0,
        "neighbour_in_answer": 1.0 if _neighbours(short_text, entities, names=False) else 0.0,
        "attribute_sentence": _share(attribute, _term_set(cand.text, cand.lang, language)),
        "attribute_near": _share(attribute, _term_set(near, cand.lang, language)),
        "expects_type": 0.0 if kind is AnswerType.OTHER else 1.0,
        "type_ok": 1.0 if typed else 0.0,
        "type_missing": 1.0 if kind is not AnswerType.OTHER and not typed else 0.0,
        **_asked_amounts(wanted.question, short_text, cand.lang),
        "echo": sum(w in wanted.words for w in short_words) / len(short_words) if short_words else 1.0,
        "corroborated": math.log1p(len({s.candidate.hit_index for s in agree})),
        "disagreement": max(
            (s.read.probability for s in rivals if s.read is not None and s.candidate.hit_index != cand.hit_index),
            default=0.0,
        ),
        "span_dense": span.features.get("span_dense", 0.0),
        "same_lang": 1.0 if cand.lang == language else 0.0,
        "short_words": math.log1p(len(short_words)),
    }


@cache
def _words() -> dict[str, dict[str, list[str]]]:
    data: dict[str, dict[str, list[str]]] = json.loads(
        Path(__file__).with_name("verifier_words.json").read_text(encoding="utf-8")
    )
    return data


@cache
def _asking(kind: str) -> re.Pattern[str]:
    """Words of ``kind`` (``money``, ``count``) in any language, as a pattern over folded text."""
    words = sorted({w for ws in _words()[kind].values() for w in ws}, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + ")")


def _asked_amounts(question: str, short: str, lang: str) -> dict[str, float]:
    """Whether the question asks for money or a count, and whether the short answer gives one."""
    folded = fold_accents(question.casefold())
    money = _asking("money").search(folded) is not None
    count = _asking("count").search(folded) is not None
    found = find_quantities(short, lang)
    words = [fold_accents(w.casefold()) for w in _WORD.findall(question)]
    units = [fold_accents(f.unit.casefold()) for f in found if f.unit and f.unit != "spelled"]
    other = count and bool(units) and not any(_names_unit(u, words) for u in units)
    return {
        "wants_money": float(money),
        "money_ok": float(money and any(f.type == "money" for f in found)),
        "wants_count": float(count),
        "count_ok": float(count and (bool(found) or any(c.isdigit() for c in short))),
        "unit_other": float(other),
    }


def _names_unit(unit: str, words: Sequence[str]) -> bool:
    """Whether one of the question's ``words`` names ``unit`` (a unit key: "param", "t", "km")."""
    if len(unit) < 3:
        return unit in words
    return any(w.startswith(unit) or (len(w) >= 4 and unit.startswith(w[:4])) for w in words)


def _text_of(text: str, outer: Span, inner: Span) -> str:
    return text[inner.start - outer.start : inner.end - outer.start]


def short_of(span: ScoredSpan) -> str:
    """The short answer a candidate gives: its reader span widened to whole words (its sentence without one)."""
    if span.read is None:
        return span.candidate.text
    short = span_short(span.candidate, span.read.span)
    return _text_of(span.candidate.text, span.candidate.span, short) if short is not None else ""


def _same_answer(span: ScoredSpan, text: str, lang: str) -> bool:
    """Whether ``span``'s short answer gives the value ``text`` (in ``lang``) gives: the same date or
    amount in any language ("August" = "agosto", "744 billion" = "744 mil millones"), else most of
    the same words."""
    other = short_of(span)
    values = value_agreement(other, span.candidate.lang, text, lang)
    if values is not None:
        return values
    a, b = _folded_words(other), _folded_words(text)
    return bool(a and b) and 2 * len(a & b) / (len(a) + len(b)) >= 0.5


def value_agreement(a: str, lang_a: str, b: str, lang_b: str) -> bool | None:
    """True when ``a`` and ``b`` state the same date or amount, False when they state different ones
    about something both give (a year, a month, a number), None when they share no kind of value."""
    dates_a, dates_b = find_dates(a), find_dates(b)
    if dates_a and dates_b:
        verdicts = [_dates_agree(x.date, y.date) for x in dates_a for y in dates_b]
        if any(v is True for v in verdicts):
            return True
        if any(v is False for v in verdicts):
            return False
    amounts_a = [f.number for f in find_quantities(a, lang_a) if f.number is not None]
    amounts_b = [f.number for f in find_quantities(b, lang_b) if f.number is not None]
    if amounts_a and amounts_b:
        return any(math.isclose(x, y, rel_tol=1e-6) for x in amounts_a for y in amounts_b)
    return None


def _dates_agree(a: Any, b: Any) -> bool | None:
    """True when two dates share a field (year, quarter, month, day) and agree on every shared one,
    False when a shared field differs, None when they share none ("2025" and "August")."""
    shared = [f for f in ("year", "quarter", "month", "day") if getattr(a, f) is not None and getattr(b, f) is not None]
    if not shared:
        return None
    return all(getattr(a, f) == getattr(b, f) for f in shared)


def _folded_words(text: str) -> set[str]:
    return {fold_accents(w.casefold()) for w in _WORD.findall(text)}


def _entity_distance(text: str, start: int, end: int, entities: frozenset[str]) -> tuple[float, bool]:
    """Words from ``text[start:end]`` to the nearest mention of one of ``entities`` (``FAR_WORDS``
    when none), and whether another name stands between the two."""
    if not entities:
        return 0.0, False
    mentions = [
        (m.start(), m.end())
        for m in _WORD.finditer(text)
        if fold_accents(m.group(0).casefold()) in entities and not (start <= m.start() < end)
    ]
    if not mentions:
        return float(FAR_WORDS), False
    a, b = min(mentions, key=lambda m: m[0] - end if m[0] >= end else start - m[1])
    gap = text[b:start] if b <= start else text[end:a]
    words = len(_WORD.findall(gap))
    return float(min(words, FAR_WORDS)), _neighbours(gap, entities)


def _neighbours(text: str, entities: frozenset[str], names: bool = True) -> bool:
    """Whether ``text`` names something other than ``entities``: a word of the same shape as one of
    them ("960PR" beside "960DT", "980" beside "970") or (``names``) any other name."""
    shapes = {_shape(e) for e in entities if any(c.isdigit() for c in e)}
    for m in _WORD.finditer(text):
        word = fold_accents(m.group(0).casefold())
        if word not in entities and _shape(word) in shapes:
            return True
    return names and any(not (_folded_words(text[f.start : f.end]) & entities) for f in find_names(text))


def _shape(word: str) -> str:
    return re.sub(r"[^\W\d_]", "a", re.sub(r"\d", "9", word))


def _attribute_terms(wanted: Wanted, language: str, lang: str, entities: frozenset[str]) -> set[str]:
    """The question's content terms that are not its names: what it asks about them."""
    names = {t for e in entities for t in _term_set(e, lang, language)}
    return _term_set(wanted.question, lang, language) - names


def _term_set(text: str, lang: str, question_lang: str) -> set[str]:
    return set(terms(text, lang)) if lang == question_lang else set(cognate_keys(text))


def _present_share(entities: frozenset[str], text: str) -> float:
    if not entities:
        return 1.0
    have = _folded_words(text)
    return sum(1 for e in entities if e in have) / len(entities)


def _share(wanted: set[str], present: set[str]) -> float:
    return len(wanted & present) / len(wanted) if wanted else 1.0


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def _clip(x: float, bound: float) -> float:
    return float(np.clip(x, -bound, bound))
