"""The languages citeqa reads, derived from data: detection, stemming and stopwords per language,
the question's candidates, and what `citeqa index` says about them."""

import json
from pathlib import Path

import bm25s.stopwords
import pytest
import Stemmer

from citeqa.index.builder import language_counts
from citeqa.records import Chunk, Document
from citeqa.text import language
from citeqa.text.analysis import fold_accents, stem, stopwords, terms
from tests.paths import REPO

GERMAN = (
    "Der Rhein ist einer der längsten Flüsse Europas. Er entspringt in den Schweizer Alpen und mündet "
    "nach etwa 1230 Kilometern in die Nordsee."
)
UKRAINIAN = "Дніпро — найбільша річка України, третя за довжиною річка Європи після Волги та Дунаю."
POLISH = "Wisła jest najdłuższą rzeką w Polsce. Wypływa w Beskidzie Śląskim i uchodzi do Morza Bałtyckiego."


def test_the_old_six_head_the_detected_languages_and_many_more_follow():
    found = language.detected_languages()
    assert found[:6] == ("es", "pt", "en", "fr", "de", "it")
    assert {"ca", "nl", "pl", "uk", "zh", "ja"} <= set(found) and len(found) == len(set(found))


def test_supported_languages_are_the_detected_ones_with_a_stemmer():
    supported = language.supported_languages()
    assert {"es", "pt", "en", "fr", "de", "it", "ca", "nl", "pl", "ru", "sv"} <= set(supported)
    assert not {"uk", "zh", "ja", "ko"} & set(supported)
    assert set(supported) == {c for c in language.detected_languages() if language.stemmer_name(c)}


def test_every_language_named_in_the_data_exists_in_the_libraries():
    data = language.language_data()
    algorithms = set(Stemmer.algorithms())
    assert set(data["stemmers"].values()) <= algorithms
    assert all(hasattr(bm25s.stopwords, name) for name in data["stopwords"].values())
    assert set(data["aliases"].values()) <= set(data["model"]) and set(data["first"]) <= set(data["model"])


def test_documents_are_detected_among_every_language_not_guessed_as_english():
    assert language.detect(GERMAN).lang == "de"
    assert language.detect(POLISH).lang == "pl"
    assert language.detect(UKRAINIAN).lang == "uk"
    assert language.detect_lang("1234 5678", "de") == "de"


def test_a_question_is_read_among_the_interface_and_corpus_languages():
    interface = ("es", "pt", "en", "ca", "de", "fr", "it")
    assert language.question_candidates({"de"}, interface) == ("es", "pt", "en", "fr", "de", "it", "ca")
    assert language.question_candidates({"es"}, ("es", "pt", "en")) == ("es", "pt", "en")
    assert language.question_candidates({"uk", "xx"}, ("es", "en")) == ("es", "en", "uk")
    german = language.question_candidates({"de"}, interface)
    assert language.question_language("Wie lang ist der Rhein ungefähr?", (), german, "de", {"de"}) == "de"
    assert language.question_language("¿Cuánto mide el Rin?", (), german, "de", {"de"}) == "es"


def test_corpus_languages_are_the_documents_and_those_of_enough_passages():
    passages = ["de"] * 40 + ["la"] + ["fr"] * 3
    assert language.corpus_languages(["de", "de"], passages) == {"de", "fr"}  # fr 3/44 >= 5%, la 1/44 not
    assert language.corpus_languages(["es", "pt", "en"], ["es", "pt", "en", "it"]) == {"es", "pt", "en", "it"}
    assert language.corpus_languages([], []) == frozenset()


def test_each_supported_language_has_its_own_stemmer():
    assert stem(["häuser"], "de") == stem(["haus"], "de")
    assert stem(["rzekach"], "pl") == stem(["rzeki"], "pl")
    assert stem(["maisons"], "fr") == ["maison"]


def test_a_language_without_a_stemmer_keeps_its_words_whole():
    assert stem(["річки", "Європи"], "uk") == ["річки", "Європи"]
    assert stem(["running"], "uk") == ["running"]  # not stemmed as English
    assert terms("Дніпро річки", "uk") == [fold_accents("дніпро"), fold_accents("річки")]


