"""QA files: JSONL or CSV questions with gold answers, validated whole before a run."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from citeqa.errors import QAFileError

JSONL_SUFFIXES = (".jsonl", ".json")

CSV_SUFFIXES = (".csv",)

LIST_SEPARATOR = "|"

MAX_ERRORS_SHOWN = 3


@dataclass(frozen=True, slots=True)
class QAItem:
    """One evaluation question; ``answers == ()`` marks it unanswerable."""

    id: str
    question: str
    answers: tuple[str, ...]
    lang: str
    doc: str | None
    history: tuple[str, ...] = ()

    @property
    def answerable(self) -> bool:
        """Whether the corpus is expected to hold an answer."""
        return bool(self.answers)


class _BadRow(ValueError):
    """A row of a QA file is invalid; the message says why (no file or line)."""


def load_qa(path: Path) -> list[QAItem]:
    """Read and fully validate a QA file (JSONL or CSV) before returning any item.

    Raises :class:`QAFileError` naming the file and line of every problem found
    (the first few are listed), so a broken file never gives a partial evaluation.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in JSONL_SUFFIXES + CSV_SUFFIXES:
        raise QAFileError(f"{path}: unsupported QA file type {suffix or '(none)'!r}; use .jsonl, .json or .csv")
    text = _read_text(path)
    records = jsonl_records(text) if suffix in JSONL_SUFFIXES else _csv_records(text)
    return _build_items(path, records)


