"""A model-free embedder for tests and demos: hashed bags of accent-folded word prefixes.

Texts that share words get similar vectors, which is all retrieval tests need, and it
counts what it was asked to encode so tests can check incremental work. Deterministic
across processes and machines (a fixed FNV-1a hash, not Python's salted ``hash``).
"""

from __future__ import annotations

import numpy as np

from citeqa.text.analysis import fold_accents, word_tokens


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
        self.encoded.extend(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in word_tokens(text):
                key = fold_accents(word)[:5]
                out[row, hash_word(key) % self._dim] += 1.0
            norm = np.linalg.norm(out[row])
            out[row] = out[row] / norm if norm > 0 else out[row]
        return out


def hash_word(word: str) -> int:
    """A stable (process-independent) FNV-1a hash of a word."""
    value = 2166136261
    for ch in word.encode("utf-8"):
        value = ((value ^ ch) * 16777619) & 0xFFFFFFFF
    return value
