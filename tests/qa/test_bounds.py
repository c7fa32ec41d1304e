"""What one question may cost (qa/bounds.py): what a huge request embeds, matches and reads is capped."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.embedding.protocol import count_pieces
from citeqa.qa.bounds import RequestBounds, bounded
from tests.fakes import CountingSession

LONG = ("¿Cuántos visitantes recibe el molino de viento cada año y quién lo construyó en 1887? " * 30)[:2000]


def test_a_normal_question_is_untouched() -> None:
    question = "¿Cuántos parámetros tiene GLM-5?"
    assert bounded(question, 64, count_pieces) == question
    assert RequestBounds().question(question, count_pieces) == question


def test_a_long_text_keeps_its_first_and_last_words_within_the_bound() -> None:
    text = " ".join(f"w{i}" for i in range(1000))
    cut = bounded(text, 64, count_pieces)
    assert count_pieces(cut) <= 64
    assert cut.startswith("w0 w1 w2 ") and cut.endswith(" w998 w999")
    assert all(word in text.split() for word in cut.split())  # no half words


@pytest.mark.parametrize("seed", range(20))
def test_any_text_is_cut_within_the_bound(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "abc ñ日本 😀 ,.?1\n"
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 2000)))
    for limit in (1, 7, 64):
        assert count_pieces(bounded(text, limit, count_pieces)) <= limit


def test_e5_counts_the_tokens_it_reads() -> None:
    from citeqa.embedding.e5 import E5Embedder

    e5 = E5Embedder()
    cut = bounded(LONG, 64, e5.count_query_tokens)
    assert e5.count_query_tokens(LONG) > 400 and 48 <= e5.count_query_tokens(cut) <= 64
    assert cut.startswith("¿Cuántos visitantes") and LONG.endswith(cut.split()[-1])


def test_only_the_latest_turns_count_each_within_its_bound() -> None:
    turns = [f"turno {n} " + "palabra " * 500 for n in range(20)]
    kept = RequestBounds(turn_tokens=16, history_turns=3).history(turns, count_pieces)
    assert len(kept) == 3 and [t.split()[:2] for t in kept] == [["turno", "17"], ["turno", "18"], ["turno", "19"]]
    assert all(count_pieces(t) <= 16 for t in kept)
    assert RequestBounds(history_turns=0).history(turns, count_pieces) == ()


def test_bounds_are_settings_changed_by_name(shared_index: Path) -> None:
    from citeqa.engine import Engine

    engine = Engine.open(shared_index, embedder=KeywordEmbedder(), overrides={"bounds.question_tokens": 16})
    assert engine.settings.bounds == RequestBounds(question_tokens=16)


def test_the_worst_legal_request_embeds_and_matches_a_bounded_text(shared_index: Path) -> None:
    """2,000 characters of question, 20 earlier turns of 2,000, k=10: the query embedded holds at
    most the question's and one turn's bounds; the record keeps the question as asked."""
    from citeqa.engine import Engine

    embedder = KeywordEmbedder()
    engine = Engine.open(shared_index, embedder=embedder)
    history = [("y quién lo construyó? " * 100)[:2000] for _ in range(20)]
    bounds = engine.settings.bounds
    trace = engine.trace("¿Y " + LONG[3:], history, k=10)
    (query,) = embedder.encoded[-1:]
    assert count_pieces(query) <= bounds.question_tokens + bounds.turn_tokens
    assert len(trace.history) == bounds.history_turns
    assert trace.answer.question == "¿Y " + LONG[3:]
    normal = engine.trace("¿Quién construyó el molino de viento?", history[:1])
    assert embedder.encoded[-1] == normal.query  # a normal follow-up is embedded as before


def test_the_reader_runs_at_most_the_bound_of_windows_each_in_its_turn(reader_parts) -> None:
    from citeqa.reader.reader import Reader

    reader = Reader()
    reader._tok, reader._embed = reader_parts
    reader._session = session = CountingSession()
    passages = [" ".join(f"palabra{i}" for i in range(n, n + 300)) for n in range(0, 1200, 300)]
    turns: list[int] = []

    class _Turn:
        def __init__(self, cost: int) -> None:
            turns.append(cost)

        def __enter__(self) -> None:
            return None

        def __exit__(self, *exc) -> None:
            return None

    reader.read(LONG, passages)
    unbounded = sum(session.runs)
    session.runs.clear()
    reading = reader.read(LONG, passages, max_windows=8, turn=_Turn)
    assert unbounded > 8 and sum(session.runs) == 8 and len(turns) == len(session.runs)
    assert all(cost > 0 for cost in turns)
    assert len(reading.null) == 4 and all(np.isfinite(reading.null))  # every passage was read


def test_first_windows_reads_every_passage_before_any_second_window() -> None:
    from citeqa.reader.windows import Window, first_windows

    empty = np.zeros(1, dtype=np.int64)
    windows = [Window(p, empty, empty, empty) for p in (0, 0, 0, 1, 2, 2)]
    kept = first_windows(windows, 4)
    assert [w.passage for w in kept] == [0, 0, 1, 2]
    assert kept[1] is windows[1] and first_windows(windows, None) == windows
