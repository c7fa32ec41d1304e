import json
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.errors import IndexCorruptError, IndexFormatError, IndexMismatchError, IndexMissingError
from citeqa.index.builder import update_index
from citeqa.index.manifest import FORMAT_VERSION, MANIFEST_NAME
from citeqa.index.store import current_generation, load_index


def test_build_writes_a_self_describing_folder(built_index: Path):
    folder = current_generation(built_index)
    assert folder is not None
    names = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert {"manifest.json", "documents.jsonl", "chunks.jsonl", "dense.faiss"} <= names
    assert any(n.startswith("bm25/") for n in names)
    assert not any(n.endswith((".pkl", ".pickle")) for n in names)
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    assert manifest["format_version"] == FORMAT_VERSION
    assert manifest["model"] == "fake-keyword" and manifest["dimension"] == 256
    assert manifest["chunker"] == {"size": 800, "overlap": 100}
    assert {d["doc_id"] for d in manifest["documents"]} == {"faro.txt", "mill.html", "nested/farol.md"}
    assert all(len(d["sha256"]) == 64 and d["chunk_ids"] for d in manifest["documents"])
    assert "faiss-cpu" in manifest["versions"] and set(manifest["files"]) == names - {"manifest.json"}


def test_unchanged_corpus_does_no_work(fixture_corpus: Path, built_index: Path):
    again = KeywordEmbedder()
    report = update_index(fixture_corpus, built_index, again)
    assert report.up_to_date and again.encoded == []


def test_changed_file_re_embeds_only_its_chunks(fixture_corpus: Path, built_index: Path):
    before = load_index(built_index)
    path = fixture_corpus / "faro.txt"
    path.write_text(
        path.read_text(encoding="utf-8") + "\nUn párrafo nuevo sobre la tienda del museo.\n", encoding="utf-8"
    )
    again = KeywordEmbedder()
    report = update_index(fixture_corpus, built_index, again)
    assert report.changed == ("faro.txt",) and not report.added and not report.removed
    assert again.encoded and all("faro" in t.lower() or "museo" in t for t in again.encoded)
    after = load_index(built_index)
    faro_texts = [c.text for c in after.chunks if c.doc_id == "faro.txt"]
    assert all(any(text in chunk for chunk in faro_texts) for text in again.encoded)  # its passages and spans
    assert "Un párrafo nuevo sobre la tienda del museo." in again.encoded  # the new sentence's own vector
    others = [c for c in before.chunks if c.doc_id != "faro.txt"]
    assert all(c in after.chunks for c in others)


def test_deleted_file_drops_its_chunks(fixture_corpus: Path, built_index: Path):
    (fixture_corpus / "mill.html").unlink()
    again = KeywordEmbedder()
    report = update_index(fixture_corpus, built_index, again)
    assert report.removed == ("mill.html",) and again.encoded == []
    data = load_index(built_index)
    assert all(c.doc_id != "mill.html" for c in data.chunks)
    assert data.dense.ntotal == len(data.chunks)


def test_rebuild_re_embeds_everything(fixture_corpus: Path, built_index: Path):
    again = KeywordEmbedder()
    report = update_index(fixture_corpus, built_index, again, rebuild=True)
    assert not report.up_to_date and report.embedded == report.chunks


def test_missing_index_is_a_clear_error(tmp_path: Path):
    with pytest.raises(IndexMissingError, match="citeqa index"):
        load_index(tmp_path / "none")


def test_other_model_or_format_names_rebuild(fixture_corpus: Path, built_index: Path):
    with pytest.raises(IndexMismatchError, match="--rebuild"):
        update_index(fixture_corpus, built_index, KeywordEmbedder(model_id="other-model"))
    folder = current_generation(built_index)
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    manifest["format_version"] = FORMAT_VERSION + 1
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(IndexMismatchError, match="run `citeqa index`"):
        load_index(built_index)


