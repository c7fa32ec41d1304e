"""Claim checking: does a passage state a claim's facts, state other values for them, or nothing?

A claim ("GLM-5 tiene unos 800 mil millones de parámetros") is searched like a question
(:meth:`citeqa.engine.Engine.trace`); every candidate sentence of the retrieved passages is
then compared with it:

* **key facts**: the claim's quantities and dates (:mod:`citeqa.text.quantities`, the same
  in es/pt/en: "744 mil millones" = "744 billion") and its names (words with capitals or
  digits: "GLM-5", "Kunlun P800", "Entity List", which travel across languages unchanged);
* **subject**: the share of the claim's names found in the sentence or earlier in its
  paragraph, the share of its other words (stems, or cognate keys across languages), and
  the sentence's dense similarity to the claim (``span_dense`` of the trace);
* per claim fact: the same value in the sentence (**same**), or a value of the same kind
  and unit (a date differing in a part both state) next to the claim's words around that
  fact (**different**).

The verdict (:func:`decide`) never claims more than a sentence shows: ``supported`` when one
sentence has every fact of the claim and its subject; ``conflicting`` when a sentence about
the same subject gives another value for a fact; ``not_found`` otherwise. The thresholds are
named constants (:class:`ClaimThresholds`) fitted by ``eval/fit_claims.py`` on part of
``eval/claims.jsonl``; no rule names a claim, a document or a fact.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from citeqa.answer.spans import Candidate
from citeqa.errors import QuestionError
from citeqa.messages import claim_message
from citeqa.records import Citation, Document, Highlight, Hit, from_dict, to_dict
from citeqa.text.analysis import cognate_keys, fold_accents, stopwords, terms
from citeqa.text.quantities import MONTHS, Fact, find_facts, same_slot, same_value

SUPPORTED = "supported"
CONFLICTING = "conflicting"
NOT_FOUND = "not_found"
VERDICTS = (SUPPORTED, CONFLICTING, NOT_FOUND)

#: What one passage does for the claim (:attr:`ClaimEvidence.relation`).
SUPPORTS, CONFLICTS, RELATED = "supports", "conflicts", "related"


@dataclass(frozen=True, slots=True)
class ClaimThresholds:
    """The thresholds of :func:`decide`. Fitted values are data: the ``claims`` block of the model's
    weights file (``answer/weights/<model>.json``), written by ``eval/fit_claims.py --write`` (the
    most accurate on the claim files that call no ``not_found`` claim ``supported``; the strictest on
    a tie). The defaults below serve a weights file without that block."""

    #: share of the claim's names the sentence's paragraph must hold when the claim's numbers and
    #: dates all match in the sentence
    support_names_facts: float = 0.75
    #: ... and of its other words
    support_terms_facts: float = 0.0
    #: share of the claim's names the paragraph must hold when the claim has no number or date
    #: (its names and words are all it says)
    support_names_plain: float = 1.0
    #: ... and of its other words
    support_terms_plain: float = 0.2
    #: or, for a claim without numbers or dates, this cosine of the sentence to the claim (above 1: unused)
    support_dense_plain: float = 1.1
    #: share of the claim's names the paragraph must hold for another value in the sentence to be a conflict
    conflict_names: float = 1.0
    #: ... and of its other words
    conflict_terms: float = 0.3
    #: ... or, instead of the words, this cosine of the sentence to the claim (above 1: unused)
    conflict_dense: float = 0.6


def claim_thresholds(values: Mapping[str, Any]) -> ClaimThresholds:
    """:class:`ClaimThresholds` from a weights file's ``claims`` block; unknown names are a ConfigError."""
    from dataclasses import fields

    from citeqa.errors import ConfigError

    known = {f.name for f in fields(ClaimThresholds)}
    unknown = sorted(set(values) - known - {"fitted"})
    if unknown:
        raise ConfigError(f"claim thresholds: no such threshold {', '.join(unknown)}; refit with eval/fit_claims.py")
    return ClaimThresholds(**{k: float(v) for k, v in values.items() if k in known})


