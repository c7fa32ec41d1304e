"""Expected answer types: what kind of fact a question asks for, and where such facts sit in a text.

The type comes from the question's wh-words in es, pt or en; a fact of that type next to
a question term raises a span's score, and it is the key phrase highlighted.
"""

from __future__ import annotations

import re
from enum import Enum

from citeqa.text.analysis import fold_accents, terms, words


class AnswerType(str, Enum):
    """The kind of fact a question asks for."""

    QUANTITY = "quantity"
    DATE = "date"
    PRICE = "price"
    NAME = "name"
    PLACE = "place"
    OTHER = "other"


_TYPE_PATTERNS: tuple[tuple[AnswerType, re.Pattern[str]], ...] = (
    (AnswerType.PRICE, re.compile(
        r"\b(how much (does|did|do|is|was|will)\b.*\b(cost|charge|price)|price|cost|priced|"
        r"cuanto (cuesta|costo|cobra|vale)|precio|coste|costo|tarifa|"
        r"quanto (custa|custou|cobra|vale)|preco|custo)\b")),
    (AnswerType.DATE, re.compile(
        r"\b(when|what year|which year|what month|what date|"
        r"cuando|que ano|en que (ano|mes|fecha)|que fecha|"
        r"quando|em que (ano|mes|data)|que data|desde quando|hasta cuando)\b")),
    (AnswerType.PLACE, re.compile(
        r"^\W*(where|donde|adonde|onde|aonde)\b|"
        r"\b(which|what|in which|in what|que|en que|em que|qual|cual|de que)\s+"
        r"(city|cities|country|countries|town|place|region|province|state|"
        r"ciudad|ciudades|pais|paises|lugar|region|provincia|cidade|cidades|local|regiao)\b")),
    (AnswerType.QUANTITY, re.compile(
        r"\b(how many|how much|how large|how big|what percentage|"
        r"cuantos|cuantas|cuanto|cuanta|que porcentaje|que tamano|"
        r"quantos|quantas|quanto|quanta|que percentagem|que porcentagem|que tamanho)\b")),
    (AnswerType.NAME, re.compile(
        r"^\W*(who|which|what|whom|quien|quienes|cual|cuales|que|qual|quais|quem|o que|que)\b")),
)


def expected_type(question: str) -> AnswerType:
    """The answer type a question asks for, from its wh-words in es, pt or en."""
    folded = fold_accents(question.casefold())
    for kind, pattern in _TYPE_PATTERNS:
        if pattern.search(folded):
            return kind
    return AnswerType.OTHER


_MONTHS = (r"january|february|march|april|may|june|july|august|september|october|november|december|"
           r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|"
           r"diciembre|janeiro|fevereiro|marco|maio|junho|julho|setembro|outubro|novembro|dezembro")
_NUMBER = r"\d+(?:[.,]\d+)*"
_SCALE = r"(?:\s+(?:mil(?:\s+millones)?|millones|millon|milhoes|milhao|bilhoes|bilhao|billones|billion|million|thousand|trillion))?"
_ENTITY_PATTERNS: dict[AnswerType, re.Pattern[str]] = {
    AnswerType.PRICE: re.compile(rf"(?:us\$|\$|€|£|¥)\s*{_NUMBER}{_SCALE}|{_NUMBER}{_SCALE}\s*(?:yuan|dolares|dollars|euros|reais|reales)", re.I),
    AnswerType.DATE: re.compile(rf"\b(?:\d{{1,2}}\s+(?:de\s+)?)?(?:{_MONTHS})(?:\s+(?:de\s+|del\s+)?(?:19|20)\d{{2}}|\s+\d{{1,2}},\s+(?:19|20)\d{{2}})?\b|\b(?:19|20)\d{{2}}\b", re.I),
    AnswerType.QUANTITY: re.compile(rf"{_NUMBER}{_SCALE}(?:\s*%|\s*(?:GB|TB|petaFLOPS|NPUs|chips|bilhoes|billion)\b)?", re.I),
    AnswerType.PLACE: re.compile(  # a capitalised name after a locative preposition, not a month
        rf"(?:(?<=\b[Ii]n )|(?<=\b[Aa]t )|(?<=\b[Ee]n )|(?<=\b[Ee]m )|(?<=\b[Nn][oa] )|(?<=\b[Nn][oa]s )|(?<=\bfrom )|(?<=\bdesde ))"
        rf"(?!(?i:{_MONTHS})\b)[A-Z][\w\-]+(?:\s+[A-Z][\w\-]+)*"),
    AnswerType.NAME: re.compile(r"\b(?:[A-Z][\w\-]*\d[\w\-]*|[A-Z]{2,}[\w\-]*|[A-Z][a-z]+(?:[\s\-][A-Z0-9][\w\-]*)+)\b"
                                r"|(?<=[a-z\u00e0-\u00ff,;]\s)[A-Z][a-z\u00e0-\u00ff]+\b"),  # a capital mid-sentence
}


