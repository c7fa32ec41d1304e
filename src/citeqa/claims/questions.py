"""The questions a claim is checked with: for each value it states, the claim with the value masked
("The 960PR arrives when?"), and for a value read, the claim with its subject masked ("Who or what
arrives in the first quarter of 2027?"). Pure text functions; the question words are data
(``claim_slots`` of each language's word list in :mod:`citeqa.text.lexicon`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import cache

from citeqa.claims.parts import ClaimParts, tokens_of
from citeqa.errors import ConfigError
from citeqa.qa.bounds import RequestBounds, TokenCounter, around
from citeqa.records import Highlight
from citeqa.text.analysis import stopwords
from citeqa.text.facts import DATE, NAME, QUANTITY, Fact
from citeqa.text.facts_words import hedge_pattern
from citeqa.text.lexicon import entry, folded

#: How the question is formed: the value replaced by the question word where it stood ("replace"),
#: or the question word first and the value left out ("front").
FORMS = ("replace", "front")


def claim_values(parts: ClaimParts) -> list[Fact]:
    """The values a claim states: its dates and quantities, and each name that is its value
    ("fundada en Bristol", "by Gustave Eiffel") as one name fact, in claim order."""
    values = [f for f in parts.facts if f.kind in (DATE, QUANTITY)]
    toks = parts.tokens
    i = 0
    while i < len(toks):
        if toks[i][2] in parts.value_names and not any(f.start <= toks[i][0] < f.end for f in values):
            j = i
            while (
                j + 1 < len(toks)
                and toks[j + 1][2] in parts.value_names
                and not parts.text[toks[j][1] : toks[j + 1][0]].strip()
            ):
                j += 1
            a, b = toks[i][0], toks[j][1]
            values.append(Fact(NAME, a, b, parts.text[a:b], measure_end=b))
            i = j + 1
        else:
            i += 1
    return sorted(values, key=lambda f: f.start)


@cache
def slot_words(lang: str) -> dict[str, str]:
    """The question words that ask for each type of value in ``lang`` (``claim_slots`` of its word
    list; English where the language has none)."""
    table = entry(lang, "", "claim_slots") or entry("en", "", "claim_slots") or {}
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise ConfigError(f"claim_slots of {lang}: a table from value types to question words")
    return dict(table)


def slot_word(fact: Fact, lang: str) -> str:
    """The question word for ``fact``'s type in ``lang`` (its kind's when the type has none)."""
    table = slot_words(lang)
    return table.get(fact.type) or table.get(fact.kind) or table.get("other", "")


_END = re.compile(r"[\s.!。;:]+$")
_APOSTROPHES = "'’"


def slot_question(claim: str, fact: Fact, lang: str, form: str = "replace") -> str:
    """The question that asks for ``fact`` about the claim's subject, in the claim's own words: the
    claim with the value replaced by the question word ("The 960PR arrives when?"), a counted noun
    kept after it ("GLM-5 has how many parameters?", "GLM-5 ha quanti parametri?"), or (``front``)
    the question word first and the value left out ("When the 960PR arrives?"). Opening marks
    where the language writes them (``claim_slots._open``); an elided article left before the
    question word written out ("d'" -> "de": ``claim_slots._elisions``)."""
    words = slot_words(lang)
    word = counted_phrase(claim, fact, lang) or slot_word(fact, lang)
    before, after = claim[: fact.start], claim[fact.end :]
    after = _END.sub("", after)
    if fact.kind == DATE:  # "arrives in the first quarter of 2027" asks "arrives when"
        before = _drop_last_words(before, words.get("_drop_before_date", ""))
    elif fact.kind == NAME:  # "moved its training to the Ascend 950" asks "moved its training to what"
        before = _drop_last_words(before, words.get("_drop_before_name", ""))
    else:  # "tiene unos 744 mil millones" asks "cuánto tiene", not "cuánto tiene unos"
        before = hedge_pattern().sub("", before)
    before = _unelided(before, words.get("_elisions", ""))
    if form == "front":  # "How much the company sold", not "How much The company sold"
        body = " ".join(f"{word} {_lowered_lead(before, lang)} {after}".split())
    else:
        body = " ".join(f"{before}{word}{after}".split())
    body = body[:1].upper() + body[1:]
    return f"{words.get('_open', '')}{body}?"


def counted_phrase(claim: str, fact: Fact, lang: str) -> str:
    """The question phrase for a count with its noun, in ``lang`` ("how many parameters",
    "cuántas toneladas", "combien de paramètres": ``claim_slots.counted`` with the noun the claim
    counts, after its glue word "de"/"di"/"of"); "" for a value without a counted noun (a number
    with its unit of measure, money, a share) or a language without the table."""
    words = slot_words(lang)
    template = words.get("counted", "")
    if fact.kind != QUANTITY or fact.type not in ("quantity", "number") or not template:
        return ""
    if not 0 <= fact.measure_end < fact.end:
        return ""
    noun = claim[fact.measure_end : fact.end].strip()
    glue = {folded(w) for w in entry(lang, "facts", "unit_glue", ()) or ()}
    toks = tokens_of(noun)
    while toks and toks[0][2] in glue and len(toks) > 1:
        noun = noun[toks[1][0] :]
        toks = tokens_of(noun)
    noun = noun.lstrip(_APOSTROPHES + " ")
    if not noun:
        return ""
    feminine = any(noun.endswith(e) for e in words.get("_feminine_endings", "").split())
    phrase = (words.get("counted_feminine", template) if feminine else template).format(noun=noun)
    for elided in words.get("_elide_before_vowel", "").split():  # "combien de employés" -> "combien d'employés"
        phrase = re.sub(rf"\b{elided}e (?=[aeiouhàâéèêëîïôûü])", f"{elided}'", phrase, flags=re.I)
    return phrase


def _unelided(text: str, table: str) -> str:
    """``text`` with an elided word that ends it written out ("dispose d'" -> "dispose de "), from
    ``claim_slots._elisions`` ("d'=de l'=le"): the word after it is now a question word."""
    for pair in table.split():
        short, _, full = pair.partition("=")
        for mark in _APOSTROPHES:
            elided = short.replace("'", mark)
            if text.casefold().endswith(elided.casefold()) and (
                len(text) == len(elided) or not text[-len(elided) - 1].isalnum()
            ):
                return f"{text[: -len(elided)]}{full} "
    return text


def _lowered_lead(text: str, lang: str) -> str:
    """``text`` with its first letter lower-cased when its first word is a function word of ``lang``
    (a name keeps its capital)."""
    toks = tokens_of(text)
    if toks and toks[0][2] in stopwords(lang):
        a = toks[0][0]
        return text[:a] + text[a].lower() + text[a + 1 :]
    return text


def _drop_last_words(text: str, words: str) -> str:
    """``text`` without the words of ``words`` (space-separated) that end it ("arrives in the ")."""
    drop = {folded(w) for w in words.split()}
    cut = len(text)
    for a, b, tok in reversed(tokens_of(text)):
        if tok not in drop or text[b:cut].strip(" '’"):
            break
        cut = a
    return text[:cut]


# --- a claim's values as the reader reads them, within a request's bounds -------------------


def split_values(parts: ClaimParts, bounds: RequestBounds | None = None) -> tuple[list[Fact], list[Fact]]:
    """The claim's values (:func:`claim_values`) the reader reads, its first
    :attr:`~citeqa.qa.bounds.RequestBounds.claim_values` in claim order (all without ``bounds``),
    and those it does not read."""
    values = claim_values(parts)
    if bounds is None:
        return values, []
    cut = max(0, bounds.claim_values)
    return values[:cut], values[cut:]


def value_question(
    parts: ClaimParts, fact: Fact, form: str, bounds: RequestBounds | None, count: TokenCounter | None
) -> str:
    """The question that asks for ``fact`` (:func:`slot_question`): from the whole claim, or, when the
    claim is longer than ``bounds.question_tokens`` by ``count``, from its words around the value
    (:func:`~citeqa.qa.bounds.around`): the reader keeps a question's first 64 tokens, which in a
    long claim may not reach the value asked for."""
    if bounds is None or count is None:
        return slot_question(parts.text, fact, parts.lang, form)
    a, b = around(parts.text, fact.start, fact.end, bounds.question_tokens, count)
    shifted = replace(
        fact, start=fact.start - a, end=fact.end - a, measure_end=fact.measure_end - a if fact.measure_end >= 0 else -1
    )
    return slot_question(parts.text[a:b], shifted, parts.lang, form)


# --- the claim's subject ---------------------------------------------------------------------------


def claim_subject(parts: ClaimParts, values: Sequence[Fact]) -> Highlight | None:
    """Where the claim's subject stands (offsets into the claim): its first run of name words that
    is no value of the claim ("960PR" in "The 960PR arrives in the first quarter of 2027."; a
    capitalised first word counts unless it is a function word: "Alibaba", not "El"); None when
    every name is a value."""
    stop = stopwords(parts.lang)
    names = parts.names | {n for n in parts.soft_names if n not in stop}
    run: Highlight | None = None
    for a, b, tok in parts.tokens:
        free = tok in names and tok not in parts.value_names and not any(f.start <= a < f.end for f in values)
        if free and (run is None or not parts.text[run.end : a].strip()):
            run = Highlight(run.start if run is not None else a, b)
        elif run is not None:
            break
    return run


def holder_question(claim: str, subject: Highlight, fact: Fact, value: str, lang: str) -> str:
    """The question that asks who holds ``value`` in the claim's place of ``fact``: the claim with
    its subject (and the article before it) replaced by the language's word for a name and the value
    written as the document writes it ("Who or what arrives in the first quarter of 2027?")."""
    words = slot_words(lang)
    pieces = sorted([(subject.start, subject.end, words.get("name", "")), (fact.start, fact.end, value)])
    text, at = "", 0
    for a, b, put in pieces:
        head = claim[at:a]
        if a == subject.start:  # "the 960PR" asks "who or what", not "the who or what"
            head = _drop_last_words(head, words.get("_drop_before_name", ""))
        text, at = text + head + put, b
    body = " ".join(_END.sub("", text + claim[at:]).split())
    return f"{words.get('_open', '')}{body[:1].upper()}{body[1:]}?"