@dataclass(frozen=True, slots=True)
class ClaimEvidence:
    """A passage that bears on a claim.

    ``citation`` is the passage (``citation.text == document_text[start:end]``);
    ``highlight`` the sentence that bears on the claim and ``value`` the document's value
    inside it (both offsets into ``citation.text``); ``claim_value``/``document_value``
    the two values when they differ (or agree), verbatim.
    """

    citation: Citation
    relation: str  #: supports, conflicts or related (the closest passages after not_found)
    highlight: Highlight | None = None
    value: Highlight | None = None
    claim_value: str | None = None
    document_value: str | None = None


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    """The result of checking one claim: verdict, a message in the claim's language, evidence."""

    claim: str
    language: str
    verdict: str
    message: str
    evidence: tuple[ClaimEvidence, ...] = field(default_factory=tuple)
    latency_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimCheck:
        return from_dict(cls, data)


def clean_claim(claim: object) -> str:
    """A claim tidied by the question rules (text, not empty, at most 2000 characters);
    QuestionError worded for a claim otherwise."""
    from citeqa.answer.pipeline import clean_question

    try:
        return clean_question(claim)
    except QuestionError as exc:
        raise QuestionError(str(exc).replace("question", "claim")) from None


# --- statements and questions -----------------------------------------------------------------

#: First words that make an input a question or a request, not a statement (es/pt/en, folded).
_QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|should|would|will|"
    r"has|have|had|may|might|must|shall|tell|show|list|give|find|explain|describe|summari[sz]e|compare|"
    r"que|qual|quais|cual|cuales|quien|quienes|quem|cuando|quando|donde|onde|adonde|aonde|por que|porque|como|"
    r"cuanto|cuanta|cuantos|cuantas|quanto|quanta|quantos|quantas|o que|existe|existen|hay|ha|dime|muestra|"
    r"explica|describe|resume|enumera|compara|diz|diga|mostra|mostre|explique|descreva|resuma|liste|compare)\b"
)


def looks_like_claim(text: str) -> bool:
    """Whether the chat's "auto" mode checks ``text`` as a claim instead of answering it: no question
    mark, no question or request word first (es/pt/en), at least three words, and it ends with a full
    stop or states a number or date. Conservative: anything else is asked as a question."""
    cleaned = " ".join(str(text).split())
    if not cleaned or "?" in cleaned or "¿" in cleaned:
        return False
    folded = fold_accents(cleaned.casefold()).lstrip("¡\"'«“(- ")
    if _QUESTION_START.match(folded) or len(folded.split()) < 3:
        return False
    return cleaned.endswith((".", "!")) or bool(find_facts(cleaned))


# --- what a claim says ------------------------------------------------------------------------

_NAME_TOKEN = re.compile(r"[^\W_](?:[\w\-.]*[^\W_])?")
_MONTH_WORDS = frozenset(MONTHS)


@dataclass(frozen=True)
class ClaimParts:
    """A claim taken apart: its facts, its names and its other words."""

    text: str
    lang: str
    facts: tuple[Fact, ...]
    names: frozenset[str]  #: folded name tokens that must be found ("glm-5", "p800", "entity")
    soft_names: frozenset[str]  #: a capitalised first word: a name only if the evidence has it
    stems: frozenset[str]
    keys: frozenset[str]  #: cognate keys of the words that are neither names nor facts
    tokens: tuple[tuple[int, int, str], ...]  #: (start, end, folded token) of every word


def tokens_of(text: str) -> list[tuple[int, int, str]]:
    """Word tokens with their offsets, folded ("GLM-Image" stays one token, "5.2" too)."""
    return [(m.start(), m.end(), fold_accents(m.group(0).casefold())) for m in _NAME_TOKEN.finditer(text)]


def analyse_claim(claim: str, lang: str) -> ClaimParts:
    """The facts, names and content words of ``claim`` (in ``lang``)."""
    facts = tuple(find_facts(claim, lang))
    toks = tokens_of(claim)
    stop = stopwords(lang)
    names, soft = set(), set()
    for i, (a, b, folded) in enumerate(toks):
        raw = claim[a:b]
        if any(f.start <= a and b <= f.end for f in facts) or folded in _MONTH_WORDS:
            continue
        has_digit = any(c.isdigit() for c in raw)
        if has_digit or (len(raw) >= 2 and raw.isupper()) or any(c.isupper() for c in raw[1:]):
            names.add(folded)  # "GLM-5", "P800", "AI", "openPangu", "950" after a name
        elif raw[:1].isupper() and folded not in stop:
            (soft if i == 0 else names).add(folded)  # a capital at the start may just start the sentence
    plain = _without(claim, [(f.start, f.end) for f in facts] + [(a, b) for a, b, f in toks if f in names])
    return ClaimParts(
        claim,
        lang,
        facts,
        frozenset(names),
        frozenset(soft - names),
        frozenset(terms(plain, lang)),
        cognate_keys(plain),
        tuple(toks),
    )


