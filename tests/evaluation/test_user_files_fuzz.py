"""Property-based tests of every parser of a user's evaluation file: QA, claim, SQuAD and predictions files,
and the guesses made from a file's first line (``file_kind``, the eval folder's scan).

Each generated file (junk, and files one mistake away from valid: a wrong type in one field, a cut-off
line, deep nesting, a BOM, CRLF ends, bytes that are not UTF-8, NaN) must either parse or be refused
with the project's own error (:class:`~citeqa.errors.CiteqaError`) in one line; any other exception
fails the test. The full runs (1,000 examples each) are marked ``slow``; the default suite runs a few.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeqa.app.web.evaluate.files import shipped_qa_files
from citeqa.errors import CiteqaError
from citeqa.evaluation import file_kind, load_claims, load_predictions, load_qa, load_squad


def _fuzz(examples: int, *, quick: bool) -> Callable:
    # tmp_path is shared by the examples of one test: each writes its file afresh
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=quick,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )


FULL = 1000
QUICK = 25

# --------------------------------------------------------------------------- values

TEXT = st.text(max_size=30)
WORDS = st.text(min_size=1, max_size=30).filter(str.strip)  # what a required text field must be
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | TEXT  # floats: NaN and infinities too
JSON_VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8
)
LANGS = st.sampled_from(["es", "pt", "en", "ES", "de"]) | WORDS
VERDICTS = st.sampled_from(["supported", "conflicting", "not_found", " Supported "])


def qa_record(i: int) -> st.SearchStrategy:
    return st.fixed_dictionaries(
        {"question": WORDS, "answers": st.lists(WORDS, max_size=3), "lang": LANGS},
        optional={"id": st.just(f"q{i}"), "doc": st.none() | WORDS, "history": st.lists(WORDS, max_size=2)},
    )


def claim_record(i: int) -> st.SearchStrategy:
    return st.fixed_dictionaries(
        {"claim": WORDS, "verdict": VERDICTS},
        optional={"id": st.just(i), "lang": LANGS, "doc": st.none() | WORDS, "evidence": st.none() | TEXT},
    )


def prediction_record(i: int) -> st.SearchStrategy:
    return st.fixed_dictionaries(
        {"id": st.just(f"q{i}"), "answerable": st.booleans(), "abstained": st.booleans()},
        optional={"hit1": st.booleans(), "rr": st.floats(0, 1), "answer": st.none() | TEXT, "f1": st.floats()},
    )


@st.composite
def _spoilt(draw: st.DrawFn, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` one mistake away: a field dropped, given a junk value, or an id repeated."""
    record = dict(record)
    field = draw(st.sampled_from([*record, "id", "extra"]))
    how = draw(st.sampled_from(["drop", "junk", "repeat"]))
    if how == "drop":
        record.pop(field, None)
    elif how == "junk":
        record[field] = draw(JSON_VALUES)
    else:
        record["id"] = "q0"
    return record


@st.composite
def _nested(draw: st.DrawFn) -> str:
    levels = draw(st.sampled_from([1, 64, 65, 990, 1024, 1025, 100_000]) | st.integers(0, 2000))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    return opener * levels + draw(st.sampled_from(["1", "[]", ""])) + closer * draw(st.integers(0, levels))


@st.composite
def _junk_line(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return json.dumps(draw(JSON_VALUES))
    if kind == 1:
        return draw(_nested())
    if kind == 2:
        return '{"question": "q", "answers": ' + draw(_nested()) + ', "lang": "es"}'
    return draw(st.text(max_size=40))


@st.composite
def _jsonl(draw: st.DrawFn, make: Callable[[int], st.SearchStrategy]) -> bytes:
    """A JSONL file: valid (blank lines, either line end), one mistake away from valid, or junk lines."""
    mode = draw(st.sampled_from(["valid", "valid", "mistake", "mistake", "junk"]))
    records = [draw(make(i)) for i in range(draw(st.integers(0 if mode == "junk" else 1, 4)))]
    lines = [json.dumps(r, ensure_ascii=draw(st.booleans())) for r in records]
    if mode == "mistake":
        at = draw(st.integers(0, len(lines)))
        how = draw(st.sampled_from(["field", "cut", "line", "nan"]))
        if how == "field" and records:
            lines[min(at, len(lines) - 1)] = json.dumps(draw(_spoilt(records[min(at, len(records) - 1)])))
        elif how == "cut" and lines:
            line = lines[min(at, len(lines) - 1)]
            lines[min(at, len(lines) - 1)] = line[: draw(st.integers(0, len(line) - 1))]
        elif how == "nan":
            lines.insert(at, json.dumps({**(records[0] if records else {}), "rr": float("nan")}))
        else:
            lines.insert(at, draw(_junk_line()))
    elif mode == "junk":
        lines += draw(st.lists(_junk_line(), max_size=4))
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "  ", "\t"])))
    return _encoded(draw, draw(st.sampled_from(["\n", "\r\n"])).join(lines), spoil=mode != "valid")


