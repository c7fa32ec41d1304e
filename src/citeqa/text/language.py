"""Language identification with lingua, restricted to the languages citeqa can read.

Which languages those are is data (``languages.json``, see docs/languages.md), not a list in
code: :func:`detected_languages` are the embedding model's languages that lingua also knows,
:func:`supported_languages` those of them that also have a Snowball stemmer. Restricting the candidates
matters: with every language loaded, short Spanish and Portuguese questions are often taken
for Galician, Catalan or Italian, so a question is only ever read as one of the corpus's
languages or of :data:`QUESTION_LANGUAGES` (:func:`question_candidates`). The detector is
built once, on first use, and shared by the documents, the chunks and the questions; its
confidences, renormalised over a set of candidates, are those of a detector of only those.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources


@cache
def language_data() -> dict:
    """The shipped language table: the model's languages, stemmer and stopword names per code."""
    return json.loads(resources.files("citeqa.text").joinpath("languages.json").read_text(encoding="utf-8"))


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


#: Languages a question may be read as even when no passage is in them (besides the corpus's).
#: Adding de/fr/it/ca here made 3 of the 93 claims of eval/claims.jsonl (es/pt/en) read as de or fr
#: (names and numbers outweigh three English words), so the others count only where the corpus has them.
QUESTION_LANGUAGES = ("es", "pt", "en")


@dataclass(frozen=True, slots=True)
class Detection:
    """The most likely language and the detector's confidence in it (0..1)."""

    lang: str | None
    confidence: float


#: How many of the coarse pass's best languages the fine pass weighs besides the first six.
COARSE_TOP = 3


@lru_cache(maxsize=32)
def _detector(codes: frozenset[str], low_accuracy: bool = False):
    """A lingua detector over ``codes``. Lingua loads a language's models on first use and shares
    them between detectors, so a detector over a few languages costs only those (the full-accuracy
    detector over all 67 took 882 MB and 6 s to load here; the low-accuracy one 50 MB, 0.3 s)."""
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


def ranked(text: str, candidates: Collection[str] | None = None) -> tuple[Detection, ...]:
    """Every language of ``candidates`` (default: every detected language) with its share of the
    detector's confidence, most likely first (the shares sum to 1); empty when the text has no
    letters to judge by. Without candidates a coarse pass over every language picks the few that a
    full-accuracy pass then weighs."""
    if not any(c.isalpha() for c in text):
        return ()
    codes = _fine_candidates(text) if candidates is None else frozenset(candidates) & frozenset(detected_languages())
    if not codes:
        return ()
    found = _confidences(text, codes)
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


def question_candidates(corpus_langs: Collection[str]) -> tuple[str, ...]:
    """What a question may be read as: the corpus's languages and :data:`QUESTION_LANGUAGES`,
    in the detector's order (a corpus language it does not know is left out)."""
    wanted = set(corpus_langs) | set(QUESTION_LANGUAGES)
    return tuple(lang for lang in detected_languages() if lang in wanted)


#: Two languages whose shares of the question's detection differ by less than this are a tie,
#: which the conversation breaks ("GLM-5?" reads as en, es and pt alike).
TIE_MARGIN = 0.05


def question_language(question: str, history: Sequence[str], candidates: tuple[str, ...], default: str) -> str:
    """The language of ``question`` among ``candidates``: the question decides; the latest earlier
    question that can be told breaks a tie; ``default`` when nothing can be told."""
    found = ranked(question, candidates)
    tied = [d.lang for d in found if found[0].confidence - d.confidence < TIE_MARGIN]
    if len(tied) == 1:
        return tied[0]
    for earlier in reversed(history):
        prior = detect(earlier, candidates).lang
        if prior is not None:
            return prior if prior in tied or not tied else tied[0]
    return tied[0] if tied else default
