"""Names in a text, one definition for short answers, claims and features.

A **name word** has a digit or a capital past its first letter ("GLM-5", "cuDNN", "AI"), or
starts with a capital where a sentence does not start. A **name** is a run of such words
("Galaxy Tab 3.5", "Huawei Connect 2026"), numbers continuing it ("Falcon 9"), "X de Y" for a
one-word X ("Banco de Portugal"); leading function words are dropped ("El Nexus 7"); a lone
title-case word starting a sentence, a month, a common acronym ("IA") and a single letter are not
names. Numbers inside a name are not quantities nor years (:mod:`citeqa.text.facts`).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from citeqa.text.analysis import fold_accents, stopwords
from citeqa.text.facts_words import full_months, month_numbers
from citeqa.text.highlight import Highlight
from citeqa.text.lexicon import shared_list

_NAME_TOKEN = re.compile(r"\w+(?:[-./&+]\w+)*\+*")
_SENTENCE_START = ".!?:¿¡\"'«“‘•*#\n"
_CLAUSE_START = _SENTENCE_START + "(;—–-["


def is_name_word(word: str, first: bool) -> bool:
    """Whether ``word`` reads as (part of) a name: a digit or an inner capital anywhere ("H20",
    "PaddlePaddle", "AI"), an initial capital only when it is not the ``first`` word of its sentence."""
    if any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:]):
        return True
    return not first and word[:1].isupper()


def strong_name_word(word: str) -> bool:
    """A name word wherever it stands: a digit or an inner capital ("GLM-5", "openPangu", "AI")."""
    return is_name_word(word, first=True)


@cache
def common_acronyms() -> frozenset[str]:
    """Acronyms that are common nouns ("IA", "API"), not the name of something."""
    return frozenset(shared_list("names", "common_acronyms"))


@cache
def connectors() -> frozenset[str]:
    """Words that join a name's parts ("Banco de Portugal")."""
    return frozenset(shared_list("names", "connectors"))


@cache
def _leading() -> frozenset[str]:
    """Words dropped from the start of a name at a clause start: stopwords, the facts' function
    words and the wh-words ("What 2026 proved..." names nothing)."""
    return (
        stopwords("en") | frozenset(shared_list("facts", "function_words")) | frozenset(shared_list("questions", "wh"))
    )


def _is_token(token: str) -> bool:
    return any(c.isupper() for c in token) and any(c.isalpha() for c in token)


def name_spans(text: str) -> list[Highlight]:
    """Offsets (into ``text``) of the names of ``text`` (see the module's docstring)."""
    return list(_name_spans(text))


@lru_cache(maxsize=8192)
def _name_spans(text: str) -> tuple[Highlight, ...]:
    spans = []
    for group in _groups(text):
        before = text[: group[0][0]].rstrip()
        if not before or before[-1] in _CLAUSE_START:  # "El Nexus 7", but "in The Silent Valley"
            while group and fold_accents(group[0][2].lower()) in _leading():
                group = group[1:]
        while len(group) > 1 and group[0][2].lower() in common_acronyms():  # "IA Norlax"
            group = group[1:]
        while group and (group[-1][2].lower() in connectors() or fold_accents(group[-1][2].lower()) in _leading()):
            group = group[:-1]
        if not group or not _is_token(group[0][2]):
            continue
        first = group[0][2]
        if fold_accents(first.lower()) in full_months():
            continue
        if len(group) == 1:
            if len(first) == 1 or first.lower() in common_acronyms():
                continue
            before = text[: group[0][0]].rstrip()
            title_word = first[:1].isupper() and first[1:].islower() and first.isalpha()
            if title_word and (not before or before[-1] in _SENTENCE_START):
                continue
        spans.append(Highlight(group[0][0], group[-1][1]))
    return tuple(spans)


def _groups(text: str) -> list[list[tuple[int, int, str]]]:
    """Runs of capitalised tokens, with the numbers and "de"/"of" that continue them."""
    tokens = [(m.start(), m.end(), m.group(0)) for m in _NAME_TOKEN.finditer(text)]
    groups: list[list[tuple[int, int, str]]] = []
    current: list[tuple[int, int, str]] = []
    for i, (a, b, tok) in enumerate(tokens):
        if current:
            gap = text[current[-1][1] : a]
            joined = gap in (" ", "\u00a0") and (_is_token(tok) or tok[0].isdigit())
            joined = joined or (gap == "'" and tok[:1].isupper())
            if not joined and gap == " " and _connects(text, tokens, current, i):
                joined = True
            if joined:
                current.append((a, b, tok))
                continue
            groups.append(current)
            current = []
        if _is_token(tok):
            current = [(a, b, tok)]
    if current:
        groups.append(current)
    return groups


def _connects(text: str, tokens: list[tuple[int, int, str]], current: list[tuple[int, int, str]], i: int) -> bool:
    """Whether token ``i`` is the "de" of "Banco de Portugal": after one capitalised word, before another."""
    a, b, tok = tokens[i]
    return (
        tok.lower() in connectors()
        and len(current) == 1
        and current[0][2].isalpha()
        and current[0][2][:1].isupper()
        and i + 1 < len(tokens)
        and text[b : tokens[i + 1][0]] == " "
        and tokens[i + 1][2][:1].isupper()
        and tokens[i + 1][2].isalpha()
    )


def month_word(word: str) -> bool:
    """Whether ``word`` (any case) is a month name or abbreviation in some language."""
    return fold_accents(word.casefold()) in month_numbers()
