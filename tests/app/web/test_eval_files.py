"""Which shipped QA file fits the live index, said before a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.app.web.evaluate.files import (
    FileFit,
    best_fit,
    choice_label,
    fit_note,
    log_skipped,
    shipped_fits,
    shipped_path,
    shipped_qa_files,
)
from tests.paths import DATA

QA = DATA / "qa"


def test_fits_count_questions_and_indexed_gold_documents(data_dir: Path):
    docs = {"faro.txt", "mill.html", "nested/farol.md", "beacon.md"}
    fits = shipped_fits(data_dir / "qa", ["fixture_corpus.jsonl", "sample.jsonl", "missing.jsonl"], docs)
    assert [(f.name, f.questions, f.gold_docs, f.indexed) for f in fits] == [
        ("fixture_corpus.jsonl", 13, 4, 4),
        ("sample.jsonl", 4, 2, 0),
    ]
    assert best_fit(fits) == "fixture_corpus.jsonl" and choice_label(fits[0]) == "fixture_corpus.jsonl (13 questions)"
    assert fit_note(fits[0]).startswith("13 questions; all 4") and "none of their 2" in fit_note(fits[1])
    assert best_fit(fits[1:]) is None and shipped_fits(None, ["x"], docs) == []


def test_a_partial_fit_and_a_file_without_gold_documents_are_named():
    assert "only 1 of their 3 gold documents" in fit_note(FileFit("a.jsonl", 9, 3, 1))
    assert "names no gold documents" in fit_note(FileFit("b.jsonl", 2, 0, 0)) and fit_note(None) == ""
    assert best_fit([FileFit("a", 9, 3, 1), FileFit("b", 5, 2, 2)]) == "b"


def test_shipped_qa_files_are_the_qa_files_of_the_folder(tmp_path: Path):
    assert shipped_qa_files(QA) == ["fixture_corpus.jsonl", "sample.csv", "sample.jsonl"]
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "qa.jsonl").write_text('{"question": "q", "answers": []}\n', encoding="utf-8")
    (tmp_path / "claims.jsonl").write_text('{"claim": "c", "verdict": "supported"}\n', encoding="utf-8")
    (tmp_path / "squad.json").write_text('{"data": []}', encoding="utf-8")
    (tmp_path / ".hidden.jsonl").write_text('{"question": "q", "answers": []}\n', encoding="utf-8")
    (tmp_path / "bad.csv").write_bytes(b"\xff\xfe")
    assert shipped_qa_files(tmp_path) == ["sub/qa.jsonl"]
    assert shipped_qa_files(None) == [] and shipped_qa_files(tmp_path / "none") == []
    assert shipped_path(tmp_path, "sub/qa.jsonl") == tmp_path / "sub" / "qa.jsonl"
    for name in ("claims.jsonl", "../sample.jsonl", "/etc/passwd", "", None):
        with pytest.raises(Exception, match="not a QA file of the eval folder"):
            shipped_path(tmp_path, name)


def test_a_file_whose_first_line_cannot_be_parsed_is_skipped_with_its_reason(tmp_path: Path, capsys):
    """Issue [3/6] item 4: a QA line nested 100,000 deep raised RecursionError here: `citeqa serve` did not start."""
    (tmp_path / "qa.jsonl").write_text('{"question": "q", "answers": []}\n', encoding="utf-8")
    (tmp_path / "deep.jsonl").write_text('{"question": "q", "answers": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    (tmp_path / "huge-int.jsonl").write_text('{"question": "q", "answers": [], "id": ' + "1" * 5000 + "}\n")
    (tmp_path / "latin1.csv").write_bytes("año,question,answers\n".encode("latin-1"))
    skipped: list[tuple[str, str]] = []
    assert shipped_qa_files(tmp_path, skipped=lambda name, why: skipped.append((name, why))) == ["qa.jsonl"]
    assert skipped == [
        ("deep.jsonl", "invalid JSON (nested too deeply: more than 64 levels)"),
        ("huge-int.jsonl", "invalid JSON (number is infinity when parsed as double at column 40)"),
        ("latin1.csv", "not UTF-8 text (bad byte in its first line at offset 1)"),
    ]
    assert shipped_qa_files(tmp_path) == ["qa.jsonl"]  # quietly, on the page's later scans
    log_skipped(*skipped[0])
    log_skipped("odd\nname.jsonl", "why")
    assert capsys.readouterr().err == (
        "citeqa: eval folder: skipped deep.jsonl: invalid JSON (nested too deeply: more than 64 levels)\n"
        "citeqa: eval folder: skipped 'odd\\nname.jsonl': why\n"
    )
