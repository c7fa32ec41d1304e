"""QA files: JSONL or CSV questions with gold answers, validated whole before a run."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeqa.evaluation.rows import item_id, load_rows, optional_text
from citeqa.messages import Said

LIST_SEPARATOR = "|"
QA_COLUMNS = ("question", "answers", "lang")


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


def load_qa(path: Path, name: str | None = None) -> list[QAItem]:
    """Read and fully validate a QA file (JSONL or CSV) before returning any item (``name``: the
    file's own name, whose type counts, when ``path`` is a copy named otherwise, as an upload's).

    Raises :class:`QAFileError` naming the file and line of every problem found
    (the first few are listed), so a broken file never gives a partial evaluation.
    """
    return load_rows(path, "qa", QA_COLUMNS, _item_from_record, "qa_none", _csv_record, name)


def _csv_record(record: dict[str, Any]) -> dict[str, Any]:
    """A CSV row as a JSONL-like record: ``|`` lists split, empty ``doc``/``id`` dropped."""
    for key in ("answers", "history"):
        if key in record:
            cell = record[key].strip()
            record[key] = [p.strip() for p in cell.split(LIST_SEPARATOR)] if cell else []
    for key in ("doc", "id"):
        if key in record and not record[key].strip():
            del record[key]
    return record


def _item_from_record(record: Mapping[str, Any], lineno: int) -> QAItem:
    """Validate one record; raises _BadRow with a short reason. The language and the document are
    interned: a file of 90,000 questions names a few of each, once in memory."""
    doc = optional_text(record, "doc")
    return QAItem(
        id=item_id(record.get("id"), lineno),
        question=_required_text(record, "question"),
        answers=_string_list(record, "answers", required=True),
        lang=sys.intern(_required_text(record, "lang").lower()),
        doc=sys.intern(doc) if doc is not None else None,
        history=_string_list(record, "history", required=False),
    )


def _required_text(record: Mapping[str, Any], key: str) -> str:
    """A required, non-blank string field, stripped."""
    value = record.get(key)
    if value is None:
        raise _BadRow(Said("field_missing", key=key))
    if not isinstance(value, str):
        raise _BadRow(Said("field_not_text", key=key, got=type(value).__name__))
    if not value.strip():
        raise _BadRow(Said("field_empty", key=key))
    return value.strip()


def _string_list(record: Mapping[str, Any], key: str, *, required: bool) -> tuple[str, ...]:
    """A list of non-blank strings; ``answers`` must be present (``[]`` = unanswerable)."""
    if key not in record or record[key] is None:
        if required:
            raise _BadRow(Said("answers_missing", key=key))
        return ()
    value = record[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _BadRow(Said("list_bad", key=key))
    for i, v in enumerate(value):
        if not v.strip():
            raise _BadRow(Said("list_item_empty", key=key, i=i))
    return tuple(v.strip() for v in value)
