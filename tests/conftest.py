"""Shared fixtures: a tiny multilingual corpus, a fake keyword embedder, built indexes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent


class KeywordEmbedder:
    """A deterministic stand-in for a sentence model: hashed bags of stemmed words.

    Texts that share words get similar vectors, which is all retrieval tests need,
    and it counts what it was asked to encode so tests can check incremental work.
    """

    def __init__(self, model_id: str = "fake-keyword", dim: int = 256) -> None:
        self.model_id = model_id
        self._dim = dim
        self.encoded: list[str] = []

    @property
    def dimension(self) -> int:
        return self._dim

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        from citeqa.text.analysis import fold_accents, words

        self.encoded.extend(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in words(text):
                key = fold_accents(word)[:5]
                out[row, hash_word(key) % self._dim] += 1.0
            norm = np.linalg.norm(out[row])
            out[row] = out[row] / norm if norm > 0 else out[row]
        return out


def hash_word(word: str) -> int:
    """A stable (process-independent) hash of a word."""
    value = 2166136261
    for ch in word.encode("utf-8"):
        value = ((value ^ ch) * 16777619) & 0xFFFFFFFF
    return value


@pytest.fixture
def fixture_corpus(tmp_path: Path) -> Path:
    """A copy of tests/data/corpus (es .txt, pt .md in a subfolder, en .html)."""
    target = tmp_path / "corpus"
    shutil.copytree(DATA / "corpus", target)
    return target


@pytest.fixture
def embedder() -> KeywordEmbedder:
    return KeywordEmbedder()


@pytest.fixture
def built_index(fixture_corpus: Path, tmp_path: Path, embedder: KeywordEmbedder) -> Path:
    """An index over the fixture corpus, built with the keyword embedder."""
    from citeqa.index.builder import update_index

    index_dir = tmp_path / "index"
    update_index(fixture_corpus, index_dir, embedder)
    return index_dir
