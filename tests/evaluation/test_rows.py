from pathlib import Path

import pytest

from citeqa.errors import QAFileError
from citeqa.evaluation.rows import collect_items, csv_records, item_id, jsonl_records, optional_text, read_text


def test_csv_rows_carry_their_first_line_and_the_header_is_checked():
    text = 'id,claim,verdict\n1,"two\nlines",supported\n\n2,short\n'
    assert list(csv_records(text, ("claim", "verdict"))) == [
        (2, {"id": "1", "claim": "two\nlines", "verdict": "supported"}),
        (5, "expected 3 fields, got 2"),
    ]
    assert list(csv_records("claim,claim,verdict\n", ("claim", "verdict"))) == [
        (1, "CSV header repeats column(s) claim")
    ]
    assert list(csv_records("question\n", ("question", "lang"))) == [(1, "CSV header lacks column(s) lang")]


def test_jsonl_problems_are_rows_too():
    rows = list(jsonl_records('{"id": 1}\n\n[1]\n{bad\n'))
    assert rows[0] == (1, {"id": 1}) and rows[1][0] == 3 and rows[1][1].startswith("expected a JSON object")
    assert rows[2][0] == 4 and rows[2][1].startswith("invalid JSON")


def test_every_problem_is_counted_and_the_first_few_named(tmp_path: Path):
    rows = [(n, "bad") for n in range(1, 6)] + [(6, {"id": "a"}), (7, {"id": "a"})]
    with pytest.raises(QAFileError) as caught:
        collect_items(tmp_path / "f.jsonl", rows, lambda r, n: r, "empty", lambda r: r["id"])
    message = str(caught.value)
    assert message.endswith("line 1: bad; line 2: bad; line 3: bad; and 3 more problems")
    with pytest.raises(QAFileError, match="holds nothing"):
        collect_items(tmp_path / "f.jsonl", [], lambda r, n: r, "holds nothing")


def test_ids_and_optional_fields():
    assert item_id(None, 7) == "line-7" and item_id(12, 1) == "12" and item_id(" a ", 1) == "a"
    for bad in (True, " ", 1.5):
        with pytest.raises(ValueError, match="id must be a non-empty string"):
            item_id(bad, 1)
    assert optional_text({"doc": "  "}, "doc") is None and optional_text({"doc": " x "}, "doc") == "x"
    with pytest.raises(ValueError, match="doc must be a string or null, got int"):
        optional_text({"doc": 3}, "doc")


def test_read_text_names_the_kind_of_file(tmp_path: Path):
    with pytest.raises(QAFileError, match="predictions file not found"):
        read_text(tmp_path / "missing.jsonl", "predictions file")
    with pytest.raises(QAFileError, match="not a file"):
        read_text(tmp_path, "QA file")
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbfquestion\n")
    assert read_text(tmp_path / "bom.csv", "QA file") == "question\n"
