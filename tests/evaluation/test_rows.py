import gc
import json
import tracemalloc
from pathlib import Path

import pytest

from citeqa.errors import QAFileError
from citeqa.evaluation.qa_file import load_qa
from citeqa.evaluation.rows import (
    collect_items,
    csv_records,
    item_id,
    jsonl_records,
    optional_text,
    read_text,
    text_lines,
)


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
        collect_items(tmp_path / "f.jsonl", rows, lambda r, n: r, "qa_none", lambda r: r["id"])
    message = str(caught.value)
    assert message.endswith("line 1: bad; line 2: bad; line 3: bad; and 3 more problems")
    with pytest.raises(QAFileError, match="f.jsonl: the QA file holds no questions"):
        collect_items(tmp_path / "f.jsonl", [], lambda r, n: r, "qa_none")


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
        read_text(tmp_path / "missing.jsonl", "predictions")
    with pytest.raises(QAFileError, match="not a file"):
        read_text(tmp_path, "qa")
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbfquestion\n")
    assert read_text(tmp_path / "bom.csv", "qa") == "question\n"


def _gold_file(path: Path, questions: int) -> int:
    """A JSONL QA file of ``questions`` questions (a character outside Latin-1 in each, so that a text
    read whole takes two bytes a character); its size in bytes."""
    lines = [
        json.dumps(
            {
                "id": f"q{n}",
                "question": f"¿Cuántos “parámetros” tiene el modelo {n}?",
                "answers": [f"{n} mil"],
                "lang": "es",
                "doc": "a.txt",
            },
            ensure_ascii=False,
        )
        for n in range(questions)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path.stat().st_size


def test_a_qa_file_is_read_one_line_at_a_time(tmp_path: Path):
    """Reading a 2.8 MB file takes its items' memory and little more, never the whole text
    (read whole, its text, its lines and its records took 4.7 times the file beside the items)."""
    path = tmp_path / "gold.jsonl"
    size = _gold_file(path, 20_000)
    tracemalloc.start()
    try:
        items = load_qa(path)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(items) == 20_000 and items[-1].question == "¿Cuántos “parámetros” tiene el modelo 19999?"
    assert peak - held < size  # read whole: 4.7 times the file


def test_the_fit_of_an_uploaded_gold_file_keeps_nothing_of_it(tmp_path: Path):
    """The Evaluate tab's fit of an upload reads every row, and holds none of them once it has answered."""
    from citeqa.app.web.evaluate.files import file_fit

    path = tmp_path / "gold.jsonl"
    size = _gold_file(path, 20_000)
    file_fit(path, "gold.jsonl", {"a.txt"})  # caches (the JSON decoder's, the regexes') warm
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fit = file_fit(path, "gold.jsonl", {"a.txt"})
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert fit is not None and (fit.questions, fit.gold_docs, fit.indexed) == (20_000, 1, 1)
    assert after - before < size / 100


def test_a_broken_file_keeps_its_first_problems_only(tmp_path: Path):
    path = tmp_path / "broken.jsonl"
    path.write_text("{bad\n" * 50_000, encoding="utf-8")
    with pytest.raises(QAFileError) as caught:
        load_qa(path)
    message = str(caught.value)
    assert message.endswith("; and 49997 more problems") and message.count("line ") == 3


def test_a_bad_byte_is_named_by_its_offset_in_the_file(tmp_path: Path):
    path = tmp_path / "qa.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"a": 1}\n' * 3 + b"\xff\n")
    with pytest.raises(QAFileError, match=r"not UTF-8 text \(bad byte at offset 27\)"):
        load_qa(path)
    path.write_bytes(b"\xef\xbb\xbf" + b'{"a": 1}\n' + "\u2028\r\n".encode())
    assert list(text_lines(path, "qa")) == ['{"a": 1}', "\u2028\r"]  # no BOM; split at "\n" only
