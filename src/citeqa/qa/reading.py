"""The reader's step of the pipeline: read the answer passages, then give each candidate span features.

The reader (:class:`citeqa.reader.reader.Reader`, run on the answer passages) gives its best
spans in document offsets (:class:`~citeqa.reader.reader.ReadAnswer`; the pipeline numbers each
by the hit it was read in), the frame of the candidates and of the short answers too
(:class:`~citeqa.records.Span`), so nothing here changes frame. A candidate sentence gets the best reader score of a span inside it, relative to the best
span read anywhere, whether it holds that best span, and how much the reader prefers "no
answer" in its passage. These are columns of the feature matrix like any other
(:data:`READER_FEATURES`), so the fitted ranker and calibration weigh them; with the reader
off they are 0 and the scorer fitted without the reader is used.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from citeqa.qa.features import FEATURES, READER_FEATURES
from citeqa.qa.spans import Candidate, span_short, whole_words
from citeqa.qa.work import Ticket
from citeqa.reader.reader import ExtractiveReader, ReadAnswer, Turn
from citeqa.records import Chunk, Highlight, Hit, Span

if TYPE_CHECKING:
    from citeqa.qa.settings import AnswerSettings

#: A candidate holding no span the reader scored gets this gap (the scores span about 0 to -30).
NO_SPAN_GAP = -20.0
#: Bounds of the no-answer margin, so one odd passage cannot dominate a linear score.
NULL_CLIP = 20.0
#: Bounds of a span's own score (start + end logit) as a feature; a sentence without a span gets the lower.
SCORE_CLIP = 30.0


def reader_features(cands: Sequence[Candidate], spans: Sequence[ReadAnswer], null: Mapping[int, float]) -> np.ndarray:
    """One row of :data:`READER_FEATURES` per candidate (``null``: no-answer score per hit index)."""
    rows = np.zeros((len(cands), len(READER_FEATURES)))
    if not spans:
        rows[:, 0], rows[:, 3] = NO_SPAN_GAP, -SCORE_CLIP
        return rows
    best = spans[0].score
    for row, cand in enumerate(cands):
        inside = best_inside(cand, spans)
        rows[row, 0] = inside.score - best if inside is not None else NO_SPAN_GAP
        rows[row, 1] = 1.0 if inside is spans[0] else 0.0
        passage_null = null.get(cand.hit_index, best)
        rows[row, 2] = float(np.clip(passage_null - best, -NULL_CLIP, NULL_CLIP))
        rows[row, 3] = float(np.clip(inside.score, -SCORE_CLIP, SCORE_CLIP)) if inside is not None else -SCORE_CLIP
    return rows


def span_candidates(
    cands: Sequence[Candidate],
    feats: np.ndarray,
    spans: Sequence[ReadAnswer],
    null: Mapping[int, float],
    chunks: Mapping[int, Chunk],
) -> tuple[list[Candidate], np.ndarray, list[ReadAnswer]]:
    """The reader's spans as the answer candidates: each span with the sentence that holds it
    (sentences joined where a span crosses their border) and that sentence's feature row, its
    reader columns now the span's own. ``chunks`` maps a hit index to its passage."""
    out_cands, rows, kept = [], [], []
    for span in spans:
        holding = [
            i
            for i, c in enumerate(cands)
            if c.hit_index == span.passage and c.end > span.span.start and c.start < span.span.end
        ]
        if not holding:
            continue
        first, last = cands[holding[0]], cands[holding[-1]]
        cand = first
        if last is not first:
            joined = replace(first.span, end=last.end)
            cand = replace(first, span=joined, text=chunks[span.passage].text_at(joined.start, joined.end))
        out_cands.append(cand)
        rows.append(feats[holding[0]])
        kept.append(span)
    matrix = np.array(rows, dtype=np.float64).reshape(len(rows), feats.shape[1])
    if kept:
        matrix[:, -len(READER_FEATURES) :] = _span_rows(kept, null)
    return out_cands, matrix, kept


def _span_rows(spans: Sequence[ReadAnswer], null: Mapping[int, float]) -> np.ndarray:
    """:data:`READER_FEATURES` of each span itself: its gap to the best, whether it is the best,
    its passage's no-answer margin and its own score."""
    best = spans[0].score
    rows = np.zeros((len(spans), len(READER_FEATURES)))
    for row, s in enumerate(spans):
        rows[row] = (
            s.score - best,
            float(row == 0),
            np.clip(null.get(s.passage, best) - best, -NULL_CLIP, NULL_CLIP),
            np.clip(s.score, -SCORE_CLIP, SCORE_CLIP),
        )
    return rows


def best_inside(cand: Candidate, spans: Sequence[ReadAnswer]) -> ReadAnswer | None:
    """The best-scored reader span that lies within ``cand`` (spans are sorted best first)."""
    for s in spans:
        if s.passage == cand.hit_index and cand.start <= s.span.start and s.span.end <= cand.end:
            return s
    return None


