"""Reading the row files of an evaluation (QA, claim and predictions files): one reader of each kind.

A file is read one line at a time (:func:`text_lines`), turned into ``(line number, record or
problem)`` pairs (:func:`jsonl_records`, :func:`csv_records`), and validated whole by
:func:`collect_items`, which raises one :class:`~citeqa.errors.QAFileError` naming the
first few problems with their lines, so a broken file never gives a partial run. Only the items
are kept: a file read whole (its text, then its lines, then every record) would peak at several
times the size of its items, and a server would keep most of that after.
"""

from __future__ import annotations

import codecs
import csv
import io
import math
import reprlib
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from citeqa.errors import QAFileError
from citeqa.evaluation.user_json import MAX_FILE_BYTES, BadInput, loads
from citeqa.messages import Said

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
    name: str | None = None,
) -> list[T]:
    """The items of a JSONL or CSV row file (``what``: its kind, :func:`kind`), validated whole.

    A CSV file's header must hold the ``required`` columns; ``shape`` turns a CSV row into the
    record its JSONL line would be. ``make_item`` and ``empty`` are those of :func:`collect_items`.
    The file's type is its ``name``'s (an upload's own name, its copy's may differ), else its path's.
    """
    path = Path(path)
    suffix = file_suffix(name or path.name)
    if suffix not in JSONL_SUFFIXES + CSV_SUFFIXES:
        if not suffix:
            raise QAFileError(Said("file_no_type", path=path, what=kind(what)))
        raise QAFileError(Said("file_type", path=path, what=kind(what), suffix=repr(suffix)))
    if not any(line.strip() for line in text_lines(path, what)):  # stops at the first line with text
        raise QAFileError(Said("file_empty", path=path, what=kind(what)))
    if suffix in JSONL_SUFFIXES:
        records: Iterable[Row] = jsonl_records(text_lines(path, what))
    else:
        rows = csv_records(text_lines(path, what, ends=True), required)
        records = ((n, r if isinstance(r, str) else shape(r)) for n, r in rows)
    return collect_items(path, records, make_item, empty)


def file_suffix(name: str) -> str:
    """The type of a file as its NFKC-normalised ``name`` says it, lower-case: ``qa．ｊｓｏｎｌ`` is a ``.jsonl``."""
    return Path(unicodedata.normalize("NFKC", name).replace("\\", "/").split("/")[-1]).suffix.lower()


def kind(what: str) -> Said:
    """A kind of file as messages name it: ``qa``, ``claim``, ``predictions``, ``provenance``, ``squad``."""
    return Said("file_" + what)


def read_text(path: Path, what: str) -> str:
    """The file's text (UTF-8, BOM tolerated), or a QAFileError saying why not; ``what`` names the file kind."""
    return "".join(text_lines(path, what, ends=True))


def text_lines(path: Path, what: str, ends: bool = False) -> Iterator[str]:
    """The file's lines, read one at a time (UTF-8, BOM tolerated), split at "\\n" only (as
    ``str.split("\\n")``: not at U+2028 inside a JSON string, nor at a lone "\\r"), each without its
    "\\n" unless ``ends``; a QAFileError saying why not (``what`` names the file kind), raised
    before the first line when the file cannot be opened or is over
    :data:`~citeqa.evaluation.user_json.MAX_FILE_BYTES`, at the line of a bad byte otherwise."""
    if not path.exists():
        raise QAFileError(Said("file_missing", path=path, what=kind(what)))
    if not path.is_file():
        raise QAFileError(Said("not_a_file", path=path))
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise QAFileError(Said("file_unreadable", path=path, detail=exc.strerror)) from exc
    if size > MAX_FILE_BYTES:
        mib, limit = f"{math.ceil(size / 2**20):,}", MAX_FILE_BYTES // 2**20
        raise QAFileError(Said("file_too_large", path=path, what=kind(what), mib=mib, limit=limit))
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise QAFileError(Said("file_unreadable", path=path, detail=exc.strerror)) from exc
    return _decoded(path, fh, ends)


def _decoded(path: Path, fh: BinaryIO, ends: bool) -> Iterator[str]:
    """The lines of the open file ``fh`` (see :func:`text_lines`); closes it."""
    offset = 0  # bytes before the line, the BOM not counted
    with fh:
        try:
            for number, raw in enumerate(fh):  # a binary file's lines end at b"\n" only
                if number == 0 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise QAFileError(Said("not_utf8", path=path, offset=offset + exc.start)) from exc
                offset += len(raw)
                yield line if ends or not line.endswith("\n") else line[:-1]
        except OSError as exc:
            raise QAFileError(Said("file_unreadable", path=path, detail=exc.strerror)) from exc


