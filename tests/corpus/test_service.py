"""The corpus service (citeqa.corpus.service): what the index holds, adding and removing documents with
the index kept in step, building before there is an index, and opening one; built here without an engine."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from citeqa.corpus.service import CorpusService, open_data
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.errors import ConfigError, UploadError
from citeqa.index.store import load_index


def service(index: Path, folder: bool = True) -> CorpusService:
    """A corpus service over the live generation of ``index`` (without ``folder``: as a PostgreSQL index has none)."""
    return CorpusService(load_index(index), KeywordEmbedder(), index if folder else None)


def test_queries_say_what_the_index_holds(shared_index: Path):
    held = service(shared_index)
    assert set(held.documents) == {"faro.txt", "nested/farol.md", "mill.html"}
    assert [e.doc_id for e in held.manifest.documents] == sorted(held.documents)
    assert held.passage_count == sum(len(e.chunk_ids) for e in held.manifest.documents) > 0
    assert held.document_langs() == {"es": 1, "pt": 1, "en": 1}
    assert held.corpus_langs == {"es", "pt", "en"}
    assert held.sample_passage("pt") in held.doc_text("nested/farol.md")
    with pytest.raises(StopIteration):
        held.sample_passage("fi")
    info = held.document_info("faro.txt")
    assert (info.doc_id, info.lang) == ("faro.txt", "es") and info.indexed_at
    with pytest.raises(KeyError):
        held.document_info("nowhere.txt")


def test_run_adds_a_file_into_a_new_generation(fixture_corpus: Path, built_index: Path, tmp_path: Path):
    held = service(built_index)
    upload = tmp_path / "uploads" / "pier.txt"
    upload.parent.mkdir()
    upload.write_text("The pier of Greyhill was built in 1921 and is 300 metres long.", encoding="utf-8")
    result = held.run([(upload, "pier.txt")], fixture_corpus)
    assert result.indexed and result.added == ["pier.txt"] and (fixture_corpus / "pier.txt").is_file()
    assert "pier.txt" in load_index(built_index).documents
    assert "pier.txt" not in held.documents  # the service reads the generation it was given


def test_run_refuses_a_file_of_no_supported_kind(fixture_corpus: Path, built_index: Path, tmp_path: Path):
    upload = tmp_path / "tool.exe"
    upload.write_bytes(b"MZ\x90\x00")
    result = service(built_index).run([(upload, "tool.exe")], fixture_corpus)
    assert not result.indexed and [name for name, _ in result.refused] == ["tool.exe"]
    assert not (fixture_corpus / "tool.exe").exists()


def test_live_reads_the_live_generation_anew(fixture_corpus: Path, built_index: Path, tmp_path: Path):
    held = service(built_index)
    upload = tmp_path / "bell.txt"
    upload.write_text("The bell of Greyhill was cast in 1851.", encoding="utf-8")
    assert held.run([(upload, "bell.txt")], fixture_corpus).indexed
    live = held.live()
    assert live is not None and "bell.txt" in live.documents and "bell.txt" not in held.documents
    assert service(built_index, folder=False).live() is None  # no folder and no backend to reopen
    held.close()  # a folder has no connections to close


def test_remove_drops_a_document_and_refuses_an_unknown_one(fixture_corpus: Path, built_index: Path):
    held = service(built_index)
    result = held.remove("mill.html", fixture_corpus)
    assert result.removed and not (fixture_corpus / "mill.html").exists()
    assert "mill.html" not in load_index(built_index).documents
    with pytest.raises(UploadError, match="not in the index"):
        service(built_index).remove("mill.html", fixture_corpus)


def test_settle_removals_restores_a_file_the_index_still_lists(fixture_corpus: Path, built_index: Path):
    (fixture_corpus / "faro.txt").rename(fixture_corpus / ".faro.txt.removing")  # a removal cut short
    assert service(built_index).settle_removals(fixture_corpus) == ["faro.txt"]
    assert (fixture_corpus / "faro.txt").is_file() and not (fixture_corpus / ".faro.txt.removing").exists()


def test_an_index_without_a_folder_changes_no_corpus(shared_index: Path, fixture_corpus: Path):
    fixed = service(shared_index, folder=False)
    assert service(shared_index).changeable and not fixed.changeable
    with pytest.raises(ConfigError, match="citeqa index --backend"):
        fixed.run([], fixture_corpus)
    with pytest.raises(ConfigError, match="citeqa index --backend"):
        fixed.remove("faro.txt", fixture_corpus)


def test_build_then_index_model(fixture_corpus: Path, tmp_path: Path):
    index = tmp_path / "built"
    assert CorpusService.index_model(index) is None
    report = CorpusService.build(fixture_corpus, index, KeywordEmbedder())
    assert len(report.documents) == 3 and not report.up_to_date
    assert CorpusService.index_model(index) == KeywordEmbedder().model_id
    assert CorpusService.build(fixture_corpus, index, KeywordEmbedder()).up_to_date


def test_open_data_reads_a_folder_and_refuses_a_backend_that_is_no_postgresql_url(shared_index: Path):
    assert set(open_data(shared_index).documents) == {"faro.txt", "nested/farol.md", "mill.html"}
    with pytest.raises(ConfigError, match="--backend expects postgresql://"):
        open_data(shared_index, "mysql://localhost/db")


def test_warm_up_loads_the_upload_path(shared_index: Path):
    service(shared_index).warm_up()
    assert {"citeqa.corpus.add", "citeqa.corpus.remove"} <= set(sys.modules)
