"""A user's JSON within bounds (issue [3/6] item 4): deep nesting, non-standard JSON and oversized files are
one-line refusals, in the parser, in ``citeqa eval`` (QA and claim files) and in the guess of a file's kind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from citeqa.errors import QAFileError
from citeqa.evaluation import file_kind, load_claims, load_predictions, load_qa, user_json
from citeqa.evaluation.rows import read_text
from citeqa.evaluation.user_json import MAX_DEPTH, MAX_FILE_BYTES, BadInput, depth, first_line, loads

DEEP = 100_000
GOOD_QA = '{"id": "q1", "question": "Q?", "answers": ["a"], "lang": "es"}'
GOOD_CLAIM = '{"id": "c1", "claim": "The mill was built in 1760.", "verdict": "supported"}'


def nested(levels: int, inner: str = "1") -> str:
    return "[" * levels + inner + "]" * levels


def _called_at(frames: int, text: str):
    """``loads(text)`` called from ``frames`` frames further down the stack."""
    return _called_at(frames - 1, text) if frames else loads(text)


@pytest.mark.parametrize(
    "text",
    [
        nested(DEEP),
        '{"a": ' * DEEP + "1" + "}" * DEEP,
        "[" * DEEP,  # never closed
        "[" * 1000,  # orjson alone says "failed to allocate memory" here
        nested(1024),  # within orjson's own limit: a value repr() and == cannot handle
        nested(MAX_DEPTH + 1),
    ],
    ids=["arrays", "objects", "unclosed", "unclosed-1000", "1024", "limit+1"],
)
def test_deep_json_is_one_line_refusal_wherever_it_is_parsed_from(text: str):
    for frames in (0, sys.getrecursionlimit() - 200):  # the stdlib's json gives up earlier the deeper its caller
        with pytest.raises(BadInput) as refused:
            _called_at(frames, text)
        assert str(refused.value) == f"invalid JSON (nested too deeply: more than {MAX_DEPTH} levels)"


def test_the_depth_limit_is_exact_and_measured_without_recursion():
    assert loads(nested(MAX_DEPTH)) == loads(nested(MAX_DEPTH))
    assert depth(1) == 0 and depth([]) == 1 and depth({"a": [{"b": []}]}) == 4
    value: list = []
    for _ in range(5000):  # deeper than Python's recursion limit
        value = [value]
    assert depth(value) == MAX_DEPTH + 1 and depth(value, limit=10_000) == 5001


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("NaN", "unexpected character"),
        ('{"a": Infinity}', "unexpected character"),
        ("1e400", "number is infinity"),
        ("1" * 5000, "number is infinity"),  # the stdlib raised ValueError (int digits limit), not JSONDecodeError
        ('"\\ud800"', "surrogate"),
        ('{"a": 1} {"b": 2}', "unexpected content after document"),
    ],
)
def test_only_standard_json_is_taken(text: str, reason: str):
    with pytest.raises(BadInput) as refused:
        loads(text)
    assert str(refused.value).startswith("invalid JSON (") and reason in str(refused.value)
    assert "\n" not in str(refused.value)


def test_an_error_names_its_line_and_column_or_only_its_column_in_a_jsonl_line():
    with pytest.raises(BadInput, match=r"^invalid JSON \(.* at line 2, column 6\)$"):
        loads('{"a":\n  1, x}')
    with pytest.raises(BadInput, match=r"^invalid JSON \(.* at column 10\)$"):
        loads('{"a": 1, x}', single_line=True)


def test_first_line_reads_only_the_head_of_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"\xef\xbb\xbf\n  \n" + GOOD_QA.encode() + b"\n" + b"\xff" * 10)
    assert first_line(path) == GOOD_QA
    path.write_bytes(b"\n\xff{}\n")
    with pytest.raises(BadInput, match="not UTF-8 text"):
        first_line(path)
    path.write_bytes(b"\n \n")
    with pytest.raises(BadInput, match="the file is empty"):
        first_line(path)
    monkeypatch.setattr(user_json, "PEEK_BYTES", 64)
    path.write_text("x" * 65 + "\n", encoding="utf-8")
    with pytest.raises(BadInput, match="its first line is longer than 64 bytes"):
        first_line(path)
    with pytest.raises(BadInput, match="cannot read the file"):
        first_line(tmp_path)


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path):
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written, and nothing must be read
    with pytest.raises(QAFileError) as refused:
        read_text(path, "qa")
    assert (
        str(refused.value)
        == f"{path}: the QA file is too large (257 MiB; the limit is 256 MiB): split it into smaller files"
    )
    for load in (load_qa, load_claims, load_predictions):
        with pytest.raises(QAFileError, match="too large"):
            load(path)


@pytest.mark.parametrize(
    ("good", "bad"),
    [
        (GOOD_QA, '{"question": "q", "answers": ' + nested(DEEP, "") + ', "lang": "es"}'),
        (GOOD_QA, nested(DEEP, "")),
        (GOOD_CLAIM, '{"claim": "c", "verdict": ' + nested(DEEP, "") + "}"),
        (GOOD_CLAIM, '{"claim": "c", "verdict": ' + nested(900, "") + "}"),  # repr() of the verdict recursed
    ],
    ids=["qa", "qa-array", "claims", "claims-900"],
)
@pytest.mark.parametrize("first", [True, False], ids=["first-line", "second-line"])
def test_eval_refuses_a_deeply_nested_line_in_one_line(keyword_cli, tmp_path: Path, capsys, good, bad, first):
    path = tmp_path / "nested.jsonl"
    path.write_text(f"{bad}\n{good}\n" if first else f"{good}\n{bad}\n", encoding="utf-8")
    assert file_kind(path) in ("qa", "claims")
    assert keyword_cli(["eval", str(path), "--index", str(tmp_path / "no-index")]) == 2
    err = capsys.readouterr().err
    line = 1 if first else 2
    assert err.startswith(f"citeqa: error: {path}: line {line}: invalid JSON (nested too deeply: more than {MAX_DEPTH}")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_verdict_or_id_from_the_file_is_shown_short(tmp_path: Path):
    path = tmp_path / "claims.jsonl"
    path.write_text('{"claim": "c", "verdict": "' + "x" * 10_000 + '"}\n', encoding="utf-8")
    message = str(pytest.raises(QAFileError, load_claims, path).value)
    assert len(message) < 250 + len(str(path)) and message.endswith("…")
