"""Claim checking: does one sentence of the documents state a claim, state another value for
it, or nothing?

A claim ("GLM-5 tiene unos 800 mil millones de parámetros") is searched like a question
(:meth:`citeqa.engine.Engine.claim_inputs`); every sentence of the retrieved passages is then
judged against it (:mod:`citeqa.claims.judge`, with the claim taken apart by
:mod:`citeqa.claims.parts`): ``supported`` only when one sentence (with the lead or heading
it continues) carries the claim's names, its values and its words; ``conflicting`` when such a
sentence gives another value in the claim's place; ``not_found`` otherwise. The evidence quotes
the whole sentence, and the same finding in translations of one article is shown once, with the
other languages noted (:mod:`citeqa.claims.translations`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from citeqa.claims.direct import DIFFERENT, SAME, DirectResult, DirectRule, ValueCheck, direct_evidence, direct_rule
from citeqa.claims.judge import (
    CONFLICTING,
    CONFLICTS,
    NOT_FOUND,
    RELATED,
    SUPPORTED,
    SUPPORTS,
    VERDICTS,
    SentenceJudgement,
    Unit,
    decide,
    judge_unit,
    unit_relation,
    units_of,
)
from citeqa.claims.parts import ClaimParts, analyse_claim
from citeqa.claims.questions import claim_subject, claim_values
from citeqa.claims.reading import ValueReading, combine
from citeqa.claims.rule import ReadingRule
from citeqa.claims.thresholds import ClaimThresholds, claim_thresholds
from citeqa.claims.translations import aligned, translation_groups
from citeqa.messages import claim_labels, claim_message
from citeqa.qa.questions import clean_question, question_words
from citeqa.qa.spans import Candidate
from citeqa.records import Citation, Document, Highlight, Hit, Span, from_dict, to_dict
from citeqa.text.analysis import fold_accents
from citeqa.text.facts import find_facts
from citeqa.text.facts_words import alternation, folded_copy

__all__ = [
    "CONFLICTING",
    "NOT_FOUND",
    "SUPPORTED",
    "VERDICTS",
    "ClaimCheck",
    "ClaimEvidence",
    "ClaimInputs",
    "ClaimThresholds",
    "JudgedSpan",
    "Translation",
    "analyse_claim",
    "check_claim",
    "claim_thresholds",
    "clean_claim",
    "judge_candidates",
    "looks_like_claim",
]


@dataclass(frozen=True, slots=True)
class ClaimInputs:
    """What a claim is judged on: the claim as cleaned, its language, the passages retrieved for it,
    every sentence of every one of them (not only those searched for an answer) and each sentence's
    cosine to the claim (None where the index has no span vector); made by
    :meth:`citeqa.engine.Engine.claim_inputs` from the pipeline's
    :class:`~citeqa.qa.pipeline.Sentences`."""

    claim: str
    language: str
    hits: tuple[Hit, ...]
    candidates: tuple[Candidate, ...]
    similarities: tuple[float | None, ...]


@dataclass(frozen=True, slots=True)
class Translation:
    """The same finding in a translation of the shown document: its sentence, in document offsets."""

    doc_id: str
    lang: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class ClaimEvidence:
    """A passage that bears on a claim.

    ``citation`` is the passage (``citation.text == document_text[start:end]``);
    ``highlight`` the sentence that bears on the claim and ``value`` the document's value
    inside it (both offsets into ``citation.text``); ``claim_value``/``document_value``
    the two values when they differ (or agree), verbatim; ``translations`` the same sentence in
    translations of the document, which are not listed again.
    """

    citation: Citation
    relation: str  #: supports, conflicts or related (the closest passages after not_found)
    highlight: Highlight | None = None
    value: Highlight | None = None
    claim_value: str | None = None
    document_value: str | None = None
    translations: tuple[Translation, ...] = ()


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    """The result of checking one claim: verdict, a message in the claim's language, evidence."""

    claim: str
    language: str
    verdict: str
    message: str
    evidence: tuple[ClaimEvidence, ...] = field(default_factory=tuple)
    latency_ms: float = 0.0
    #: what the reader read for each value of the claim, about the claim's subject (document
    #: offsets; empty when checked without the reader): :mod:`citeqa.claims.reading`
    readings: tuple[ValueReading, ...] = ()
    #: the claim's values the reader did not read, verbatim, in claim order: those beyond
    #: :attr:`~citeqa.qa.bounds.RequestBounds.claim_values`, which only the sentence judge matched
    #: (empty when every value was read, or when checked without the reader)
    unread: tuple[str, ...] = ()
    #: the verdict on each value of the claim, in claim order (:mod:`citeqa.claims.direct`): ``same``,
    #: ``different`` or ``none``, found by a sentence stating it for the subject or by the reader
    values: tuple[ValueCheck, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimCheck:
        return from_dict(cls, data)


def clean_claim(claim: object) -> str:
    """A claim tidied by the question rules (text, not empty, at most 2000 characters);
    QuestionError worded for a claim otherwise."""
    return clean_question(claim, "claim")


# --- statements and questions -----------------------------------------------------------------


@cache
def _question_start() -> re.Pattern[str]:
    """First words that make an input a question or a request, not a statement (every language's
    wh-words and question starts, :func:`citeqa.qa.questions.question_words`; folded)."""
    return re.compile(rf"^(?:{alternation(question_words(), fold=False)})\b")


def looks_like_claim(text: str) -> bool:
    """Whether the chat's "auto" mode checks ``text`` as a claim instead of answering it: no question
    mark, no question or request word first (in any language with a word list), at least three
    words, and it ends with a full stop or states a number or date. Conservative: anything else is
    asked as a question."""
    cleaned = " ".join(str(text).split())
    if not cleaned or "?" in cleaned or "¿" in cleaned:
        return False
    folded = fold_accents(cleaned.casefold()).lstrip("¡\"'«“(- ")
    if _question_start().match(folded) or len(folded.split()) < 3:
        return False
    return cleaned.endswith((".", "!")) or bool(find_facts(cleaned))


def is_question(text: str) -> bool:
    """Whether ``text`` asks instead of stating: a question mark, or a question or request word
    first in any language with a word list ("How many parameters does GLM-5 have?")."""
    cleaned = " ".join(str(text).split())
    folded = fold_accents(cleaned.casefold()).lstrip("¡\"'«“(- ")
    return "?" in cleaned or "¿" in cleaned or bool(_question_start().match(folded))


def nothing_to_check(parts: ClaimParts) -> bool:
    """Whether a claim states nothing the documents could confirm or contradict: no value (number,
    date, name as a value), at most one name and at most one other word ("GLM-5 is good.")."""
    return not claim_values(parts) and len(parts.names | parts.soft_names) <= 1 and len(parts.words) <= 1


def unchecked(claim: str, lang: str, page_lang: str | None = None) -> ClaimCheck:
    """The record of a claim that is a question: ``not_found``, with a message in the page's
    language (the claim's without one) that says to ask it or state it."""
    return ClaimCheck(claim, lang, NOT_FOUND, claim_labels(page_lang or lang)["question_not_claim"])


# --- from a trace to a ClaimCheck -------------------------------------------------------------


@dataclass(frozen=True)
class JudgedSpan:
    """A unit (a sentence with its lead) of a retrieved passage and its judgement."""

    unit: Unit
    judgement: SentenceJudgement

    @property
    def hit_index(self) -> int:
        return self.unit.hit_index

    @property
    def span(self) -> Span:
        """Where the unit lies in its document."""
        return self.unit.span


def judge_candidates(
    parts: ClaimParts,
    hits: Sequence[Hit],
    cands: Sequence[Candidate],
    dense: Sequence[float | None],
    documents: Mapping[str, Document],
) -> list[JudgedSpan]:
    """Judge every sentence of the retrieved passages (``dense``: each candidate span's cosine to the
    claim, None where the index has no span vector)."""
    return [JudgedSpan(u, judge_unit(parts, u)) for u in units_of(hits, cands, dense, documents)]


def check_claim(
    inputs: ClaimInputs,
    documents: Mapping[str, Document],
    k: int = 5,
    thresholds: ClaimThresholds | None = None,
    readings: Sequence[ValueReading] = (),
    rule: ReadingRule | None = None,
    direct: DirectRule | None = None,
) -> ClaimCheck:
    """The :class:`ClaimCheck` of the claim of ``inputs`` (in its language) from its retrieved passages,
    their candidate spans and each span's cosine to the claim. Direct evidence first
    (:mod:`citeqa.claims.direct`, ``direct`` or the fitted rule): a sentence stating the claim's
    subject and every value makes it supported, one giving the subject another value conflicting;
    else, with ``readings`` (what the reader read for each value of the claim), the judge's verdict
    and the readings' combined by ``rule`` (:func:`citeqa.claims.reading.combine`)."""
    t = thresholds if thresholds is not None else ClaimThresholds()
    claim, lang, hits = inputs.claim, inputs.language, inputs.hits
    parts = analyse_claim(claim, lang)
    judged = judge_candidates(parts, hits, inputs.candidates, inputs.similarities, documents)
    verdict = decide([j.judgement for j in judged], t)
    if rule is not None:
        verdict = combine(verdict, readings, rule)
    found = direct_evidence(parts, [(j.unit, j.judgement) for j in judged], direct or direct_rule())
    verdict = with_direct(found.verdict, verdict)
    values = value_checks(found, readings)
    evidence = _evidence(judged, hits, documents, verdict, k, t, lang, found)
    wanted = CONFLICTS if verdict == CONFLICTING else SUPPORTS
    shown = next((e for e in evidence if e.relation == wanted), None)
    claim_value, doc_value = (shown.claim_value, shown.document_value) if shown else (None, None)
    read = _reading_shown(readings, verdict)
    if read is not None and (shown is None or verdict == CONFLICTING):
        claim_value, doc_value = read.claim_value, read.document_value  # the value read for the claim's subject
    if found.verdict != "none":  # the sentence's value for the subject: the one it states, or another
        said = next((v for v in values if v.relation == found.verdict and v.by == "sentence"), None)
        if said is not None:
            claim_value, doc_value = said.claim_value, said.document_value
    subject, value_missing = _subject_mentioned(parts, judged, readings) if verdict == NOT_FOUND else (None, False)
    message = claim_message(verdict, lang, claim_value, doc_value, subject, value_missing)
    if verdict == NOT_FOUND and nothing_to_check(parts):
        message = claim_labels(lang)["nothing_to_check"]
    return ClaimCheck(claim, lang, verdict, message, tuple(evidence), readings=tuple(readings), values=values)


def with_direct(direct: str, verdict: str) -> str:
    """The claim's verdict with direct evidence first: a sentence stating every value for the
    subject supports, one giving it another value conflicts; else the judge's and readings' verdict."""
    return SUPPORTED if direct == SAME else CONFLICTING if direct == DIFFERENT else verdict


def value_checks(found: DirectResult, readings: Sequence[ValueReading]) -> tuple[ValueCheck, ...]:
    """Each value's verdict: what a sentence says of it for the subject, else what the reader read
    for it (a value read for another name than the subject is none)."""
    by_value = {r.claim_value: r for r in readings}
    out = []
    for v in found.values:
        r = by_value.get(v.claim_value)
        if v.relation == "none" and r is not None and r.relation in (SAME, DIFFERENT) and not r.other_holder:
            v = ValueCheck(v.claim_value, r.relation, r.document_value, r.value, "reader")
        out.append(v)
    return tuple(out)


def _subject_mentioned(
    parts: ClaimParts, judged: Sequence[JudgedSpan], readings: Sequence[ValueReading]
) -> tuple[str | None, bool]:
    """The claim's subject as the claim writes it (:func:`~citeqa.claims.questions.claim_subject`)
    when a retrieved sentence (with its lead) names it, else None; and whether the claim has values
    that no retrieved sentence states (its dates and quantities, or its value names when it has
    none) and the reader read back for no name: "the documents mention X, but not this value" is
    then true; else the message only says they do not confirm the claim."""
    values = claim_values(parts)
    at = claim_subject(parts, values)
    if at is None:
        return None, False
    subject = parts.text[at.start : at.end].strip()
    said = [folded_copy(w) for w in subject.split()]  # as a name is written: "Segundo" is no "segundo"
    pattern = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, said)) + r"(?!\w)")
    about = [j for j in judged if pattern.search(folded_copy(f"{j.unit.lead}\n{j.unit.text}"))]
    if not about:
        return None, False
    read_back = any(r.relation == "same" for r in readings)  # even for another name: the value is there
    stated = any(j.judgement.all_same or (not parts.facts and j.judgement.values_named) for j in judged)
    return subject, bool(values) and not (read_back or stated)


