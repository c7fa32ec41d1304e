from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.errors import QuestionError
from citeqa.qa.questions import clean_question, is_follow_up
from citeqa.qa.scoring import choose_span


@pytest.fixture
def engine(built_index: Path) -> Engine:
    return Engine.open(built_index, embedder=KeywordEmbedder())


def assert_exact(engine: Engine, answer) -> None:
    for c in answer.citations:
        assert engine.doc_text(c.doc_id)[c.start : c.end] == c.text
    if not answer.abstained:
        assert answer.answer in answer.citations[0].text
        assert len(answer.answer) < len(answer.citations[0].text)
        place, first = answer.answer_span, answer.citations[0]
        assert engine.doc_text(place.doc_id)[place.start : place.end] == answer.answer
        assert place.doc_id == first.doc_id and first.start <= place.start and place.end <= first.end
        if answer.short_answer is not None:
            short = answer.short_answer_span
            assert engine.doc_text(short.doc_id)[short.start : short.end] == answer.short_answer
            assert place.start <= short.start and short.end <= place.end
    else:
        assert answer.answer_span is None and answer.short_answer_span is None


@pytest.mark.parametrize(
    "question,lang,doc,fact",
    [
        ("¿En qué año se construyó el faro de Punta Brava?", "es", "faro.txt", "1887"),
        ("Quando foi inaugurado o farol da Ilha Clara?", "pt", "nested/farol.md", "1912"),
        ("When was the windmill of Greyhill restored?", "en", "mill.html", "2004"),
    ],
)
def test_answers_in_each_language_with_exact_citations(engine: Engine, question, lang, doc, fact):
    answer = engine.ask(question)
    assert answer.language == lang
    assert answer.citations[0].doc_id == doc and answer.citations[0].lang == lang
    assert_exact(engine, answer)
    assert not answer.abstained and fact in answer.answer
    assert 0.0 <= answer.confidence <= 1.0 and answer.latency_ms > 0


def test_record_has_the_documented_fields(engine: Engine):
    record = engine.ask("How many people climb the windmill every year?", k=2).to_dict()
    assert set(record) == {
        "question",
        "language",
        "answer",
        "abstained",
        "confidence",
        "citations",
        "latency_ms",
        "highlight",
        "short_answer",
        "answer_span",
        "short_answer_span",
        "band",
        "also_in",
    }
    assert len(record["citations"]) == 2
    if not record["abstained"]:  # the band the confidence falls in, with what it means
        assert set(record["band"]) == {"name", "precision", "support"}
    if record["short_answer"] is not None:  # the short answer is the highlighted phrase of the sentence
        h = record["highlight"]
        assert record["answer"][h["start"] : h["end"]] == record["short_answer"]


def test_short_answer_is_the_fact_the_question_asks_for(engine: Engine):
    answer = engine.ask("¿Cuánto cuesta la entrada al museo del faro?")
    assert answer.short_answer == "6 euros" and answer.short_answer in answer.answer
    assert engine.ask("¿Por qué se construyó el faro de Punta Brava?").short_answer is None


def test_follow_up_uses_history_only_when_needed(engine: Engine):
    assert engine.pipeline.retrieval_query("¿Y cuánto cuesta la entrada?", ["¿Qué es hoy el faro?"]).startswith(
        "¿Qué es"
    )
    assert (
        engine.pipeline.retrieval_query("When was the windmill built?", ["Who was João Pereira?"])
        == "When was the windmill built?"
    )
    assert engine.pipeline.retrieval_query("When was the windmill built?", []) == "When was the windmill built?"


def test_follow_up_detection():
    assert is_follow_up("¿Y cuántos chips usó?", 3)
    assert is_follow_up("E quanto custa?", 2)
    assert is_follow_up("And its height?", 1)
    assert not is_follow_up("How tall is the lighthouse of Punta Brava?", 4)


@pytest.mark.parametrize("bad", ["", "   \n\t ", "\x00\x01", None, 42, "x" * 5000])
def test_bad_questions_raise_question_error(engine: Engine, bad):
    with pytest.raises(QuestionError):
        engine.ask(bad)


def test_clean_question_strips_controls_and_surrogates():
    assert clean_question("  hola\x00 mundo\ud800 ") == "hola mundo"


def test_k_limits_citations(engine: Engine):
    assert len(engine.ask("faro", k=1).citations) == 1
    with pytest.raises(QuestionError):
        engine.ask("faro", k=0)


def test_a_likely_same_language_span_wins_over_a_likelier_foreign_one():
    import numpy as np

    probs = np.array([0.95, 0.6, 0.3])
    scores = np.log(probs / (1 - probs))
    langs = ["pt", "es", "en"]

    def chosen(floor: float, prefer: str) -> int | None:
        return choose_span(scores, probs, langs, prefer, margin=0.05, floor=floor)

    assert chosen(0.5, "es") == 1  # 0.6 >= floor: the question's language answers
    assert chosen(0.7, "es") == 0  # below the floor and far below the best: the foreign span
    assert chosen(0.5, "en") == 0  # 0.3: the English span does not answer
    assert chosen(0.5, "pt") == 0
    assert choose_span(np.zeros(0), np.zeros(0), [], "es", 0.05, 0.5) is None


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
