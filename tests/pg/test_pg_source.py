"""What a publish reads of a generation folder, a batch at a time: the same passages, documents,
vectors, terms and spans as the loaded index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citeqa.index.backends import all_vectors, build_dense
from citeqa.index.store import IndexData, current_generation
from citeqa.pg.source import FolderSource, MemorySource, stored_vectors


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_stored_vectors_are_the_faiss_index_own(kind: str, tmp_path: Path):
    import faiss

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    faiss.write_index(build_dense(vectors, kind), str(tmp_path / "dense.faiss"))
    rows = np.asarray([0, 1, 7, 150, 299])
    assert np.array_equal(stored_vectors(tmp_path / "dense.faiss", 300, 16, rows), vectors[rows])
    assert stored_vectors(tmp_path / "dense.faiss", 300, 16, np.zeros(0, np.int64)).shape == (0, 16)


def test_a_folder_reads_as_the_loaded_index(corpus_index: tuple[Path, IndexData]):
    folder, data = corpus_index
    generation = current_generation(folder / "index")
    assert generation is not None
    source, memory = FolderSource(generation), MemorySource(data)
    assert source.passages == memory.passages == len(data.chunks)
    documents = [1, 3] if len(data.manifest.documents) > 3 else [0]
    rows = source.rows(documents)
    assert np.array_equal(rows, memory.rows(documents)) and len(rows) > 0
    assert list(source.chunks(rows)) == [data.chunks[r] for r in rows.tolist()] == list(memory.chunks(rows))
    assert np.array_equal(source.vectors(rows), all_vectors(data.dense)[rows])
    assert np.array_equal(memory.vectors(rows), all_vectors(data.dense)[rows])
    ids = [data.manifest.documents[n].doc_id for n in documents]
    assert sorted(d.doc_id for d in source.documents(ids)) == sorted(ids)
    assert {d.doc_id: d for d in source.documents(ids)} == {d: data.documents[d] for d in ids}
