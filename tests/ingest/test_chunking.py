from pathlib import Path

import pytest

from citeqa.errors import ConfigError
from citeqa.ingest.chunking import ChunkerSettings, chunk_document
from citeqa.ingest.documents import scan_corpus


@pytest.mark.parametrize("settings", [ChunkerSettings(), ChunkerSettings(300, 50), ChunkerSettings(120, 0)])
def test_offsets_reproduce_text_on_the_whole_corpus(repo: Path, settings: ChunkerSettings):
    scan = scan_corpus(repo / "corpus")
    assert len(scan.documents) == 4
    for doc in scan.documents:
        chunks = chunk_document(doc, settings)
        assert chunks
        for chunk in chunks:
            assert doc.text[chunk.start : chunk.end] == chunk.text
            assert len(chunk.text) <= settings.size
        starts = [c.start for c in chunks]
        assert starts == sorted(starts)


def test_chunks_cover_every_word(fixture_corpus: Path):
    doc = next(d for d in scan_corpus(fixture_corpus).documents if d.doc_id == "faro.txt")
    chunks = chunk_document(doc, ChunkerSettings(100, 0))
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(doc.text) if not ch.isspace())


def test_chunk_language_follows_text(repo: Path):
    scan = scan_corpus(repo / "corpus")
    for doc in scan.documents:
        langs = {c.lang for c in chunk_document(doc, ChunkerSettings())}
        assert langs == {doc.lang}


@pytest.mark.parametrize("size,overlap", [(10, 0), (100, 100), (100, -1)])
def test_bad_settings_are_refused(size: int, overlap: int):
    with pytest.raises(ConfigError):
        ChunkerSettings(size, overlap)
