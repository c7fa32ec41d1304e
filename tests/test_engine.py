"""The engine (citeqa.engine): the facade the CLI and the web app call. Its components (the answerer,
the claim checker, the corpus service) have their own tests beside their packages; these test what
the facade adds: opening an index, sharing the index, models and work queue, and handing back the
engine over a new generation."""

from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine


@pytest.fixture
def engine(shared_index: Path) -> Engine:
    return Engine.open(shared_index, embedder=KeywordEmbedder())


def test_the_components_share_the_engines_index_models_and_work_queue(engine: Engine):
    answerer, checker, corpus = engine.answerer, engine.checker, engine.corpus_service
    assert answerer.data is engine._data and corpus.documents is engine.documents
    assert answerer.pipeline is engine.pipeline and answerer.pipeline.encode == engine.encode_queries
    assert checker.answerer is answerer and answerer.work is engine.work and answerer.reader is engine.reader
    assert corpus.embedder is engine.embedder and corpus.index_dir == engine.index_dir
    assert answerer.question_timeout_s == engine.question_timeout_s and answerer.settings is engine.settings


def test_ask_and_check_answer_through_the_components_with_exact_citations(engine: Engine):
    answer = engine.ask("¿En qué año se construyó el faro de Punta Brava?")
    assert not answer.abstained and "1887" in answer.answer and answer.answer_span.doc_id == "faro.txt"
    place = answer.answer_span
    assert engine.doc_text(place.doc_id)[place.start : place.end] == answer.answer
    assert engine.trace("¿En qué año se construyó el faro de Punta Brava?").answer.answer == answer.answer
    check = engine.check("El faro de Punta Brava se construyó en 1887.", k=2)
    assert check.verdict == "supported" and engine.claim_thresholds is engine.checker.claim_thresholds


def test_document_queries_say_what_the_index_holds(engine: Engine):
    """The app reads the index through these, never through the store's records."""
    assert set(engine.documents) == {"faro.txt", "nested/farol.md", "mill.html"}
    assert [e.doc_id for e in engine.manifest.documents] == sorted(engine.documents)
    assert engine.passage_count == sum(len(e.chunk_ids) for e in engine.manifest.documents) > 0
    assert engine.document_langs() == {"es": 1, "pt": 1, "en": 1}
    assert engine.corpus_langs == {"es", "pt", "en"}
    sample = engine.sample_passage("pt")
    assert sample in engine.doc_text("nested/farol.md")
    with pytest.raises(StopIteration):
        engine.sample_passage("fi")


def test_build_and_index_model(fixture_corpus: Path, tmp_path: Path):
    """``citeqa index`` builds through the engine before one can be opened, and refreshes with the index's model."""
    index = tmp_path / "built"
    assert Engine.index_model(index) is None
    report = Engine.build(fixture_corpus, index, KeywordEmbedder())
    assert len(report.documents) == 3 and not report.up_to_date
    assert Engine.index_model(index) == KeywordEmbedder().model_id
    assert Engine.build(fixture_corpus, index, KeywordEmbedder()).up_to_date


def test_add_indexes_a_file_and_hands_back_the_engine_over_the_new_generation(
    fixture_corpus: Path, built_index: Path, tmp_path: Path
):
    engine = Engine.open(built_index, embedder=KeywordEmbedder())
    upload = tmp_path / "uploads" / "pier.txt"
    upload.parent.mkdir()
    upload.write_text("The pier of Greyhill was built in 1921 and is 300 metres long.", encoding="utf-8")
    result, live = engine.add([(upload, "pier.txt")], fixture_corpus)
    assert result.indexed and result.added == ["pier.txt"] and (fixture_corpus / "pier.txt").is_file()
    assert live is not engine and "pier.txt" in live.documents
    assert "pier.txt" not in engine.documents  # the old engine keeps answering from its generation
    assert live.index_dir == engine.index_dir and live.work is engine.work and live.embedder is engine.embedder