def test_citeqa_index_rebuilds_an_index_of_another_format(
    fixture_corpus: Path, built_index: Path, keyword_cli, capsys: pytest.CaptureFixture[str]
):
    """An index written by another citeqa (its format version differs) is rebuilt from the corpus, not refused."""
    folder = current_generation(built_index)
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    manifest["format_version"] = FORMAT_VERSION - 1
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", str(built_index)]) == 0
    out = capsys.readouterr().out
    assert "rebuilt the whole index" in out and f"format version {FORMAT_VERSION - 1}" in out
    assert load_index(built_index).manifest.format_version == FORMAT_VERSION


def test_altered_file_is_detected(built_index: Path):
    folder = current_generation(built_index)
    with (folder / "chunks.jsonl").open("a") as fh:
        fh.write("\n")
    with pytest.raises(IndexCorruptError, match="--rebuild"):
        load_index(built_index)


def test_failed_build_leaves_previous_index(fixture_corpus: Path, built_index: Path):
    class Broken(KeywordEmbedder):
        def encode(self, texts, *, progress=False):
            raise RuntimeError("crash in the middle of a build")

    before = load_index(built_index).chunks
    (fixture_corpus / "new.txt").write_text("A brand new document about ships and harbours.", encoding="utf-8")
    with pytest.raises(RuntimeError):
        update_index(fixture_corpus, built_index, Broken())
    assert load_index(built_index).chunks == before
    assert [p.name for p in built_index.iterdir() if p.name.startswith(".tmp")] == []


def test_manifest_records_the_backend_and_refuses_another_kind(fixture_corpus: Path, built_index: Path, monkeypatch):
    from citeqa.embedding import BACKEND_ENV
    from citeqa.engine import Engine

    monkeypatch.delenv(BACKEND_ENV, raising=False)
    manifest = load_index(built_index).manifest
    assert manifest.backend == "torch"  # an embedder that does not say counts as torch

    quantised = KeywordEmbedder()
    quantised.backend = "onnx-int8"  # type: ignore[attr-defined]
    with pytest.raises(IndexMismatchError, match="onnx-int8.*citeqa index --rebuild"):
        update_index(fixture_corpus, built_index, quantised)
    update_index(fixture_corpus, built_index, quantised, rebuild=True)
    assert load_index(built_index).manifest.backend == "onnx-int8"
    with pytest.raises(IndexMismatchError, match="citeqa index --rebuild"):
        Engine.open(built_index, embedder=KeywordEmbedder())
    monkeypatch.setenv(BACKEND_ENV, "onnx-int8")
    Engine.open(built_index, embedder=quantised)


def test_manifest_without_backend_is_torch(built_index: Path):
    folder = current_generation(built_index)
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    del manifest["backend"]
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    assert load_index(built_index).manifest.backend == "torch"


def test_fast_record_readers_match_the_generic_decoder():
    from citeqa.index.store import _chunk, _document
    from citeqa.records import Chunk, Document, PageSpan, from_dict, to_dict

    doc = Document("a.pdf", "A", "one two", "en", "0" * 64, "pdf", (PageSpan(0, 3, 1), PageSpan(3, 7, 2)))
    plain = Document("b.txt", "B", "text", "es", "1" * 64)
    chunk = Chunk.make("b.txt", 0, 4, "text", "es")
    for obj, read in ((doc, _document), (plain, _document), (chunk, _chunk)):
        row = {**to_dict(obj), "unknown": 1}
        assert read(row) == from_dict(type(obj), row) == obj
    with pytest.raises(KeyError):
        _chunk({"chunk_id": "x"})


def test_partial_sort_matches_a_stable_full_sort():
    import numpy as np

    from citeqa.qa.retrieval import top_n

    rng = np.random.default_rng(0)
    for trial in range(500):
        size = int(rng.integers(1, 80))
        scores = (rng.integers(0, 4, size) if trial % 2 else rng.random(size)).astype(np.float32)
        n = int(rng.integers(0, 90))
        assert np.array_equal(top_n(scores, n)[:n], np.argsort(-scores, kind="stable")[:n])


