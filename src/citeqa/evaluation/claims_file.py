"""Claim files: JSONL or CSV rows with a ``claim`` and its gold ``verdict``, validated whole before a run.

A row is ``{"id": "c-es-009", "claim": "GLM-5 tiene unos 800 mil millones de parámetros.",
"verdict": "conflicting", "lang": "es", "doc": "000_….txt", "evidence": "744 mil millones"}``;
``verdict`` is ``supported``, ``conflicting`` or ``not_found``; ``id``, ``lang``, ``doc`` and
``evidence`` are optional, other fields are ignored. :func:`file_kind` tells a claim file from
a QA file by its columns, so ``citeqa eval`` takes either.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeqa.claims.check import VERDICTS
from citeqa.evaluation.rows import CSV_SUFFIXES, JSONL_SUFFIXES, item_id, load_rows, optional_text

CLAIM_COLUMNS = ("claim", "verdict")


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
    """``"claims"`` when the file's first row (JSONL) or header (CSV) has ``claim`` and
    ``verdict``, else ``"qa"`` (the QA loader then judges the file)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in JSONL_SUFFIXES + CSV_SUFFIXES or not path.is_file():
        return "qa"
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as fh:
            head = fh.read(65536)
    except OSError:
        return "qa"
    if suffix in CSV_SUFFIXES:
        first = next(csv.reader(io.StringIO(head)), [])
        columns = {c.strip().lower() for c in first}
    else:
        columns = set()
        for line in head.split("\n"):
            if line.strip():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    return "qa"
                columns = set(record) if isinstance(record, dict) else set()
                break
    return "claims" if all(c in columns for c in CLAIM_COLUMNS) else "qa"


def load_claims(path: Path) -> list[ClaimItem]:
    """Read and validate a claim file; QAFileError names the line of every problem (first few shown)."""
    return load_rows(path, "claim file", CLAIM_COLUMNS, _item, "the claim file holds no claims", _without_blanks)


def _without_blanks(record: dict[str, Any]) -> dict[str, Any]:
    """A CSV row without the empty cells of optional columns."""
    return {k: v for k, v in record.items() if v.strip() or k in CLAIM_COLUMNS}


def _item(record: Mapping[str, Any], lineno: int) -> ClaimItem:
    claim = record.get("claim")
    if not isinstance(claim, str) or not claim.strip():
        raise ValueError("missing or empty claim")
    verdict = record.get("verdict")
    if not isinstance(verdict, str) or verdict.strip().lower() not in VERDICTS:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}")
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
