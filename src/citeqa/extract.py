"""Extractive answers: the shortest span of a passage that answers the question.

Passages are cut into sentences (aware of abbreviations and decimals), long sentences
into clauses. Each candidate is scored on stemmed word overlap weighted by IDF, on
dense similarity to the question, and on whether it holds the kind of fact the
question asks for (a quantity, a date, a price, a name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from .analysis import fold_accents, terms, words

# --- sentences -------------------------------------------------------------------------

#: Words that end with a period without ending a sentence (accent-folded, lower case).
ABBREVIATIONS = frozenset("""
ee uu sr sra srta dr dra drs prof lic ing etc vs p pp pag pág no nº num núm fig ej eg ie
mr mrs ms st co inc ltd jr sto sta av art cap aprox approx dept est min max nr vol cf al
jan feb mar apr jun jul aug sep sept oct nov dec ene abr ago dic fev mai out dez
""".split())

_END = re.compile(r"[.!?…]+[\"'»”’)\]]*(?=\s)|\n+")
_STARTS_SENTENCE = re.compile(r"[\s\"'«“‘(\[¿¡•\-–—]*[A-ZÁÉÍÓÚÂÊÔÃÕÇÑÜ0-9]")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``, stripped of surrounding blanks."""
    spans, start = [], 0
    for match in _END.finditer(text):
        end = match.end()
        if match.group(0).startswith("\n") or _is_boundary(text, match.start(), end):
            spans.append((start, end))
            start = end
    spans.append((start, len(text)))
    return [s for s in (_strip(text, a, b) for a, b in spans) if s is not None]


def _is_boundary(text: str, dot: int, end: int) -> bool:
    """A period ends a sentence unless it closes an abbreviation or an initial."""
    word = re.search(r"(\w+)$", text[max(0, dot - 12):dot])
    if text[dot] == "." and word is not None:
        token = fold_accents(word.group(1)).lower()
        if token in ABBREVIATIONS or (len(token) == 1 and token.isalpha()):
            return False
    return _STARTS_SENTENCE.match(text, end) is not None or end >= len(text.rstrip())


def _strip(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


_CLAUSE = re.compile(r";\s+|:\s+|\s+[—–]\s+")


def clause_spans(text: str, start: int, end: int, min_chars: int = 40) -> list[tuple[int, int]]:
    """Clauses of the sentence ``text[start:end]``: cut at ';', ':' and dashes.

    Pieces shorter than ``min_chars`` are joined to their neighbour, so a clause keeps
    enough context to be read on its own.
    """
    cuts = [m.end() for m in _CLAUSE.finditer(text, start, end)]
    bounds, prev = [], start
    for cut in cuts:
        if cut - prev >= min_chars and end - cut >= min_chars:
            bounds.append((prev, cut))
            prev = cut
    bounds.append((prev, end))
    return [s for s in (_strip(text, a, b) for a, b in bounds) if s is not None]


# --- expected answer types -----------------------------------------------------------


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


# --- candidate scoring ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """A span of a passage that could be the answer, in document offsets."""

    hit_index: int
    start: int
    end: int
    text: str
    lang: str
    context: str = ""  #: the same paragraph's text before the span (who or what it is about)


def candidates_from(passages: list[tuple[int, int, str, str]], context_chars: int = 300) -> list[Candidate]:
    """Sentences and clauses of passages given as ``(hit index, start, text, lang)``."""
    out = []
    for hit_index, offset, text, lang in passages:
        for s, e in sentence_spans(text):
            spans = [(s, e)] if e - s <= 220 else [(s, e), *clause_spans(text, s, e)]
            for a, b in dict.fromkeys(spans):
                para = text.rfind("\n", 0, a) + 1
                context = text[max(para, a - context_chars):a]
                out.append(Candidate(hit_index, offset + a, offset + b, text[a:b], lang, context))
    return out


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
