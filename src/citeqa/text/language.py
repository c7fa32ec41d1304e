"""Language identification with lingua, restricted to the languages citeqa can read.

Which languages those are is data (``languages.json``, see docs/languages.md), not a list in
code: :func:`detected_languages` are the embedding model's languages that lingua also knows,
:func:`supported_languages` those of them that also have a Snowball stemmer. A question is read
as one of the languages the interface speaks or the corpus's (:func:`question_candidates`): with every
language loaded, short Spanish and Portuguese questions are often taken for Galician. Among those, names
and numbers are set aside and function words counted (:func:`question_ranking`), the page's language
leans a close reading and the corpus's languages only break a tie (:func:`question_language`); lingua's
trigrams read a question first, its full models (slow to load) only where that reading is unclear. Detectors
are built on first use and shared by the documents, the chunks and the questions; their confidences,
renormalised over a set of candidates, are those of a detector of only those.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import TYPE_CHECKING, TypedDict, cast

if TYPE_CHECKING:  # lingua loads on first use
    from lingua import LanguageDetector


class LanguageTable(TypedDict):
    """``languages.json``: the model's languages, aliases, the first six, stemmer and stopword names per code."""

    model: list[str]
    aliases: dict[str, str]
    first: list[str]
    stemmers: dict[str, str]
    stopwords: dict[str, str]


@cache
def language_data() -> LanguageTable:
    """The shipped language table: the model's languages, stemmer and stopword names per code."""
    text = resources.files("citeqa.text").joinpath("languages.json").read_text(encoding="utf-8")
    return cast("LanguageTable", json.loads(text))  # json.loads gives Any; the shipped file has this shape


@cache
def detected_languages() -> tuple[str, ...]:
    """ISO 639-1 codes a document or passage may be detected as: the model's that lingua knows,
    the old six first (the order ties are listed in), then alphabetical."""
    from lingua import Language

    data = language_data()
    model, aliases = set(data["model"]), data["aliases"]
    known = {lang.iso_code_639_1.name.lower() for lang in Language.all()}
    found = {code for code in known if aliases.get(code, code) in model}
    first = [code for code in data["first"] if code in found]
    return (*first, *sorted(found - set(first)))


def stemmer_name(lang: str) -> str | None:
    """The Snowball stemmer of ``lang`` (a PyStemmer algorithm name), None when it has none."""
    return language_data()["stemmers"].get(lang)


@cache
def supported_languages() -> tuple[str, ...]:
    """Languages read in full: detected, with their own stemmer (and stopwords where bm25s has them)."""
    return tuple(code for code in detected_languages() if stemmer_name(code) is not None)


@dataclass(frozen=True, slots=True)
class Detection:
    """The most likely language and the detector's confidence in it (0..1)."""

    lang: str | None
    confidence: float


#: How many of the coarse pass's best languages the fine pass weighs besides the first six.
COARSE_TOP = 3


@lru_cache(maxsize=32)
def _detector(codes: frozenset[str], low_accuracy: bool = False) -> LanguageDetector:
    """A lingua detector over ``codes``. Lingua loads a language's models on first use and shares
    them between detectors, so a detector over a few languages costs only those (the full-accuracy
    detector over all 67 is more than ten times the low-accuracy one's memory and load time; bench/memory.py
    weighs what a server loads)."""
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    builder = LanguageDetectorBuilder.from_iso_codes_639_1(*(getattr(IsoCode639_1, c.upper()) for c in sorted(codes)))
    return (builder.with_low_accuracy_mode() if low_accuracy else builder).build()


def _confidences(text: str, codes: frozenset[str], low_accuracy: bool = False) -> list[tuple[str, float]]:
    values = _detector(codes, low_accuracy).compute_language_confidence_values(text)
    return [(v.language.iso_code_639_1.name.lower(), v.value) for v in values]


def _fine_candidates(text: str) -> frozenset[str]:
    """The languages worth a full-accuracy look for ``text`` among every detected one: the first six
    (es pt en fr de it) and the coarse (trigram) pass's best few."""
    every = frozenset(detected_languages())
    coarse = [lang for lang, _ in _confidences(text, every, low_accuracy=True)[:COARSE_TOP]]
    return frozenset((*language_data()["first"], *coarse)) & every


def ranked(text: str, candidates: Collection[str] | None = None, low_accuracy: bool = False) -> tuple[Detection, ...]:
    """Every language of ``candidates`` (default: every detected language) with its share of the
    detector's confidence, most likely first (the shares sum to 1); empty when the text has no
    letters to judge by. Without candidates a coarse pass over every language picks the few that a
    full-accuracy pass then weighs. ``low_accuracy``: lingua's trigrams only (all zero shares for
    fewer than 3 letters), which load about a tenth as fast as its full models."""
    if not any(c.isalpha() for c in text):
        return ()
    codes = _fine_candidates(text) if candidates is None else frozenset(candidates) & frozenset(detected_languages())
    if not codes:
        return ()
    found = _confidences(text, codes, low_accuracy)
    total = sum(conf for _, conf in found)
    return tuple(Detection(lang, conf / total if total > 0 else 0.0) for lang, conf in found)


