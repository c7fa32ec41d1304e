"""Reading the row files of an evaluation (QA, claim and predictions files): one reader of each kind.

A file is read whole (:func:`read_text`), split into ``(line number, record or problem)``
pairs (:func:`jsonl_records`, :func:`csv_records`), and validated whole by
:func:`collect_items`, which raises one :class:`~citeqa.errors.QAFileError` naming the
first few problems with their lines, so a broken file never gives a partial run.
"""

from __future__ import annotations

import csv
import io
import math
import reprlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from citeqa.errors import QAFileError
from citeqa.evaluation.user_json import MAX_FILE_BYTES, BadInput, loads

JSONL_SUFFIXES = (".jsonl", ".json")
CSV_SUFFIXES = (".csv",)
MAX_ERRORS_SHOWN = 3

T = TypeVar("T")
#: A parsed row: its first line number, and the record or the reason it is not one.
Row = tuple[int, dict[str, Any] | str]


def load_rows(
    path: Path,
    what: str,
    required: Sequence[str],
    make_item: Callable[[Mapping[str, Any], int], T],
    empty: str,
    shape: Callable[[dict[str, Any]], dict[str, Any]] = lambda record: record,
) -> list[T]:
    """The items of a JSONL or CSV row file (``what``: its kind, in messages), validated whole.

    A CSV file's header must hold the ``required`` columns; ``shape`` turns a CSV row into the
    record its JSONL line would be. ``make_item`` and ``empty`` are those of :func:`collect_items`.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in JSONL_SUFFIXES + CSV_SUFFIXES:
        raise QAFileError(f"{path}: unsupported {what} type {suffix or '(none)'!r}; use .jsonl, .json or .csv")
    text = read_text(path, what)
    if not text.strip():
        raise QAFileError(f"{path}: the {what} is empty")
    if suffix in JSONL_SUFFIXES:
        records: Iterable[Row] = jsonl_records(text)
    else:
        records = ((n, r if isinstance(r, str) else shape(r)) for n, r in csv_records(text, required))
    return collect_items(path, records, make_item, empty)


def read_text(path: Path, what: str) -> str:
    """The file's text (UTF-8, BOM tolerated), or a QAFileError saying why not; ``what`` names the file kind.

    A file over :data:`~citeqa.evaluation.user_json.MAX_FILE_BYTES` is refused before it is read.
    """
    if not path.exists():
        raise QAFileError(f"{path}: {what} not found")
    if not path.is_file():
        raise QAFileError(f"{path}: not a file")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise QAFileError(f"{path}: cannot read the file ({exc.strerror})") from exc
    if size > MAX_FILE_BYTES:
        raise QAFileError(
            f"{path}: the {what} is too large ({math.ceil(size / 2**20):,} MiB; "
            f"the limit is {MAX_FILE_BYTES // 2**20} MiB): split it into smaller files"
        )
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise QAFileError(f"{path}: not UTF-8 text (bad byte at offset {exc.start})") from exc
    except OSError as exc:
        raise QAFileError(f"{path}: cannot read the file ({exc.strerror})") from exc


def jsonl_records(text: str) -> Iterator[Row]:
    """(line number, object or error message) for each non-blank JSONL line."""
    # split on "\n" only: str.splitlines would also split on U+2028 inside JSON strings
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        hint = " (a JSONL file holds one JSON object per line)" if line.lstrip()[:1] == "[" else ""
        try:
            record = loads(line, single_line=True)
        except BadInput as exc:
            yield lineno, f"{exc}{hint}"
            continue
        if not isinstance(record, dict):
            yield lineno, f"expected a JSON object, got {type(record).__name__}{hint}"
            continue
        yield lineno, record


def csv_records(text: str, required: Sequence[str]) -> Iterator[Row]:
    """(first line number, ``{column: cell}`` or error message) for each non-blank CSV row.

    Column names are the header's, stripped and lower-cased; a header without every
    ``required`` column, or repeating one, is the only row reported.
    """
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
                problem = _header_problem(header, required)
                if problem:
                    yield lineno, problem
                    return
            elif len(row) != len(header):
                yield lineno, f"expected {len(header)} fields, got {len(row)}"
            else:
                yield lineno, dict(zip(header, row))
    except csv.Error as exc:
        yield reader.line_num, f"malformed CSV ({exc})"


def _header_problem(header: list[str], required: Sequence[str]) -> str | None:
    """Why a CSV header cannot be used, or None when it is fine."""
    missing = [c for c in required if c not in header]
    if missing:
        return f"CSV header lacks column(s) {', '.join(missing)}"
    duplicated = sorted({c for c in header if c and header.count(c) > 1})
    if duplicated:
        names = (c if c.isprintable() and len(c) <= 40 else shown(c, 40) for c in duplicated)
        return f"CSV header repeats column(s) {', '.join(names)}"
    return None


def collect_items(
    path: Path,
    records: Iterable[Row],
    make_item: Callable[[Mapping[str, Any], int], T],
    empty: str,
    id_of: Callable[[T], str] = lambda item: item.id,  # type: ignore[attr-defined]
) -> list[T]:
    """Items made from parsed records (a string is a record's problem; ``make_item`` raises ValueError
    for a bad one); every problem is collected, duplicate ids included, then one QAFileError names
    the first few with their lines. ``empty`` is the message for a file without items."""
    items: list[T] = []
    errors: list[tuple[int, str]] = []
    first_line: dict[str, int] = {}
    for lineno, record in records:
        try:
            if isinstance(record, str):
                raise ValueError(record)
            item = make_item(record, lineno)
            if id_of(item) in first_line:
                raise ValueError(f"duplicate id {shown(id_of(item))} (first used on line {first_line[id_of(item)]})")
        except ValueError as exc:
            errors.append((lineno, str(exc)))
            continue
        first_line[id_of(item)] = lineno
        items.append(item)
    if errors:
        raise QAFileError(errors_message(path, [f"line {line}: {msg}" for line, msg in errors]))
    if not items:
        raise QAFileError(f"{path}: {empty}")
    return items


def errors_message(path: Path, errors: Sequence[str]) -> str:
    """One short message: the first few problems, and how many more there are."""
    more = len(errors) - MAX_ERRORS_SHOWN
    suffix = f"; and {more} more problem{'s' if more > 1 else ''}" if more > 0 else ""
    return f"{path}: {'; '.join(errors[:MAX_ERRORS_SHOWN])}{suffix}"


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for a message: one line, cut after about ``limit`` characters (containers shortened
    by :mod:`reprlib`, so that a long or nested value from a file cannot make the message long)."""
    text = repr(value) if isinstance(value, str) else reprlib.repr(value)
    return text if len(text) <= limit else f"{text[:limit]}…"


def item_id(value: Any, lineno: int) -> str:
    """A row's id: a string or integer, or ``line-N`` when absent; ValueError otherwise."""
    if value is None or value == "":
        return f"line-{lineno}"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError("id must be a non-empty string")
    return value.strip()


def optional_text(record: Mapping[str, Any], key: str) -> str | None:
    """An optional string field, stripped; absent, null or blank means None; ValueError for another type."""
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string or null, got {type(value).__name__}")
    return value.strip() or None
