"""Damaged indexes are clear errors naming `citeqa index --rebuild`; killed builds lose nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.errors import IndexCorruptError, IndexMismatchError, IndexStoreError
from citeqa.index.builder import update_index
from citeqa.index.manifest import MANIFEST_NAME
from citeqa.index.store import CURRENT, current_generation, file_digests, load_index
from tests.answers import answer_records

NEW_DOC = "The harbour of Greyhill has a stone pier built in 1821 for fishing boats."
QUESTIONS = [
    "¿En qué año se construyó el faro de Punta Brava?",
    "Quando foi inaugurado o farol da Ilha Clara?",
    "When was the windmill of Greyhill restored?",
    "How many people climb the windmill every year?",
]


def records(index_dir: Path) -> list[dict]:
    return answer_records(Engine.open(index_dir, embedder=KeywordEmbedder()), QUESTIONS)


def live(index_dir: Path) -> Path:
    folder = current_generation(index_dir)
    assert folder is not None
    return folder


def resign(folder: Path, **changes) -> None:
    """Rewrite the manifest so its checksums match the (tampered) files, plus ``changes``."""
    path = folder / MANIFEST_NAME
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["files"] = file_digests(folder)
    manifest.update(changes)
    path.write_text(json.dumps(manifest), encoding="utf-8")


def flip_byte(path: Path, at: float = 0.5) -> None:
    data = bytearray(path.read_bytes())
    i = int(len(data) * at)
    data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def bm25_file(folder: Path) -> Path:
    return sorted(p for p in (folder / "bm25").iterdir() if p.suffix == ".npy")[0]


def drop_document(folder: Path) -> None:
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    manifest["documents"] = manifest["documents"][1:]
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))


def unlisted_file(folder: Path) -> None:
    """A file the manifest does not list (its checksum entry removed)."""
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    del manifest["files"]["dense.faiss"]
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))


def swap_dense_resigned(folder: Path) -> None:
    """A consistent-looking but wrong FAISS file: fewer vectors, checksums re-signed."""
    import faiss
    import numpy as np

    index = faiss.IndexFlatIP(256)
    index.add(np.eye(256, dtype=np.float32)[:2])
    faiss.write_index(index, str(folder / "dense.faiss"))
    resign(folder)


def truncate_bm25_resigned(folder: Path) -> None:
    truncate(bm25_file(folder))
    resign(folder)


def malformed_records_resigned(folder: Path) -> None:
    (folder / "documents.jsonl").write_text('{"doc_id": "faro.txt"}\n', encoding="utf-8")
    resign(folder)


def other_dimension(folder: Path) -> None:
    resign(folder, dimension=384)


def manifest_garbage(folder: Path) -> None:
    (folder / MANIFEST_NAME).write_bytes(b"\x00\xff{not json")


DAMAGE = {
    "faiss_truncated": lambda f: truncate(f / "dense.faiss"),
    "faiss_altered": lambda f: flip_byte(f / "dense.faiss", 0.7),
    "faiss_replaced_and_resigned": swap_dense_resigned,
    "bm25_altered": lambda f: flip_byte(bm25_file(f), 0.9),
    "bm25_truncated_and_resigned": truncate_bm25_resigned,
    "chunks_altered": lambda f: flip_byte(f / "chunks.jsonl", 0.3),
    "records_malformed_and_resigned": malformed_records_resigned,
    "manifest_drops_a_document": drop_document,
    "manifest_other_dimension": other_dimension,
    "manifest_lacks_a_file": unlisted_file,
    "manifest_garbage": manifest_garbage,
    "manifest_missing": lambda f: (f / MANIFEST_NAME).unlink(),
    "chunks_missing": lambda f: (f / "chunks.jsonl").unlink(),
    "bm25_missing": lambda f: bm25_file(f).unlink(),
    "generation_missing": lambda f: os.rename(f, f.parent / "elsewhere"),
}

CURRENT_GARBAGE = {
    "binary": b"\xff\xfe\x00\x81garbage",
    "empty": b"",
    "nul": b"g-\x00x\n",
    "escape": b"../../etc\n",
    "hidden": b".tmp-g-1\n",
    "unknown_generation": b"g-20990101T000000-1-1\n",
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_generation_is_a_clear_error(built_index: Path, damage: str):
    DAMAGE[damage](live(built_index))
    with pytest.raises((IndexCorruptError, IndexMismatchError), match=r"citeqa index --rebuild"):
        Engine.open(built_index, embedder=KeywordEmbedder())


@pytest.mark.parametrize("garbage", sorted(CURRENT_GARBAGE))
def test_garbage_current_pointer_is_a_clear_error(built_index: Path, garbage: str):
    (built_index / CURRENT).write_bytes(CURRENT_GARBAGE[garbage])
    with pytest.raises(IndexCorruptError, match=r"citeqa index --rebuild"):
        load_index(built_index)


@pytest.mark.parametrize("damage", ["faiss_truncated", "bm25_altered", "manifest_drops_a_document", "current"])
def test_cli_names_rebuild_and_rebuild_repairs(
    keyword_cli, fixture_corpus: Path, built_index: Path, capsys, damage: str
):
    before = records(built_index)
    if damage == "current":
        (built_index / CURRENT).write_bytes(CURRENT_GARBAGE["binary"])
    else:
        DAMAGE[damage](live(built_index))
    for argv in (
        ["ask", "--index", str(built_index), "faro"],
        ["index", "--corpus", str(fixture_corpus), "--index", str(built_index)],
    ):
        assert keyword_cli(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("citeqa: error: ") and err.count("\n") == 1 and "citeqa index --rebuild" in err
    assert keyword_cli(["index", "--rebuild", "--corpus", str(fixture_corpus), "--index", str(built_index)]) == 0
    assert records(built_index) == before


def test_concurrent_build_is_refused_not_interleaved(fixture_corpus: Path, built_index: Path):
    from citeqa.index.store import write_lock

    with write_lock(built_index), pytest.raises(IndexStoreError, match="another"), write_lock(built_index, wait=False):
        pass


def test_opening_while_a_build_replaces_the_generation_reads_the_new_one(
    fixture_corpus: Path, built_index: Path, monkeypatch: pytest.MonkeyPatch
):
    """A reader that picked the old generation just before a build deleted it is not told to rebuild."""
    import citeqa.index.store as store

    real = store.read_manifest
    raced: list[Path] = []

    def read_manifest(folder: Path):
        if not raced:  # the first read: a whole build runs right now and removes ``folder``
            raced.append(folder)
            (fixture_corpus / "new.txt").write_text(NEW_DOC, encoding="utf-8")
            update_index(fixture_corpus, built_index, KeywordEmbedder())
            assert not folder.exists()
        return real(folder)

    monkeypatch.setattr(store, "read_manifest", read_manifest)
    data = load_index(built_index)
    assert raced and "new.txt" in data.documents


# --- a build killed with SIGKILL ---------------------------------------------------

KILLED_BUILD = textwrap.dedent("""
    import sys, threading
    sys.path.insert(0, sys.argv[4])
    from pathlib import Path
    from citeqa.embedding.keyword import KeywordEmbedder
    import citeqa.index.store as store
    from citeqa.index.builder import update_index

    corpus, index, stage = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]

    # This build is killed anyway: skip loading lingua's models to start faster.
    import citeqa.ingest.chunking, citeqa.ingest.documents
    from citeqa.text.language import Detection
    citeqa.ingest.documents.detect_lang = lambda text, default, *args: default
    citeqa.ingest.chunking.detect = lambda text, *args: Detection(None, 0.0)

    def pause():
        print("READY", flush=True)
        threading.Event().wait()  # until killed: the test kills the four builds one after another

    class SlowEmbedder(KeywordEmbedder):
        def encode(self, texts, *, progress=False):
            if stage == "encode":
                pause()
            return super().encode(texts)

    def wrap(name, before):
        real = getattr(store, name)
        def hooked(*args, **kwargs):
            if before:
                pause()
            result = real(*args, **kwargs)
            if not before:
                pause()
            return result
        setattr(store, name, hooked)

    if stage == "files_written":      # the new generation is complete in .tmp-g-*
        wrap("_fsync_tree", before=False)
    elif stage == "before_switch":    # renamed to g-*, CURRENT not yet switched
        wrap("_point_current", before=True)
    elif stage == "pointer_written":  # .CURRENT.tmp-* written, not yet renamed
        real_replace = store.os.replace
        def replace(src, dst):
            if str(src).find(".CURRENT.tmp-") >= 0:
                pause()
            return real_replace(src, dst)
        store.os.replace = replace
    update_index(corpus, index, SlowEmbedder())
    print("FINISHED", flush=True)
