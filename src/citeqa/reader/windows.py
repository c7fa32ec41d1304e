"""Question + passage windows for the reader, each token tied to a character range of the passage.

One layout for training and answering: ``<s> query: QUESTION </s></s> PASSAGE-WINDOW </s>``,
token types all 0 (e5 was pre-trained with one type). A passage longer than the window is
cut into overlapping windows; a token's ``(start, end)`` is a range of the passage text, and
-1 for every token that is not passage text, so no span can start or end outside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from citeqa.reader.tokenizer import E5Tokenizer, Tokens

#: Tokens per window, special tokens included (training and answering use the same).
MAX_TOKENS = 256
#: Longest question part, in tokens; longer questions keep their first tokens.
MAX_QUESTION_TOKENS = 64
#: Tokens shared by consecutive windows of one passage, so an answer near a cut is whole in one.
OVERLAP = 64
QUESTION_PREFIX = "query: "


@dataclass(frozen=True)
class Window:
    """One model input: token ids and, per token, its character range in passage ``passage``."""

    passage: int  #: index of the passage among those given
    ids: np.ndarray
    starts: np.ndarray  #: -1 where the token is not passage text
    ends: np.ndarray

    @property
    def first_context(self) -> int:
        return int(np.argmax(self.starts >= 0))


def make_windows(
    tok: E5Tokenizer,
    question: str | Tokens,
    passages: Sequence[str | Tokens],
    max_tokens: int = MAX_TOKENS,
    overlap: int = OVERLAP,
) -> list[Window]:
    """Windows of ``question`` with each passage (texts, or tokens already made by ``tok``)."""
    q = question if isinstance(question, Tokens) else tok.encode([QUESTION_PREFIX + question])[0]
    q_ids = q.ids[:MAX_QUESTION_TOKENS]
    texts = [p for p in passages if not isinstance(p, Tokens)]
    encoded = iter(tok.encode(texts)) if texts else iter(())
    head = np.concatenate([[tok.bos], q_ids, [tok.eos, tok.eos]]).astype(np.int64)
    budget = max_tokens - len(head) - 1
    step = max(1, budget - overlap)
    out = []
    for index, passage in enumerate(passages):
        ptoks = passage if isinstance(passage, Tokens) else next(encoded)
        n = len(ptoks.ids)
        for lo in range(0, max(n, 1), step):
            hi = min(n, lo + budget)
            ids = np.concatenate([head, ptoks.ids[lo:hi], [tok.eos]]).astype(np.int64)
            pad = np.full(len(head), -1, dtype=np.int64)
            starts = np.concatenate([pad, ptoks.starts[lo:hi], [-1]])
            ends = np.concatenate([pad, ptoks.ends[lo:hi], [-1]])
            out.append(Window(index, ids, starts, ends))
            if hi >= n:
                break
    return out


def first_windows(windows: Sequence[Window], n: int | None) -> list[Window]:
    """At most ``n`` of ``windows`` (all for None): every passage's first window before any
    passage's second, and so on, earlier passages first; returned in their original order."""
    if n is None or len(windows) <= n:
        return list(windows)
    seen: dict[int, int] = {}
    rank = []
    for i, w in enumerate(windows):
        rank.append((seen.get(w.passage, 0), w.passage, i))
        seen[w.passage] = seen.get(w.passage, 0) + 1
    keep = sorted(i for _, _, i in sorted(rank)[: max(0, n)])
    return [windows[i] for i in keep]


def batch_arrays(windows: Sequence[Window], pad: int) -> tuple[np.ndarray, np.ndarray]:
    """Padded ``input_ids`` and ``attention_mask`` (int64) for a batch of windows."""
    width = max(len(w.ids) for w in windows)
    ids = np.full((len(windows), width), pad, dtype=np.int64)
    mask = np.zeros((len(windows), width), dtype=np.int64)
    for row, w in enumerate(windows):
        ids[row, : len(w.ids)] = w.ids
        mask[row, : len(w.ids)] = 1
    return ids, mask
