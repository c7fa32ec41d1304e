"""Claim files: JSONL or CSV rows with a ``claim`` and its gold ``verdict``, validated whole before a run.

A row is ``{"id": "c-es-009", "claim": "GLM-5 tiene unos 800 mil millones de parámetros.",
"verdict": "conflicting", "lang": "es", "doc": "000_….txt", "evidence": "744 mil millones"}``;
``verdict`` is ``supported``, ``conflicting`` or ``not_found``; ``id``, ``lang``, ``doc`` and
``evidence`` are optional, other fields are ignored. :func:`file_kind` tells a claim file from
a QA file by its columns, and a SQuAD file by its shape, so ``citeqa eval`` takes any of them.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeqa.claims.check import VERDICTS
from citeqa.errors import QAFileError
from citeqa.evaluation.rows import CSV_SUFFIXES, JSONL_SUFFIXES, item_id, load_rows, optional_text, read_text, shown
from citeqa.evaluation.user_json import BadInput, first_line, loads

CLAIM_COLUMNS = ("claim", "verdict")
_SQUAD_START = re.compile(r'\s*\{\s*"(?:version|data)"\s*:')


@dataclass(frozen=True, slots=True)
class ClaimItem:
    """One claim with its gold verdict."""

    id: str
    claim: str
    verdict: str
    lang: str = ""
    doc: str | None = None
    evidence: str | None = None


def file_kind(path: Path) -> str:
    """``"claims"`` when the file's first row (JSONL) or header (CSV) has ``claim`` and ``verdict``,
    ``"squad"`` for a ``.json`` file holding one object with a ``data`` list (a SQuAD file, which
    ``--squad`` reads), else ``"qa"`` (the QA loader then judges the file). Never raises: a file
    that cannot be read or parsed is ``"qa"``, and the loader says what is wrong with it."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in JSONL_SUFFIXES + CSV_SUFFIXES or not path.is_file():
        return "qa"
    try:
        first: str | None = first_line(path)
    except BadInput:  # unreadable, empty, or a first line too long to be a row (a one-line SQuAD file)
        first = None
    if suffix in CSV_SUFFIXES:
        try:
            columns = {c.strip().lower() for c in next(csv.reader(io.StringIO(first or "")), [])}
        except csv.Error:  # the CSV loader names the fault
            return "qa"
        return "claims" if all(c in columns for c in CLAIM_COLUMNS) else "qa"
    try:
        record: Any = loads(first, single_line=True) if first is not None else None
    except BadInput:
        record = None
    if isinstance(record, dict) and all(c in record for c in CLAIM_COLUMNS):
        return "claims"
    return "squad" if suffix == ".json" and _is_squad(path, record) else "qa"


def _is_squad(path: Path, record: Any) -> bool:
    """Whether a ``.json`` file whose first line parsed to ``record`` (None when it did not) is a SQuAD
    file: one object with a ``data`` list, on one line or over many. A file that starts like one
    (``{"version":`` or ``{"data":``) but does not parse counts too, so that the SQuAD loader names its fault."""
    if isinstance(record, dict):
        return isinstance(record.get("data"), list) and "question" not in record
    if record is not None:
        return False
    try:
        data = loads(read_text(path, "squad"))
    except (QAFileError, BadInput):
        try:
            with path.open("rb") as fh:
                start = fh.read(256).decode("utf-8-sig", errors="replace")
        except OSError:
            return False
        return _SQUAD_START.match(start) is not None
    return isinstance(data, dict) and isinstance(data.get("data"), list)


def load_claims(path: Path) -> list[ClaimItem]:
    """Read and validate a claim file; QAFileError names the line of every problem (first few shown)."""
    return load_rows(path, "claim", CLAIM_COLUMNS, _item, "claim_none", _without_blanks)


def _without_blanks(record: dict[str, Any]) -> dict[str, Any]:
    """A CSV row without the empty cells of optional columns."""
    return {k: v for k, v in record.items() if v.strip() or k in CLAIM_COLUMNS}


def _item(record: Mapping[str, Any], lineno: int) -> ClaimItem:
    claim = record.get("claim")
    if not isinstance(claim, str) or not claim.strip():
        raise ValueError("missing or empty claim")
    verdict = record.get("verdict")
    if not isinstance(verdict, str) or verdict.strip().lower() not in VERDICTS:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, not {shown(verdict)}")
    identifier = item_id(record.get("id"), lineno)
    optional = {key: optional_text(record, key) for key in ("lang", "doc", "evidence")}
    return ClaimItem(
        identifier,
        claim.strip(),
        verdict.strip().lower(),
        (optional["lang"] or "").lower(),
        optional["doc"],
        optional["evidence"],
    )