""")


STAGES = ("encode", "files_written", "before_switch", "pointer_written")


def test_sigkill_during_build_keeps_the_previous_index(
    fixture_corpus: Path, built_index: Path, tmp_path: Path, repo: Path
):
    """Kill a build at each stage (in parallel, one index copy per stage); nothing is lost."""
    import shutil

    before = records(built_index)
    live_before = live(built_index).name
    script = tmp_path / "killed_build.py"
    script.write_text(KILLED_BUILD, encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(repo / "src")}
    copies, procs = {}, {}
    try:
        for stage in STAGES:
            corpus, index = tmp_path / f"{stage}-corpus", tmp_path / f"{stage}-index"
            shutil.copytree(fixture_corpus, corpus)
            shutil.copytree(built_index, index, symlinks=True)
            (corpus / "new.txt").write_text(NEW_DOC, encoding="utf-8")
            copies[stage] = (corpus, index)
            procs[stage] = subprocess.Popen(
                [sys.executable, str(script), str(corpus), str(index), stage, str(repo / "tests")],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
        for stage, proc in procs.items():
            line = proc.stdout.readline().decode().strip()
            assert line == "READY", (stage, proc.stderr.read().decode()[-2000:])
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            proc.stderr.close()

    for stage, (corpus, index) in copies.items():
        # The live index is untouched and answers exactly as before.
        assert live(index).name == live_before, stage
        assert records(index) == before, stage
        leftovers = sorted(p.name for p in index.iterdir() if p.name not in (CURRENT, ".lock", live_before))
        assert bool(leftovers) == (stage != "encode"), (stage, leftovers)

        # The next run cleans the leftovers, even when it finds nothing to do.
        (corpus / "new.txt").unlink()
        assert update_index(corpus, index, KeywordEmbedder()).up_to_date
        assert sorted(p.name for p in index.iterdir()) == sorted([CURRENT, ".lock", live_before]), stage

        # And a real build afterwards works and sees the new document.
        (corpus / "new.txt").write_text(NEW_DOC, encoding="utf-8")
        assert update_index(corpus, index, KeywordEmbedder()).added == ("new.txt",)
        assert "new.txt" in load_index(index).documents