def detect(text: str, candidates: Collection[str] | None = None) -> Detection:
    """Detect the language of ``text`` among ``candidates`` (default: every detected language).

    Returns ``Detection(None, 0.0)`` when the text has no letters to judge by.
    """
    found = ranked(text, candidates)
    return found[0] if found else Detection(None, 0.0)


def detect_lang(text: str, default: str, candidates: Collection[str] | None = None) -> str:
    """The detected language of ``text``, or ``default`` when it cannot be told."""
    found = detect(text, candidates).lang
    return found if found is not None else default


#: A passage language that is no document's counts as the corpus's from this share of its passages:
#: a quotation or a table tagged with another language does not make questions readable in it.
MIN_PASSAGE_SHARE = 0.05


def corpus_languages(document_langs: Iterable[str], passage_langs: Iterable[str]) -> frozenset[str]:
    """The corpus's languages: every document's, and those of at least :data:`MIN_PASSAGE_SHARE` of the passages."""
    counts = Counter(passage_langs)
    total = sum(counts.values())
    return frozenset(document_langs) | {lang for lang, n in counts.items() if n >= MIN_PASSAGE_SHARE * total}


def question_candidates(corpus_langs: Collection[str], interface: Collection[str]) -> tuple[str, ...]:
    """What a question may be read as: every language the interface speaks and the corpus's languages,
    in the detector's order (a language the detector does not know is left out)."""
    wanted = set(corpus_langs) | set(interface)
    return tuple(lang for lang in detected_languages() if lang in wanted)


#: Two languages whose shares of the question's reading differ by less than this are a tie,
#: which the conversation breaks, then the corpus's languages ("GLM-5?" reads as en, es and pt alike).
TIE_MARGIN = 0.05
#: How much likelier the page's language (the browser's) is before the question is read: it decides
#: between readings the question leaves close, never against a clear one.
PRIOR_WEIGHT = 2.0
#: How much a question's function words weigh against lingua's confidence: a language's share is
#: multiplied by exp(weight x the share of the question's words that are its function words).
FUNCTION_WORD_WEIGHT = 3.0


@cache
def function_words() -> dict[str, frozenset[str]]:
    """Each interface language's function words (``function_words.json``): articles, prepositions,
    auxiliaries and question words tell a short question's language when names and numbers do not."""
    text = resources.files("citeqa.text").joinpath("function_words.json").read_text(encoding="utf-8")
    return {lang: frozenset(words) for lang, words in json.loads(text).items() if not lang.startswith("_")}


_TOKEN = re.compile(r"\w[\w'’·-]*")
_WORD = re.compile(r"[^\W\d_]+(?:['’](?=[^\W\d_]))?")


def letter_words(text: str) -> list[str]:
    """The lower-case words of ``text``; an elided article keeps its apostrophe ("l'", "d'")."""
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


def _name_like(token: str, first: bool) -> bool:
    """A token that says nothing of a question's language: a number or code (GLM-5, H100), an acronym
    or brand with inner capitals (API, iPhone, openPangu), a capitalised word past the first (Huawei),
    a possessive ("Huawei's"; not "what's")."""
    possessive = re.fullmatch(r"(.+)['’]s", token)
    return (
        any(c.isdigit() for c in token)
        or any(c.isupper() for c in token[1:])
        or (not first and token[:1].isupper())
        or (possessive is not None and not _is_function_word(possessive.group(1).lower()))
    )


def language_evidence(text: str) -> str:
    """``text`` without its names and numbers (:func:`_name_like`), '' when nothing else is left: they
    outweigh a short question's own words ("Huawei's openPangu 2.0 has 505 billion parameters." read as
    German). A lone capitalised word is a name too ("Huawei?")."""
    kept = [t for i, t in enumerate(_TOKEN.findall(text)) if not _name_like(t, i == 0)]
    lone_name = len(kept) == 1 and kept[0][:1].isupper() and not _is_function_word(kept[0].lower())
    return " ".join(kept) if not lone_name and any(c.isalpha() for t in kept for c in t) else ""


def _is_function_word(word: str) -> bool:
    return any(word in marks for marks in function_words().values())


def question_ranking(question: str, candidates: Collection[str], prior: str | None = None) -> tuple[Detection, ...]:
    """Each of ``candidates`` with its share of the evidence that ``question`` is in it, most likely first:
    lingua's confidence on :func:`language_evidence`, weighed by the language's function words among the
    question's words and by :data:`PRIOR_WEIGHT` for ``prior`` (the page's language). Empty when the
    question has nothing but names and numbers.

    lingua's trigrams are read first; their reading stands when it is clear (its best language has
    :data:`CLEAR_SHARE` or more and is :func:`_function_word_leader`), and only otherwise are the
    full-accuracy models loaded (most of a cold ``citeqa ask``'s time), for the languages the
    trigrams leave in contention only (:func:`contenders`)."""
    evidence = language_evidence(question)
    if not evidence:
        return ()
    shares = _function_word_shares(letter_words(question), candidates)
    leader = _function_word_leader(shares)
    quick = _weighed(ranked(evidence, candidates, low_accuracy=True), shares, prior)
    if leader is not None and quick and quick[0].lang == leader and quick[0].confidence >= CLEAR_SHARE:
        return quick
    return _weighed(ranked(evidence, contenders(quick, candidates, leader)), shares, prior)