@st.composite
def _csv(draw: st.DrawFn, make: Callable[[int], st.SearchStrategy], columns: list[str]) -> bytes:
    """A CSV file of the records ``make`` gives (lists joined with ``|``), or one with a wrong header, a short
    row, a cut-off quote, or junk."""
    mode = draw(st.sampled_from(["valid", "valid", "mistake", "junk"]))
    records = [draw(make(i)) for i in range(draw(st.integers(1, 4)))]
    header = list(dict.fromkeys([*columns, *(k for r in records for k in r)]))
    rows = [[_cell(r.get(c)) for c in header] for r in records]
    if mode == "mistake":
        how = draw(st.sampled_from(["header", "short", "quote", "empty"]))
        if how == "header":
            header[draw(st.integers(0, len(header) - 1))] = draw(st.sampled_from([header[0], "", "x"]))
        elif how == "short":
            rows[0] = rows[0][:-1]
        elif how == "empty":
            rows[0][0] = ""
    elif mode == "junk":
        header = draw(st.lists(TEXT, max_size=4))
        rows = draw(st.lists(st.lists(TEXT, max_size=5), max_size=4))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    writer.writerow(header)
    writer.writerows(rows)
    text = out.getvalue()
    if mode == "mistake" and how == "quote":
        text += '"unclosed,'
    return _encoded(draw, text, spoil=mode != "valid")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "|".join(value)
    return str(value)


def _encoded(draw: st.DrawFn, text: str, *, spoil: bool) -> bytes:
    """UTF-8 with a BOM sometimes; when ``spoil``, sometimes with bytes that are not UTF-8 inserted."""
    data = text.encode("utf-8")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if spoil and draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    return data


def qa_files() -> st.SearchStrategy:
    return (
        st.tuples(st.sampled_from([".jsonl", ".json"]), _jsonl(qa_record))
        | st.tuples(st.just(".csv"), _csv(qa_record, ["question", "answers", "lang"]))
        | st.tuples(st.sampled_from([".txt", ""]), _jsonl(qa_record))
    )


def claim_files() -> st.SearchStrategy:
    return st.tuples(st.sampled_from([".jsonl", ".json"]), _jsonl(claim_record)) | st.tuples(
        st.just(".csv"), _csv(claim_record, ["claim", "verdict"])
    )


CONTEXTS = st.sampled_from(["The mill was built in 1760 by Thomas Hale.", "El faro de Punta Brava es de 1887."])


@st.composite
def _squad(draw: st.DrawFn) -> dict[str, Any]:
    """A valid SQuAD object: answers are spans of their context, ids unique."""
    ids = iter(range(1000))
    data = []
    for _ in range(draw(st.integers(1, 2))):
        paragraphs = []
        for _ in range(draw(st.integers(1, 2))):
            context = draw(CONTEXTS | WORDS)
            qas = []
            for _ in range(draw(st.integers(0, 3))):
                start = draw(st.integers(0, len(context) - 1))
                text = context[start : draw(st.integers(start + 1, len(context)))]
                impossible = draw(st.booleans()) or not text.strip()
                answers = [] if impossible else [{"text": text, "answer_start": start}]
                qa = {"id": f"q{next(ids)}", "question": draw(WORDS), "answers": answers}
                if draw(st.booleans()) or impossible:
                    qa["is_impossible"] = impossible
                qas.append(qa)
            paragraphs.append({"context": context, "qas": qas})
        data.append({"title": draw(TEXT), "paragraphs": paragraphs})
    return {"version": "v2.0", "data": data}


@st.composite
def _spoilt_squad(draw: st.DrawFn) -> Any:
    """A SQuAD object with one element replaced by a junk value, removed, or repeated."""
    squad = draw(_squad())
    path: list[Any] = []
    node: Any = squad
    while isinstance(node, (dict, list)) and node and draw(st.booleans()):
        key = draw(st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))))
        path.append(key)
        node = node[key]
    if not path:
        return draw(JSON_VALUES)
    parent = squad
    for key in path[:-1]:
        parent = parent[key]
    how = draw(st.sampled_from(["junk", "drop", "repeat"]))
    if how == "junk":
        parent[path[-1]] = draw(JSON_VALUES)
    elif how == "drop" or not isinstance(parent, list):
        del parent[path[-1]]
    else:
        parent.append(parent[path[-1]])
    return squad


