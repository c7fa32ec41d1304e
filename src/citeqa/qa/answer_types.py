"""What a question asks for, and where the facts of that kind sit in a text.

The question's shape comes from :mod:`citeqa.qa.questions` (:func:`question_shape`); the facts
from :mod:`citeqa.text.facts`, the one extractor that claims read too, so a short answer and a
claim check agree on what is a date, a quantity or a name. :class:`Wanted` is worked out once
per question (its shape, its words, its terms per language, the facts found per sentence) and
passed down: a fact of the expected kind next to a question term raises a span's score
(:func:`type_match`, a feature), and the hand-written short-answer rules
(:mod:`citeqa.qa.rules`) pick the short answer among the same facts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

from citeqa.qa.questions import AnswerType, QuestionShape, question_shape
from citeqa.records import Highlight
from citeqa.text import facts_words as fw
from citeqa.text.analysis import fold_accents, query_terms, terms, word_tokens
from citeqa.text.facts import find_dates, find_names, find_quantities
from citeqa.text.lexicon import shared_list

__all__ = [
    "Wanted",
    "find_entities",
    "find_entity",
    "type_match",
]


# --- what a question asks for ---------------------------------------------------------------


@dataclass(frozen=True)
class Wanted:
    """What a question asks for, worked out once per question and passed down: its ``shape`` (the
    kind of fact, from the question alone), the folded ``words`` of the query (the question, plus
    the previous turn for a follow-up), which facts are placed by, and, asked for once each, the
    query's and the question's terms in a language and the facts of a kind in a sentence."""

    question: str  #: the question as read
    query: str  #: the question, plus the previous turn for a follow-up
    shape: QuestionShape
    words: frozenset[str]
    _terms: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)
    _facts: dict[tuple[str, AnswerType, frozenset[str], str | None], tuple[Highlight, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @staticmethod
    def of(question: str, query: str) -> Wanted:
        return Wanted(question, query, question_shape(question), frozenset(fold_accents(w) for w in word_tokens(query)))

    @property
    def kind(self) -> AnswerType:
        return self.shape.kind

    def query_terms(self, lang: str) -> tuple[str, ...]:
        """:func:`~citeqa.text.analysis.query_terms` of the query in ``lang``."""
        return self._terms_of("query", self.query, lang)

    def question_terms(self, lang: str) -> tuple[str, ...]:
        """:func:`~citeqa.text.analysis.query_terms` of the question alone in ``lang``."""
        return self._terms_of("question", self.question, lang)

    def _terms_of(self, which: str, text: str, lang: str) -> tuple[str, ...]:
        if (which, lang) not in self._terms:
            self._terms[which, lang] = tuple(query_terms(text, (lang,)))
        return self._terms[which, lang]

    def find_entities(
        self, text: str, kind: AnswerType, avoid: frozenset[str] = frozenset(), lang: str | None = None
    ) -> list[Highlight]:
        """:func:`find_entities`, found once per sentence, kind, words avoided and language."""
        key = (text, kind, avoid, lang)
        if key not in self._facts:
            self._facts[key] = tuple(find_entities(text, kind, avoid, lang))
        return list(self._facts[key])


# --- facts of a kind -----------------------------------------------------------------------


@cache
def _place_pattern() -> re.Pattern[str]:
    """A capitalised name after a locative preposition ("en Vigo", "from Porto"), not a month."""
    before = "|".join(
        rf"(?<=\b{re.escape(w[0].upper())}{re.escape(w[1:])} )|(?<=\b{re.escape(w)} )"
        for w in shared_list("names", "locatives")
    )
    months = fw.alternation(fw.words_of("months"))
    return re.compile(rf"(?:{before})(?!(?i:{months})\b)[A-Z][\w\-]+(?:\s+[A-Z][\w\-]+)*")


def _spans(text: str, kind: AnswerType, lang: str | None) -> list[Highlight]:
    """Offsets (into ``text``) of the facts of ``kind`` in ``text`` (a quantity's or a price's measure: "200 mil"
    of "200 mil coches"). A number in words answers only with its unit of measure ("tres
    trimestres", not "duas clareiras"): alone it is more often part of a phrase than the answer."""
    if kind is AnswerType.NAME:
        return [Highlight(f.start, f.end) for f in find_names(text)]
    if kind is AnswerType.PLACE:
        return [Highlight(m.start(), m.end()) for m in _place_pattern().finditer(fw.folded_copy(text))]
    dates = find_dates(text)
    if kind is AnswerType.DATE:
        return [Highlight(f.start, f.end) for f in dates]
    money = kind is AnswerType.PRICE
    return [
        f.measure
        for f in find_quantities(text, lang, dates)
        if (f.type == "money") is money and (not f.spelled or f.measure.end > f.start + len(f.text.split()[0]))
    ]


def find_entities(
    text: str, kind: AnswerType, avoid: frozenset[str] = frozenset(), lang: str | None = None
) -> list[Highlight]:
    """Offsets (into ``text``) of the facts of ``kind`` in ``text`` whose words are not all in ``avoid``.

    ``avoid`` holds the question's own (folded, lower-case) words: the key phrase of an
    answer is what the question did not already say. ``lang`` is the text's language (its
    number words; None: every language's). Quantities exclude dates, years, prices and the
    numbers of model names.
    """
    if kind is AnswerType.OTHER:
        return []
    found = []
    for span in _spans(text, kind, lang):
        listed = [fold_accents(w) for w in word_tokens(text[span.start : span.end])]
        if not listed or set(listed) <= avoid:
            continue
        if kind is AnswerType.NAME and len(listed) > 1 and listed[-1] in avoid:
            continue  # "Airbus A320" when the question says "A320": the question's own thing
        found.append(span)
    return found


def find_entity(
    text: str, kind: AnswerType, avoid: frozenset[str] = frozenset(), lang: str | None = None
) -> Highlight | None:
    """The first span of :func:`find_entities`, or None."""
    spans = find_entities(text, kind, avoid, lang)
    return spans[0] if spans else None


#: How facts of a kind are found (:func:`find_entities`, or a question's memo of it).
FindEntities = Callable[[str, AnswerType, frozenset[str], "str | None"], Sequence[Highlight]]

_OLD_YEAR = re.compile(r"1[0-8]\d{2}")


def type_match(
    text: str, lang: str, kind: AnswerType, avoid: frozenset[str], qterms: set[str], find: FindEntities | None = None
) -> float:
    """1.0 when a fact of ``kind`` sits next to a question term ("505 mil millones de
    parámetros"), 0.6 when the fact is present elsewhere, 0 when absent. Years before 1900 do not
    count: the ranker was fitted when only 19xx and 20xx were dates. ``find`` finds the facts
    (:func:`find_entities` without it; a question's :meth:`Wanted.find_entities`, found once)."""
    if kind is AnswerType.OTHER:
        return 0.0
    find = find if find is not None else find_entities
    spans = [s for s in find(text, kind, avoid, lang) if not _OLD_YEAR.fullmatch(text[s.start : s.end])]
    if not spans:
        return 0.0
    for s in spans:
        near = set(terms(text[max(0, s.start - 40) : s.start] + " " + text[s.end : s.end + 40], lang))
        if near & qterms:
            return 1.0
    return 0.6
