"""Claims checked by reading: ask the reader for each value of a claim, about the claim's own subject.

The sentence judge (:mod:`citeqa.claims.judge`) matches a claim's values to sentences, not to the
entity a value belongs to: "The 960PR arrives in the first quarter of 2027." met "the 960DT arrives
in the first quarter of 2027 and the 960PR in the third" and was called supported. Here every value
of the claim (a date, a quantity with its unit, a name that is the claim's value: "fundada en
Bristol") is masked and asked for instead: the claim with the value replaced by a question word of
the claim's language (``claim_slots`` in :mod:`citeqa.text.lexicon`, data), "The 960PR arrives in
when?". The reader (:mod:`citeqa.reader`) reads that question over the few best retrieved passages;
the first span it reads that holds a value of the claim value's kind is compared with it by
:mod:`citeqa.text.quantities` (same date at the claim's granularity, same number in the same unit):

* ``same``: the value is read back for the claim's subject;
* ``different``: another value of the same kind and unit is read for it;
* ``none``: no span of that kind (the reader abstains or reads something else).

A reader asked "When does the 960PR arrive?" over "the 960DT arrives in the first quarter of 2027
and the 960PR in the third" may still read the 960DT's quarter. So a value read is asked about the
other way round too (:func:`read_holder`): the claim with its subject masked and the value kept,
"Who or what arrives in the first quarter of 2027?", read over the few words around the value the
document gives. When the reader reads another name there ("The 960DT") the value is the
neighbour's (:attr:`ValueReading.holder_subject` 0), and the rule may then count it as not read.

How the readings and the sentence judge's verdict combine into the claim's verdict is a small
rule with fitted margins (:class:`ReadingRule`), data in ``claims/weights/claim_reading.json``
written by ``eval/fit_claims.py --reading --write``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from citeqa.claims.judge import judge_unit, units_of
from citeqa.claims.parts import ClaimParts, tokens_of
from citeqa.claims.questions import claim_subject, claim_values, holder_question, split_values, value_question
from citeqa.claims.rule import ReadingRule
from citeqa.qa.bounds import RequestBounds, TokenCounter
from citeqa.qa.reading import widened
from citeqa.qa.spans import trimmed_span
from citeqa.qa.work import Ticket
from citeqa.reader.reader import ExtractiveReader, ReaderResult, Turn
from citeqa.records import Chunk, Document, Highlight, Hit, Span
from citeqa.text.facts import DATE, NAME, Fact, find_facts, find_names
from citeqa.text.quantities import date_relation, same_slot, same_value

SAME, DIFFERENT, NONE = "same", "different", "none"
#: How a verdict of the reading and one of the sentence judge combine (:func:`combine`).
#: ``unless`` (support only): the judge supports and no value is read as another with the support margin.
#: Spans read for a value, best first, whose holder is asked before the value counts as another
#: name's (each costs one short reading).
HOLDER_TRIES = 3


@dataclass(frozen=True, slots=True)
class ValueReading:
    """What the reader read for one value of the claim, about the claim's subject.

    ``span``: where the span read lies, a :class:`~citeqa.records.Span` (document offsets:
    ``text == document_text(span.doc_id)[span.start:span.end]``); ``value`` where the document's
    value lies inside it (document offsets too); both None when nothing was read. ``margin``: the
    span's score over its passage's no-answer score (how sure the reader is; None when nothing was
    read, so that the record stays valid JSON). ``relation`` ``none`` has no span of the value's kind.
    """

    claim_value: str  #: the claim's value, verbatim
    kind: str  #: the value's type (:attr:`citeqa.text.facts.Fact.type`)
    question: str
    relation: str  #: same, different or none
    span: Span | None = None  #: the span read (document offsets)
    lang: str = ""
    text: str = ""
    value: Span | None = None  #: the document's value inside ``span`` (document offsets)
    document_value: str = ""
    margin: float | None = None
    #: share of the claim's names in the sentence that holds the span (with its lead, heading and
    #: title: :mod:`citeqa.claims.judge`'s unit), and of its other words: is the span about the subject?
    names: float = 0.0
    cover: float = 0.0
    #: what the reader read as holding the value when asked with the claim's subject masked
    #: (:func:`read_holder`; document offsets; None when not asked or no name was read)
    holder: Span | None = None
    holder_text: str = ""
    holder_margin: float | None = None  #: None when no holder was read
    #: share of the claim's subject words in :attr:`holder_text` (1.0 when no holder was read)
    holder_subject: float = 1.0

    @property
    def other_holder(self) -> str:
        """The name the reader read as holding the value when it is not the claim's subject ("" else)."""
        return self.holder_text if self.holder is not None and self.holder_subject < 0.5 else ""

    def is_anothers(self, rule: ReadingRule) -> bool:
        """Whether the rule counts the value read as another name's: the reader read a holder
        without the claim's subject, at least as sure as ``rule.holder_margin``."""
        return bool(self.other_holder) and _at_least(self.holder_margin, rule.holder_margin)

    def read_at_least(self, relation: str, margin: float) -> bool:
        """Whether the value read has ``relation`` to the claim's, at least as surely as ``margin``."""
        return self.relation == relation and _at_least(self.margin, margin)


