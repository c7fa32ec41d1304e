"""The hand-written short-answer rules: which fact of the kind a question asks for, inside the
answer sentence, is the short answer (:func:`short_answer_in`), and which phrase to highlight
when none is (:func:`highlight_in`).

The facts come from :mod:`citeqa.qa.answer_types` (the same facts :func:`type_match` scores);
the pipeline asks for these through :func:`citeqa.qa.rules.rule_answer` only.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from functools import cache

from citeqa.qa.answer_types import FindEntities, find_entities, find_entity
from citeqa.qa.questions import AnswerType, QuestionShape, question_shape
from citeqa.records import Highlight
from citeqa.text import facts_words as fw
from citeqa.text.analysis import fold_accents, terms
from citeqa.text.lexicon import shared_list


def highlight_in(
    answer: str,
    kind: AnswerType,
    question_words: frozenset[str],
    lang: str | None = None,
    find: FindEntities | None = None,
) -> Highlight | None:
    """The key phrase to highlight inside an answer (in ``lang``): its fact of the expected kind
    (``find`` finds the facts: :func:`find_entities` without it)."""
    kinds = [kind] if kind is not AnswerType.OTHER else []
    kinds += [
        k
        for k in (AnswerType.PRICE, AnswerType.DATE, AnswerType.QUANTITY, AnswerType.PLACE, AnswerType.NAME)
        if k not in kinds
    ]
    for k in kinds:
        if find is None:
            span = find_entity(answer, k, question_words, lang)
            if span is not None:
                return span
        else:
            found = find(answer, k, question_words, lang)
            if found:
                return found[0]
    return None


# --- the short answer ------------------------------------------------------------------

#: Characters on each side of a fact in which a question term counts as "next to" it.
NEAR_CHARS = 40
#: Content words on each side of a fact searched for the question's terms.
NEAR_WORDS = 8
#: Punctuation between a fact and a question term counts as this many words (a comma
#: between "2028" and "980" puts them in different list items).
BOUNDARY_WORDS = 2
#: A name is the short answer only with at least this much support from the question's
#: terms around it (one term within two words, or the question's noun next to it): a
#: capitalised word with nothing of the question near it is more often wrong than right.
MIN_NAME_SUPPORT = 1 / 3
#: Support for a name right next to the question's noun ("Zentra, the bakery" for "which bakery"),
#: or for a number in the unit or currency the question names ("5 teraFLOPS", "US$ 43" for
#: "in dollars"): these say more than nearness, so they outweigh a question term at distance 0.
HEAD_BONUS = 2.0
#: Terms of the previous turn (a follow-up's query) weigh this much against the question's own.
PREVIOUS_TURN_WEIGHT = 0.5

_TEXT_TOKEN = re.compile(r"(?P<w>\d+(?:[.,]\d+)*|[^\W\d_]+(?:['’][^\W\d_]+)?|\d+)|(?P<p>[,;:()\[\]—–]|\s-\s)")


@cache
def _list_gap() -> re.Pattern[str]:
    """What joins the items of a list: a comma, and/y/e/or/o/ou, "&", "/"."""
    conj = fw.alternation(fw.words_of("list_conjunctions"))
    return re.compile(rf"^\s*(?:,\s*(?:(?:{conj})\s+)?|(?:{conj}|&)\s+|/\s*)$", re.I)


def _text_tokens(text: str, lang: str) -> list[tuple[int, int, str | None]]:
    """(start, end, term) per word (term None for a stopword) and (start, end, "") per punctuation mark."""
    out: list[tuple[int, int, str | None]] = []
    for m in _TEXT_TOKEN.finditer(text):
        if m.group("w") is not None:
            found = terms(m.group("w"), lang)
            out.append((m.start(), m.end(), found[0] if found else None))
        else:
            out.append((m.start(), m.end(), ""))
    return out


def _support(tokens: list[tuple[int, int, str | None]], span: Highlight, weights: dict[str, float]) -> float:
    """Sum over question terms of weight / (1 + distance) of the term's nearest occurrence
    outside ``span``, distance in content words (punctuation counts BOUNDARY_WORDS)."""
    a, b = span.start, span.end
    best: dict[str, float] = {}
    left = [t for t in tokens if t[1] <= a][::-1]
    right = [t for t in tokens if t[0] >= b]
    for side in (left, right):
        distance = 0
        for _, _, term in side:
            if distance > NEAR_WORDS:
                break
            if term == "":
                distance += BOUNDARY_WORDS
                continue
            if term is None:
                continue
            if term in weights:
                best[term] = max(best.get(term, 0.0), weights[term] / (1 + distance))
            distance += 1
    return sum(best.values())


def _next_word_term(tokens: list[tuple[int, int, str | None]], end: int) -> str | None:
    """The term of the first content word after ``end`` (stopwords such as "de" skipped),
    None when punctuation comes first: the noun a number counts ("200 mil coches")."""
    for _, _, term in (t for t in tokens if t[0] >= end):
        if term == "":
            return None
        if term is not None:
            return term
    return None


@cache
def _of() -> frozenset[str]:
    return frozenset(shared_list("names", "connectors"))


@cache
def _articles() -> frozenset[str]:
    return frozenset(shared_list("names", "articles"))


def _next_to_head(answer: str, tokens: list[tuple[int, int, str | None]], span: Highlight, head: str) -> bool:
    """Whether the question's noun stands right before the fact, maybe with a "de X"
    complement between ("su filial Norlax", "la unidad de IA Norlax", "el marco de trabajo
    Kivy"), or right after it as an apposition ("Zentra, the bakery", "Goya y Murillo — los pintores")."""
    a, b = span.start, span.end
    left = [t for t in tokens if t[1] <= a][::-1]
    for i, (_, _, term) in enumerate(left[:6]):
        if term == head:
            return True
        if term == "":
            break
        if term is not None:  # a content word only as the complement of "de"/"of"
            nxt = left[i + 1] if i + 1 < len(left) else None
            if nxt is None or fold_accents(answer[nxt[0] : nxt[1]].lower()) not in _of():
                break
    after = [t for t in tokens if t[0] >= b][:4]
    if not after or after[0][2] != "":  # an apposition follows a comma or a dash
        return False
    for s, e, term in after[1:]:
        if term == head:
            return True
        if term is not None or fold_accents(answer[s:e].lower()) not in _articles():
            return False
    return False


def _lists(answer: str, spans: list[Highlight]) -> list[Highlight]:
    """Runs of two or more facts joined by commas or and/y/e/or ("GitLab, Zenodo e Figshare")."""
    runs = []
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and _list_gap().match(answer[ordered[j].end : ordered[j + 1].start]):
            j += 1
        if j > i:
            runs.append(Highlight(ordered[i].start, ordered[j].end))
        i = j + 1
    return runs


def _currency_terms(text: str, lang: str) -> set[str]:
    """The terms of the currency whose sign ``text`` writes ("US$" -> dólares, dollars, usd...):
    a question asking "em dólares" asks for "US$ 43"."""
    lowered = text.lower()
    for sign in sorted((s for s in fw.currency_signs() if not s.isalpha()), key=len, reverse=True):
        if sign in lowered:
            names = " ".join(fw.currency_words(fw.currency_signs()[sign]))
            return set(terms(names, lang)) | set(terms(names, "en"))
    return set()


def short_answer_in(
    answer: str,
    lang: str,
    kind: AnswerType,
    question_words: frozenset[str],
    question_terms: set[str],
    question: str | None = None,
    shape: QuestionShape | None = None,
    find: FindEntities | None = None,
    own_terms: AbstractSet[str] | None = None,
) -> Highlight | None:
    """Offsets of the short answer inside ``answer``: the fact of the expected kind that the
    question's terms support most (nearest, on either side, within the same list item), or None.

    ``question`` (the question alone, when ``question_terms`` also hold a previous turn's)
    lets its own terms weigh more and tells its head noun and number: the fact next to
    the question's noun wins ("su filial Norlax" for "qué filial"), a number counting
    the question's noun wins ("200 mil coches" for "cuántos coches"), a unit or currency the
    question names wins ("5 teraFLOPS" for "how many teraFLOPS", "US$ 43" for "in
    dollars"), and a question asking for several gets a coordinated list whole ("Goya, Velázquez y Murillo").

    None when the question asks for no kind of fact (why, how, "¿Qué técnica...?") or the
    sentence holds none of that kind, or, for a name, none the question supports: a
    capitalised word with nothing of the question near it is more often wrong than right.

    What the caller has worked out already it passes: ``shape`` (``question``'s
    :func:`question_shape`), ``own_terms`` (``question``'s own terms in ``lang``) and ``find``
    (how facts are found: :func:`find_entities` without it).
    """
    if kind is AnswerType.OTHER:
        return None
    if shape is None:
        shape = question_shape(question) if question else QuestionShape(kind)
    if question and kind in (AnswerType.QUANTITY, AnswerType.PRICE):
        # "X5" in the question does not make "5 teraFLOPS" a number it said
        glued = {fold_accents(w) for w in re.findall(r"\d+(?=[^\W\d_])|(?<=[^\W\d_])\d+", question.casefold())}
        alone = {fold_accents(m) for m in re.findall(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])", question)}
        question_words = frozenset(w for w in question_words if w not in glued - alone)
    spans = list((find if find is not None else find_entities)(answer, kind, question_words, lang))
    if not spans:
        return None
    if own_terms is not None:
        own = set(own_terms)
    else:
        own = set(terms(question, lang)) if question else set(question_terms)
    weights = {t: (1.0 if t in own else PREVIOUS_TURN_WEIGHT) for t in question_terms | own}
    tokens = _text_tokens(answer, lang)
    head_terms = terms(shape.head, lang) if shape.head else []
    head = head_terms[0] if head_terms else None
    candidates = list(spans)
    if kind in (AnswerType.NAME, AnswerType.PLACE) and shape.plural:
        candidates += _lists(answer, spans)

    def score(span: Highlight) -> float:
        value = _support(tokens, span, weights)
        inside = {t for s, e, t in tokens if s >= span.start and e <= span.end and t}
        if kind is AnswerType.PRICE:
            inside |= _currency_terms(answer[span.start : span.end], lang)
        if inside & own:  # the unit the question names ("5 teraFLOPS", "en dólares"), a maker ("Airbus A320")
            value += HEAD_BONUS if kind in (AnswerType.QUANTITY, AnswerType.PRICE) else 1.0
        if kind in (AnswerType.QUANTITY, AnswerType.PRICE):
            counted = _next_word_term(tokens, span.end)
            if counted is not None and counted in own:  # "200 mil coches" for "cuántos coches"
                value += 1.0
        if head is not None and kind is AnswerType.NAME and _next_to_head(answer, tokens, span, head):
            value += HEAD_BONUS
        if shape.plural and span not in spans:
            value += 0.5
        return value

    scored = [(score(s), -s.start, s.end) for s in candidates]
    top = max(scored)
    best_score, best = top[0], candidates[scored.index(top)]  # equal keys are equal offsets
    if kind is AnswerType.NAME and not shape.person and best_score < MIN_NAME_SUPPORT:
        return None
    return best
