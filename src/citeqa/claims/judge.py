"""Does one sentence state a claim? The evidence units of retrieved passages and the features
and rule that judge each one.

A **unit** is a sentence of a passage, with what it continues: the short lead of its
paragraph ("DeepSeek V4. Moved its training to the Ascend 950, ..." — the lead names the
subject), the section heading above it and the document's title. Its **features**:

* ``names``: share of the claim's names in the unit (sentence, lead, heading, title);
* ``cover``: share of the claim's other words, its predicate, that the sentence and its lead
  say: the same stem (same language), a cognate key (across languages) or a word of the same
  concept in the per-language word lists (:mod:`citeqa.text.lexicon`: "compró" = "bought");
* ``dense``: the e5 cosine of the sentence (or its best clause) to the claim, from the span
  vectors of the index (:mod:`citeqa.index.spans`);
* per claim fact (quantity or date, :mod:`citeqa.claims.parts`): the same value in the
  sentence, another value in its place, or none;
* ``opposed``: the sentence says the opposite of the claim's predicate and not the predicate
  ("fell" where the claim says "rose"; ``concept_opposites`` in the word lists).

The rule (:func:`unit_relation`): **supports** when every claim fact has the same value there,
the names reach their share, a name that is the claim's value ("fundada en Bristol") is there, and the words reach their
share (or, past a floor, the cosine its own), unless the unit is ``opposed``; **conflicts** when a
fact has another value, or every fact the same value in an ``opposed`` unit, and the unit is about
the same names and words; else **related**. One supporting unit
makes the claim ``supported``; else one conflicting unit ``conflicting``; else ``not_found``.
The thresholds (:class:`~citeqa.claims.thresholds.ClaimThresholds`) are data, fitted out of fold by ``eval/fit_claims.py``;
a further feature (a reader's score) joins as one more name in :data:`FEATURES` and one more
threshold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from citeqa.claims.parts import (
    ClaimParts,
    FactMatch,
    content_words,
    match_facts,
    tokens_of,
    without,
    word_keys,
)
from citeqa.claims.thresholds import ClaimThresholds
from citeqa.ingest.sentences import sentence_spans
from citeqa.qa.spans import Candidate
from citeqa.records import Chunk, Document, Highlight, Hit, Span
from citeqa.text.analysis import COGNATE_PREFIX, cognate_keys, stem
from citeqa.text.facts import find_facts
from citeqa.text.facts_names import is_name_word
from citeqa.text.lexicon import concepts, opposite_concepts

SUPPORTED = "supported"
CONFLICTING = "conflicting"
NOT_FOUND = "not_found"
VERDICTS = (SUPPORTED, CONFLICTING, NOT_FOUND)

#: What one passage does for the claim (:attr:`citeqa.claims.check.ClaimEvidence.relation`).
SUPPORTS, CONFLICTS, RELATED = "supports", "conflicts", "related"

#: The features of a judged unit, in the order ``eval/fit_claims.py`` stores them.
FEATURES = ("names", "cover", "dense", "n_facts", "all_same", "has_different", "values_named", "opposed")


# --- units -------------------------------------------------------------------------------------

#: A paragraph's first sentence is a lead ("DeepSeek V4.", "GLM-5, by Zhipu (February 2026).")
#: when it has at most this many words, and at most :data:`LEAD_CONTENT_WORDS` that are not names,
#: numbers, dates or stopwords: it names what the paragraph's sentences are about.
LEAD_WORDS = 10
LEAD_CONTENT_WORDS = 1
#: A line is a heading when it has at most this many words and no closing punctuation.
HEADING_WORDS = 12
#: How far above a sentence to look for its heading (characters).
HEADING_REACH = 3000
_HEADING_MARK = re.compile(r"^\s*#+\s*")


@dataclass(frozen=True, slots=True)
class Unit:
    """A sentence of a retrieved passage with its lead, placed by a document span."""

    hit_index: int
    #: where the quote lies: from the lead when it directly precedes the sentence, to the sentence's end
    span: Span
    sentence_start: int  #: the document offset where the sentence itself starts (after its lead)
    text: str  #: ``document_text[span.start:span.end]``
    lang: str
    context: str  #: title and section heading: where the sentence's subject may be named
    lead: str  #: the paragraph's lead when it is not already part of ``text``
    dense: float
    document: frozenset[str] = frozenset()  #: the folded words of the whole document

    @property
    def start(self) -> int:
        """The document offset where the quote starts."""
        return self.span.start

    @property
    def end(self) -> int:
        """The document offset where the quote ends (exclusive)."""
        return self.span.end


def _lead(line: str, lang: str) -> Highlight | None:
    """The lead of a paragraph (offsets in ``line``), if its first sentence is one."""
    spans = sentence_spans(line)
    if len(spans) < 2:
        return None
    sentence = spans[0]
    text = line[sentence.start : sentence.end]
    toks = tokens_of(text)
    if len(toks) > LEAD_WORDS:
        return None
    facts = [Highlight(f.start, f.end) for f in find_facts(text, lang)]
    outside = [(x, y) for x, y, _ in toks if not any(f.start <= x and y <= f.end for f in facts)]
    named = [Highlight(x, y) for j, (x, y) in enumerate(outside) if is_name_word(text[x:y], first=(j == 0))]
    if not named:
        return None  # "Entre los tres suman 154,5 hm³." is a sentence, not a lead
    return sentence if len(content_words(without(text, facts + named), lang)) <= LEAD_CONTENT_WORDS else None


def _heading(doc: Document, offset: int) -> str:
    """The section heading above ``offset``: the document's own section title, else the nearest
    short line without closing punctuation."""
    section = doc.section_at(offset)
    if section:
        return section
    text = doc.text
    end = text.rfind("\n", 0, offset)
    floor = max(0, offset - HEADING_REACH)
    while end > floor:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        if is_heading(line):
            return _HEADING_MARK.sub("", line).strip()
        end = start - 1
    return ""


def is_heading(line: str) -> bool:
    """Whether a line is a heading: short, no closing punctuation, not a table row."""
    line = _HEADING_MARK.sub("", line).strip()
    return (
        bool(line)
        and len(line.split()) <= HEADING_WORDS
        and not line.endswith((".", "!", "?", ":", ";", ",", "»", '"', "”"))
        and "|" not in line
    )


@lru_cache(maxsize=256)
def document_words(text: str) -> frozenset[str]:
    """The folded words of a document (cached: every check reads the same few documents)."""
    return frozenset(t for _, _, t in tokens_of(text))


@dataclass(frozen=True, slots=True)
class _Frame:
    """The text a passage's sentences are read in, placed in their document: the whole document when
    the index holds it (a sentence's line and lead may begin before the passage), else the passage
    alone. Every offset in and out of it is a document offset; only :meth:`inner`, :meth:`text_at` and
    :meth:`line_around` look inside :attr:`text`."""

    span: Span  #: where :attr:`text` lies in its document
    text: str

    @staticmethod
    def of(chunk: Chunk, doc: Document | None) -> _Frame:
        """The whole document ``doc`` when there is one, else ``chunk`` alone."""
        if doc is not None:
            return _Frame(Span(chunk.doc_id, 0, len(doc.text)), doc.text)
        return _Frame(chunk.span, chunk.text)

    def inner(self, span: Span) -> Highlight:
        """``span`` (inside this frame) as offsets into :attr:`text`."""
        at = span.within(self.span)
        assert at is not None, f"{span} lies outside {self.span}"
        return at

    def text_at(self, span: Span) -> str:
        """The document's text of ``span`` (inside this frame)."""
        at = self.inner(span)
        return self.text[at.start : at.end]

    def line_around(self, sentence: Span) -> Span:
        """The line that holds ``sentence``: from the newline before it to the next one at or after its
        end (the frame's ends when there is none): where its paragraph's lead is looked for."""
        at = self.inner(sentence)
        start = self.text.rfind("\n", 0, at.start) + 1
        end = self.text.find("\n", at.end)
        return self.span.part(Highlight(start, end if end >= 0 else len(self.text)))


def _lead_of(frame: _Frame, line: Span, lang: str) -> Span | None:
    """The lead of the paragraph ``line`` (:func:`_lead`), placed in the document."""
    lead = _lead(frame.text_at(line), lang)
    return line.part(lead) if lead is not None else None


def _joined(frame: _Frame, chunk: Chunk, lead: Span, sentence: Span) -> bool:
    """Whether ``sentence`` continues ``lead`` directly (only blanks between them) and the lead lies in
    the passage, so that the quote is both: a lead in the passage before is only context."""
    between = Span(lead.doc_id, lead.end, sentence.start)
    return not frame.text_at(between).strip() and lead.start >= chunk.start


def _quote(frame: _Frame, chunk: Chunk, sentence: Span, lang: str) -> tuple[Span, str] | None:
    """Where the unit of ``sentence`` is quoted from, with the lead it keeps as context ("" when none
    or when the quote holds it); None when the sentence is itself a lead (it is quoted with the
    sentence that continues it)."""
    lead = _lead_of(frame, frame.line_around(sentence), lang)
    if lead is not None and lead.start == sentence.start:
        return None
    if lead is None or lead.end > sentence.start:
        return sentence, ""
    if _joined(frame, chunk, lead, sentence):
        return Span(sentence.doc_id, lead.start, sentence.end), ""
    return sentence, frame.text_at(lead)  # earlier in the paragraph, or in the passage before


def _cosines(cands: Sequence[Candidate], dense: Sequence[float | None]) -> dict[int, dict[int, float]]:
    """Per hit, the best cosine of its candidate spans that start at each document offset (a sentence
    and its first clause start together)."""
    best: dict[int, dict[int, float]] = {}
    for c, sim in zip(cands, dense):
        if sim is not None:
            starts = best.setdefault(c.hit_index, {})
            starts[c.start] = max(starts.get(c.start, -1.0), float(sim))
    return best


def _cosine(starts: Mapping[int, float], quote: Span, passage: float) -> float:
    """The best cosine of the candidate spans that start inside ``quote``; ``passage`` (the hit's own)
    when there is none (an index without span vectors)."""
    sims = [v for s, v in starts.items() if quote.start <= s < quote.end]
    return max(sims) if sims else passage


def units_of(
    hits: Sequence[Hit], cands: Sequence[Candidate], dense: Sequence[float | None], documents: Mapping[str, Document]
) -> list[Unit]:
    """Every sentence of every retrieved passage as a :class:`Unit` (headings are context, not units);
    its cosine is the best of its candidate spans (the sentence and its clauses), the passage's when
    the index has no span vectors. All offsets are document offsets: the passage's text when its
    document is missing, the document's (for the line, lead and heading) when it is there."""
    cosines = _cosines(cands, dense)
    out = []
    for i, hit in enumerate(hits):
        chunk = hit.chunk
        doc = documents.get(chunk.doc_id)
        frame = _Frame.of(chunk, doc)
        title = doc.title if doc is not None else ""
        words = document_words(doc.text) if doc is not None else frozenset()
        for sentence in (chunk.span.part(s) for s in sentence_spans(chunk.text)):
            if is_heading(chunk.text_at(sentence.start, sentence.end)):
                continue  # a heading is what sentences continue, never evidence on its own
            quoted = _quote(frame, chunk, sentence, chunk.lang)
            if quoted is None:
                continue  # a lead is quoted with the sentence that continues it
            quote, lead = quoted
            context = f"{title}\n{_heading(doc, sentence.start)}" if doc is not None else title
            sim = _cosine(cosines.get(i, {}), quote, float(hit.dense))
            text = chunk.text_at(quote.start, quote.end)
            out.append(Unit(i, quote, sentence.start, text, chunk.lang, context, lead, sim, words))
    return out


# --- judging a unit ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SentenceJudgement:
    """What one unit says about the claim (the features :func:`unit_relation` reads)."""

    names: float  #: share of the claim's names in the unit
    cover: float  #: share of the claim's other words the sentence (and its lead) says
    dense: float  #: cosine of the sentence to the claim
    matches: tuple[FactMatch, ...]
    values_named: bool = True  #: every name that is the claim's value ("en Bristol") is in the unit
    #: the unit says the opposite of the claim's predicate and not the predicate itself ("fell" for "rose")
    opposed: bool = False

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
        """How much the unit is about the claim, for ordering the closest passages."""
        same = sum(m.relation == "same" for m in self.matches)
        return self.names + self.cover + self.dense + 0.5 * same

    def row(self) -> tuple[float, ...]:
        """The :data:`FEATURES` of this judgement."""
        return (
            self.names,
            self.cover,
            self.dense,
            float(self.n_facts),
            float(self.all_same),
            float(self.different is not None),
            float(self.values_named),
            float(self.opposed),
        )


def word_cover(parts: ClaimParts, text: str, lang: str) -> float:
    """Share of the claim's content words that ``text`` (in ``lang``) says: same stem (same language),
    same cognate key, or a word of the same concept. 1.0 when the claim has no such words."""
    wanted = parts.words
    if not wanted:
        return 1.0
    keys = parts.word_keys if len(parts.word_keys) == len(wanted) else word_keys(wanted, parts.lang)
    have_words = [w.casefold() for w in content_words(text, lang)]
    have_stems = set(stem(have_words, lang)) if lang == parts.lang else set()
    have_keys = cognate_keys(text)
    by_letter: dict[str, list[str]] = {}
    for key in have_keys:
        by_letter.setdefault(key[:1], []).append(key)
    have_concepts = concepts(have_words, lang) if have_words else frozenset()
    met = 0
    for word_stem, word_cognates, word_concepts in keys:
        if (
            (have_stems and word_stem in have_stems)
            or _cognate(word_cognates, have_keys, by_letter)
            or (word_concepts & have_concepts)
        ):
            met += 1
    return met / len(wanted)


#: A cognate key this long or longer also meets a key it begins ("line" = "linea", "cost" = "costo").
COGNATE_STEM = 4


def _cognate(keys: frozenset[str], have: frozenset[str], by_letter: Mapping[str, Sequence[str]] | None = None) -> bool:
    """Whether a key of ``keys`` is in ``have``, begins or is begun by one (four letters at least), or
    differs from one of the same length in one letter ("prade"/"prada": praderas, pradarias);
    ``by_letter``: ``have`` by first letter (the only keys :func:`_near` can meet), when known."""
    if keys & have:
        return True
    if by_letter is None:
        return any(_near(k, h) for k in keys for h in have)
    return any(_near(k, h) for k in keys for h in by_letter.get(k[:1], ()))


def _near(k: str, h: str) -> bool:
    if len(k) < COGNATE_STEM or len(h) < COGNATE_STEM or k[0] != h[0]:
        return False
    if h.startswith(k) or k.startswith(h):
        return True
    return len(k) == len(h) == COGNATE_PREFIX and sum(a != b for a, b in zip(k, h)) == 1


def judge_unit(parts: ClaimParts, unit: Unit) -> SentenceJudgement:
    """The features of ``unit`` for the claim."""
    have = {t for _, _, t in tokens_of(f"{unit.context}\n{unit.lead}\n{unit.text}")}
    names = parts.names_found(have, unit.document)
    cover = word_cover(parts, f"{unit.lead}\n{unit.text}", unit.lang)
    matches = match_facts(parts, unit.text, unit.lang)  # the sentence, with the lead it continues
    opposed = said_opposite(parts, f"{unit.lead}\n{unit.text}", unit.lang)
    return SentenceJudgement(names, cover, float(unit.dense), matches, parts.value_names <= have, opposed)


def said_opposite(parts: ClaimParts, text: str, lang: str) -> bool:
    """Whether ``text`` says the opposite of the claim's predicate ("fell" where the claim says
    "rose": ``concept_opposites`` in the word lists) and not the predicate itself."""
    keys = parts.word_keys if len(parts.word_keys) == len(parts.words) else word_keys(parts.words, parts.lang)
    claimed = frozenset(c for _, _, said in keys for c in said)
    if not opposite_concepts(claimed):
        return False
    said = frozenset(c for w in content_words(text, lang) for c in concepts([w.casefold()], lang))
    return any(c not in said and opposite_concepts({c}) & said for c in claimed)


def unit_relation(j: SentenceJudgement, t: ClaimThresholds) -> str:
    """``supports``, ``conflicts`` or ``related`` for one judged unit."""
    if j.n_facts:
        names, floor, cover, dense = (
            t.support_names_facts,
            t.support_cover_min_facts,
            t.support_cover_facts,
            t.support_dense_facts,
        )
        stated = j.all_same and j.values_named
    else:
        names, floor, cover, dense = (
            t.support_names_plain,
            t.support_cover_min_plain,
            t.support_cover_plain,
            t.support_dense_plain,
        )
        stated = j.values_named
    if stated and not j.opposed and j.names >= names and j.cover >= floor and (j.cover >= cover or j.dense >= dense):
        return SUPPORTS
    if (
        (j.different is not None or (j.opposed and j.all_same))
        and j.names >= t.conflict_names
        and (j.cover >= t.conflict_cover or j.dense >= t.conflict_dense)
    ):
        return CONFLICTS
    return RELATED


def decide(judgements: Sequence[SentenceJudgement], t: ClaimThresholds) -> str:
    """The claim's verdict from its judged units: a supporting one wins, then a conflicting one."""
    relations = {unit_relation(j, t) for j in judgements}
    if SUPPORTS in relations:
        return SUPPORTED
    if CONFLICTS in relations:
        return CONFLICTING
    return NOT_FOUND


def judge_text(
    parts: ClaimParts, sentence: str, lang: str, lead: str = "", context: str = "", dense: float = 0.0
) -> SentenceJudgement:
    """Judge a sentence given as text (with the lead of its paragraph and its title or heading):
    what :func:`judge_unit` reads from a retrieved passage, for callers without one."""
    return judge_unit(parts, Unit(0, Span("", 0, len(sentence)), 0, sentence, lang, context, lead, dense))
