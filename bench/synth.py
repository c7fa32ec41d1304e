"""Deterministic synthetic corpora and their vectors for the scale benchmark (bench/run.py).

The real documents' sentences are pooled per language and recombined into unique
passages of 450-790 characters (so the chunker, at its default 800/100, keeps each one
as exactly one passage); the passages are laid out ten per synthetic document, one
language per document, each passage used once. No two passages share the same multiset
of sentences, so the vectors built by :func:`compose` are distinct.

Vectors: embedding 10^5 passages with the real model takes hours on 2 cores, so each
unique *sentence* is embedded once with the real model and a passage's vector is the
L2-normalised mean of its sentences' vectors (:func:`compose`). The model itself mean-pools
token vectors, so this is close to the passage's own embedding; bench/run.py measures
how close on a sample of passages embedded whole. The same seed always gives the same bytes.
"""

from __future__ import annotations

import hashlib
import random
import re
import shutil
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import numpy as np

MIN_CHARS = 450
MAX_CHARS = 790
PER_DOC = 10
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


class Passage(NamedTuple):
    """One synthetic passage: its language, text and sentence ids (see :func:`flat_sentences`)."""

    lang: str
    text: str
    sentences: tuple[int, ...]


def corpus_sentences(corpus_dir: Path) -> dict[str, list[str]]:
    """Sentences of every .txt document, grouped by the document's detected language."""
    from citeqa.text.language import detect_lang

    pools: dict[str, list[str]] = defaultdict(list)
    for path in sorted(Path(corpus_dir).glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        lang = detect_lang(text, "en")
        for piece in _SENTENCE_END.split(text):
            piece = " ".join(piece.split())
            if 30 <= len(piece) <= 380 and piece not in pools[lang]:
                pools[lang].append(piece)
    return dict(sorted(pools.items()))


def flat_sentences(sentences: dict[str, list[str]]) -> list[str]:
    """All sentences in one list (languages in sorted order); a sentence id indexes it."""
    return [s for lang in sorted(sentences) for s in sentences[lang]]


def make_passages(sentences: dict[str, list[str]], count: int, seed: int) -> list[Passage]:
    """``count`` passages with distinct sentence multisets; languages weighted by sentence count."""
    rng = random.Random(seed)
    langs = sorted(sentences)
    weights = [len(sentences[lang]) for lang in langs]
    offsets, start = {}, 0
    for lang in langs:
        offsets[lang] = start
        start += len(sentences[lang])
    seen: set[tuple[int, ...]] = set()
    out: list[Passage] = []
    while len(out) < count:
        lang = rng.choices(langs, weights)[0]
        pool = sentences[lang]
        ids: list[int] = []
        length = -1
        for _ in range(200):
            if length >= MIN_CHARS:
                break
            i = rng.randrange(len(pool))
            if length + 1 + len(pool[i]) <= MAX_CHARS:
                ids.append(i)
                length += 1 + len(pool[i])
        key = tuple(sorted(offsets[lang] + i for i in ids))
        text = " ".join(pool[i] for i in ids)
        if MIN_CHARS <= len(text) <= MAX_CHARS and key not in seen:
            seen.add(key)
            out.append(Passage(lang, text, tuple(offsets[lang] + i for i in ids)))
    return out


def write_corpus(out_dir: Path, passages: list[Passage], real_dir: Path | None = None) -> int:
    """Write the real documents plus every passage once, ten per single-language document.

    Returns the number of synthetic documents written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if real_dir is not None:
        for path in sorted(Path(real_dir).glob("*.txt")):
            shutil.copyfile(path, out_dir / path.name)
    by_lang: dict[str, list[str]] = defaultdict(list)
    for p in passages:
        by_lang[p.lang].append(p.text)
    n_docs = 0
    for lang in sorted(by_lang):
        texts = by_lang[lang]
        for start in range(0, len(texts), PER_DOC):
            body = "\n\n".join(texts[start : start + PER_DOC]) + "\n"
            (out_dir / f"syn_{n_docs:06d}_{lang}.txt").write_text(body, encoding="utf-8")
            n_docs += 1
    return n_docs


def text_key(text: str) -> int:
    """A stable 63-bit key of a passage text (Python's ``hash`` changes per process)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little") >> 1


def member_matrix(passages: list[Passage]) -> np.ndarray:
    """The passages' sentence ids as one int32 matrix, rows padded with -1."""
    width = max((len(p.sentences) for p in passages), default=1)
    out = np.full((len(passages), width), -1, dtype=np.int32)
    for row, p in enumerate(passages):
        out[row, : len(p.sentences)] = p.sentences
    return out


def compose(sentence_vectors: np.ndarray, members: np.ndarray) -> np.ndarray:
    """L2-normalised mean of the sentence vectors of each row of ``members`` (-1 = padding).

    Built one sentence slot at a time, so memory stays at one output-sized array (a
    gather of all slots at once would take ~1 GB per 10^5 passages and inflate the
    index build's measured RSS).
    """
    members = np.atleast_2d(members)
    summed = np.zeros((len(members), sentence_vectors.shape[1]), dtype=np.float32)
    for slot in members.T:
        present = slot >= 0
        summed[present] += sentence_vectors[slot[present]]
    norms = np.linalg.norm(summed, axis=1, keepdims=True)
    return summed / np.maximum(norms, 1e-12)
