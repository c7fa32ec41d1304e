"""From start/end logits to spans: pure functions shared by training's evaluation and answering."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from citeqa.reader.windows import Window

#: Longest span considered, in tokens (SQuAD answers are rarely longer).
MAX_SPAN_TOKENS = 30
#: Start positions looked at per window (the best few by start logit).
TOP_STARTS = 20


@dataclass(frozen=True, slots=True)
class SpanScore:
    """A span of passage ``passage``, characters ``[start, end)``, with its reader scores."""

    passage: int
    start: int
    end: int
    score: float  #: start logit + end logit
    null: float  #: the window's no-answer score (start + end logit of token 0)


def window_spans(window: Window, start_logits: np.ndarray, end_logits: np.ndarray, top: int = 5) -> list[SpanScore]:
    """The ``top`` best spans of one window (passage tokens only, at most MAX_SPAN_TOKENS long)."""
    n = len(window.ids)
    s_log, e_log = start_logits[:n], end_logits[:n]
    valid = window.starts >= 0
    if not valid.any():
        return []
    null = float(s_log[0] + e_log[0])
    starts = np.flatnonzero(valid)
    starts = starts[np.argsort(-s_log[starts])[:TOP_STARTS]]
    found = []
    for i in starts.tolist():
        hi = min(n, i + MAX_SPAN_TOKENS)
        ends = np.arange(i, hi)[valid[i:hi]]
        if not len(ends):
            continue
        j = int(ends[np.argmax(e_log[ends])])
        found.append((float(s_log[i] + e_log[j]), int(i), j))
    found.sort(reverse=True)
    out = []
    for score, i, j in found[:top]:
        out.append(SpanScore(window.passage, int(window.starts[i]), int(window.ends[j]), score, null))
    return out


def best_spans(spans: list[SpanScore], top: int = 5) -> list[SpanScore]:
    """The best distinct character spans over many windows (overlapping windows repeat spans)."""
    seen: dict[tuple[int, int, int], SpanScore] = {}
    for s in sorted(spans, key=lambda s: -s.score):
        seen.setdefault((s.passage, s.start, s.end), s)
    return list(seen.values())[:top]
