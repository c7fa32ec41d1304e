"""bench/bounds.py's and bench/memory.py's pure helpers (the runs need the real model and a server; see the scripts)."""

from __future__ import annotations

import sys

import pytest

from tests.paths import REPO

sys.path.insert(0, str(REPO / "bench"))

from bounds import MAX_CHARS, MAX_K, MAX_TURNS, long_text, requests, summary
from common import status_mb
from memory import mappings

from citeqa.app.web.validation import AskRequest

QUESTIONS = ["¿Cuántos parámetros tiene GLM-5?", "Qual chip a Baidu está testando?", "How much does it cost?"]


def test_the_worst_request_is_the_largest_the_schema_accepts() -> None:
    for r in range(3):
        reqs = requests(QUESTIONS, r)
        question, history, k = reqs["worst"]
        assert len(question) == MAX_CHARS and len(history) == MAX_TURNS and k == MAX_K
        assert all(len(turn) == MAX_CHARS for turn in history)
        for q, h, kk in reqs.values():
            AskRequest.from_args({"question": q, "history": h, "k": kk, "language": "auto"})  # accepted
        assert reqs["normal"] == (QUESTIONS[r % 3], [], 5)


def test_long_text_is_real_questions_one_after_another() -> None:
    text = long_text(QUESTIONS, 1, 100)
    assert len(text) <= 100 and text.startswith(QUESTIONS[1] + " " + QUESTIONS[2])


def test_summary_gives_the_two_ratios_of_the_targets() -> None:
    rows = lambda *s: [{"s": x, "engine_ms": 1000 * x} for x in s]
    report = {"alone": {"normal": rows(1, 2, 3), "long": rows(3), "worst": rows(6)}, "behind": rows(4, 5)}
    s = summary(report)
    assert s["worst_over_normal"] == pytest.approx(3.0) and s["behind_over_alone"] == pytest.approx(2.25)


def test_memory_figures_come_from_proc() -> None:
    mem = status_mb()
    assert mem["VmHWM"] >= mem["VmRSS"] > 0
    top = mappings(top=3)
    assert len(top) == 3 and all(mb >= 0 for _, mb in top) and top[0][1] >= top[-1][1]
