"""Language identification with lingua, restricted to the languages citeqa expects.

Restricting the candidates matters: with every language loaded, short Spanish and
Portuguese questions are often taken for Galician, Catalan or Italian. The detector is
built once, on first use, and shared by the documents, the chunks and the questions.
"""

from __future__ import annotations

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


def detect(text: str, candidates: tuple[str, ...] = SUPPORTED) -> Detection:
    """Detect the language of ``text`` among ``candidates``.

    Returns ``Detection(None, 0.0)`` when the text has no letters to judge by.
    """
    if not any(c.isalpha() for c in text):
        return Detection(None, 0.0)
    values = _detector().compute_language_confidence_values(text)
    ranked = [(v.language.iso_code_639_1.name.lower(), v.value) for v in values]
    ranked = [(lang, conf) for lang, conf in ranked if lang in candidates]
    if not ranked:
        return Detection(None, 0.0)
    total = sum(conf for _, conf in ranked)
    lang, conf = ranked[0]
    return Detection(lang, conf / total if total > 0 else 0.0)


def detect_lang(text: str, default: str, candidates: tuple[str, ...] = SUPPORTED) -> str:
    """The detected language of ``text``, or ``default`` when it cannot be told."""
    found = detect(text, candidates).lang
    return found if found is not None else default