def _reading_shown(readings: Sequence[ValueReading], verdict: str) -> ValueReading | None:
    """The reading the message quotes: a value read as another after ``conflicting``, one read back
    after ``supported``; never a value the reader gave to another name than the claim's subject."""
    wanted = {CONFLICTING: "different", SUPPORTED: "same"}.get(verdict)
    return next((r for r in readings if r.relation == wanted and r.document_value and not r.other_holder), None)


def _evidence(
    judged: Sequence[JudgedSpan],
    hits: Sequence[Hit],
    documents: Mapping[str, Document],
    verdict: str,
    k: int,
    t: ClaimThresholds,
    lang: str,
    found: DirectResult | None = None,
) -> list[ClaimEvidence]:
    """Up to ``k`` passages, one entry each (its best sentence): supporting first, then conflicting,
    then the closest; the claim's language first among equals. A passage of a translation of a
    document already shown, bearing the same way, is noted on that entry instead of listed. After
    ``not_found`` every passage is only ``related``."""
    order = {SUPPORTS: 0, CONFLICTS: 1, RELATED: 2}
    direct = found.units if found is not None and len(found.units) == len(judged) else (None,) * len(judged)
    relation_of = {id(j): _relation(j.judgement, t, verdict, d) for j, d in zip(judged, direct)}
    ranked = sorted(
        judged,
        key=lambda j: (
            order[relation_of[id(j)]],
            hits[j.hit_index].chunk.lang != lang,
            -j.judgement.relevance,
        ),
    )
    group = translation_groups(list(dict.fromkeys(h.chunk.doc_id for h in hits)), documents)
    out: list[ClaimEvidence] = []
    shown: dict[tuple[str, str], tuple[int, float]] = {}  # (translation group, relation) -> entry, place
    seen: set[int] = set()
    for j in ranked:
        if j.hit_index in seen:
            continue
        seen.add(j.hit_index)
        relation, doc_id = relation_of[id(j)], hits[j.hit_index].chunk.doc_id
        key, place = (group.get(doc_id, doc_id), relation), _place(j.unit, documents.get(doc_id))
        if key in shown and doc_id != out[shown[key][0]].citation.doc_id and aligned(place, shown[key][1]):
            index = shown[key][0]
            if all(tr.doc_id != doc_id for tr in out[index].translations):
                note = Translation(doc_id, hits[j.hit_index].chunk.lang, j.span.start, j.span.end, j.unit.text)
                out[index] = replace(out[index], translations=(*out[index].translations, note))
            continue
        if len(out) >= k:
            continue
        shown.setdefault(key, (len(out), place))
        out.append(_one_evidence(j, relation, hits, documents))
    for i, hit in enumerate(hits):  # passages without a sentence close the list
        if len(out) >= k:
            break
        if i not in seen:
            seen.add(i)
            out.append(ClaimEvidence(_citation(hit, documents), RELATED))
    return out


