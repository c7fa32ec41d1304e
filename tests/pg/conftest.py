"""Fixtures the PostgreSQL tests share: the shipped corpus indexed once per module with the keyword
embedder, and an engine's answers without their timings (what must not change across servers)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.index.builder import update_index
from citeqa.index.store import IndexData, load_index


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory: pytest.TempPathFactory, repo: Path) -> tuple[Path, IndexData]:
    """``corpus/`` copied and indexed with the keyword embedder: its folder and the loaded index."""
    folder = tmp_path_factory.mktemp("pg-corpus")
    shutil.copytree(repo / "corpus", folder / "corpus")
    update_index(folder / "corpus", folder / "index", KeywordEmbedder())
    return folder, load_index(folder / "index")


def _answers(engine, questions: list[str]) -> list[dict]:
    out = []
    for question in questions:
        record = engine.ask(question).to_dict()
        record.pop("latency_ms")
        out.append(record)
    return out


@pytest.fixture
def answers() -> Callable[[Any, list[str]], list[dict]]:
    """``answers(engine, questions)``: the engine's answer records, without their latency."""
    return _answers