def test_a_refused_add_keeps_the_engine(fixture_corpus: Path, built_index: Path, tmp_path: Path):
    engine = Engine.open(built_index, embedder=KeywordEmbedder())
    upload = tmp_path / "tool.exe"
    upload.write_bytes(b"MZ\x90\x00")
    result, live = engine.add([(upload, "tool.exe")], fixture_corpus)
    assert not result.indexed and [name for name, _ in result.refused] == ["tool.exe"]
    assert live is engine and not (fixture_corpus / "tool.exe").exists()


def test_remove_drops_the_document_and_refuses_an_unknown_one(fixture_corpus: Path, built_index: Path):
    from citeqa.errors import UploadError

    engine = Engine.open(built_index, embedder=KeywordEmbedder())
    result, live = engine.remove("mill.html", fixture_corpus)
    assert result.removed and str(result.message) == "removed mill.html (2 documents, 2 passages left)"
    assert live is not engine and "mill.html" not in live.documents and "mill.html" in engine.documents
    assert not (fixture_corpus / "mill.html").exists()
    with pytest.raises(UploadError, match="not in the index"):
        live.remove("mill.html", fixture_corpus)


def test_settle_removals_restores_a_file_the_index_still_lists(fixture_corpus: Path, built_index: Path):
    engine = Engine.open(built_index, embedder=KeywordEmbedder())
    (fixture_corpus / "faro.txt").rename(fixture_corpus / ".faro.txt.removing")  # a removal cut short
    assert engine.settle_removals(fixture_corpus) == ["faro.txt"]
    assert (fixture_corpus / "faro.txt").is_file() and not (fixture_corpus / ".faro.txt.removing").exists()


def test_an_engine_without_an_index_folder_changes_no_corpus(engine: Engine, fixture_corpus: Path):
    from citeqa.errors import ConfigError

    fixed = Engine(engine._data, engine.embedder, engine.settings)  # as a PostgreSQL index opens: no folder
    assert engine.corpus_changeable and not fixed.corpus_changeable
    with pytest.raises(ConfigError, match="citeqa index --backend"):
        fixed.add([], fixture_corpus)
    with pytest.raises(ConfigError):
        fixed.remove("faro.txt", fixture_corpus)


def test_adjusted_keeps_the_index_and_changes_only_what_is_given(engine: Engine):
    from dataclasses import replace

    settings = replace(engine.settings, pool=engine.settings.pool + 1)
    other = engine.adjusted(settings)
    assert other.settings == settings and other.documents is engine.documents and other.reader is engine.reader
    assert engine.adjusted().settings == engine.settings


def test_engines_made_from_one_keep_its_models_and_claim_thresholds(engine: Engine):
    again = engine.reload()
    assert again is not engine and again.documents == engine.documents
    assert again.embedder is engine.embedder and again.work is engine.work and again.reader is engine.reader
    assert again.claim_thresholds is engine.claim_thresholds and again.settings == engine.settings
    plain = engine.without_reader()
    assert plain.reader is None and plain.pipeline.reader is None and plain.work is not engine.work
    assert plain.claim_thresholds is engine.claim_thresholds and plain.documents is engine.documents


def test_answering_imports_neither_the_upload_path_nor_bm25s(built_index: Path):
    """A cold ``citeqa ask`` pays for what answering uses: adding documents (parsers, the parse
    budget) and bm25s (scipy) load only when a corpus changes or an index is built."""
    import subprocess
    import sys

    from tests.paths import REPO

    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from citeqa.embedding.keyword import KeywordEmbedder\n"
        "from citeqa.engine import Engine\n"
        f"engine = Engine.open(Path({str(built_index)!r}), embedder=KeywordEmbedder(), reader='off')\n"
        "engine.ask('¿Cuánto mide el faro?')\n"
        "print(sorted(m for m in ('bm25s', 'scipy', 'citeqa.corpus.add', 'citeqa.ingest.readers') if m in sys.modules))\n"
    )
    env = {"PYTHONPATH": f"{REPO / 'src'}:{REPO}", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