def _relation(j: SentenceJudgement, t: ClaimThresholds, verdict: str, direct: str | None = None) -> str:
    """A unit's relation as the verdict allows: after ``not_found`` every unit is only related, after
    ``conflicting`` (the reading may overrule the judge's support) no unit supports. A unit that
    states the claim for its subject by itself (``direct`` same / different) supports / conflicts."""
    if direct == SAME and verdict == SUPPORTED:
        return SUPPORTS
    if direct == DIFFERENT and verdict == CONFLICTING:
        return CONFLICTS
    relation = unit_relation(j, t)
    if verdict == NOT_FOUND or (verdict == CONFLICTING and relation == SUPPORTS):
        return RELATED
    return relation


def _place(unit: Unit, doc: Document | None) -> float:
    """Where ``unit`` sits in its document, from 0 (start) to 1 (end)."""
    return unit.span.start / len(doc.text) if doc is not None and doc.text else 0.0


def _one_evidence(
    j: JudgedSpan, relation: str, hits: Sequence[Hit], documents: Mapping[str, Document]
) -> ClaimEvidence:
    hit = hits[j.hit_index]
    citation = _citation(hit, documents)
    highlight = j.span.inside(citation)  # the unit lies in its hit's passage, the citation
    match = None
    if relation == CONFLICTS:
        match = j.judgement.different
    elif relation == SUPPORTS:
        match = next((m for m in j.judgement.matches if m.doc is not None), None)
    if match is None or match.doc is None:
        return ClaimEvidence(citation, relation, highlight)
    value = j.span.part(Highlight(match.doc.start, match.doc.end)).inside(citation)  # found in the unit's text
    return ClaimEvidence(citation, relation, highlight, value, match.claim.text, match.doc.text)


def _citation(hit: Hit, documents: Mapping[str, Document]) -> Citation:
    c = hit.chunk
    doc = documents.get(c.doc_id)
    return Citation(
        c.doc_id, doc.title if doc is not None else c.doc_id, c.lang, c.start, c.end, c.text, round(hit.score, 6)
    )