def test_stopwords_are_the_shared_three_plus_the_language_own_list():
    assert "und" in stopwords("de") and "und" not in stopwords("es")
    assert "les" in stopwords("fr") and "och" in stopwords("sv")
    assert stopwords("pl") == stopwords("uk") == stopwords("xx")  # no list for them: the shared one
    assert {"aquesta", "amb", "perque"} <= stopwords("ca") and "aquesta" not in stopwords("es")  # citeqa ships it


def test_index_counts_documents_and_passages_per_language_and_marks_the_unstemmed():
    docs = [Document("a", "A", GERMAN, "de", "0"), Document("b", "B", UKRAINIAN, "uk", "1")]
    chunks = [Chunk.make("a", 0, 10, GERMAN[:10], "de"), Chunk.make("a", 10, 20, GERMAN[10:20], "de")]
    chunks.append(Chunk.make("b", 0, 10, UKRAINIAN[:10], "uk"))
    counts = language_counts(docs, chunks)
    assert [(c.lang, c.documents, c.passages, c.stemmed) for c in counts] == [("de", 1, 2, True), ("uk", 1, 1, False)]


def test_citeqa_index_reports_languages_and_warns_once_per_unstemmed_one(keyword_cli, tmp_path: Path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "rhein.txt").write_text(GERMAN * 3, encoding="utf-8")
    (corpus / "dnipro.txt").write_text(UKRAINIAN * 3, encoding="utf-8")
    (corpus / "dnipro2.txt").write_text(UKRAINIAN * 2, encoding="utf-8")
    assert keyword_cli(["index", "--corpus", str(corpus), "--index", str(tmp_path / "idx")]) == 0
    out = capsys.readouterr().out
    assert "languages: uk " in out and "(2 documents)" in out and "de " in out
    assert out.count("no stemmer for uk") == 1 and "no stemmer for de" not in out
    assert keyword_cli(["index", "--corpus", str(corpus), "--index", str(tmp_path / "idx")]) == 0
    again = capsys.readouterr().out
    assert "up to date" in again and "(2 documents)" in again  # unchanged documents are counted too


@pytest.mark.parametrize("path", ["eval/de/qa.jsonl", "eval/fr/qa.jsonl"])
def test_the_new_dev_sets_quote_their_documents(path: str):
    root = REPO
    rows = [json.loads(line) for line in (root / path).read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 30 and sum(1 for r in rows if not r["answers"]) >= 5
    for r in rows:
        if r["answers"]:
            text = (root / Path(path).parent / "corpus" / r["doc"]).read_text(encoding="utf-8")
            assert all(a in text for a in r["answers"]), r["id"]


def test_cli_ask_reads_a_german_question_as_german_and_speaks_german(keyword_cli, tmp_path: Path, capsys):
    root = REPO / "eval" / "de" / "corpus"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("zugspitze.md", "rhein.md"):
        (corpus / name).write_text((root / name).read_text(encoding="utf-8"), encoding="utf-8")
    index = str(tmp_path / "idx")
    assert keyword_cli(["index", "--corpus", str(corpus), "--index", index]) == 0
    assert "languages: de " in capsys.readouterr().out
    assert keyword_cli(["ask", "--index", index, "--json", "Wie hoch ist die Zugspitze?"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["language"] == "de" and record["citations"][0]["doc_id"] == "zugspitze.md"
    assert keyword_cli(["ask", "--index", index, "Wie hoch ist die Zugspitze?"]) == 0
    out = capsys.readouterr().out
    assert "Konfidenz" in out and "Sprache de" in out  # the terminal speaks the question's language


def test_fold_accents_removes_marks_and_leaves_ascii_as_is():
    assert fold_accents("Cómo ação Dnipró") == "Como acao Dnipro"
    assert fold_accents("e\u0301te") == "ete"  # already decomposed
    assert fold_accents("plain ASCII, 42!") == "plain ASCII, 42!"
