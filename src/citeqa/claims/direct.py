"""Direct evidence: one sentence that states the claim's subject and its value(s), value by value.

The sentence judge (:mod:`citeqa.claims.judge`) pairs each claim value with one value of a sentence
(the one the claim's words sit nearest to) and supports a claim only past fitted thresholds on its
words; the reader (:mod:`citeqa.claims.reading`) may read a neighbour's value. Here each value of
the claim is looked for on its own in every judged unit (a sentence with the lead it continues),
in any language, its facts compared after normalisation (:func:`citeqa.claims.reading.compare`:
"744 billion" = "744 mil milions", "512 GB" = "512 Go", "T1 2027" = "first quarter of 2027"):

* a document value belongs to the claim's subject unless another name stands between the last
  name of the claim and the value in the sentence ("the 960DT arrives in the first quarter of 2027
  and the 960PR in the third": the first quarter is the 960DT's, the third the 960PR's);
* ``same``: the unit names the claim's subject and states the value for it; ``different``: it
  states another value of the same kind and unit for it; ``none`` otherwise.

A unit **states** the claim when every value is ``same`` there, the claim's names reach
``DirectRule.names`` and its words ``cover`` (or the cosine ``dense``); it **contradicts** it when a
value is ``different`` and none is ``none``. The thresholds are data (``direct`` in
``claims/weights/claim_reading.json``), fitted out of fold by ``eval/fit_claim_reading.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from citeqa.claims.judge import SentenceJudgement, Unit
from citeqa.claims.parts import ClaimParts, tokens_of
from citeqa.claims.questions import claim_values
from citeqa.claims.reading import compare
from citeqa.claims.rule import direct_block
from citeqa.errors import ConfigError
from citeqa.records import Span
from citeqa.text.analysis import stopwords
from citeqa.text.facts import NAME, Fact, find_facts
from citeqa.text.facts_names import is_name_word

SAME, DIFFERENT, NONE = "same", "different", "none"


@dataclass(frozen=True, slots=True)
class DirectRule:
    """When a unit states or contradicts a claim by itself (fitted; :func:`unit_says`)."""

    names: float = 1.0  #: share of the claim's names the unit must have
    cover: float = 0.5  #: share of the claim's other words (its predicate) the unit must say ...
    dense: float = 0.85  #: ... or this cosine of the sentence to the claim
    conflict: bool = True  #: whether a unit that gives another value for the subject conflicts


def direct_rule(values: Mapping[str, Any] | None = None) -> DirectRule:
    """:class:`DirectRule` from the fitted file's ``direct`` block (:func:`citeqa.claims.rule.direct_block`;
    ``values`` instead when given); ConfigError for a setting it does not have."""
    data = direct_block() if values is None else dict(values)
    known = {f.name for f in fields(DirectRule)}
    if set(data) - known:
        raise ConfigError(f"direct evidence rule: no such setting {', '.join(sorted(set(data) - known))}")
    rule = DirectRule(**data)
    return DirectRule(float(rule.names), float(rule.cover), float(rule.dense), bool(rule.conflict))


@dataclass(frozen=True, slots=True)
class ValueFinding:
    """What one unit says of one value of the claim: the claim's value, the relation and, for a
    date or quantity, the document's value (offsets into the unit's text)."""

    claim_value: str
    relation: str  #: same, different or none
    doc: Fact | None = None


def _holder(text: str, at: int, lang: str, since: int = 0) -> str | None:
    """The name a value at ``at`` in ``text`` belongs to: walking back from it to ``since`` (where
    the sentence starts, after its lead), the first name word not inside a fact (folded); None when
    there is none (the subject is then the lead's, or the sentence's own)."""
    facts = find_facts(text, lang)
    stop = stopwords(lang)
    toks = [t for t in tokens_of(text) if since <= t[0] and t[1] <= at]
    for k in range(len(toks) - 1, -1, -1):
        a, b, tok = toks[k]
        if any(f.start <= a < f.end for f in facts) or tok in stop:
            continue
        first = k == 0 or text[toks[k - 1][1] : a].strip()[-1:] in {".", "!", "?", ":", "\n"}
        if is_name_word(text[a:b], first=first):
            return tok
    return None


def _holder_ok(parts: ClaimParts, holder: str | None, others: set[str]) -> bool:
    """Whether a document value whose holder is ``holder`` can be the claim's subject's: no holder
    in the sentence, or one of the claim's names that holds no other value of the claim ("the 960DT
    in the first quarter and the 960PR in the third": the third is not the 960DT's)."""
    if holder is None:
        return True
    return (holder in parts.names or holder in parts.soft_names) and holder not in others