def _at_least(margin: float | None, bound: float) -> bool:
    """``margin >= bound``; a margin of nothing read (None) reaches no bound."""
    return margin is not None and margin >= bound


# --- comparing what was read with the claim's value -----------------------------------------------


def compare(claim: Fact, doc: Fact) -> str | None:
    """``same`` when ``doc`` states ``claim``'s value (a coarser claim date is the same: "2027" for
    "the first quarter of 2027"), ``different`` when it states another value of the same kind and
    unit, None when it says nothing comparable (a coarser document date, another unit, another kind)."""
    if claim.kind == NAME:
        if doc.kind != NAME:
            return None
        want = {t for _, _, t in tokens_of(claim.text)}
        have = {t for _, _, t in tokens_of(doc.text)}
        return SAME if want <= have else DIFFERENT if not want & have else None
    if claim.kind != doc.kind:
        return None
    if same_value(claim, doc):
        return SAME
    if claim.kind == DATE and claim.date is not None and doc.date is not None:
        return DIFFERENT if date_relation(claim.date, doc.date) == "different" else None
    return DIFFERENT if same_slot(claim, doc) else None


@dataclass(frozen=True, slots=True)
class _Passage:
    """A passage read for a claim, with its facts and names in document offsets (the frame of the
    reader's spans)."""

    hit: Hit
    facts: tuple[Fact, ...]
    names: tuple[Fact, ...]


def _passage(hit: Hit) -> _Passage:
    c = hit.chunk
    facts = tuple(_placed(f, c.start) for f in find_facts(c.text, c.lang))
    return _Passage(hit, facts, tuple(_placed(f, c.start) for f in find_names(c.text)))


def _placed(fact: Fact, at: int) -> Fact:
    """``fact``, found in a text that starts at document offset ``at``, in document offsets."""
    measure_end = fact.measure_end + at if fact.measure_end >= 0 else -1
    return replace(fact, start=fact.start + at, end=fact.end + at, measure_end=measure_end)


def _read_values(claim_fact: Fact, p: _Passage, span: Span) -> list[Fact]:
    """The values ``span`` (document offsets, in ``p``) reads: the passage's facts (names for a
    name) that the span covers at least half of, the most covered first (a span across "2027 and
    the 960PR in the third" reads the third); else the facts of the span's own text ("2027" read
    inside "the first quarter of 2027" is the year, not the quarter)."""
    a, b = span.start, span.end
    pool = p.names if claim_fact.kind == NAME else p.facts
    covered = [(min(b, f.end) - max(a, f.start), f) for f in pool if f.start < b and a < f.end]
    covered = [(n, f) for n, f in covered if n * 2 >= f.end - f.start]
    if covered:
        return [f for _, f in sorted(covered, key=lambda x: -x[0])]
    text = p.hit.chunk.text_at(a, b)
    own = find_names(text) if claim_fact.kind == NAME else find_facts(text, p.hit.chunk.lang)
    return [_placed(f, a) for f in own]


def value_readings(
    claim_fact: Fact, question: str, result: ReaderResult, passages: Sequence[_Passage], spans: int
) -> Iterator[ValueReading]:
    """Each of the reader's best ``spans`` (document offsets) that holds a value comparable with
    ``claim_fact``, best first."""
    for answer in result.answers[:spans]:
        p = passages[answer.passage]
        chunk = p.hit.chunk
        span = trimmed_span(answer.span, chunk.span, chunk.text)
        a, b = span.start, span.end
        if b <= a:
            continue
        found = [(f, r) for f in _read_values(claim_fact, p, span) if (r := compare(claim_fact, f)) is not None]
        if not found:
            continue
        share = {id(f): (min(b, f.end) - max(a, f.start)) / max(1, f.end - f.start) for f, _ in found}
        top = max(share.values())
        best = [(f, r) for f, r in found if share[id(f)] >= top - 1e-9]
        if len({r for _, r in best}) > 1:
            continue  # "63 ... and 39 ...": a span that holds the value and another singles out neither
        doc, relation = best[0]
        null = result.null[answer.passage]
        yield ValueReading(
            claim_fact.text,
            claim_fact.type,
            question,
            relation,
            span,
            chunk.lang,
            chunk.text_at(a, b),
            Span(span.doc_id, doc.start, doc.end),
            doc.text,
            round(float(answer.score - null), 4),
        )


