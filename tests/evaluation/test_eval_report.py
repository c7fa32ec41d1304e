"""What a run's report says besides the metrics: the header (QA file, index, model, reader weights, changed
settings), SQuAD v1.1's official figures beside citeqa's per-language ones, the notes under the table, and
"right" in the confidence buckets named as the sentence measure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeqa.evaluation import (
    QAItem,
    changed_settings,
    exact_match,
    header_lines,
    reliability,
    reliability_lines,
    render_table,
    report_record,
    run_header,
    score_question,
    squad_scores,
    summarize,
    table_notes,
    token_f1,
    write_report,
)
from citeqa.evaluation.matching import squad_exact_match, squad_f1, squad_normalize
from citeqa.evaluation.provenance import reader_record
from citeqa.reader.onnx_build import shipped_path
from citeqa.reader.reader import Reader
from citeqa.records import Answer, Citation, sha256_file

DOCS = {
    "en.txt": "The lighthouse was lit in 1887 by the harbour board.",
    "es.txt": "El faro se encendió el 6 de mayo de 1887.",
}


def _result(item_id: str, lang: str, doc: str, gold: str, short: str | None, confidence: float, abstained=False):
    text = DOCS[doc]
    citation = Citation(doc, doc, lang, 0, len(text), text, 1.0)
    answer = Answer("q?", lang, None if abstained else text, abstained, confidence, (citation,), short_answer=short)
    item = QAItem(item_id, "q?", (gold,), lang, doc)
    return score_question(item, answer, DOCS, {"en", "es"}, {"en.txt": "en", "es.txt": "es"})


def test_squad_official_normalisation_drops_only_the_english_articles() -> None:
    assert squad_normalize("The Eiffel Tower, in  Paris!") == "eiffel tower in paris"
    assert squad_normalize("Straße «Lisbóa»") == "straße «lisbóa»"  # accents and non-ASCII punctuation kept
    assert squad_exact_match("the 1887", "1887") and not squad_exact_match("el 6 de mayo", "6 de mayo")
    assert squad_f1("el 6 de mayo", "6 de mayo") == pytest.approx(2 * 0.75 / 1.75)  # P 3/4, R 1
    assert token_f1("el 6 de mayo", "6 de mayo", "es") == 1.0 and exact_match("el 6 de mayo", "6 de mayo", "es")
    assert squad_f1("", "") == 0.0  # no shared token, as the official v1.1 script scores it


def test_squad_scores_per_column_beside_citeqa_s() -> None:
    results = [
        _result("en-1", "en", "en.txt", "1887", "in 1887", 0.9),  # F1 2/3 either way
        _result("es-1", "es", "es.txt", "6 de mayo", "el 6 de mayo", 0.5),  # es articles: 1.0; SQuAD: 6/7
        _result("es-2", "es", "es.txt", "1887", None, 0.1, abstained=True),  # an abstention scores 0
    ]
    squad = squad_scores(results)
    metrics = summarize(results)
    assert list(squad) == ["overall", "es", "en"] == [name for name, _ in metrics.columns()]
    assert squad["en"].f1 == pytest.approx(2 / 3) == metrics.by_lang["en"].f1
    assert squad["es"].f1 == pytest.approx((6 / 7) / 2) and metrics.by_lang["es"].f1 == pytest.approx(0.5)
    assert squad["es"].exact_match == 0.0 and metrics.by_lang["es"].exact_match == 0.5
    assert squad["overall"].f1 == pytest.approx((2 / 3 + 6 / 7) / 3)
    table = render_table(metrics, squad)
    assert "SQuAD v1.1 token F1 (official)" in table and "SQuAD v1.1 exact match (official)" in table
    rows = table.splitlines()
    f1_row = next(i for i, row in enumerate(rows) if row.startswith("short answer token F1"))
    assert rows[f1_row + 2].startswith("SQuAD v1.1 token F1 (official)")
    assert rows[f1_row + 2].split()[-3:] == ["0.508", "0.429", "0.667"]
    assert "SQuAD" not in render_table(metrics)


def test_the_notes_say_how_f1_is_normalised_and_the_buckets_what_right_is() -> None:
    plain, squad = table_notes(False), table_notes(True)
    assert len(plain) == 1 and "articles of each answer's own language" in plain[0] and "MLQA" in plain[0]
    assert "articles.json" in plain[0] and len(squad) == 2 and "a, an and the" in squad[1]
    results = [_result("en-1", "en", "en.txt", "1887", "1887", 0.9)]
    lines = reliability_lines(reliability(results))
    assert "answer sentence holds a gold answer" in lines[0] and "answer accuracy (sentence)" in lines[0]
    assert lines[1:] == [
        "confidence 0.0-0.3: 0 questions, right (sentence) n/a",
        "confidence 0.3-0.8: 0 questions, right (sentence) n/a",
        "confidence 0.8-1.0: 1 question, right (sentence) 1.00",
    ]
    for lang in ("es", "pt", "de", "fr", "it", "ca"):  # the same lines in every catalogue language
        assert reliability_lines(reliability(results), lang)[0] != lines[0]
        assert table_notes(True, lang)[0] != plain[0]


def test_the_reader_is_named_by_the_sha256_of_its_weights_file(tmp_path: Path) -> None:
    shipped = reader_record(Reader())
    assert shipped == {"weights": "e5-small-reader.safetensors", "weights_sha256": sha256_file(shipped_path())}
    other = tmp_path / "fork.safetensors"
    other.write_bytes(b"not the shipped weights")
    assert reader_record(Reader(delta=other)) == {"weights": "fork.safetensors", "weights_sha256": sha256_file(other)}
    assert reader_record(None) is None


def test_the_header_names_what_produced_the_run(tmp_path: Path) -> None:
    provenance = {
        "model": "intfloat/multilingual-e5-small",
        "qa_file": {"name": "qa.jsonl", "sha256": "ab" * 32},
        "reader": {"weights": "e5-small-reader.safetensors", "weights_sha256": "cd" * 32},
    }
    header = run_header(provenance, Path("eval/qa.jsonl"), "index", {"-k": 5, "pool": 20})
    assert header_lines(header) == [
        f"QA file: eval/qa.jsonl (sha256 {'ab' * 32})",
        "index: index · model: intfloat/multilingual-e5-small",
        f"reader: e5-small-reader.safetensors (sha256 {'cd' * 32})",
        "settings that differ from the defaults: -k 5, pool=20",
    ]
    off = run_header({**provenance, "reader": None}, Path("qa.csv"), "idx", {})
    assert header_lines(off)[2:] == ["reader: off", "settings: the defaults"]
    assert header_lines(off, "es")[2:] == ["lector: desactivado", "ajustes: los predeterminados"]
    results = [_result("en-1", "en", "en.txt", "1887", "1887", 0.9)]
    written = write_report(results, summarize(results), tmp_path, header=header, squad=squad_scores(results))[0]
    report = json.loads(written.read_text(encoding="utf-8"))
    assert report["header"] == {**header.to_dict(), "changed": {"-k": 5, "pool": 20}}
    assert report["squad_v1"]["en"] == {"exact_match": 1.0, "f1": 1.0} and report["notes"] == table_notes(True)
    assert report["reliability"][2] == {"low": 0.8, "high": 1.0, "n": 1, "right": 1.0}
    assert report_record(summarize(results))["squad_v1"] is None


def test_changed_settings_lists_only_what_differs() -> None:
    defaults = {"pool": 10, "retrieval": {"fusion": "weighted", "dense_weight": 0.65}, "claims": {"cover": 0.5}}
    current = {"pool": 10, "retrieval": {"fusion": "weighted", "dense_weight": 0.5}, "claims": {"cover": 0.5}}
    assert changed_settings(current, defaults) == {"retrieval.dense_weight": 0.5}
    assert changed_settings(defaults, defaults) == {}
    assert changed_settings({"pool": 0}, defaults) == {"pool": 0}  # 0 is a value, not "unset"
