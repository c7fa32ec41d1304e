"""The document formats citeqa reads: one list, used by the corpus scan, the uploads and the UI."""

from __future__ import annotations

from enum import Enum


class Format(str, Enum):
    """How a file's bytes become plain text."""

    TEXT = "text"  #: UTF-8 or a detected legacy encoding, as is
    MARKDOWN = "markdown"  #: as text, as is; sections from the top headings
    HTML = "html"  #: the visible text
    PDF = "pdf"  #: every page's text, with the page of every range
    DOCX = "docx"  #: Word: paragraphs, lists, tables; sections from the top headings
    EPUB = "epub"  #: e-book: chapters in reading order, each a section
    ODT = "odt"  #: OpenDocument text: like DOCX


#: File suffix (lower case) -> format.
FORMATS: dict[str, Format] = {
    ".txt": Format.TEXT,
    ".md": Format.MARKDOWN,
    ".markdown": Format.MARKDOWN,
    ".html": Format.HTML,
    ".htm": Format.HTML,
    ".pdf": Format.PDF,
    ".docx": Format.DOCX,
    ".epub": Format.EPUB,
    ".odt": Format.ODT,
}
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(FORMATS)


def format_of(suffix: str) -> Format | None:
    """The format of a file suffix (any case), or None when citeqa does not read it."""
    return FORMATS.get(suffix.lower())


def suffix_values() -> dict[str, str]:
    """The accepted suffixes as a message's values: ``suffixes`` (".txt, .md, …") and the ``last`` (".odt")."""
    return {"suffixes": ", ".join(SUPPORTED_SUFFIXES[:-1]), "last": SUPPORTED_SUFFIXES[-1]}


def suffix_list() -> str:
    """The accepted suffixes for a message: ".txt, .md, … or .odt"."""
    return ", ".join(SUPPORTED_SUFFIXES[:-1]) + " or " + SUPPORTED_SUFFIXES[-1]