def _without(text: str, spans: Sequence[tuple[int, int]]) -> str:
    out = list(text)
    for a, b in spans:
        out[a:b] = [" "] * (b - a)
    return "".join(out)


# --- one sentence against the claim -----------------------------------------------------------

#: Words on each side of a claim's fact that tie it to its subject ("GLM-5 tiene unos 800...").
ANCHOR_WORDS = 8
#: A comma, colon, bracket or dash between two words counts as this many words: "Ascend 970 en
#: 2028, 980 en 2029" ties 980 to 2029, not to 2028.
SEPARATOR_WORDS = 2
_SEPARATORS = re.compile(r"[,;:()\[\]\u2014\u2013]|\s-\s")


@dataclass(frozen=True)
class FactMatch:
    """One fact of the claim in a sentence: ``same`` value, a ``different`` one, or ``missing``."""

    claim: Fact
    relation: str
    doc: Fact | None = None


@dataclass(frozen=True)
class SentenceJudgement:
    """What one candidate sentence says about the claim (the features :func:`decide` reads)."""

    names: float  #: share of the claim's names in the sentence's paragraph
    terms: float  #: share of the claim's other words there (stems, or cognate keys across languages)
    dense: float  #: cosine of the sentence to the claim
    matches: tuple[FactMatch, ...]

    @property
    def n_facts(self) -> int:
        return len(self.matches)

    @property
    def all_same(self) -> bool:
        return bool(self.matches) and all(m.relation == "same" for m in self.matches)

    @property
    def different(self) -> FactMatch | None:
        return next((m for m in self.matches if m.relation == "different"), None)

    @property
    def relevance(self) -> float:
        """How much the sentence is about the claim, for ordering the closest passages."""
        same = sum(m.relation == "same" for m in self.matches)
        return self.names + self.terms + self.dense + 0.5 * same


def judge_sentence(
    parts: ClaimParts, sentence: str, lang: str, paragraph: str = "", dense: float = 0.0, title: str = ""
) -> SentenceJudgement:
    """Compare ``sentence`` (in ``lang``, inside ``paragraph`` of a document called ``title``) with the claim.

    Names are looked for in the whole paragraph and the document's title (the subject is
    often named a sentence earlier, or only in the title), words in the paragraph (the action
    may be told a sentence later), values only in the sentence.
    """
    around = paragraph if sentence in paragraph else f"{paragraph} {sentence}"
    have = {t for _, _, t in tokens_of(f"{title}\n{around}")}
    wanted = parts.names | {n for n in parts.soft_names if n in have}
    names = sum(1 for n in wanted if n in have) / len(wanted) if wanted else 1.0
    if parts.keys or parts.stems:
        term_share = len(parts.keys & cognate_keys(around)) / len(parts.keys) if parts.keys else 0.0
        if parts.stems and lang == parts.lang:
            term_share = max(term_share, len(parts.stems & set(terms(around, lang))) / len(parts.stems))
    else:
        term_share = 1.0
    facts = find_facts(sentence, lang)
    matches = tuple(_match_fact(parts, f, sentence, facts) for f in parts.facts)
    return SentenceJudgement(names, term_share, float(dense), matches)


def _match_fact(parts: ClaimParts, claim_fact: Fact, sentence: str, facts: Sequence[Fact]) -> FactMatch:
    """The sentence's fact in the place of ``claim_fact``: among the facts of the same kind and
    unit, the one the claim's words around ``claim_fact`` sit nearest to (ties go to the same value)."""
    candidates = [f for f in facts if same_value(claim_fact, f) or same_slot(claim_fact, f)]
    if not candidates:
        return FactMatch(claim_fact, "missing")
    scores = _anchor_scores(_anchors(parts, claim_fact), sentence, candidates)
    ranked = sorted(range(len(candidates)), key=lambda i: (-scores[i], not same_value(claim_fact, candidates[i]), i))
    best = candidates[ranked[0]]
    if same_value(claim_fact, best):
        return FactMatch(claim_fact, "same", best)
    if scores[ranked[0]] > 0 or (claim_fact.kind == "quantity" and claim_fact.unit and claim_fact.unit == best.unit):
        return FactMatch(claim_fact, "different", best)
    return FactMatch(claim_fact, "missing")


