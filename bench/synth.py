"""Deterministic synthetic corpora for the scale benchmark (see bench/run.py).

The real documents' sentences are pooled per language, recombined into unique
passages of 450-790 characters (so the chunker, at its default 800/100, keeps each
one as exactly one passage), and the passages are laid out ten per synthetic
document, one language per document. The same seed always gives the same bytes.
"""

from __future__ import annotations

import math
import random
import re
import shutil
from collections import defaultdict
from pathlib import Path

MIN_CHARS = 450
MAX_CHARS = 790
PER_DOC = 10
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def corpus_sentences(corpus_dir: Path) -> dict[str, list[str]]:
    """Sentences of every .txt document, grouped by the document's detected language."""
    from citeqa.language import detect_lang

    pools: dict[str, list[str]] = defaultdict(list)
    for path in sorted(Path(corpus_dir).glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        lang = detect_lang(text, "en")
        for piece in _SENTENCE_END.split(text):
            piece = " ".join(piece.split())
            if 30 <= len(piece) <= 380 and piece not in pools[lang]:
                pools[lang].append(piece)
    return dict(sorted(pools.items()))


def make_passages(sentences: dict[str, list[str]], count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` unique ``(lang, passage)`` pairs; languages weighted by sentence count."""
    rng = random.Random(seed)
    langs = sorted(sentences)
    weights = [len(sentences[lang]) for lang in langs]
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    while len(out) < count:
        lang = rng.choices(langs, weights)[0]
        parts: list[str] = []
        length = -1
        for _ in range(200):
            if length >= MIN_CHARS:
                break
            sentence = rng.choice(sentences[lang])
            if length + 1 + len(sentence) <= MAX_CHARS:
                parts.append(sentence)
                length += 1 + len(sentence)
        text = " ".join(parts)
        if MIN_CHARS <= len(text) <= MAX_CHARS and text not in seen:
            seen.add(text)
            out.append((lang, text))
    return out


def write_corpus(out_dir: Path, passages: list[tuple[str, str]], synthetic_chunks: int,
                 seed: int, real_dir: Path | None = None) -> int:
    """Write the real documents plus ``synthetic_chunks`` passages in 10-passage documents.

    Passages are drawn (reused when needed) from ``passages``; returns the number of
    synthetic documents written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if real_dir is not None:
        for path in sorted(Path(real_dir).glob("*.txt")):
            shutil.copyfile(path, out_dir / path.name)
    rng = random.Random(seed + 1)
    by_lang: dict[str, list[str]] = defaultdict(list)
    for lang, text in passages:
        by_lang[lang].append(text)
    langs = sorted(by_lang)
    weights = [len(by_lang[lang]) for lang in langs]
    n_docs = math.ceil(synthetic_chunks / PER_DOC)
    for i in range(n_docs):
        lang = rng.choices(langs, weights)[0]
        pool = by_lang[lang]
        n = min(PER_DOC, synthetic_chunks - i * PER_DOC)
        paras = rng.sample(pool, n) if len(pool) >= n else [rng.choice(pool) for _ in range(n)]
        (out_dir / f"syn_{i:06d}_{lang}.txt").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    return n_docs