def _read_text(path: Path) -> str:
    """The file's text (UTF-8, BOM tolerated), or a QAFileError saying why not."""
    if not path.exists():
        raise QAFileError(f"{path}: QA file not found")
    if not path.is_file():
        raise QAFileError(f"{path}: not a file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise QAFileError(f"{path}: not UTF-8 text (bad byte at offset {exc.start})") from exc
    except OSError as exc:
        raise QAFileError(f"{path}: cannot read the file ({exc.strerror})") from exc
    if not text.strip():
        raise QAFileError(f"{path}: the QA file is empty")
    return text


T = TypeVar("T")


def _build_items(path: Path, records: Iterable[tuple[int, dict[str, Any] | str]]) -> list[QAItem]:
    """Validate parsed records into QA items; collect every problem, then raise once."""
    return collect_items(path, records, _item_from_record, "the QA file holds no questions")


def collect_items(
    path: Path,
    records: Iterable[tuple[int, dict[str, Any] | str]],
    make_item: Callable[[Mapping[str, Any], int], T],
    empty: str,
) -> list[T]:
    """Items made from parsed records (a string is a record's problem); every problem is collected,
    duplicate ids included, then one :class:`QAFileError` names the first few with their lines."""
    items: list[T] = []
    errors: list[tuple[int, str]] = []
    first_line: dict[str, int] = {}
    for lineno, record in records:
        try:
            if isinstance(record, str):
                raise _BadRow(record)
            item = make_item(record, lineno)
            if item.id in first_line:  # type: ignore[attr-defined]
                raise _BadRow(f"duplicate id {item.id!r} (first used on line {first_line[item.id]})")  # type: ignore[attr-defined]
        except (_BadRow, ValueError) as exc:
            errors.append((lineno, str(exc)))
            continue
        first_line[item.id] = lineno  # type: ignore[attr-defined]
        items.append(item)
    if errors:
        raise QAFileError(_errors_message(path, errors))
    if not items:
        raise QAFileError(f"{path}: {empty}")
    return items


def _errors_message(path: Path, errors: Sequence[tuple[int, str]]) -> str:
    """One short message: the first few problems with their line numbers."""
    shown = "; ".join(f"line {line}: {msg}" for line, msg in errors[:MAX_ERRORS_SHOWN])
    more = len(errors) - MAX_ERRORS_SHOWN
    suffix = f"; and {more} more problem{'s' if more > 1 else ''}" if more > 0 else ""
    return f"{path}: {shown}{suffix}"


def jsonl_records(text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, object or error message) for each non-blank JSONL line."""
    # split on "\n" only: str.splitlines would also split on U+2028 inside JSON strings
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        hint = " (a JSONL file holds one JSON object per line)" if line.lstrip()[:1] == "[" else ""
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield lineno, f"invalid JSON ({exc.msg} at column {exc.colno}){hint}"
            continue
        except RecursionError:  # [[[[... thousands deep: Python's parser gives up
            yield lineno, "invalid JSON (nested too deeply)"
            continue
        if not isinstance(record, dict):
            yield lineno, f"expected a JSON object, got {type(record).__name__}{hint}"
            continue
        yield lineno, record


def _csv_records(text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(first line number, record or error message) for each non-blank CSV row."""
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    try:
        while True:
            lineno = reader.line_num + 1
            row = next(reader, None)
            if row is None:
                return
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                header = [cell.strip().lower() for cell in row]
                problem = _header_problem(header)
                if problem:
                    yield lineno, problem
                    return
                continue
            yield lineno, _csv_record(header, row)
    except csv.Error as exc:
        yield reader.line_num, f"malformed CSV ({exc})"


def _header_problem(header: list[str]) -> str | None:
    """Why a CSV header cannot be used, or None when it is fine."""
    missing = [c for c in ("question", "answers", "lang") if c not in header]
    if missing:
        return f"CSV header lacks column(s) {', '.join(missing)}"
    duplicated = sorted({c for c in header if c and header.count(c) > 1})
    if duplicated:
        return f"CSV header repeats column(s) {', '.join(duplicated)}"
    return None


def _csv_record(header: list[str], row: list[str]) -> dict[str, Any] | str:
    """A CSV row as a JSONL-like record: ``|`` lists split, empty ``doc``/``id`` dropped."""
    if len(row) != len(header):
        return f"expected {len(header)} fields, got {len(row)}"
    record: dict[str, Any] = dict(zip(header, row))
    for key in ("answers", "history"):
        if key in record:
            cell = record[key].strip()
            record[key] = [p.strip() for p in cell.split(LIST_SEPARATOR)] if cell else []
    for key in ("doc", "id"):
        if key in record and not record[key].strip():
            del record[key]
    return record


def _item_from_record(record: Mapping[str, Any], lineno: int) -> QAItem:
    """Validate one record; raises _BadRow with a short reason."""
    return QAItem(
        id=_item_id(record.get("id"), lineno),
        question=_required_text(record, "question"),
        answers=_string_list(record, "answers", required=True),
        lang=_required_text(record, "lang").lower(),
        doc=_optional_text(record, "doc"),
        history=_string_list(record, "history", required=False),
    )


def _item_id(value: Any, lineno: int) -> str:
    """The item id: a string or integer, or ``line-N`` when absent."""
    if value is None or value == "":
        return f"line-{lineno}"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise _BadRow("id must be a non-empty string")
    return value.strip()


def _required_text(record: Mapping[str, Any], key: str) -> str:
    """A required, non-blank string field, stripped."""
    value = record.get(key)
    if value is None:
        raise _BadRow(f"missing {key}")
    if not isinstance(value, str):
        raise _BadRow(f"{key} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise _BadRow(f"empty {key}")
    return value.strip()


def _optional_text(record: Mapping[str, Any], key: str) -> str | None:
    """An optional string field; absent, null or blank means None."""
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _BadRow(f"{key} must be a string or null, got {type(value).__name__}")
    return value.strip() or None


def _string_list(record: Mapping[str, Any], key: str, *, required: bool) -> tuple[str, ...]:
    """A list of non-blank strings; ``answers`` must be present (``[]`` = unanswerable)."""
    if key not in record or record[key] is None:
        if required:
            raise _BadRow(f"missing {key} (use [] for an unanswerable question)")
        return ()
    value = record[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _BadRow(f"{key} must be a list of strings")
    for i, v in enumerate(value):
        if not v.strip():
            raise _BadRow(f"{key}[{i}] is empty")
    return tuple(v.strip() for v in value)