def _anchor_key(token: str, names: frozenset[str]) -> frozenset[str]:
    if token in names or any(c.isdigit() for c in token):
        return frozenset({token})
    return cognate_keys(token)


def _anchors(parts: ClaimParts, fact: Fact) -> frozenset[str]:
    """The claim's words (names, cognate keys) within :data:`ANCHOR_WORDS` words of ``fact``."""
    outside = [(a, b, t) for a, b, t in parts.tokens if not any(f.start < b and a < f.end for f in parts.facts)]
    before = [t for a, b, t in outside if b <= fact.start][-ANCHOR_WORDS:]
    after = [t for a, b, t in outside if a >= fact.end][:ANCHOR_WORDS]
    keys: set[str] = set()
    for tok in before + after:
        keys |= _anchor_key(tok, parts.names)
    return frozenset(keys)


def _positions(text: str) -> list[tuple[int, int, str, int]]:
    """Tokens with a position that counts words and (as :data:`SEPARATOR_WORDS`) separators."""
    out, pos, last = [], 0, 0
    for a, b, tok in tokens_of(text):
        pos += 1 + SEPARATOR_WORDS * len(_SEPARATORS.findall(text[last:a]))
        out.append((a, b, tok, pos))
        last = b
    return out


def _anchor_scores(anchors: frozenset[str], sentence: str, candidates: Sequence[Fact]) -> list[float]:
    """For each candidate fact, the claim's anchor words that sit nearer to it than to the other
    candidates, each counting 1/distance in words (a word equally near two shares its weight)."""
    toks = _positions(sentence)
    spans = []
    for f in candidates:
        inside = [p for a, b, _, p in toks if a < f.end and f.start < b]
        spans.append((min(inside), max(inside)) if inside else (0, 0))
    scores = [0.0] * len(candidates)
    for a, b, tok, p in toks:
        if any(f.start < b and a < f.end for f in candidates) or not (
            tok in anchors or _anchor_key(tok, frozenset()) & anchors
        ):
            continue
        dist = [lo - p if p < lo else p - hi if p > hi else 0 for lo, hi in spans]
        if min(dist) > ANCHOR_WORDS + SEPARATOR_WORDS:
            continue
        nearest = [i for i, d in enumerate(dist) if d == min(dist)]
        for i in nearest:
            scores[i] += 1.0 / (len(nearest) * max(1, min(dist)))
    return scores


# --- the verdict --------------------------------------------------------------------------------


def sentence_relation(j: SentenceJudgement, t: ClaimThresholds) -> str:
    """``supports``, ``conflicts`` or ``related`` for one judged sentence."""
    if j.n_facts and j.all_same and j.names >= t.support_names_facts and j.terms >= t.support_terms_facts:
        return SUPPORTS
    if (
        not j.n_facts
        and j.names >= t.support_names_plain
        and (j.terms >= t.support_terms_plain or j.dense >= t.support_dense_plain)
    ):
        return SUPPORTS
    if (
        j.different is not None
        and j.names >= t.conflict_names
        and (j.terms >= t.conflict_terms or j.dense >= t.conflict_dense)
    ):
        return CONFLICTS
    return RELATED


def decide(judgements: Sequence[SentenceJudgement], t: ClaimThresholds) -> str:
    """The claim's verdict from its judged sentences: a supporting one wins, then a conflicting one."""
    relations = {sentence_relation(j, t) for j in judgements}
    if SUPPORTS in relations:
        return SUPPORTED
    if CONFLICTS in relations:
        return CONFLICTING
    return NOT_FOUND


# --- from a trace to a ClaimCheck -------------------------------------------------------------


@dataclass(frozen=True)
class JudgedSpan:
    """A candidate sentence with its passage (index into the hits) and judgement."""

    hit_index: int
    start: int  #: document offsets of the sentence
    end: int
    judgement: SentenceJudgement


