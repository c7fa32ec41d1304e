"""Does a text hold a gold answer? Normalisation, containment on word edges, SQuAD EM and F1."""

from __future__ import annotations

import functools
import json
import re
import string
import unicodedata
from collections import Counter
from importlib import resources

from citeqa.records import Highlight
from citeqa.text.analysis import fold_accents

_WHITESPACE = re.compile(r"\s+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u02bc": "'"})


@functools.cache
def _article_table() -> dict[str, list[str]]:
    """``articles.json``, read once."""
    table: dict[str, list[str]] = json.loads(
        resources.files("citeqa.evaluation").joinpath("articles.json").read_text("utf-8")
    )
    return table


@functools.cache
def articles(lang: str) -> frozenset[str]:
    """The articles :func:`normalize_answer` drops from an answer in ``lang`` (none for a language
    the list does not name): MLQA's and MKQA's official lists, in ``articles.json``."""
    return frozenset(fold_accents(w) for w in _article_table().get(lang.lower(), ()))


def normalize_text(text: str) -> str:
    """NFKC, casefold, whitespace collapsed: the form used for "contains an answer"."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def normalize_answer(text: str, lang: str) -> str:
    """SQuAD-style form for exact match and F1 of an answer written in ``lang``: lower case, no
    accents, no punctuation, no articles of that language (an elided one, "l'", cut off its word)."""
    drop = articles(lang)
    words = []
    for word in fold_accents(normalize_text(text)).translate(_APOSTROPHES).split():
        word = "".join(ch for ch in word if ch == "'" or not _is_punctuation(ch))
        head, apostrophe, rest = word.partition("'")
        if apostrophe and head + apostrophe in drop:
            word = rest
        bare = word.replace("'", "")
        if bare and bare not in drop:
            words.append(bare)
    return " ".join(words)


def _is_punctuation(ch: str) -> bool:
    """Unicode punctuation (``¿``, ``¡``, ``«``) or ASCII punctuation/symbols (as SQuAD)."""
    return unicodedata.category(ch).startswith("P") or ch in string.punctuation


def contains_answer(text: str, gold: str) -> bool:
    """Whether normalised ``gold`` occurs in normalised ``text`` with whole-word edges."""
    needle, haystack = normalize_text(gold), normalize_text(text)
    if not needle:
        return False
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        if _is_edge(haystack, start - 1, needle[0]) and _is_edge(haystack, end, needle[-1]):
            return True
        start = haystack.find(needle, start + 1)
    return False


def _is_edge(text: str, index: int, boundary_char: str) -> bool:
    """True when ``text[index]`` does not glue a word onto the match's boundary char."""
    if not boundary_char.isalnum() or index < 0 or index >= len(text):
        return True
    return not text[index].isalnum()


def exact_match(prediction: str, gold: str, lang: str) -> bool:
    """SQuAD exact match of answers written in ``lang``: equal after :func:`normalize_answer`."""
    return normalize_answer(prediction, lang) == normalize_answer(gold, lang)


def token_f1(prediction: str, gold: str, lang: str) -> float:
    """SQuAD token F1 of answers written in ``lang``, after :func:`normalize_answer`; two empty
    strings score 1."""
    pred, ref = normalize_answer(prediction, lang).split(), normalize_answer(gold, lang).split()
    if not pred or not ref:
        return float(pred == ref)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def answer_spans(text: str, gold: str) -> list[Highlight]:
    """Where ``gold`` occurs in ``text`` as :func:`contains_answer` finds it: offsets into ``text``.

    The comparison is the same (NFKC, casefold, collapsed whitespace, whole-word edges);
    the offsets are mapped back to the original text, so the spans can be marked in it.
    """
    needle = normalize_text(gold)
    if not needle:
        return []
    folded, origin = _normalized_with_origin(text)
    spans: list[Highlight] = []
    start = folded.find(needle)
    while start != -1:
        end = start + len(needle)
        if _is_edge(folded, start - 1, needle[0]) and _is_edge(folded, end, needle[-1]):
            spans.append(Highlight(origin[start], origin[end - 1] + 1))
            start = folded.find(needle, end)
        else:
            start = folded.find(needle, start + 1)
    return spans


def _normalized_with_origin(text: str) -> tuple[str, list[int]]:
    """``text`` folded as :func:`normalize_text` folds it (but not stripped), and for each folded
    character the index of the original one it comes from.

    A base character and the combining marks after it are folded together, as NFKC
    composes them; of the characters they fold into, the last maps to the last mark, so a
    span ending there ends after the marks.
    """
    out: list[str] = []
    origin: list[int] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            if not out or out[-1] != " ":
                out.append(" ")
                origin.append(i)
            i += 1
            continue
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        folded = unicodedata.normalize("NFKC", text[i:j]).casefold()
        out.extend(folded)
        origin.extend([i] * (len(folded) - 1) + [j - 1])
        i = j
    return "".join(out), origin


_SQUAD_ARTICLES = re.compile(r"\b(a|an|the)\b")
_SQUAD_PUNCTUATION = frozenset(string.punctuation)


def squad_normalize(text: str) -> str:
    """SQuAD v1.1's official normalisation (``evaluate-v1.1.py``'s ``normalize_answer``): lower case,
    ASCII punctuation removed, the English articles a, an and the removed, whitespace collapsed.
    Accents, other scripts' punctuation and other languages' articles are kept."""
    text = "".join(ch for ch in text.lower() if ch not in _SQUAD_PUNCTUATION)
    return " ".join(_SQUAD_ARTICLES.sub(" ", text).split())


def squad_exact_match(prediction: str, gold: str) -> bool:
    """SQuAD v1.1's official exact match: equal after :func:`squad_normalize`."""
    return squad_normalize(prediction) == squad_normalize(gold)


def squad_f1(prediction: str, gold: str) -> float:
    """SQuAD v1.1's official token F1, after :func:`squad_normalize` (no shared token scores 0, as there,
    two empty answers included)."""
    pred, ref = squad_normalize(prediction).split(), squad_normalize(gold).split()
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)