def jsonl_records(text: str | Iterable[str]) -> Iterator[Row]:
    """(line number, object or error message) for each non-blank JSONL line of ``text`` (a whole
    text, or its lines without their "\\n")."""
    # split on "\n" only: str.splitlines would also split on U+2028 inside JSON strings
    lines = text.split("\n") if isinstance(text, str) else text
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        hinted = line.lstrip()[:1] == "["
        try:
            record = loads(line, single_line=True)
        except BadInput as exc:
            yield lineno, _jsonl_hint(exc.args[0], hinted)
            continue
        if not isinstance(record, dict):
            yield lineno, _jsonl_hint(Said("not_object", got=type(record).__name__), hinted)
            continue
        yield lineno, record


def _jsonl_hint(problem: str, hinted: bool) -> str:
    """A JSONL line's problem, with what a JSONL file holds when the line looks like a JSON array."""
    return Said("jsonl_hint", problem=problem) if hinted else problem


def csv_records(text: str | Iterable[str], required: Sequence[str]) -> Iterator[Row]:
    """(first line number, ``{column: cell}`` or error message) for each non-blank CSV row of
    ``text`` (a whole text, or its lines with their "\\n").

    Column names are the header's, stripped and lower-cased; a header without every
    ``required`` column, or repeating one, is the only row reported.
    """
    reader = csv.reader(io.StringIO(text) if isinstance(text, str) else text)
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
                yield lineno, Said("csv_fields", expected=len(header), got=len(row))
            else:
                yield lineno, dict(zip(header, row))
    except csv.Error as exc:
        yield reader.line_num, Said("csv_malformed", detail=str(exc))


def _header_problem(header: list[str], required: Sequence[str]) -> str | None:
    """Why a CSV header cannot be used, or None when it is fine."""
    missing = [c for c in required if c not in header]
    if missing:
        return Said("csv_lacks", columns=", ".join(missing))
    duplicated = sorted({c for c in header if c and header.count(c) > 1})
    if duplicated:
        names = (c if c.isprintable() and len(c) <= 40 else shown(c, 40) for c in duplicated)
        return Said("csv_repeats", columns=", ".join(names))
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
    the first few with their lines. ``empty`` is the key of the message for a file without items
    (a :class:`~citeqa.messages.Said` of the file's ``path``)."""
    items: list[T] = []
    errors: list[Said] = []  # the first few problems, then only how many (a broken 20 MB file has 90,000)
    problems = 0
    first_line: dict[str, int] = {}
    for lineno, record in records:
        try:
            if isinstance(record, str):
                raise ValueError(record)
            item = make_item(record, lineno)
            if id_of(item) in first_line:
                raise ValueError(Said("duplicate_id", id=shown(id_of(item)), line=first_line[id_of(item)]))
        except ValueError as exc:
            problems += 1
            if len(errors) < MAX_ERRORS_SHOWN:
                errors.append(Said("line_problem", line=lineno, problem=exc.args[0] if exc.args else str(exc)))
            continue
        first_line[id_of(item)] = lineno
        if not problems:  # a file with a problem gives no items: those after it are not kept
            items.append(item)
    if problems:
        raise QAFileError(errors_message(path, errors, problems))
    if not items:
        raise QAFileError(Said(empty, path=path))
    return items


def errors_message(path: Path, errors: Sequence[str], total: int | None = None) -> Said:
    """One short message: the first few problems, and how many more there are (of ``total``, all
    of ``errors`` when None)."""
    more = (len(errors) if total is None else total) - MAX_ERRORS_SHOWN
    shown_problems = tuple(errors[:MAX_ERRORS_SHOWN])
    if more > 0:
        return Said("file_problems_more", path=path, problems=shown_problems, n=more)
    return Said("file_problems", path=path, problems=shown_problems)


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
        raise ValueError(Said("id_bad"))
    return value.strip()


def optional_text(record: Mapping[str, Any], key: str) -> str | None:
    """An optional string field, stripped; absent, null or blank means None; ValueError for another type."""
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(Said("optional_bad", key=key, got=type(value).__name__))
    return value.strip() or None