def focus_windows(
    cands: Sequence[Candidate], ranks: Sequence[float], chunks: Mapping[int, Chunk], focus: int, context: int
) -> list[tuple[int, Chunk]]:
    """What the reader reads instead of whole passages: the ``focus`` best-ranked of ``cands`` (by
    ``ranks``, higher first; only those of the passages in ``chunks``, by hit index), each widened by
    ``context`` words either side within its passage, windows of one passage that overlap or touch
    merged. Each as ``(hit index, slice of that passage)``, in passage order and then document order."""
    inside = [i for i, c in enumerate(cands) if c.hit_index in chunks]
    best = sorted(inside, key=lambda i: -ranks[i])[: max(0, focus)]
    ranges: dict[int, list[Highlight]] = {}
    for i in best:
        c = cands[i]
        chunk = chunks[c.hit_index]
        local = c.span.within(chunk.span)
        assert local is not None, "a candidate lies in its own passage"
        ranges.setdefault(c.hit_index, []).append(widened(chunk.text, local.start, local.end, context))
    out = []
    for hit in sorted(ranges):
        chunk = chunks[hit]
        merged: list[Highlight] = []
        for at in sorted(ranges[hit], key=lambda h: (h.start, h.end)):
            if merged and at.start <= merged[-1].end:
                merged[-1] = Highlight(merged[-1].start, max(merged[-1].end, at.end))
            else:
                merged.append(at)
        for at in merged:
            place = chunk.span.part(at)
            out.append(
                (
                    hit,
                    Chunk.make(chunk.doc_id, place.start, place.end, chunk.text_at(place.start, place.end), chunk.lang),
                )
            )
    return out


_WORD = re.compile(r"\S+")


def widened(text: str, start: int, end: int, words: int) -> Highlight:
    """``[start, end)`` of ``text`` widened by ``words`` whole words either side (to the text's ends
    at most), and to whole words where it cuts one: offsets into ``text``."""
    at = whole_words(text, start, end)
    if words <= 0:
        return at
    before = [m.start() for m in _WORD.finditer(text, 0, at.start)]
    after = [m.end() for m in _WORD.finditer(text, at.end)]
    a = before[-words] if len(before) >= words else 0
    b = after[words - 1] if len(after) >= words else len(text)
    return Highlight(min(a, at.start), max(b, at.end))


def reader_short(cand: Candidate, read: Sequence[ReadAnswer]) -> Span | None:
    """The best reader span inside ``cand`` (document offsets), widened to whole words (the reader
    ends spans on subword tokens: "60 tonn" for "60 tonnes") and trimmed of spaces and stops."""
    inside = best_inside(cand, read)
    return span_short(cand, inside.span) if inside is not None else None


def read_passages(
    reader: ExtractiveReader,
    settings: AnswerSettings,
    question: str,
    hits: Sequence[Hit],
    pool: Sequence[int],
    ticket: Ticket,
    cands: Sequence[Candidate] = (),
    feats: np.ndarray | None = None,
) -> tuple[tuple[ReadAnswer, ...], dict[int, float], int]:
    """The reader's spans over the best ``reader_passages`` of the passages ``pool`` (document
    offsets, each ``passage`` the index of its hit), each read passage's no-answer score by hit
    index, and the tokens read: at most the bounds' windows, each batch in ``ticket``'s turn.

    With ``reader_focus`` only windows around the best-ranked of ``cands`` are read (ranked by
    ``focus_ranker`` on their rows ``feats``, the reader's columns not yet there:
    :func:`focus_windows`); with ``reader_first`` the best passages are read first and the rest
    only when that reading is not sure enough (``reader_sure``); the windows' bound is then
    shared in proportion."""
    pool = sorted(pool)[: settings.reader_passages]
    spent = 0

    def turn(cost: int) -> AbstractContextManager[None]:
        nonlocal spent
        spent += max(0, cost)
        return ticket.turn(cost)

    parts = [(i, hits[i].chunk) for i in pool]
    if settings.reader_focus > 0 and cands and feats is not None:
        ranker = settings.focus_ranker if settings.focus_ranker is not None else settings.scoring
        ranks = ranker.scores(np.hstack([feats, without_reader(feats)])).tolist()
        parts = focus_windows(cands, ranks, dict(parts), settings.reader_focus, settings.reader_context)
    if not parts:
        return (), {}, 0
    windows = settings.bounds.reader_windows
    first = set(pool[: settings.reader_first]) if 0 < settings.reader_first < len(pool) else set(pool)
    head = [p for p in parts if p[0] in first]
    rest = [p for p in parts if p[0] not in first]
    if not head:  # no focus window in the first passages: read what there is at once
        head, rest = parts, []
    share = windows if not rest or windows is None else max(1, -(-windows * len(head) // len(parts)))
    read, null = _read_parts(reader, settings, question, head, share, turn)
    if rest and (not read or read[0].probability < settings.reader_sure):
        more, more_null = _read_parts(
            reader, settings, question, rest, None if windows is None else max(1, windows - share), turn
        )
        read = tuple(sorted(read + more, key=lambda a: -a.score))[: settings.reader_spans]
        null.update(more_null)
    return read, null, spent


def _read_parts(
    reader: ExtractiveReader,
    settings: AnswerSettings,
    question: str,
    parts: Sequence[tuple[int, Chunk]],
    max_windows: int | None,
    turn: Turn,
) -> tuple[tuple[ReadAnswer, ...], dict[int, float]]:
    """The reader's spans over ``parts`` (each a hit index and the passage, or a slice of it, read),
    numbered by hit index, and each hit's lowest no-answer score over its parts."""
    result = reader.run(question, [c for _, c in parts], top=settings.reader_spans, max_windows=max_windows, turn=turn)
    read = tuple(replace(a, passage=parts[a.passage][0]) for a in result.answers)
    null: dict[int, float] = {}
    for (hit, _), value in zip(parts, result.null):
        null[hit] = min(null.get(hit, value), value)
    return read, null


def without_reader(feats: np.ndarray) -> np.ndarray:
    """Zero columns for the reader's features of ``feats``' rows (rows of the features before reading)."""
    return np.zeros((len(feats), len(FEATURES) - feats.shape[1]))
