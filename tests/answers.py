"""An engine's answer records without their timings: what must not change between two ways of
building or serving the same index."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def answer_records(engine: Any, questions: Iterable[str]) -> list[dict]:
    """``engine.ask(q).to_dict()`` for each question, without ``latency_ms``."""
    out = []
    for question in questions:
        record = engine.ask(question).to_dict()
        record.pop("latency_ms")
        out.append(record)
    return out