def read_claim(
    reader: ExtractiveReader,
    parts: ClaimParts,
    hits: Sequence[Hit],
    rule: ReadingRule,
    ticket: Ticket | None = None,
    bounds: RequestBounds | None = None,
    documents: Mapping[str, Document] | None = None,
    holders: bool | None = None,
    count: TokenCounter | None = None,
) -> tuple[ValueReading, ...]:
    """One reading per value of the claim read (:func:`split_values`): its question
    (:func:`value_question`) read over the ``rule.passages`` best passages, within
    :meth:`~citeqa.qa.bounds.RequestBounds.value_windows` windows; with ``documents``, how much the
    sentence read is about the claim's names and words (:attr:`ValueReading.names`, ``cover``); with
    ``holders`` (by default when the rule uses them), who the reader says holds each value read
    (:func:`read_holder`). Without ``bounds`` every value is read, each in as many windows as it has.
    Each read waits for ``ticket``'s turns in the engine's work queue; without a ticket it does not wait."""
    values, _ = split_values(parts, bounds)
    if not values or not hits:
        return ()
    ask_holders = math.isfinite(rule.holder_margin) if holders is None else holders
    subject = claim_subject(parts, claim_values(parts))
    passages = [_passage(h) for h in hits[: rule.passages]]
    windows = bounds.value_windows(len(values)) if bounds is not None else None
    out = []
    turn = ticket.turn if ticket is not None else None
    for fact in values:
        question = value_question(parts, fact, rule.form, bounds, count)
        result = reader.run(
            question,
            [p.hit.chunk for p in passages],
            top=max(rule.spans, 1),
            max_windows=windows,
            turn=turn,
        )
        out.append(
            _first_of_subject(
                reader, parts, subject, fact, question, result, passages, rule, turn, ask_holders, documents or {}
            )
        )
    return tuple(out)


# --- whose value: the claim's subject asked for ------------------------------------------------


def _first_of_subject(
    reader: ExtractiveReader,
    parts: ClaimParts,
    subject: Highlight | None,
    fact: Fact,
    question: str,
    result: ReaderResult,
    passages: Sequence[_Passage],
    rule: ReadingRule,
    turn: Turn | None,
    holders: bool,
    documents: Mapping[str, Document],
) -> ValueReading:
    """The first value read for ``fact`` (:func:`value_readings`) that the rule does not count as
    another name's, asking up to :data:`HOLDER_TRIES` values' holders (a value the document gives
    in several spans is asked once); the first value read when all are others'."""
    first: ValueReading | None = None
    asked: dict[Span, ValueReading] = {}
    hits = [p.hit for p in passages]
    for read in value_readings(fact, question, result, passages, rule.spans):
        read = _about_subject(read, parts, hits, documents)
        if holders and subject is not None and read.value is not None:
            if read.value not in asked and len(asked) >= HOLDER_TRIES:
                break
            seen = asked.get(read.value)
            if seen is None:
                read = asked.setdefault(
                    read.value, read_holder(reader, parts, subject, fact, read, passages, rule, turn)
                )
            else:
                read = replace(
                    read,
                    holder=seen.holder,
                    holder_text=seen.holder_text,
                    holder_margin=seen.holder_margin,
                    holder_subject=seen.holder_subject,
                )
        if not read.is_anothers(rule):
            return read
        first = first if first is not None else read
    return first if first is not None else ValueReading(fact.text, fact.type, question, NONE)