def judge_candidates(
    parts: ClaimParts,
    hits: Sequence[Hit],
    cands: Sequence[Candidate],
    dense: Sequence[float | None],
    titles: Mapping[str, str] | None = None,
) -> list[JudgedSpan]:
    """Judge every candidate sentence (``dense``: its cosine to the claim, None for the passage's;
    ``titles``: document titles by doc_id)."""
    out = []
    for cand, sim in zip(cands, dense):
        chunk = hits[cand.hit_index].chunk
        a, b = cand.start - chunk.start, cand.end - chunk.start
        para_start = chunk.text.rfind("\n", 0, a) + 1
        para_end = chunk.text.find("\n", b)
        paragraph = chunk.text[para_start : para_end if para_end >= 0 else len(chunk.text)]
        similarity = sim if sim is not None else hits[cand.hit_index].dense
        title = (titles or {}).get(chunk.doc_id, "")
        out.append(
            JudgedSpan(
                cand.hit_index,
                cand.start,
                cand.end,
                judge_sentence(parts, cand.text, cand.lang, paragraph, similarity, title),
            )
        )
    return out


def check_claim(
    claim: str,
    lang: str,
    hits: Sequence[Hit],
    cands: Sequence[Candidate],
    dense: Sequence[float | None],
    documents: Mapping[str, Document],
    k: int = 5,
    thresholds: ClaimThresholds | None = None,
) -> ClaimCheck:
    """The :class:`ClaimCheck` of ``claim`` (in ``lang``) from its retrieved passages (``hits``),
    their candidate sentences and each sentence's cosine to the claim."""
    t = thresholds if thresholds is not None else ClaimThresholds()
    parts = analyse_claim(claim, lang)
    judged = judge_candidates(parts, hits, cands, dense, {d: doc.title for d, doc in documents.items()})
    verdict = decide([j.judgement for j in judged], t)
    evidence = _evidence(judged, hits, documents, verdict, k, t)
    wanted = CONFLICTS if verdict == CONFLICTING else SUPPORTS
    shown = next((e for e in evidence if e.relation == wanted), None)
    message = claim_message(
        verdict, lang, shown.claim_value if shown else None, shown.document_value if shown else None
    )
    return ClaimCheck(claim, lang, verdict, message, tuple(evidence))


def _evidence(
    judged: Sequence[JudgedSpan],
    hits: Sequence[Hit],
    documents: Mapping[str, Document],
    verdict: str,
    k: int,
    t: ClaimThresholds,
) -> list[ClaimEvidence]:
    """Up to ``k`` passages, one entry each (its best sentence): supporting first, then conflicting,
    then the closest. After ``not_found`` every passage is only ``related``."""
    order = {SUPPORTS: 0, CONFLICTS: 1, RELATED: 2}
    relation_of = {id(j): (RELATED if verdict == NOT_FOUND else sentence_relation(j.judgement, t)) for j in judged}
    ranked = sorted(judged, key=lambda j: (order[relation_of[id(j)]], -j.judgement.relevance))
    out, seen = [], set()
    for j in ranked:
        if len(out) >= k:
            break
        if j.hit_index not in seen:
            seen.add(j.hit_index)
            out.append(_one_evidence(j, relation_of[id(j)], hits, documents))
    for i, hit in enumerate(hits):  # passages without a candidate sentence close the list
        if len(out) >= k:
            break
        if i not in seen:
            seen.add(i)
            out.append(ClaimEvidence(_citation(hit, documents), RELATED))
    return out


def _one_evidence(
    j: JudgedSpan, relation: str, hits: Sequence[Hit], documents: Mapping[str, Document]
) -> ClaimEvidence:
    hit = hits[j.hit_index]
    citation = _citation(hit, documents)
    offset = j.start - hit.chunk.start
    highlight = Highlight(offset, offset + (j.end - j.start))
    match = None
    if relation == CONFLICTS:
        match = j.judgement.different
    elif relation == SUPPORTS:
        match = next((m for m in j.judgement.matches if m.doc is not None), None)
    if match is None or match.doc is None:
        return ClaimEvidence(citation, relation, highlight)
    value = Highlight(offset + match.doc.start, offset + match.doc.end)
    return ClaimEvidence(citation, relation, highlight, value, match.claim.text, match.doc.text)


def _citation(hit: Hit, documents: Mapping[str, Document]) -> Citation:
    c = hit.chunk
    doc = documents.get(c.doc_id)
    return Citation(
        c.doc_id, doc.title if doc is not None else c.doc_id, c.lang, c.start, c.end, c.text, round(hit.score, 6)
    )
