"""Shared fixtures: the repository and test-data folders, a tiny multilingual corpus, a keyword embedder, built indexes."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent


@pytest.fixture
def fixture_corpus(tmp_path: Path) -> Path:
    """A copy of tests/data/corpus (es .txt, pt .md in a subfolder, en .html)."""
    target = tmp_path / "corpus"
    shutil.copytree(DATA / "corpus", target)
    return target


@pytest.fixture
def embedder() -> KeywordEmbedder:
    return KeywordEmbedder()


@pytest.fixture
def built_index(fixture_corpus: Path, tmp_path: Path, embedder: KeywordEmbedder) -> Path:
    """An index over the fixture corpus, built with the keyword embedder."""
    from citeqa.index.builder import update_index

    index_dir = tmp_path / "index"
    update_index(fixture_corpus, index_dir, embedder)
    return index_dir


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository's root folder."""
    return REPO


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data."""
    return DATA


@pytest.fixture
def keyword_cli():
    """``citeqa`` with the keyword embedder in place of a real model (no monkeypatching)."""
    from citeqa.app import cli

    return lambda argv: cli.main(argv, embedder_factory=lambda model: KeywordEmbedder())


# --- the chat app over the fixture corpus --------------------------------------------


def _make_holder(folder: Path):
    """An engine (keyword embedder) over the fixture corpus plus the XSS document."""
    from citeqa.app.ui import EngineHolder
    from citeqa.engine import Engine
    from citeqa.index.builder import update_index

    corpus = folder / "corpus"
    shutil.copytree(DATA / "corpus", corpus)
    shutil.copy(DATA / "ui" / "beacon.md", corpus / "beacon.md")
    update_index(corpus, folder / "index", KeywordEmbedder())
    return EngineHolder(Engine.open(folder / "index", embedder=KeywordEmbedder())), corpus


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_app(folder: Path, auth: tuple[str, str] | None = None):
    """Launch the app in this process on a free port; returns (app, url, holder, corpus)."""
    from citeqa.app.ui import CSS, UploadSettings, build_app

    holder, corpus = _make_holder(folder)
    app = build_app(holder, UploadSettings(corpus))
    app.queue().launch(server_name="127.0.0.1", server_port=_free_port(), prevent_thread_lock=True, quiet=True,
                       css=CSS, auth=auth, footer_links=["api"])
    return app, app.local_url, holder, corpus


@pytest.fixture(scope="session")
def make_holder():
    """``make_holder(folder) -> (EngineHolder, corpus)``: an engine over the fixture corpus and the XSS document."""
    return _make_holder


@pytest.fixture(scope="session")
def start_app():
    """``start_app(folder, auth=None) -> (app, url, holder, corpus)``: the app launched on a free port."""
    return _start_app
