"""What the training and evaluation scripts share: examples, labelled windows, prediction, SQuAD scores."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citeqa.evaluation.matching import exact_match, token_f1
from citeqa.reader.decode import best_spans, window_spans
from citeqa.reader.tokenizer import E5Tokenizer
from citeqa.reader.windows import MAX_TOKENS, QUESTION_PREFIX, Window, batch_arrays, make_windows


@dataclass(frozen=True)
class Example:
    id: str
    lang: str
    context: str
    question: str
    answers: tuple[tuple[str, int], ...]  #: (text, start); empty when unanswerable
    source: str = ""  #: the file it came from


@dataclass(frozen=True)
class Feature:
    window: Window
    start: int  #: token index of the answer's start in the window, 0 for no answer
    end: int
    answerable: bool = True  #: False for a window of an unanswerable question


def load_examples(path: Path, limit: int | None = None) -> list[Example]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            answers = tuple((a["text"], a["start"]) for a in r["answers"]) if not r["impossible"] else ()
            out.append(Example(r["id"], r["lang"], r["context"], r["question"], answers, r.get("source", "")))
            if limit is not None and len(out) >= limit:
                break
    return out


def encode_examples(tok: E5Tokenizer, examples: list[Example], max_tokens: int = MAX_TOKENS) -> list[Feature]:
    """Labelled windows: the first answer's token range where a window holds it whole, else 0."""
    out = []
    contexts = tok.encode([e.context for e in examples])
    questions = tok.encode([QUESTION_PREFIX + e.question for e in examples])
    for e, ctx, question in zip(examples, contexts, questions):
        for w in make_windows(tok, question, [ctx], max_tokens=max_tokens):
            start = end = 0
            if e.answers:
                text, a_start = e.answers[0]
                a_end = a_start + len(text)
                inside = (w.starts >= 0) & (w.starts < a_end) & (w.ends > a_start)
                tokens = np.flatnonzero(inside)
                if len(tokens) and w.starts[tokens[0]] <= a_start and w.ends[tokens[-1]] >= a_end:
                    start, end = int(tokens[0]), int(tokens[-1])
            out.append(Feature(w, start, end, bool(e.answers)))
    return out


def save_features(features: list[Feature], path: Path) -> None:
    """``features`` as one ``.npz`` (tokens as int32, concatenated), written aside and moved in."""
    lengths = np.array([len(f.window.ids) for f in features], dtype=np.int64)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(
        tmp,
        lengths=lengths,
        passage=np.array([f.window.passage for f in features], dtype=np.int32),
        ids=np.concatenate([f.window.ids for f in features]).astype(np.int32),
        starts=np.concatenate([f.window.starts for f in features]).astype(np.int32),
        ends=np.concatenate([f.window.ends for f in features]).astype(np.int32),
        labels=np.array([(f.start, f.end, f.answerable) for f in features], dtype=np.int32).reshape(-1, 3),
    )
    tmp.replace(path)


def load_features(path: Path) -> list[Feature]:
    """What :func:`save_features` wrote: the same windows (int64 arrays, as made) and labels."""
    with np.load(path) as data:
        bounds = np.concatenate([[0], np.cumsum(data["lengths"])])
        ids, starts, ends = (data[k].astype(np.int64) for k in ("ids", "starts", "ends"))
        passage, labels = data["passage"].tolist(), data["labels"].tolist()
    return [
        Feature(Window(p, ids[a:b], starts[a:b], ends[a:b]), s, e, bool(ok))
        for p, a, b, (s, e, ok) in zip(passage, bounds[:-1].tolist(), bounds[1:].tolist(), labels)
    ]


def predict(model: Any, tok: E5Tokenizer, examples: list[Example], batch: int = 16) -> list[str]:
    """The best span's text for each example (never empty: the best non-null span)."""
    return [text for text, _ in predict_with_null(model, tok, examples, batch)]


def predict_with_null(
    model: Any, tok: E5Tokenizer, examples: list[Example], batch: int = 16
) -> list[tuple[str, float]]:
    """Per example, the best non-null span's text and its margin over the no-answer score
    (best span score minus the lowest no-answer score of the windows; below 0 means "no answer")."""
    import torch

    preds = []
    with torch.no_grad():
        for e in examples:
            windows = make_windows(tok, e.question, [e.context])
            spans = []
            for lo in range(0, len(windows), batch):
                part = windows[lo : lo + batch]
                ids, mask = batch_arrays(part, tok.pad)
                out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
                for w, s, en in zip(part, out.start_logits.numpy(), out.end_logits.numpy()):
                    spans.extend(window_spans(w, s, en))
            best = best_spans(spans, 1)
            null = min((s.null for s in spans), default=float("inf"))
            margin = best[0].score - null if best else float("-inf")
            preds.append((e.context[best[0].start : best[0].end] if best else "", margin))
    return preds


def squad_scores(examples: list[Example], preds: list[str]) -> tuple[float, float]:
    """Exact match and token F1 (citeqa's, as ``citeqa eval``), the best over an example's gold answers, averaged."""
    em = f1 = 0.0
    for e, p in zip(examples, preds):
        golds = [t for t, _ in e.answers] or [""]
        em += max(float(exact_match(p, g, e.lang)) for g in golds)
        f1 += max(token_f1(p, g, e.lang) for g in golds)
    n = max(1, len(examples))
    return round(em / n, 4), round(f1 / n, 4)