#: The share of the weighed trigram reading a language needs for the full models to read the question
#: in it (a language's full models take 10-60 MB and 0.1-0.2 s to load). Over the 5,672 readings of
#: eval/qlang/readings.py (1,911 of them by the full models) no reading changed with any share up to
#: 0.01 (one did at 0.05): of the 17 languages the full models put first or within a tie of it from
#: a trigram share below 0.01, 16 were the function-word leader and one the trigrams' second.
CONTENDER_SHARE = 1e-2


def contenders(quick: Sequence[Detection], candidates: Collection[str], leader: str | None) -> frozenset[str]:
    """The ``candidates`` the full models read after the weighed trigram reading ``quick``: those
    with :data:`CONTENDER_SHARE` or more of it, its best two and the function-word ``leader``;
    every candidate when the trigrams could not read the question (fewer than 3 letters)."""
    if not quick or quick[0].confidence <= 0:
        return frozenset(candidates)
    kept = {d.lang for i, d in enumerate(quick) if d.lang is not None and (i < 2 or d.confidence >= CONTENDER_SHARE)}
    if leader is not None:
        kept.add(leader)
    return frozenset(kept) & frozenset(candidates)


#: The share the trigram reading's best language needs to stand without the full models: over the
#: 5,672 readings of eval/qlang/readings.py, a reading at or above 0.9 that the function words agree
#: with was never changed by the full models (0.99 leaves ten times the odds as a margin); without that
#: agreement, "How do I reset my password?" reads Italian at 0.996 from its trigrams and English in full.
CLEAR_SHARE = 0.99


def _function_word_shares(said: Sequence[str], candidates: Collection[str]) -> dict[str, float]:
    """Each candidate's share of the question's words ``said`` that are its function words."""
    marks = function_words()
    shares = {}
    for lang in candidates:
        own = marks.get(lang, frozenset())
        shares[lang] = sum(w in own or w.rstrip("'") in own for w in said) / max(len(said), 1)  # what's: what
    return shares


def _weighed(found: Sequence[Detection], shares: dict[str, float], prior: str | None) -> tuple[Detection, ...]:
    """lingua's reading ``found`` weighed by each language's function-word ``shares`` and the ``prior``,
    renormalised, most likely first."""
    scores = {}
    for d in found:
        if d.lang is None:  # ranked() names the language of each reading it returns
            continue
        scores[d.lang] = (
            d.confidence
            * math.exp(FUNCTION_WORD_WEIGHT * shares.get(d.lang, 0.0))
            * (PRIOR_WEIGHT if d.lang == prior else 1)
        )
    total = sum(scores.values())
    ordered = sorted(scores.items(), key=lambda kv: -kv[1])
    return tuple(Detection(lang, score / total if total > 0 else 0.0) for lang, score in ordered)


def _function_word_leader(shares: dict[str, float]) -> str | None:
    """The one language with the most of the question's function words, None when none has any or
    several have as many."""
    most = max(shares.values(), default=0.0)
    leaders = [lang for lang, share in shares.items() if share == most]
    return leaders[0] if most > 0 and len(leaders) == 1 else None


def question_language(
    question: str,
    history: Sequence[str],
    candidates: Collection[str],
    default: str,
    corpus: Collection[str] = (),
    prior: str | None = None,
) -> str:
    """The language of ``question`` among ``candidates`` (:func:`question_ranking`, leaning to ``prior``,
    the page's language). Readings within :data:`TIE_MARGIN` of the best are a tie, which the latest
    earlier question that can be told breaks, else the ``corpus``'s languages. A question of names and
    numbers only takes the conversation's language, else ``prior``, else ``default``."""
    found = question_ranking(question, candidates, prior)
    if not found:
        return _earlier_language(history, candidates, prior) or (
            prior if prior is not None and prior in candidates else default
        )
    tied = [d.lang for d in found if d.lang is not None and found[0].confidence - d.confidence < TIE_MARGIN]
    if len(tied) > 1 and (earlier := _earlier_language(history, candidates, prior)) in tied:
        return earlier
    return next((lang for lang in tied if lang in corpus), tied[0])


def _earlier_language(history: Sequence[str], candidates: Collection[str], prior: str | None) -> str | None:
    """The reading of the latest earlier question that has words of its own, None when none has."""
    for earlier in reversed(history):
        found = question_ranking(earlier, candidates, prior)
        if found:
            return found[0].lang
    return None