def read_holder(
    reader: ExtractiveReader,
    parts: ClaimParts,
    subject: Highlight,
    fact: Fact,
    found: ValueReading,
    passages: Sequence[_Passage],
    rule: ReadingRule,
    turn: Turn | None = None,
) -> ValueReading:
    """``found`` with who the reader says holds its value: :func:`holder_question` read over
    ``rule.holder_words`` words either side of the document's value; the first of the best spans
    that holds a name, with the share of the claim's subject words in it."""
    assert found.value is not None
    at = found.value
    chunk = next(
        (
            p.hit.chunk
            for p in passages
            if p.hit.chunk.doc_id == at.doc_id and p.hit.chunk.start <= at.start < p.hit.chunk.end
        ),
        None,
    )
    if chunk is None:
        return found
    value = replace(at, end=min(at.end, chunk.end)).within(chunk.span)  # cut to the passage that holds its start
    assert value is not None
    near = chunk.span.part(widened(chunk.text, value.start, value.end, rule.holder_words))
    window = Chunk.make(chunk.doc_id, near.start, near.end, chunk.text_at(near.start, near.end), chunk.lang)
    question = holder_question(parts.text, subject, fact, found.document_value, parts.lang)
    result = reader.run(question, [window], top=3, turn=turn)
    wanted = {tok for a, _, tok in parts.tokens if subject.start <= a < subject.end}
    for answer in result.answers:
        span = trimmed_span(answer.span, window.span, window.text)
        text = window.text_at(span.start, span.end)
        have = {tok for _, _, tok in tokens_of(text)}
        share = len(wanted & have) / len(wanted)
        if share == 0 and not find_names(text):
            continue  # "it", "the company": no name, no answer to whose value it is
        margin = round(float(answer.score - result.null[0]), 4)
        return replace(found, holder=span, holder_text=text, holder_margin=margin, holder_subject=round(share, 4))
    return found


def _about_subject(
    r: ValueReading, parts: ClaimParts, hits: Sequence[Hit], documents: Mapping[str, Document]
) -> ValueReading:
    """``r`` with the judge's share of the claim's names and words in the unit that holds its span."""
    if r.relation == NONE or r.span is None:
        return r
    at = r.span.start
    for hit in hits:
        if hit.chunk.doc_id != r.span.doc_id or not hit.chunk.start <= at < hit.chunk.end:
            continue
        for unit in units_of([hit], [], [], documents):
            if unit.start <= at < unit.end:
                j = judge_unit(parts, unit)
                return replace(r, names=round(j.names, 4), cover=round(j.cover, 4))
    return r


# --- the verdict -----------------------------------------------------------------------------------


def reading_says(readings: Sequence[ValueReading], rule: ReadingRule) -> tuple[bool, bool]:
    """(supports, conflicts): every value read back with the support margin; some value read as
    another with the conflict margin; a value the reader gives to another name counts for neither."""
    supports = bool(readings) and all(
        r.read_at_least(SAME, rule.support_margin) and r.names >= rule.support_names and not r.is_anothers(rule)
        for r in readings
    )
    conflicts = any(
        r.read_at_least(DIFFERENT, rule.conflict_margin) and r.names >= rule.conflict_names and not r.is_anothers(rule)
        for r in readings
    )
    return supports, conflicts


def _mode(mode: str, judge: bool, reader: bool) -> bool:
    return {
        "judge": judge,
        "reader": reader,
        "both": judge and reader,
        "either": judge or reader,
        "unless": judge and not reader,
    }[mode]


def combine(judge_verdict: str, readings: Sequence[ValueReading], rule: ReadingRule) -> str:
    """The claim's verdict from the sentence judge's and the readings. A claim without values (nothing
    to ask for) keeps the judge's. Otherwise ``supported`` when the judge's support and the reading's
    meet as ``rule.support`` says; else ``conflicting`` when their conflicts do (``rule.conflict``),
    unless every value was read back more surely than ``veto_conflict_margin`` or (``holder_veto``,
    for the judge's conflict) every value read is another name's; else ``not_found``."""
    if not readings:
        return judge_verdict
    supports, conflicts = reading_says(readings, rule)
    if rule.support == "unless":
        other = any(
            r.read_at_least(DIFFERENT, rule.support_margin)
            and r.names >= rule.support_names
            and not r.is_anothers(rule)
            for r in readings
        )
        if judge_verdict == "supported" and not other:
            return "supported"
    elif _mode(rule.support, judge_verdict == "supported", supports):
        return "supported"
    judge_conflicts = judge_verdict == "conflicting"
    if judge_conflicts and rule.holder_veto and all(r.is_anothers(rule) for r in readings):
        judge_conflicts = False  # the value the judge conflicts with is a neighbour's
    if judge_conflicts and all(
        r.read_at_least(SAME, rule.veto_conflict_margin) and not r.is_anothers(rule) for r in readings
    ):
        judge_conflicts = False
    if _mode(rule.conflict, judge_conflicts, conflicts):
        return "conflicting"
    return "not_found"
