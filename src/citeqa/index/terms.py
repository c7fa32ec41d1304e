"""Every passage's BM25 terms, stored as ids of a sorted vocabulary, with each term's document frequency.

Kept in the index folder (``terms/``) so that an update tokenises (stems) only its new
passages: the terms of the passages it keeps come from here, and bm25s is rebuilt from the
ids. The document frequencies serve :func:`citeqa.index.backends.lexical_idf` without
reading bm25s's internals, and are updated, not recounted: a term's count loses the
removed passages that held it and gains the new ones.

Files: ``vocab.json`` (the sorted terms), ``ids.npy`` (int32, every passage's term ids in
passage order, concatenated), ``ptr.npy`` (int64, where each passage's ids start,
``passages + 1``), ``df.npy`` (int64, passages holding each term).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from citeqa.records import Chunk
from citeqa.text.analysis import terms

TERMS_DIR = "terms"
_ARRAYS = ("ids.npy", "ptr.npy", "df.npy")
_VOCAB = "vocab.json"
#: Rows counted at a time by :func:`_doc_freq`: bounds its memory at ~10^7 ids.
_BLOCK_ROWS = 65_536


def chunk_terms(chunk: Chunk) -> list[str]:
    """The BM25 terms of a passage, stemmed in the passage's own language.

    Terms are interned: 10^5 passages hold ~10^7 tokens but few distinct ones, and one
    string per distinct term instead of per token saves ~0.5 GB while bm25s indexes.
    """
    found = [sys.intern(t) for t in terms(chunk.text, chunk.lang)]
    return found if found else ["\x00empty"]


@dataclass(frozen=True)
class Terms:
    """The passages' term ids (CSR style) against ``vocab``, and each term's document frequency."""

    vocab: tuple[str, ...]  # sorted; every term occurs in some passage
    ids: np.ndarray  # (tokens,) int32
    ptr: np.ndarray  # (passages + 1,) int64
    df: np.ndarray  # (len(vocab),) int64

    @cached_property
    def index(self) -> dict[str, int]:
        """Term -> id."""
        return {term: i for i, term in enumerate(self.vocab)}

    @property
    def passages(self) -> int:
        return len(self.ptr) - 1

    def row(self, passage: int) -> np.ndarray:
        """The term ids of one passage, in text order."""
        return self.ids[self.ptr[passage] : self.ptr[passage + 1]]

    @classmethod
    def of_ids(cls, vocab: Sequence[str], rows: Sequence[Sequence[int]]) -> Terms:
        """The terms of passages already given as ids into the sorted ``vocab``, frequencies counted."""
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=ptr[1:])
        ids = np.fromiter((i for row in rows for i in row), dtype=np.int32, count=int(ptr[-1]))
        return cls(tuple(vocab), ids, ptr, _doc_freq(ids, ptr, np.arange(len(rows)), len(vocab)))

    def save(self, folder: Path) -> None:
        folder.mkdir()
        (folder / _VOCAB).write_text(json.dumps(list(self.vocab), ensure_ascii=False), encoding="utf-8")
        for name, array in zip(_ARRAYS, (self.ids, self.ptr, self.df)):
            np.save(folder / name, array, allow_pickle=False)

    @classmethod
    def load(cls, folder: Path) -> Terms:
        """The ids memory-mapped: answering needs only the vocabulary and frequencies."""
        vocab = json.loads((folder / _VOCAB).read_text(encoding="utf-8"))
        if not isinstance(vocab, list) or not all(isinstance(t, str) for t in vocab):
            raise ValueError("the term vocabulary is not a list of strings")
        ids, ptr, df = (np.load(folder / name, mmap_mode="r", allow_pickle=False) for name in _ARRAYS)
        return cls(tuple(vocab), ids, ptr, np.asarray(df))


def build_terms(chunks: Sequence[Chunk], sources: Sequence[int | None], previous: Terms | None) -> Terms:
    """The terms of ``chunks``; chunk ``i`` is row ``sources[i]`` of ``previous`` (None: a new passage, tokenised here).

    The result is the same as tokenising every passage afresh: the vocabulary is the sorted
    set of the terms present, and the frequencies count the passages holding each.
    """
    fresh = {i: chunk_terms(c) for i, (c, s) in enumerate(zip(chunks, sources)) if s is None}
    if previous is not None:
        kept = np.asarray([s for s in sources if s is not None], dtype=np.int64)
        removed = np.setdiff1d(np.arange(previous.passages), kept)
        old_df = previous.df - _doc_freq(previous.ids, previous.ptr, removed, len(previous.vocab))
    else:
        old_df = np.zeros(0, dtype=np.int64)
    old_present = np.flatnonzero(old_df)
    new_terms = {t for found in fresh.values() for t in found}
    vocab = tuple(sorted(new_terms.union(previous.vocab[i] for i in old_present) if previous else new_terms))
    index = {term: i for i, term in enumerate(vocab)}
    remap = np.full(len(old_df), -1, dtype=np.int32)
    remap[old_present] = [index[previous.vocab[i]] for i in old_present] if previous else []
    rows = [
        remap[previous.row(s)]  # type: ignore[union-attr]  # a kept passage (s not None) has a previous index
        if s is not None
        else np.asarray([index[t] for t in fresh[i]], dtype=np.int32)
        for i, s in enumerate(sources)
    ]
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=ptr[1:])
    ids = np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, dtype=np.int32)
    df = np.zeros(len(vocab), dtype=np.int64)
    df[remap[old_present]] = old_df[old_present]
    df += _doc_freq(ids, ptr, np.asarray(sorted(fresh), dtype=np.int64), len(vocab))
    return Terms(vocab, ids, ptr, df)


def _doc_freq(ids: np.ndarray, ptr: np.ndarray, rows: np.ndarray, size: int) -> np.ndarray:
    """How many of the passages ``rows`` hold each term id (``size`` ids)."""
    counts = np.zeros(size, dtype=np.int64)
    for block in range(0, len(rows), _BLOCK_ROWS):
        chosen = rows[block : block + _BLOCK_ROWS]
        starts, lengths = ptr[chosen], ptr[chosen + 1] - ptr[chosen]
        offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
        positions = np.arange(int(lengths.sum()), dtype=np.int64) + offsets
        owner = np.repeat(np.arange(len(chosen), dtype=np.int64), lengths)
        distinct = np.unique(owner * size + np.asarray(ids[positions], dtype=np.int64))
        counts += np.bincount(distinct % size, minlength=size)
    return counts