def test_exact_search_up_to_the_threshold_then_hnsw():
    from citeqa.index import backends

    assert backends.ann_kind(backends.HNSW_THRESHOLD) == "flat"
    assert backends.ann_kind(backends.HNSW_THRESHOLD + 1) == "hnsw"


def test_hnsw_is_built_with_the_measured_settings():
    import numpy as np

    from citeqa.index import backends

    vectors = np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32)
    index = backends.build_dense(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), "hnsw")
    assert index.ntotal == 50 and index.hnsw.efSearch == backends.HNSW_EF_SEARCH
    assert index.hnsw.efConstruction == backends.HNSW_EF_CONSTRUCTION


def test_loaded_hnsw_index_searches_with_the_current_ef_search(
    fixture_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from citeqa.index import backends, store

    monkeypatch.setattr(backends, "HNSW_THRESHOLD", 0)
    update_index(fixture_corpus, tmp_path / "hnsw", KeywordEmbedder())
    data = load_index(tmp_path / "hnsw")
    assert data.manifest.ann == "hnsw" and data.dense.hnsw.efSearch == backends.HNSW_EF_SEARCH
    monkeypatch.setattr(store, "HNSW_EF_SEARCH", 7)
    assert load_index(tmp_path / "hnsw").dense.hnsw.efSearch == 7


def test_every_span_of_every_passage_has_its_vector(built_index: Path, embedder):
    from citeqa.ingest.sentences import span_bounds

    data = load_index(built_index)
    spans = data.spans
    assert spans is not None and len(spans.ptr) == len(data.chunks) + 1
    for i, chunk in enumerate(data.chunks):
        bounds = span_bounds(chunk.text)
        assert [tuple(b) for b in spans.bounds[spans.ptr[i] : spans.ptr[i + 1]]] == [(s.start, s.end) for s in bounds]
        for j, (a, b) in enumerate((s.start, s.end) for s in bounds):
            row = spans.row(i, j, a, b)
            expected = embedder.encode([chunk.text[a:b]])[0]
            assert row is not None and float(spans.vectors[row].astype("float32") @ expected) > 0.999
    assert spans.row(0, 0, 0, 10**6) is None  # offsets that do not match are no row


def _count_parses(monkeypatch) -> list[str]:
    """Every doc_id ``load_document`` (the one parser of a corpus file) is called for, in order."""
    from citeqa.ingest import documents

    calls: list[str] = []
    original = documents.load_document

    def counting(path, doc_id, default_lang="en"):
        calls.append(doc_id)
        return original(path, doc_id, default_lang)

    monkeypatch.setattr(documents, "load_document", counting)
    return calls


def test_refresh_parses_only_the_changed_file(fixture_corpus: Path, built_index: Path, monkeypatch):
    calls = _count_parses(monkeypatch)
    assert update_index(fixture_corpus, built_index, KeywordEmbedder()).up_to_date
    assert calls == []  # hashed, not parsed
    path = fixture_corpus / "mill.html"
    path.write_text(path.read_text(encoding="utf-8").replace("</body>", "<p>A new room.</p></body>"), "utf-8")
    report = update_index(fixture_corpus, built_index, KeywordEmbedder())
    assert report.changed == ("mill.html",) and calls == ["mill.html"]
    assert "A new room." in load_index(built_index).documents["mill.html"].text


def test_unchanged_documents_are_kept_as_indexed(fixture_corpus: Path, built_index: Path, monkeypatch):
    before = load_index(built_index)
    (fixture_corpus / "new.txt").write_text("The harbour crane was built in 1931.\n", encoding="utf-8")
    calls = _count_parses(monkeypatch)
    report = update_index(fixture_corpus, built_index, KeywordEmbedder())
    after = load_index(built_index)
    assert report.added == ("new.txt",) and calls == ["new.txt"]
    assert all(after.documents[d] == before.documents[d] for d in before.documents)
    rows = {c.chunk_id: i for i, c in enumerate(after.chunks)}
    for i, chunk in enumerate(before.chunks):  # its passage vector, span vectors and terms, copied
        j = rows[chunk.chunk_id]
        assert (after.dense.reconstruct(j) == before.dense.reconstruct(i)).all()
        old, new = before.spans, after.spans
        assert (new.vectors[new.ptr[j] : new.ptr[j + 1]] == old.vectors[old.ptr[i] : old.ptr[i + 1]]).all()
        assert [after.terms.vocab[t] for t in after.terms.row(j)] == [
            before.terms.vocab[t] for t in before.terms.row(i)
        ]


def _edit_corpus(corpus: Path) -> None:
    """Add a file, remove one and change one."""
    (corpus / "new.txt").write_text("The harbour crane was built in 1931 and painted red.\n", encoding="utf-8")
    (corpus / "mill.html").unlink()
    path = corpus / "faro.txt"
    path.write_text(path.read_text(encoding="utf-8") + "\nEl museo abre los lunes.\n", encoding="utf-8")


def test_an_updated_index_equals_a_fresh_build(fixture_corpus: Path, built_index: Path, tmp_path: Path):
    _edit_corpus(fixture_corpus)
    update_index(fixture_corpus, built_index, KeywordEmbedder())
    fresh_dir = tmp_path / "fresh"
    update_index(fixture_corpus, fresh_dir, KeywordEmbedder())
    updated, fresh = current_generation(built_index), current_generation(fresh_dir)
    for name in ("documents.jsonl", "chunks.jsonl", "dense.faiss", "terms/vocab.json", "terms/ids.npy"):
        assert (updated / name).read_bytes() == (fresh / name).read_bytes(), name
    for name in ("terms/ptr.npy", "terms/df.npy", "spans/vectors.npy", "spans/bounds.npy", "spans/ptr.npy"):
        assert (updated / name).read_bytes() == (fresh / name).read_bytes(), name
    assert {p.name: p.read_bytes() for p in (updated / "bm25").iterdir()} == {
        p.name: p.read_bytes() for p in (fresh / "bm25").iterdir()
    }


def test_stored_document_frequencies_are_those_bm25s_counts(fixture_corpus: Path, built_index: Path):
    import numpy as np

    _edit_corpus(fixture_corpus)
    update_index(fixture_corpus, built_index, KeywordEmbedder())
    data = load_index(built_index)
    counted = np.diff(np.asarray(data.lexical.scores["indptr"]))  # bm25s's own postings per term
    assert data.terms.df.tolist() == counted.tolist()
    assert list(data.terms.vocab) == sorted(t for t in data.lexical.vocab_dict if t)
    holding = [
        sum(t in {data.terms.vocab[i] for i in data.terms.row(r)} for r in range(len(data.chunks)))
        for t in data.terms.vocab
    ]
    assert data.terms.df.tolist() == holding


def test_answers_after_an_incremental_add_equal_a_full_rebuild(
    fixture_corpus: Path, built_index: Path, tmp_path: Path, data_dir: Path
):
    from citeqa.engine import Engine

    (fixture_corpus / "new.txt").write_text("The harbour crane of Greyhill was built in 1931.\n", encoding="utf-8")
    update_index(fixture_corpus, built_index, KeywordEmbedder())
    fresh_dir = tmp_path / "fresh"
    update_index(fixture_corpus, fresh_dir, KeywordEmbedder())
    questions = [json.loads(line)["question"] for line in (data_dir / "qa" / "fixture_corpus.jsonl").open()]
    questions.append("When was the harbour crane of Greyhill built?")
    updated = Engine.open(built_index, embedder=KeywordEmbedder())
    fresh = Engine.open(fresh_dir, embedder=KeywordEmbedder())
    for question in questions:
        timeless = [{**e.ask(question).to_dict(), "latency_ms": 0} for e in (updated, fresh)]
        assert timeless[0] == timeless[1], question
    assert updated.ask(questions[-1]).citations[0].doc_id == "new.txt"  # the added file answers


def test_an_index_of_the_previous_format_is_rebuilt_with_its_reason(
    fixture_corpus: Path, built_index: Path, monkeypatch
):
    """An index of format 2 (no terms/) is refused when opened and rebuilt, every file parsed, by an update."""
    import shutil

    folder = current_generation(built_index)
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    shutil.rmtree(folder / "terms")
    (folder / MANIFEST_NAME).write_text(json.dumps({**manifest, "format_version": FORMAT_VERSION - 1}))
    with pytest.raises(IndexFormatError, match="run `citeqa index`"):
        load_index(built_index)
    calls = _count_parses(monkeypatch)
    report = update_index(fixture_corpus, built_index, KeywordEmbedder())
    assert report.rebuilt_because.startswith(f"index format version {FORMAT_VERSION - 1}")
    assert sorted(calls) == ["faro.txt", "mill.html", "nested/farol.md"]
    assert load_index(built_index).terms.passages == len(load_index(built_index).chunks)


def test_an_hnsw_graph_gains_appended_passages_and_is_rebuilt_otherwise(
    fixture_corpus: Path, tmp_path: Path, monkeypatch
):
    from citeqa.index import backends, builder

    monkeypatch.setattr(backends, "HNSW_THRESHOLD", 1)
    built: list[int] = []
    original = builder.build_dense
    monkeypatch.setattr(builder, "build_dense", lambda v, kind: built.append(len(v)) or original(v, kind))
    index_dir = tmp_path / "hnsw"
    update_index(fixture_corpus, index_dir, KeywordEmbedder())
    first = load_index(index_dir)
    last = fixture_corpus / "nested" / "zz.txt"  # listed last: files of a folder come before its subfolders
    last.write_text("The harbour crane was built in 1931.\n", encoding="utf-8")
    update_index(fixture_corpus, index_dir, KeywordEmbedder())
    after = load_index(index_dir)
    assert after.manifest.ann == "hnsw" and len(built) == 1  # the graph was extended, not rebuilt
    assert (
        after.dense.ntotal == len(after.chunks) == len(first.chunks) + 1 and after.chunks[-1].doc_id == "nested/zz.txt"
    )
    crane = after.dense.reconstruct(len(after.chunks) - 1)
    assert next(iter(after.dense_search(crane, 1))) == len(after.chunks) - 1
    (fixture_corpus / "a.txt").write_text("A first file, sorted before the others.\n", encoding="utf-8")
    update_index(fixture_corpus, index_dir, KeywordEmbedder())
    assert len(built) == 2 and load_index(index_dir).chunks[0].doc_id == "a.txt"  # rows moved: rebuilt


def test_the_saved_bm25_scores_are_bm25s_own_bit_for_bit(built_index: Path):
    import random

    import bm25s

    from citeqa.index.backends import SavedBM25

    folder = current_generation(built_index)
    assert folder is not None
    ours, theirs = SavedBM25(folder / "bm25"), bm25s.BM25.load(str(folder / "bm25"), load_corpus=False)
    terms = len(ours.scores["indptr"]) - 1
    rng = random.Random(0)
    queries = [[t] for t in range(terms)] + [
        [rng.randrange(terms) for _ in range(rng.randint(1, 12))] for _ in range(200)
    ]
    for ids in queries:
        got, want = ours.get_scores_from_ids(ids), theirs.get_scores_from_ids(ids)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), ids
    assert ours.vocab_dict == theirs.vocab_dict
    with pytest.raises(ValueError):
        ours.get_scores_from_ids([terms])


def test_searching_an_index_imports_neither_bm25s_nor_scipy(built_index: Path):
    import subprocess
    import sys

    from tests.paths import REPO

    script = (
        "import sys\n"
        "from pathlib import Path\nfrom citeqa.index.store import load_index\n"
        "from citeqa.text.analysis import query_terms\n"
        f"data = load_index(Path({str(built_index)!r}))\n"
        "assert data.lexical_search(query_terms('¿Dónde está el faro?', ['es']), 3)\n"
        "print(sorted(m for m in ('bm25s', 'scipy', 'tqdm') if m in sys.modules))\n"
    )
    env = {"PYTHONPATH": str(REPO / "src"), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"
