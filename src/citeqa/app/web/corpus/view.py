"""The Corpus tab's table and lists: column names, rows, dates and the files left out of the index,
as plain text or inert HTML."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from citeqa.app.web.escape import cell_text, safe

if TYPE_CHECKING:  # imported where used, as the functions below do
    from citeqa.index.manifest import DocEntry

CORPUS_HEADERS = ["title", "language", "passages", "indexed", "file"]  # "passages", as the chat says


def corpus_headers(lang: str = "en") -> list[str]:
    """The corpus table's column names (:data:`CORPUS_HEADERS`) in ``lang``."""
    from citeqa.messages import corpus_labels

    lab = corpus_labels(lang)
    return [lab[f"col_{name}"] for name in CORPUS_HEADERS]


def corpus_rows(entries: Iterable[DocEntry]) -> list[list[object]]:
    """Rows of the corpus table from manifest ``DocEntry`` items, as plain text."""
    return [[cell_text(e.title), e.lang, len(e.chunk_ids), when(e.indexed_at), cell_text(e.doc_id)] for e in entries]


def when(stamp: str) -> str:
    """An ISO 8601 time as a reader writes it: ``2026-11-30 14:19 UTC`` (as given when it is not one)."""
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return stamp
    moment = moment.astimezone(UTC) if moment.tzinfo is not None else moment
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.tzinfo is not None else "")


def document_choice(doc_id: str, title: str) -> tuple[str, str]:
    """A document in a list to choose from: its title and file shown, its file the value."""
    shown = cell_text(title).strip()
    return (f"{shown} ({doc_id})" if shown and shown != doc_id else doc_id), doc_id


def skipped_html(skipped: Sequence[tuple[str, str]], lang: str = "en") -> str:
    """The files left out of the index, each with its reason, inert."""
    from citeqa.messages import corpus_labels

    if not skipped:
        return ""
    items = "".join(f"<li><code>{safe(name)}</code>: {safe(reason)}</li>" for name, reason in skipped)
    return f'<div class="citeqa-skipped"><b>{safe(corpus_labels(lang)["skipped"])}</b><ul>{items}</ul></div>'