@st.composite
def squad_files(draw: st.DrawFn) -> tuple[str, bytes]:
    kind = draw(st.integers(0, 6))
    if kind <= 1:
        text = json.dumps(draw(_squad()), indent=draw(st.none() | st.integers(0, 2)))
    elif kind <= 3:
        text = json.dumps(draw(_spoilt_squad()), indent=draw(st.none() | st.integers(0, 2)))
    elif kind == 4:
        text = json.dumps(draw(_squad()))
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif kind == 5:
        text = '{"version": "v2.0", "data": [' + draw(_nested()) + "]}"
    else:
        text = draw(st.text(max_size=60))
    return ".json", _encoded(draw, text, spoil=kind > 1)


@st.composite
def prediction_files(draw: st.DrawFn) -> tuple[str, bytes, bytes | None]:
    sidecar = draw(
        st.none()
        | st.builds(lambda v: json.dumps({"provenance": v}).encode(), JSON_VALUES)
        | st.builds(lambda n: n.encode(), _nested())
        | st.binary(max_size=20)
    )
    return ".jsonl", draw(_jsonl(prediction_record)), sidecar


# --------------------------------------------------------------------------- checks


def _parses_or_refuses_in_one_line(parse: Callable[[Path], Any], path: Path) -> None:
    try:
        parse(path)
    except CiteqaError as exc:
        message = str(exc)
        assert message and len(message.splitlines()) == 1, message


def _written(folder: Path, suffix: str, data: bytes) -> Path:
    for old in folder.iterdir():
        old.unlink()
    path = folder / f"file{suffix}"
    path.write_bytes(data)
    return path


def _check_kind_and_scan(path: Path) -> None:
    """The guesses from a file's first line never raise: a kind for ``citeqa eval``, the eval folder's offer."""
    assert file_kind(path) in ("qa", "claims", "squad")
    reasons: list[str] = []
    offered = shipped_qa_files(path.parent, skipped=lambda name, why: reasons.append(why))
    assert offered in ([], [path.name]) and all(len(r.splitlines()) == 1 for r in reasons)


def check_qa_file(folder: Path, file: tuple[str, bytes]) -> None:
    path = _written(folder, *file)
    _check_kind_and_scan(path)
    _parses_or_refuses_in_one_line(load_qa, path)


def check_claim_file(folder: Path, file: tuple[str, bytes]) -> None:
    path = _written(folder, *file)
    _check_kind_and_scan(path)
    _parses_or_refuses_in_one_line(load_claims, path)


def check_squad_file(folder: Path, file: tuple[str, bytes]) -> None:
    path = _written(folder, *file)
    _check_kind_and_scan(path)
    _parses_or_refuses_in_one_line(load_squad, path)


def check_prediction_file(folder: Path, file: tuple[str, bytes, bytes | None]) -> None:
    suffix, data, sidecar = file
    path = _written(folder, suffix, data)
    if sidecar is not None:
        (folder / "file.meta.json").write_bytes(sidecar)
    _parses_or_refuses_in_one_line(load_predictions, path)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "files").mkdir()
    return tmp_path / "files"


@pytest.mark.slow
@_fuzz(FULL, quick=False)
@given(file=qa_files())
def test_qa_files_parse_or_are_refused_in_one_line(folder: Path, file: tuple[str, bytes]) -> None:
    check_qa_file(folder, file)


@pytest.mark.slow
@_fuzz(FULL, quick=False)
@given(file=claim_files())
def test_claim_files_parse_or_are_refused_in_one_line(folder: Path, file: tuple[str, bytes]) -> None:
    check_claim_file(folder, file)


@pytest.mark.slow
@_fuzz(FULL, quick=False)
@given(file=squad_files())
def test_squad_files_parse_or_are_refused_in_one_line(folder: Path, file: tuple[str, bytes]) -> None:
    check_squad_file(folder, file)


@pytest.mark.slow
@_fuzz(FULL, quick=False)
@given(file=prediction_files())
def test_prediction_files_parse_or_are_refused_in_one_line(folder: Path, file: tuple[str, bytes, bytes | None]) -> None:
    check_prediction_file(folder, file)


@_fuzz(QUICK, quick=True)
@given(qa=qa_files(), claims=claim_files(), squad=squad_files(), predictions=prediction_files())
def test_a_few_files_of_each_kind_parse_or_are_refused_in_one_line(folder: Path, qa, claims, squad, predictions):
    """The default suite's short run of the four tests above (a fixed sample)."""
    check_qa_file(folder, qa)
    check_claim_file(folder, claims)
    check_squad_file(folder, squad)
    check_prediction_file(folder, predictions)