def find_values(parts: ClaimParts, unit: Unit) -> tuple[ValueFinding, ...]:
    """Each value of the claim (:func:`~citeqa.claims.questions.claim_values`) in ``unit``: ``same``
    when a value of the unit that is the subject's states it, else ``different`` when one gives
    another, else ``none``; a name that is the claim's value is ``same`` where the unit has it."""
    text = unit.text
    since = max(0, unit.sentence_start - unit.span.start)
    facts = find_facts(text, unit.lang)
    have = {t for _, _, t in tokens_of(f"{unit.context}\n{unit.lead}\n{text}")}
    values = claim_values(parts)
    held = [_holder(parts.text, v.start, parts.lang) for v in values]
    out = []
    for i, value in enumerate(values):
        others = {h for k, h in enumerate(held) if k != i and h is not None and h != held[i]}
        if value.kind == NAME:
            wanted = {t for _, _, t in tokens_of(value.text)}
            out.append(ValueFinding(value.text, SAME if wanted <= have else NONE))
            continue
        same = other = None
        for doc in facts:
            relation = compare(value, doc)
            if relation is None or not _holder_ok(parts, _holder(text, doc.start, unit.lang, since), others):
                continue
            if relation == SAME and same is None:
                same = doc
            elif relation == DIFFERENT and other is None:
                other = doc
        if same is not None:
            out.append(ValueFinding(value.text, SAME, same))
        else:
            out.append(ValueFinding(value.text, DIFFERENT if other is not None else NONE, other))
    return tuple(out)


def about_claim(j: SentenceJudgement, rule: DirectRule) -> bool:
    """Whether a judged unit names the claim's subject and says its predicate (words or cosine)."""
    return j.names >= rule.names and not j.opposed and (j.cover >= rule.cover or j.dense >= rule.dense)


def unit_says(found: Sequence[ValueFinding], j: SentenceJudgement, rule: DirectRule) -> str:
    """``same`` when the unit states every value of the claim for its subject, ``different`` when it
    gives another value for one and says something of every other, else ``none``."""
    if not found or not about_claim(j, rule):
        return NONE
    relations = {f.relation for f in found}
    if relations == {SAME}:
        return SAME
    if rule.conflict and DIFFERENT in relations and NONE not in relations:
        return DIFFERENT
    return NONE


@dataclass(frozen=True, slots=True)
class ValueCheck:
    """The verdict on one value of the claim, as the check record shows it: ``same``, ``different``
    or ``none``, the document's value and where it lies (document offsets), and what found it
    (``sentence``: a unit stating it for the subject; ``reader``: the reading; "" for nothing)."""

    claim_value: str
    relation: str
    document_value: str = ""
    span: Span | None = None
    by: str = ""


@dataclass(frozen=True, slots=True)
class DirectResult:
    """Direct evidence over the judged units: the verdict it gives (``same``, ``different`` or
    ``none``), each unit's relation (None: not about the claim) and each value's finding."""

    verdict: str
    units: tuple[str | None, ...]
    values: tuple[ValueCheck, ...]


def direct_evidence(
    parts: ClaimParts, judged: Sequence[tuple[Unit, SentenceJudgement]], rule: DirectRule
) -> DirectResult:
    """What the units say of the claim by themselves (:func:`unit_says`), best first: a unit stating
    it wins over one contradicting it. Each value keeps the first unit (about the claim) that states
    it, else the first that gives another value for it."""
    relations: list[str | None] = []
    findings: list[tuple[Unit, tuple[ValueFinding, ...]]] = []
    for unit, j in judged:
        if not about_claim(j, rule):
            relations.append(None)
            continue
        found = find_values(parts, unit)
        relations.append(unit_says(found, j, rule))
        findings.append((unit, found))
    verdict = SAME if SAME in relations else DIFFERENT if DIFFERENT in relations else NONE
    values = tuple(_value_check(i, v.text, findings) for i, v in enumerate(claim_values(parts)))
    return DirectResult(verdict, tuple(relations), values)


def _value_check(i: int, claim_value: str, findings: Sequence[tuple[Unit, tuple[ValueFinding, ...]]]) -> ValueCheck:
    for wanted in (SAME, DIFFERENT):
        for unit, found in findings:
            f = found[i]
            if f.relation == wanted:
                if f.doc is None:
                    return ValueCheck(claim_value, wanted, by="sentence")
                at = Span(unit.span.doc_id, unit.span.start + f.doc.start, unit.span.start + f.doc.end)
                return ValueCheck(claim_value, wanted, f.doc.text, at, "sentence")
    return ValueCheck(claim_value, NONE)
