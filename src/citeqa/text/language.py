"""Language identification with lingua, restricted to the languages citeqa expects.

Restricting the candidates matters: with every language loaded, short Spanish and
Portuguese questions are often taken for Galician, Catalan or Italian. The detector is
built once, on first use, and shared by the documents, the chunks and the questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

#: Languages the detector may answer (ISO 639-1). The corpus languages come first.
SUPPORTED = ("es", "pt", "en", "fr", "de", "it")


@dataclass(frozen=True, slots=True)
class Detection:
    """The most likely language and the detector's confidence in it (0..1)."""

    lang: str | None
    confidence: float


@lru_cache(maxsize=1)
def _detector():
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    codes = [getattr(IsoCode639_1, code.upper()) for code in SUPPORTED]
    return LanguageDetectorBuilder.from_iso_codes_639_1(*codes).build()


def ranked(text: str, candidates: tuple[str, ...] = SUPPORTED) -> tuple[Detection, ...]:
    """Every language of ``candidates`` with its share of the detector's confidence, most likely
    first (the shares sum to 1); empty when the text has no letters to judge by."""
    if not any(c.isalpha() for c in text):
        return ()
    values = _detector().compute_language_confidence_values(text)
    found = [(v.language.iso_code_639_1.name.lower(), v.value) for v in values]
    found = [(lang, conf) for lang, conf in found if lang in candidates]
    total = sum(conf for _, conf in found)
    return tuple(Detection(lang, conf / total if total > 0 else 0.0) for lang, conf in found)


def detect(text: str, candidates: tuple[str, ...] = SUPPORTED) -> Detection:
    """Detect the language of ``text`` among ``candidates``.

    Returns ``Detection(None, 0.0)`` when the text has no letters to judge by.
    """
    found = ranked(text, candidates)
    return found[0] if found else Detection(None, 0.0)


def detect_lang(text: str, default: str, candidates: tuple[str, ...] = SUPPORTED) -> str:
    """The detected language of ``text``, or ``default`` when it cannot be told."""
    found = detect(text, candidates).lang
    return found if found is not None else default


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