def find_entities(text: str, kind: AnswerType, avoid: frozenset[str] = frozenset()) -> list[tuple[int, int]]:
    """Offsets of the phrases of ``kind`` in ``text`` whose words are not all in ``avoid``.

    ``avoid`` holds the question's own (folded, lower-case) words: the key phrase of an
    answer is what the question did not already say. Quantities exclude dates and years.
    """
    pattern = _ENTITY_PATTERNS.get(kind)
    if pattern is None:
        return []
    folded = fold_accents(text)  # same length as text for Latin scripts
    source = folded if len(folded) == len(text) else text
    dates = [m.span() for m in _ENTITY_PATTERNS[AnswerType.DATE].finditer(source)] if kind is AnswerType.QUANTITY else []
    found = []
    for match in pattern.finditer(source):
        found_words = {fold_accents(w) for w in words(match.group(0))}
        if not found_words or found_words <= avoid:
            continue
        a, b = match.span()
        if any(da < b and a < db for da, db in dates):
            continue
        found.append((a, b))
    return found


def find_entity(text: str, kind: AnswerType, avoid: frozenset[str] = frozenset()) -> tuple[int, int] | None:
    """The first span of :func:`find_entities`, or None."""
    spans = find_entities(text, kind, avoid)
    return spans[0] if spans else None


def type_match(text: str, lang: str, kind: AnswerType, avoid: frozenset[str], qterms: set[str]) -> float:
    """1.0 when a fact of ``kind`` sits next to a question term ("505 mil millones de
    parámetros"), 0.6 when the fact is present elsewhere, 0 when absent."""
    if kind is AnswerType.OTHER:
        return 0.0
    spans = find_entities(text, kind, avoid)
    if not spans:
        return 0.0
    for a, b in spans:
        near = set(terms(text[max(0, a - 40):a] + " " + text[b:b + 40], lang))
        if near & qterms:
            return 1.0
    return 0.6


def highlight_in(answer: str, kind: AnswerType, question_words: frozenset[str]) -> tuple[int, int] | None:
    """The key phrase to highlight inside an answer: its fact of the expected kind."""
    kinds = [kind] if kind is not AnswerType.OTHER else []
    kinds += [k for k in (AnswerType.PRICE, AnswerType.DATE, AnswerType.QUANTITY, AnswerType.PLACE, AnswerType.NAME)
              if k not in kinds]
    for k in kinds:
        span = find_entity(answer, k, question_words)
        if span is not None:
            return span
    return None


#: Characters on each side of a fact in which a question term counts as "next to" it.
NEAR_CHARS = 40


def short_answer_in(answer: str, lang: str, kind: AnswerType, question_words: frozenset[str],
                    question_terms: set[str]) -> tuple[int, int] | None:
    """Offsets of the short answer inside ``answer``: the fact of the expected kind that sits
    nearest to the question's terms (the first one on a tie), or None.

    None when the question asks for no kind of fact (why, how, what happened: a sentence is
    the answer) or the sentence holds none of that kind.
    """
    if kind is AnswerType.OTHER:
        return None
    spans = find_entities(answer, kind, question_words)
    if not spans:
        return None

    def nearness(span: tuple[int, int]) -> int:
        a, b = span
        around = answer[max(0, a - NEAR_CHARS):a] + " " + answer[b:b + NEAR_CHARS]
        return len(set(terms(around, lang)) & question_terms)

    return max(spans, key=lambda s: (nearness(s), -s[0]))
