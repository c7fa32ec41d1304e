"""Fixtures the PostgreSQL tests share: the shipped corpus indexed once per module with the keyword
embedder."""

from __future__ import annotations

import shutil
from pathlib import Path

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
